//! Moving messages between queues: into a dead-letter queue when a receive
//! goes past maxReceiveCount or a consumer fails a message permanently
//! (rules R2–R4, X2), and back out of it by a redrive (rule R7).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use sluice_broker::EngineError;
use sluice_broker::activity;
use sluice_broker::failure::FailureRecord;
use sluice_broker::moves::{Provenance, mark_replay as count_replay, strip_provenance};
use sluice_core::clock::Millis;
use sluice_keyring::Sealer;

use crate::change::{Change, Rewrite};
use crate::codec;
use crate::engine::{EmbeddedBroker, QueueCell};
use crate::ids::uuid_string;
use crate::journal::Ticket;
use crate::message::{MessageData, MessageState};
use crate::queue_state::Removed;

/// Messages taken out of a queue's index.
pub(crate) type Taken = Vec<Removed>;

/// Messages a redrive chose, with their data read.
pub(crate) type Chosen = Vec<(Removed, Arc<MessageData>)>;

impl EmbeddedBroker {
    /// Returns messages a redrive took but could not move.
    pub(crate) fn put_back(&self, src: &QueueCell, entries: Taken, now: Millis) {
        let mut st = src.state.lock();
        if !st.deleted {
            for removed in entries {
                st.insert_removed(removed, now);
            }
        }
    }

    /// Moves messages from a DLQ into `dest` as new messages (rule R7): a new
    /// message id, a fresh enqueue time, no receives yet. The DLQ's deletes
    /// and the inserts are one journal submission. Gives the messages back
    /// when `dest` was deleted meanwhile.
    ///
    /// Synchronous on purpose: the messages are in `dest` when it returns,
    /// so a caller that stops waiting on the ticket loses nothing.
    pub(crate) fn redrive_into(
        &self,
        src: &QueueCell,
        dest: &QueueCell,
        entries: Chosen,
        mark_replay: bool,
        now: Millis,
    ) -> Result<(Vec<String>, Ticket), Chosen> {
        let inner = &self.inner;
        let durable = inner.journal.is_durable();
        let seal = match inner.sealer(dest) {
            Ok(seal) => seal,
            Err(e) => {
                tracing::warn!(error = %e, queue = dest.id, "the destination's key is unusable: messages stay where they are");
                return Err(entries);
            }
        };
        let (moved, ticket) = {
            let mut dst = dest.state.lock();
            if dst.deleted {
                return Err(entries);
            }
            let fifo = dst.meta.config.fifo;
            let mut changes = Vec::with_capacity(entries.len() * 2);
            let mut moved = Vec::with_capacity(entries.len());
            for (removed, data) in entries {
                let mut data = (*data).clone();
                moved.push(uuid_string(&data.message_id));
                if mark_replay {
                    // Rule X3: consumers can tell a replay, and loops are bounded.
                    count_replay(&mut data.attributes);
                }
                if !mark_replay {
                    data.message_id = *uuid::Uuid::new_v4().as_bytes();
                }
                data.sent_at = now;
                data.enqueued_at = now;
                // A fresh message: the provenance of its time in the DLQ
                // stays behind (its replay count tells it was replayed).
                strip_provenance(&mut data.system_attributes);
                if fifo {
                    data.dedup_id = Some(uuid_string(&data.message_id));
                }
                let state = MessageState {
                    visible_at: now,
                    receive_count: 0,
                    first_receive_at: 0,
                    last_receive_at: 0,
                };
                let seq = inner.next_seq.fetch_add(1, Ordering::SeqCst);
                if durable {
                    relocate(
                        &mut changes,
                        (src.id, removed.seq),
                        (dest.id, seq),
                        &data,
                        &state,
                        seal.as_ref(),
                    );
                }
                let data = Arc::new(data);
                dst.insert(
                    seq,
                    Some(data.clone()),
                    now,
                    data.group_id.as_deref(),
                    state,
                    now,
                );
            }
            (moved, inner.submit(changes))
        };
        activity::add(&src.activity.redriven, moved.len() as u64);
        activity::add(&dest.activity.sent, moved.len() as u64);
        dest.arrivals.notify_waiters();
        Ok((moved, ticket))
    }

