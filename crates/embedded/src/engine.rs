//! What every operation does with a queue: take its lock with timers and
//! retention brought up to date, and write the journal forms of its record
//! and of a message's delivery state.

use sluice_broker::activity::{self};
use sluice_core::SqsError;
use sluice_core::clock::Millis;

use crate::change::{Change, QueueRecord};
use crate::message::MessageState;
use crate::queue_state::QueueState;
use crate::{Inner, QueueCell, codec};

impl Inner {
    pub(crate) fn now(&self) -> Millis {
        self.clock.now()
    }

    /// Locks a live queue with its timers and retention brought up to `now`.
    /// Retention deletes go to the journal without a wait: nobody answers
    /// from them.
    pub(crate) fn lock_current<'a>(
        &self,
        cell: &'a QueueCell,
        now: Millis,
    ) -> Result<parking_lot::MutexGuard<'a, QueueState>, SqsError> {
        let mut st = cell.state.lock();
        if st.deleted {
            return Err(deleted_error());
        }
        let mut changes = Vec::new();
        self.tick(cell, &mut st, now, &mut changes);
        if !changes.is_empty() {
            drop(self.journal.submit(changes));
        }
        Ok(st)
    }

    /// Advances one queue's timers and retention, recording the deletes.
    pub(crate) fn tick(
        &self,
        cell: &QueueCell,
        st: &mut QueueState,
        now: Millis,
        changes: &mut Vec<Change>,
    ) -> bool {
        let (expired, woke) = st.tick(now);
        activity::add(&cell.activity.expired, expired.len() as u64);
        let forgotten = st.dedup.expire(now);
        st.attempts.retain(|_, a| a.expires_at > now);
        if self.journal.is_durable() {
            changes.extend(expired.into_iter().map(|seq| Change::DeleteMessage {
                queue: cell.id,
                seq,
            }));
            changes.extend(forgotten.into_iter().map(|key| Change::DeleteDedup {
                queue: cell.id,
                key,
            }));
        }
        woke
    }

    /// The durable form of a queue's record, when durable.
    pub(crate) fn put_queue(&self, id: u64, st: &QueueState, changes: &mut Vec<Change>) {
        if !self.journal.is_durable() {
            return;
        }
        let record = QueueRecord {
            name: st.meta.name.clone(),
            config: st.meta.config.clone(),
            tags: st.meta.tags.clone(),
            created_at: st.meta.created_at,
            modified_at: st.meta.modified_at,
            last_purge: st.last_purge,
        };
        match serde_json::to_vec(&record) {
            Ok(record) => changes.push(Change::PutQueue { id, record }),
            Err(e) => tracing::error!(error = %e, "queue record did not encode"),
        }
    }

    pub(crate) fn put_state(
        &self,
        id: u64,
        seq: u64,
        state: &MessageState,
        changes: &mut Vec<Change>,
    ) {
        if self.journal.is_durable() {
            changes.push(Change::PutState {
                queue: id,
                seq,
                state: codec::encode_state(state),
            });
        }
    }
}

pub(crate) fn deleted_error() -> SqsError {
    SqsError::no_queue()
}
