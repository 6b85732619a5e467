//! Expired messages held for the archive in this engine (rule X8): each
//! queue's index keeps them apart from its messages (`QueueState::expired`),
//! their data stays in storage, and only [`ExpiredMessages::forget_archived`]
//! deletes them, durably, once the archive holds them. After a restart the
//! first retention pass takes them out of the queue again.

use std::sync::Arc;

use sluice_broker::{EngineError, ExpiredMessage, ExpiredMessages};

use crate::change::Change;
use crate::engine::{EmbeddedBroker, QueueCell};
use crate::peek::{Snapshot, peeked};
use crate::queue_state::Phase;

impl ExpiredMessages for EmbeddedBroker {
    async fn expired_messages(
        &self,
        max: usize,
        skip: &[String],
    ) -> Result<Vec<ExpiredMessage>, EngineError> {
        let inner = &self.inner;
        let now = inner.now();
        let mut cells: Vec<(String, Arc<QueueCell>)> = inner
            .queues
            .read()
            .iter()
            .filter(|(name, _)| !skip.contains(name))
            .map(|(name, cell)| (name.clone(), cell.clone()))
            .collect();
        cells.sort_by_key(|(_, cell)| cell.id);
        let mut out = Vec::new();
        for (name, cell) in cells {
            if out.len() >= max {
                break;
            }
            let (held, fifo) = {
                // Brought up to now first: what expired since the last pass
                // is held before it is read.
                let Ok(st) = inner.lock_current(&cell, now) else {
                    continue;
                };
                if st.expired_count() == 0 {
                    continue;
                }
                (st.expired_held(max - out.len()), st.meta.config.fifo)
            };
            let snaps: Vec<Snapshot> = held
                .into_iter()
                .map(|m| Snapshot {
                    seq: m.seq,
                    order: None,
                    state: m.state,
                    phase: Phase::Ready,
                    body: m.body,
                    failure: m.failure,
                })
                .collect();
            let bodies = inner
                .load_bodies(
                    cell.id,
                    snaps.iter().map(|s| (s.seq, s.body.clone())).collect(),
                )
                .await?;
            for (snap, data) in snaps.iter().zip(bodies) {
                let Some(data) = data else {
                    tracing::warn!(queue = %name, seq = snap.seq, "an expired message's data is missing");
                    continue;
                };
                out.push(ExpiredMessage::new(name.clone(), peeked(snap, &data, fifo)));
            }
        }
        Ok(out)
    }

    async fn forget_archived(&self, queue: &str, positions: &[u64]) -> Result<(), EngineError> {
        let inner = &self.inner;
        let Ok(cell) = self.queue(queue) else {
            return Ok(());
        };
        let ticket = {
            let mut st = cell.state.lock();
            let forgotten = st.forget_expired(positions);
            if forgotten.is_empty() || !inner.journal.is_durable() {
                return Ok(());
            }
            let changes = forgotten
                .into_iter()
                .map(|seq| Change::DeleteMessage {
                    queue: cell.id,
                    seq,
                })
                .collect();
            inner.submit(changes)
        };
        ticket.wait().await
    }
}
