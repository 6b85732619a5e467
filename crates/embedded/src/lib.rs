//! sluice's embedded engine: every queue's index in memory, every change
//! durable in redb through one group-commit writer.
//!
//! Each queue has its own lock; no lock is held across an await. A request
//! changes the index under its queue's lock, hands the matching durable
//! changes to the [`journal`] before releasing the lock (so commits follow
//! the index's order), then waits outside the lock until its commit is on
//! disk before it answers. With `in_memory` there is no journal and nothing
//! survives a restart (rule D2: named, opt-in).
//!
//! # Where things are
//!
//! Each SQS action's engine code is in the module named after it; the
//! `impl Broker` below only calls into them: `queues` (create, get, list,
//! delete, attributes, tags, purge), `send`, `receive`, `delete`,
//! `visibility`, `nack`, `peek`, `dead_letter` (moves between queues)
//! and `redrive`, `move_tasks`, `stats` (and `encryption_stats`, the
//! keys of encryption at rest for `/metrics`); `topics` holds SNS's topic and
//! subscription records (`Topics`); `backup` copies the data directory of
//! a running engine (not an SQS action).
//!
//! # Layers
//!
//! A module imports only from layers below its own and, within its layer,
//! from modules listed before it, so no two modules import each other:
//!
//! 1. Leaves: `message` (a message's data and delivery state),
//!    `seq_hash`, `groups`, `fifo`, `fair`, `dedup`, `ids`,
//!    `body_cache`, `storage` (the file system under the log and redb, and
//!    its fault-injecting double for tests), `topic_set` (the topics and
//!    subscriptions, their index and their file) and `wal` (log segments,
//!    which know nothing of what records hold).
//! 2. Record formats: `codec` (message and state records), `change`
//!    (the change vocabulary operations hand to the journal), `log_record`.
//! 3. The index and the disk: `queue_state` (one queue's index);
//!    `store` (redb); `group_commit` (log writer, applier) under
//!    `journal` (submissions, tickets, recovery).
//! 4. The engine's state: `engine` (handle, registry, queue cells, the
//!    queue lock brought up to date), `bodies`, `open` (start-up),
//!    `reopen` (the storage reopened after a failed write, and the
//!    submissions that start it), `sweep`.
//! 5. Operations, in the order listed above: `nack` uses `visibility`'s
//!    receipt check, `redrive` uses `peek`'s snapshots and `dead_letter`.
//! 6. This file: the public types' re-exports and the `Broker`,
//!    `Coordination` and `Topics` impls.
//!
//! Inside the folders (`wal`, `store`, `group_commit`, `queue_state`) the
//! same holds: `mod.rs` only declares and re-exports, each file imports
//! the siblings it needs and none imports `mod.rs`, without a circle.

mod backup;
mod bodies;
mod body_cache;
mod change;
mod codec;
mod dead_letter;
mod dedup;
mod delete;
mod encryption;
mod encryption_stats;
mod engine;
mod expired;
mod fair;
mod fifo;
mod fuzzing;
mod group_commit;
mod groups;
mod idempotency;
mod ids;
mod journal;
mod log_record;
mod message;
mod move_tasks;
mod nack;
mod open;
mod peek;
mod queue_state;
mod queues;
mod receive;
mod redrive;
mod reopen;
mod send;
mod seq_hash;
mod stats;
mod storage;
mod store;
mod sweep;
mod topic_set;
mod topics;
mod visibility;
mod wal;

use sluice_broker::EngineError;
use sluice_broker::{
    BackupReport, Broker, Coordination, CreateQueue, EncryptionStats, HandleSecret, MessageFilter,
    MetaChange, MoveTask, Nack, NewMessage, PeekPage, QueueCounts, QueueMeta, QueueStats,
    ReceiveOptions, ReceivedMessage, Redrive, RedriveOutcome, SentMessage, StorageStats,
    Subscription, Topic, Topics, VisibilityChange,
};

pub use engine::{EmbeddedBroker, EmbeddedOptions, RecoveryStats};
/// For the fuzz targets in `fuzz/` (feature `fuzzing`).
#[cfg(feature = "fuzzing")]
pub use fuzzing::decode_stored_bytes;
pub use open::DATA_FILE;
pub use storage::{DatabaseBackend, FaultStorage, OsStorage, Storage, StorageFile};
pub use store::StoreError;
/// The file in the data directory that holds SNS's topics and
/// subscriptions, rewritten whole (through a temporary file and a rename)
/// at each change.
pub use topic_set::TOPICS_FILE;

/// The write-ahead log's segments inside the data directory: changes not
/// yet checkpointed into [`DATA_FILE`], and the data of the messages
/// stored since; [`newest_log_segment`] names the one being written.
pub use wal::LOG_DIR;
pub use wal::newest_segment as newest_log_segment;

