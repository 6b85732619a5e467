//! The `Broker` trait over the database: each operation handed to the
//! module named after it (`queues`, `send`, `receive`, `delete`,
//! `visibility`, `nack`, `peek`, `redrive`, `stats`).

use sluice_broker::EngineError;
use sluice_broker::{
    BackupReport, Broker, CreateQueue, MessageFilter, MetaChange, Nack, NewMessage, PeekPage,
    QueueCounts, QueueMeta, QueueStats, ReceiveOptions, ReceivedMessage, Redrive, RedriveOutcome,
    SentMessage, VisibilityChange,
};

use crate::engine::PostgresBroker;
use crate::{delete, nack, peek, queues, receive, redrive, send, visibility};

impl Broker for PostgresBroker {
    fn encrypts_at_rest(&self) -> bool {
        self.inner.data_keys.is_configured()
    }

    async fn rekey(
        &self,
        keyring: std::sync::Arc<sluice_keyring::Keyring>,
    ) -> Result<sluice_broker::Rekey, EngineError> {
        PostgresBroker::rekey(self, keyring).await
    }

    /// The data keys this node made.
    fn encryption_stats(&self) -> Option<sluice_broker::EncryptionStats> {
        self.inner
            .data_keys
            .is_configured()
            .then(|| sluice_broker::EncryptionStats {
                data_keys_made: self.inner.data_keys.made(),
            })
    }

    fn sealing_key(&self, sse_sqs: bool, kms_key_id: Option<&str>) -> Option<Option<String>> {
        let keyring = self.inner.data_keys.keyring()?;
        keyring
            .key_for(sse_sqs, kms_key_id)
            .map(|key| key.map(str::to_string))
    }

    async fn create_queue(&self, spec: CreateQueue) -> Result<QueueMeta, EngineError> {
        queues::create_queue(self, spec).await
    }

    async fn get_queue(&self, name: &str) -> Result<QueueMeta, EngineError> {
        queues::get_queue(self, name).await
    }

    async fn queue_policy(&self, name: &str) -> Result<Option<String>, EngineError> {
        queues::queue_policy(self, name).await
    }

    async fn list_queues(&self) -> Result<Vec<String>, EngineError> {
        queues::list_queues(self).await
    }

    async fn delete_queue(&self, name: &str) -> Result<(), EngineError> {
        queues::delete_queue(self, name).await
    }

    async fn queue_counts(&self, name: &str) -> Result<QueueCounts, EngineError> {
        Ok(self.queue_stats_inner(name).await?.counts)
    }

    async fn update_queue(&self, name: &str, change: MetaChange) -> Result<QueueMeta, EngineError> {
        queues::update_queue(self, name, change).await
    }

    async fn purge_queue(&self, name: &str) -> Result<(), EngineError> {
        queues::purge_queue(self, name).await
    }

    async fn send_messages(
        &self,
        name: &str,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<SentMessage>, EngineError> {
        send::send(self, name, messages).await
    }

    async fn receive_messages(
        &self,
        name: &str,
        options: ReceiveOptions,
    ) -> Result<Vec<ReceivedMessage>, EngineError> {
        receive::receive(self, name, options).await
    }

    async fn delete_messages(
        &self,
        name: &str,
        receipt_handles: Vec<String>,
    ) -> Result<Vec<Result<(), EngineError>>, EngineError> {
        delete::delete(self, name, receipt_handles).await
    }

    async fn change_visibility(
        &self,
        name: &str,
        changes: Vec<VisibilityChange>,
    ) -> Result<Vec<Result<(), EngineError>>, EngineError> {
        visibility::change_visibility(self, name, changes).await
    }

    async fn redrive_messages(
        &self,
        source: &str,
        redrive: &Redrive,
    ) -> Result<RedriveOutcome, EngineError> {
        redrive::redrive(self, source, redrive).await
    }

    async fn queue_stats(&self, name: &str) -> Result<QueueStats, EngineError> {
        let s = self.queue_stats_inner(name).await?;
        Ok(QueueStats {
            groups_in_flight: s.groups_in_flight,
            awaiting_archive: s.awaiting_archive,
            fair: s.fair,
            ..self.inner.activity(s.id).stats(s.counts, s.oldest_age_ms)
        })
    }

    async fn nack_message(
        &self,
        name: &str,
        receipt_handle: &str,
        nack: Nack,
    ) -> Result<(), EngineError> {
        nack::nack(self, name, receipt_handle, nack).await
    }

    async fn peek_messages(
        &self,
        name: &str,
        filter: &MessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> Result<PeekPage, EngineError> {
        peek::peek_messages(self, name, filter, after, limit).await
    }

    async fn backup(&self, _directory: &std::path::Path) -> Result<BackupReport, EngineError> {
        Err(sluice_broker::backup_unsupported(
            "The PostgreSQL engine keeps its data in the database: back it up with pg_dump \
             (or pg_basebackup); sluice backup copies the embedded engine's data directory.",
        ))
    }
}
