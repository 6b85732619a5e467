//! Encryption at rest in this engine: the data key that seals a queue's
//! new messages, logged before its first use, and the messages a start
//! found sealed by data keys no longer kept (crypto-shredded).

use std::sync::Arc;

use sluice_broker::{EngineError, Rekey};
use sluice_core::{ErrorCode, SqsError};
use sluice_keyring::{QueueSse, SealError, Sealer};

use crate::change::Change;
use crate::engine::{EmbeddedBroker, Inner, QueueCell};

impl Inner {
    /// The data key that seals `queue`'s new messages, `None` when they
    /// are stored clear (in memory, no keyring, or a queue without SSE).
    /// A new data key is submitted to the journal before it is returned,
    /// so every commit sealed by it comes after its own in the log.
    pub(crate) fn sealer(&self, cell: &QueueCell) -> Result<Option<Sealer>, EngineError> {
        if !self.journal.is_durable() || !self.data_keys.is_configured() {
            return Ok(None);
        }
        let (sse_sqs, kms_key_id, reuse_seconds) = {
            let st = cell.state.lock();
            let c = &st.meta.config;
            (
                c.sqs_managed_sse_enabled,
                c.kms_master_key_id.clone(),
                c.kms_data_key_reuse_period_seconds,
            )
        };
        let queue = cell.id;
        let sse = QueueSse {
            sse_sqs,
            kms_key_id: kms_key_id.as_deref(),
            reuse_seconds,
        };
        let persist = |record: &sluice_keyring::DataKeyRecord| -> Result<(), String> {
            let bytes = serde_json::to_vec(record).map_err(|e| e.to_string())?;
            let ticket = self.submit(vec![Change::PutDataKey {
                id: record.id,
                record: bytes,
            }]);
            match ticket.refusal() {
                Some(e) => Err(e.to_string()),
                None => Ok(()),
            }
        };
        self.data_keys
            .sealer(queue, sse, self.now(), persist)
            .map_err(|e| match e {
                SealError::KeyNotFound(id) => EngineError::Rejected(SqsError::new(
                    ErrorCode::KmsNotFound,
                    format!("The key {id} is not in the server's keyring."),
                )),
                SealError::NotStored(why) => EngineError::Unavailable(why),
                SealError::Keyring(e) => EngineError::Storage(e.to_string()),
            })
    }
}

impl Inner {
    /// Forgets the data keys past their expiry, and deletes their records.
    pub(crate) fn expire_data_keys(&self, now: u64) {
        let gone = self
            .data_keys
            .expire(now.saturating_sub(sluice_keyring::EXPIRY_MS));
        if !gone.is_empty() && self.journal.is_durable() {
            let changes = gone
                .into_iter()
                .map(|id| Change::DeleteDataKey { id })
                .collect();
            drop(self.submit(changes));
        }
    }
}

impl EmbeddedBroker {
    /// Puts `keyring` in use while serving: the data keys that follow the
    /// server's key are wrapped again by its active key and logged before
    /// this returns (a crash first leaves them to the next start, which
    /// wraps them again from the log's old records).
    pub(crate) async fn rekey(
        &self,
        keyring: Arc<sluice_keyring::Keyring>,
    ) -> Result<Rekey, EngineError> {
        if !self.inner.journal.is_durable() {
            return Err(EngineError::Unavailable(
                "in memory: nothing is stored at rest".into(),
            ));
        }
        let rekeyed = self
            .inner
            .data_keys
            .rekey(keyring, None)
            .map_err(|e| EngineError::Unavailable(e.to_string()))?;
        let changes = rekeyed
            .rewrapped
            .iter()
            .map(|record| {
                let bytes =
                    serde_json::to_vec(record).map_err(|e| EngineError::Storage(e.to_string()))?;
                Ok(Change::PutDataKey {
                    id: record.id,
                    record: bytes,
                })
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        if !changes.is_empty() {
            self.inner.submit(changes).wait().await?;
        }
        Ok(Rekey {
            rewrapped: rekeyed.rewrapped.len(),
            retired: rekeyed.retired,
        })
    }

    /// Deletes the messages a start found sealed by data keys no longer
    /// kept. Not waited for: a crash first leaves them to the next start,
    /// which finds the same.
    pub(crate) fn drop_unreadable(&self, dropped: Vec<(u64, u64)>) {
        if dropped.is_empty() {
            return;
        }
        let changes = dropped
            .into_iter()
            .map(|(queue, seq)| Change::DeleteMessage { queue, seq })
            .collect();
        drop(self.inner.submit(changes));
    }
}