impl Broker for EmbeddedBroker {
    async fn create_queue(&self, spec: CreateQueue) -> Result<QueueMeta, EngineError> {
        queues::create_queue(self, spec).await
    }

    async fn get_queue(&self, name: &str) -> Result<QueueMeta, EngineError> {
        queues::get_queue(self, name).await
    }

    async fn queue_policy(&self, name: &str) -> Result<Option<String>, EngineError> {
        queues::queue_policy(self, name)
    }

    async fn list_queues(&self) -> Result<Vec<String>, EngineError> {
        queues::list_queues(self).await
    }

    async fn delete_queue(&self, name: &str) -> Result<(), EngineError> {
        queues::delete_queue(self, name).await
    }

    async fn queue_counts(&self, name: &str) -> Result<QueueCounts, EngineError> {
        queues::queue_counts(self, name).await
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
        send::send_messages(self, name, messages).await
    }

    async fn receive_messages(
        &self,
        name: &str,
        options: ReceiveOptions,
    ) -> Result<Vec<ReceivedMessage>, EngineError> {
        receive::receive_messages(self, name, options).await
    }

    async fn delete_messages(
        &self,
        name: &str,
        receipt_handles: Vec<String>,
    ) -> Result<Vec<Result<(), EngineError>>, EngineError> {
        delete::delete_messages(self, name, receipt_handles).await
    }

    async fn change_visibility(
        &self,
        name: &str,
        changes_requested: Vec<VisibilityChange>,
    ) -> Result<Vec<Result<(), EngineError>>, EngineError> {
        visibility::change_visibility(self, name, changes_requested).await
    }

    async fn redrive_messages(
        &self,
        source: &str,
        redrive: &Redrive,
    ) -> Result<RedriveOutcome, EngineError> {
        redrive::redrive_messages(self, source, redrive).await
    }

    async fn nack_message(
        &self,
        name: &str,
        receipt_handle: &str,
        nack: Nack,
    ) -> Result<(), EngineError> {
        nack::nack_message(self, name, receipt_handle, nack).await
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

    fn encrypts_at_rest(&self) -> bool {
        self.inner.journal.is_durable() && self.inner.data_keys.is_configured()
    }

    fn encryption_stats(&self) -> Option<EncryptionStats> {
        encryption_stats::encryption_stats(self)
    }

    fn sealing_key(&self, sse_sqs: bool, kms_key_id: Option<&str>) -> Option<Option<String>> {
        encryption_stats::sealing_key(self, sse_sqs, kms_key_id)
    }

    fn storage_stats(&self) -> Option<StorageStats> {
        stats::storage_stats(self)
    }

    async fn rekey(
        &self,
        keyring: std::sync::Arc<sluice_keyring::Keyring>,
    ) -> Result<sluice_broker::Rekey, EngineError> {
        EmbeddedBroker::rekey(self, keyring).await
    }

    async fn backup(&self, directory: &std::path::Path) -> Result<BackupReport, EngineError> {
        self.backup_to(directory).await
    }

    async fn queue_stats(&self, name: &str) -> Result<QueueStats, EngineError> {
        stats::queue_stats(self, name).await
    }
}

/// No other node shares this engine's storage: claims are always granted,
/// the server keeps the alarms, and the cluster's stats are this node's.
impl Coordination for EmbeddedBroker {
    async fn handle_secret(&self) -> Result<HandleSecret, EngineError> {
        let mut secret = self.inner.handle_secret.lock();
        match &*secret {
            Some(s) => Ok(s.clone()),
            None => Ok(secret.insert(HandleSecret::random()?).clone()),
        }
    }

    async fn cluster_queue_stats(&self, name: &str) -> Result<QueueStats, EngineError> {
        stats::queue_stats(self, name).await
    }

    async fn save_move_task(&self, task: MoveTask) -> Result<(), EngineError> {
        move_tasks::save_move_task(self, task).await
    }

    async fn move_tasks(&self) -> Result<Vec<MoveTask>, EngineError> {
        move_tasks::move_tasks(self).await
    }
}

/// Topics and subscriptions in memory, read without a lock; each change
/// written to [`TOPICS_FILE`] before it is served (see `topics`).
impl Topics for EmbeddedBroker {
    async fn create_topic(&self, topic: Topic) -> Result<(Topic, bool), EngineError> {
        topics::create_topic(self, topic).await
    }

    async fn get_topic(&self, key: &str) -> Result<Topic, EngineError> {
        topics::get_topic(self, key)
    }

    async fn list_topics(&self) -> Result<Vec<String>, EngineError> {
        Ok(topics::list_topics(self))
    }

    async fn update_topic<E, F>(
        &self,
        key: &str,
        change: F,
    ) -> Result<Result<Topic, E>, EngineError>
    where
        E: Send + 'static,
        F: FnOnce(&mut Topic) -> Result<(), E> + Send + 'static,
    {
        topics::update_topic(self, key, change).await
    }