    /// Moves messages taken out of `source` into its dead-letter queue
    /// (rules R2–R4): same id, body, attributes, receive count; standard
    /// queues keep the original enqueue time; `DeadLetterQueueSourceArn`
    /// names the source. The source's deletes and the DLQ's inserts are one
    /// journal submission, so they commit together or not at all.
    ///
    /// A message whose body is not in memory is not read here: the journal
    /// writer rewrites its record as it moves it (`Change::MoveMessage`),
    /// so a dead-letter move never waits for a read.
    pub(crate) async fn move_to_dead_letter_queue(
        &self,
        source: &QueueCell,
        source_arn: &str,
        dlq: &QueueCell,
        dead: Taken,
        now: Millis,
        trigger: &'static str,
    ) -> Result<(), EngineError> {
        let inner = &self.inner;
        let durable = inner.journal.is_durable();
        let seal = match inner.sealer(dlq) {
            Ok(seal) => seal,
            Err(e) => {
                // Nothing is lost: the messages stay in their queue, and
                // the next receive past maxReceiveCount tries again.
                tracing::warn!(error = %e, queue = dlq.id, "the dead-letter queue's key is unusable: messages stay in their queue");
                self.put_back(source, dead, now);
                return Ok(());
            }
        };
        let ticket = {
            let mut dst = dlq.state.lock();
            if dst.deleted {
                // The DLQ went away since the lookup: keep the messages.
                drop(dst);
                self.put_back(source, dead, now);
                return Ok(());
            }
            let fifo_dlq = dst.meta.config.fifo;
            let mut changes = Vec::with_capacity(dead.len() * 2);
            for removed in dead {
                // Read once: the provenance and the per-class count share it.
                let failure = FailureRecord::decode(removed.failure.as_deref());
                source.activity.dead_lettered_as(failure.last_class());
                let rewrite = dead_letter_rewrite(
                    &removed,
                    failure,
                    source_arn,
                    &dst.meta.name,
                    fifo_dlq,
                    now,
                    trigger,
                );
                // Rule R3: a FIFO DLQ restarts the retention clock.
                let enqueued_at = if fifo_dlq { now } else { removed.enqueued_at };
                let state = MessageState {
                    visible_at: now,
                    ..removed.state
                };
                let seq = inner.next_seq.fetch_add(1, Ordering::SeqCst);
                let body = match &removed.body {
                    Some(body) => {
                        let mut data = (**body).clone();
                        (rewrite.0)(&mut data);
                        if durable {
                            let (from, to) = ((source.id, removed.seq), (dlq.id, seq));
                            relocate(&mut changes, from, to, &data, &state, seal.as_ref());
                        }
                        Some(Arc::new(data))
                    }
                    None => {
                        changes.push(Change::MoveMessage {
                            from: (source.id, removed.seq),
                            to: (dlq.id, seq),
                            state: codec::encode_state(&state),
                            rewrite,
                            seal: seal.clone(),
                        });
                        None
                    }
                };
                dst.insert(seq, body, enqueued_at, removed.group.as_deref(), state, now);
                activity::add(&dlq.activity.sent, 1);
            }
            inner.submit(changes)
        };
        ticket.wait().await?;
        dlq.arrivals.notify_waiters();
        Ok(())
    }
}

/// The durable changes that move a message whose data is in memory: gone
/// from `from` (queue id, sequence), written at `to` with `data` and `state`.
fn relocate(
    changes: &mut Vec<Change>,
    from: (u64, u64),
    to: (u64, u64),
    data: &MessageData,
    state: &MessageState,
    seal: Option<&Sealer>,
) {
    changes.push(Change::DeleteMessage {
        queue: from.0,
        seq: from.1,
    });
    changes.push(Change::PutMessage {
        queue: to.0,
        seq: to.1,
        data: codec::encode_message(data, seal),
        state: codec::encode_state(state),
        in_log: None,
    });
}

/// What a dead-letter move changes in a message's data (rules R3, R4, X2),
/// and its audit line, which is written where the change is made.
fn dead_letter_rewrite(
    removed: &Removed,
    failure: FailureRecord,
    source_arn: &str,
    dlq_name: &str,
    fifo_dlq: bool,
    now: Millis,
    trigger: &'static str,
) -> Rewrite {
    let source_arn = source_arn.to_string();
    let dlq_name = dlq_name.to_string();
    let state = removed.state;
    Rewrite(Arc::new(move |data: &mut MessageData| {
        // Provenance (rules R4, X2): where it came from, when, and why.
        Provenance {
            source_arn: &source_arn,
            moved_at: now,
            first_receive_at: state.first_receive_at,
            last_receive_at: state.last_receive_at,
            failure_reason: failure.reason.as_deref(),
            failure_class: failure.last_class(),
        }
        .record(&mut data.system_attributes);
        if fifo_dlq {
            // Rule R3: a FIFO DLQ restarts the retention clock and
            // deduplicates by message id.
            data.enqueued_at = now;
            data.dedup_id = Some(uuid_string(&data.message_id));
        }
        tracing::info!(
            target: "sluice::audit",
            message_id = %uuid_string(&data.message_id),
            source = %source_arn,
            dead_letter_queue = %dlq_name,
            receive_count = state.receive_count,
            trigger,
            reason = failure.reason.as_deref().unwrap_or(""),
            class = failure.last_class().unwrap_or(""),
            "moved message to dead-letter queue"
        );
    }))
}
