//! Idempotency records in this engine (rule I1): every record in memory,
//! by key, behind one lock under which each decision is made and its
//! change handed to the journal, so that two claims of a key are decided
//! one after the other and logged in that order. An answer waits for its
//! change to be durable. The sweeper forgets expired records.

use sluice_broker::EngineError;
use sluice_broker::idempotency::{Claim, ClaimStatus, IdempotencyKeys, IdempotencyRecord};

use crate::change::Change;
use crate::engine::{EmbeddedBroker, Inner};
use crate::journal::Ticket;

impl Inner {
    /// The change storing `record` under `key`.
    fn put_idempotency(key: &str, record: &IdempotencyRecord) -> Result<Change, EngineError> {
        Ok(Change::PutIdempotency {
            key: key.to_string(),
            record: serde_json::to_vec(record).map_err(|e| EngineError::Storage(e.to_string()))?,
        })
    }

    /// Hands `change` to the journal in memory's place: nothing to wait
    /// for when nothing is durable.
    fn log_idempotency(&self, change: Change) -> Option<Ticket> {
        self.journal.is_durable().then(|| self.submit(vec![change]))
    }

    /// Forgets the records expired at `now`, and deletes them from storage.
    pub(crate) fn expire_idempotency(&self, now: u64) {
        let mut gone = Vec::new();
        self.idempotency.lock().retain(|key, r| {
            let keep = !r.expired(now);
            if !keep {
                gone.push(Change::DeleteIdempotency { key: key.clone() });
            }
            keep
        });
        if !gone.is_empty() && self.journal.is_durable() {
            drop(self.submit(gone));
        }
    }
}

/// Waits until the change `ticket` stands for is durable.
async fn durable(ticket: Option<Ticket>) -> Result<(), EngineError> {
    match ticket {
        Some(ticket) => ticket.wait().await,
        None => Ok(()),
    }
}

impl IdempotencyKeys for EmbeddedBroker {
    async fn claim_idempotency_key(
        &self,
        key: &str,
        claim: Claim,
    ) -> Result<ClaimStatus, EngineError> {
        let inner = &self.inner;
        let now = inner.now();
        let (status, ticket) = {
            let mut records = inner.idempotency.lock();
            let (status, stored) = IdempotencyRecord::claim(records.get(key), claim, now);
            let ticket = match stored {
                Some(record) => {
                    let change = Inner::put_idempotency(key, &record)?;
                    records.insert(key.to_string(), record);
                    inner.log_idempotency(change)
                }
                None => None,
            };
            (status, ticket)
        };
        durable(ticket).await?;
        Ok(status)
    }

    async fn complete_idempotency_key(
        &self,
        key: &str,
        result: String,
    ) -> Result<bool, EngineError> {
        let inner = &self.inner;
        let now = inner.now();
        let ticket = {
            let mut records = inner.idempotency.lock();
            let Some(done) = IdempotencyRecord::complete(records.get(key), result, now) else {
                return Ok(false);
            };
            let change = Inner::put_idempotency(key, &done)?;
            records.insert(key.to_string(), done);
            inner.log_idempotency(change)
        };
        durable(ticket).await?;
        Ok(true)
    }

    async fn release_idempotency_key(&self, key: &str) -> Result<bool, EngineError> {
        let inner = &self.inner;
        let now = inner.now();
        let ticket = {
            let mut records = inner.idempotency.lock();
            if !IdempotencyRecord::releasable(records.get(key), now) {
                return Ok(false);
            }
            records.remove(key);
            inner.log_idempotency(Change::DeleteIdempotency {
                key: key.to_string(),
            })
        };
        durable(ticket).await?;
        Ok(true)
    }

    async fn idempotency_keys_completed(&self, keys: &[String]) -> Result<Vec<bool>, EngineError> {
        let now = self.inner.now();
        let records = self.inner.idempotency.lock();
        Ok(keys
            .iter()
            .map(|key| IdempotencyRecord::completed(records.get(key), now))
            .collect())
    }
}