    async fn delete_topic(&self, key: &str) -> Result<(), EngineError> {
        topics::delete_topic(self, key).await
    }

    async fn subscribe(
        &self,
        subscription: Subscription,
    ) -> Result<(Subscription, bool), EngineError> {
        topics::subscribe(self, subscription).await
    }

    async fn get_subscription(&self, id: &str) -> Result<Subscription, EngineError> {
        topics::get_subscription(self, id)
    }

    async fn update_subscription<E, F>(
        &self,
        id: &str,
        change: F,
    ) -> Result<Result<Subscription, E>, EngineError>
    where
        E: Send + 'static,
        F: FnOnce(&mut Subscription) -> Result<(), E> + Send + 'static,
    {
        topics::update_subscription(self, id, change).await
    }

    async fn delete_subscription(&self, id: &str) -> Result<(), EngineError> {
        topics::delete_subscription(self, id).await
    }

    async fn subscriptions(&self, topic: Option<&str>) -> Result<Vec<Subscription>, EngineError> {
        Ok(topics::subscriptions(self, topic))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use sluice_core::ManualClock;
    use sluice_core::attributes::QueueConfig;

    /// D1 with redb's apply off the answer's path: a send is answered while
    /// redb cannot take it yet, and a receive right after it, whose body is
    /// on disk only (no cache), waits for the apply rather than miss it.
    /// A durable broker in `dir` without a body cache, so every body is
    /// read from redb, and with its queue "q".
    async fn uncached_with_queue(dir: &Path, options: EmbeddedOptions) -> EmbeddedBroker {
        let options = EmbeddedOptions {
            body_cache_bytes: 0,
            ..options
        };
        let clock = Arc::new(ManualClock::default());
        let (b, _) = EmbeddedBroker::open_with(dir, clock, options).unwrap();
        let requested = BTreeMap::new();
        let spec = CreateQueue {
            name: "q".into(),
            config: QueueConfig::for_create("q", &requested).unwrap(),
            requested,
            tags: BTreeMap::new(),
        };
        b.create_queue(spec).await.unwrap();
        b
    }

    #[tokio::test]
    async fn a_receive_right_after_an_acknowledged_send_finds_its_body() {
        let dir = tempfile::tempdir().unwrap();
        let b = uncached_with_queue(dir.path(), EmbeddedOptions::default()).await;
        let held = b
            .inner
            .journal
            .store()
            .unwrap()
            .unwrap()
            .hold_writes()
            .unwrap();
        let body = NewMessage {
            body: "on disk".into(),
            ..Default::default()
        };
        let send = b.send_messages("q", vec![body]);
        tokio::time::timeout(Duration::from_secs(10), send)
            .await
            .unwrap()
            .unwrap();
        let options = ReceiveOptions {
            max_messages: 1,
            visibility_timeout: Some(30),
            wait: Duration::ZERO,
            attempt_id: None,
        };
        let receiver = b.clone();
        let receive = tokio::spawn(async move { receiver.receive_messages("q", options).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!receive.is_finished(), "read redb before the apply");
        drop(held);
        let got = receive.await.unwrap().unwrap();
        assert_eq!(got.len(), 1, "the acknowledged message was missed");
        assert_eq!(got[0].body, "on disk");
    }

    /// D1 with redb's apply off the answer's path, the other way round: a
    /// body redb already holds is read without waiting for the applier,
    /// even while the applier is stuck behind later sends, so a backlog's
    /// old messages do not wait for the newest ones to be applied.
    #[tokio::test]
    async fn a_body_already_in_redb_is_read_without_waiting_for_the_applier() {
        let dir = tempfile::tempdir().unwrap();
        let options = EmbeddedOptions {
            // No checkpoint, which would wait for the held applier.
            checkpoint_interval: Duration::from_secs(3600),
            ..Default::default()
        };
        let b = uncached_with_queue(dir.path(), options).await;
        let message = |body: &str| NewMessage {
            body: body.into(),
            ..Default::default()
        };
        b.send_messages("q", vec![message("old")]).await.unwrap();
        b.inner.journal.readable().wait().await.unwrap();
        let held = b
            .inner
            .journal
            .store()
            .unwrap()
            .unwrap()
            .hold_writes()
            .unwrap();
        b.send_messages("q", vec![message("new")]).await.unwrap();
        let options = ReceiveOptions {
            max_messages: 1,
            visibility_timeout: Some(30),
            wait: Duration::ZERO,
            attempt_id: None,
        };
        let receive = b.receive_messages("q", options);
        let got = tokio::time::timeout(Duration::from_secs(5), receive).await;
        drop(held);
        let got = got.expect("the read waited for the held applier").unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].body, "old");
    }
}
