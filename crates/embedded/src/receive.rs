//! ReceiveMessage: delivery from the index, long polls, FIFO receive
//! attempts (rule F4) and dead-lettering past maxReceiveCount.

use std::time::Duration;

use sluice_broker::EngineError;
use sluice_broker::activity;
use sluice_broker::moves::{key_of_arn_near, sibling_arn};
use sluice_broker::{ReceiveOptions, ReceivedMessage};
use sluice_core::limits::MAX_INFLIGHT;
use sluice_core::receipt::ReceiptHandle;

use crate::dedup;
use crate::engine::EmbeddedBroker;
use crate::engine::deleted_error;
use crate::ids::{sequence_number, uuid_string};
use crate::message::{MessageData, MessageState};
use crate::queue_state::{Attempt, DeliveryRules, Phase};

/// ReceiveMessage.
pub(crate) async fn receive_messages(
    broker: &EmbeddedBroker,
    name: &str,
    options: ReceiveOptions,
) -> Result<Vec<ReceivedMessage>, EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    let deadline = tokio::time::Instant::now() + options.wait;
    loop {
        let notified = cell.arrivals.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let now = inner.now();
        let (delivered, ticket, next_due, dead, fifo) = {
            let mut st = cell.state.lock();
            if st.deleted {
                return Err(deleted_error());
            }
            let mut changes = Vec::new();
            inner.tick(&cell, &mut st, now, &mut changes);
            let fifo = st.meta.config.fifo;
            // A FIFO queue at the limit answers as if nothing were ready,
            // without an error (rule L4); only a standard queue says OverLimit.
            if !fifo && st.has_ready() && st.in_flight() >= MAX_INFLIGHT {
                drop(inner.submit(changes));
                return Err(EngineError::OverLimit);
            }
            // A FIFO receive retried with the same attempt id gets the
            // same messages and handles while they are still its (rule F4).
            if let (true, Some(id)) = (fifo, &options.attempt_id)
                && let Some(attempt) = st.attempts.get(id)
                && attempt.seqs.iter().all(|&(seq, count)| {
                    st.get(seq)
                        .is_some_and(|e| e.phase == Phase::InFlight && e.receive_count == count)
                })
            {
                let replay = attempt.messages.clone();
                drop(inner.submit(changes));
                return Ok(replay);
            }
            // Without its dead-letter queue a policy moves nothing: the
            // messages stay deliverable rather than vanish.
            let redrive = st
                .meta
                .config
                .redrive_out_of(&st.meta.name)
                .and_then(|policy| {
                    let dlq = inner
                        .queues
                        .read()
                        .get(&key_of_arn_near(
                            &st.meta.name,
                            &policy.dead_letter_target_arn,
                        ))
                        .cloned()?;
                    Some((policy, dlq))
                });
            // While writes are refused a delivery could not be recorded
            // (rule D1: receive counts survive): refuse it before it takes
            // anything, so the messages stay receivable (rule D5).
            if st.has_ready() && inner.journal.failure().is_some() {
                let ticket = inner.submit(std::mem::take(&mut changes));
                if let Some(refused) = ticket.refusal() {
                    return Err(refused);
                }
            }
            let visibility = options
                .visibility_timeout
                .unwrap_or(st.meta.config.visibility_timeout);
            let room = MAX_INFLIGHT.saturating_sub(st.in_flight());
            let max = (options.max_messages as usize).min(room);
            let rules = DeliveryRules::new(
                &st.meta.config,
                u64::from(visibility) * 1000,
                redrive.as_ref().map(|(p, _)| p.max_receive_count),
            );
            let delivery = st.deliver(max, now, &rules);
            let mut delivered = Vec::with_capacity(delivery.delivered.len());
            for seq in delivery.delivered {
                let (Some(entry), Some(state)) = (st.get(seq), st.message_state(seq)) else {
                    continue;
                };
                inner.put_state(cell.id, seq, &state, &mut changes);
                delivered.push((seq, state, entry.body.clone()));
            }
            let dead = match redrive {
                Some((policy, dlq)) if !delivery.dead.is_empty() => Some((
                    sibling_arn(&policy.dead_letter_target_arn, &st.meta.name),
                    dlq,
                    delivery.dead,
                )),
                _ => None,
            };
            (delivered, inner.submit(changes), st.next_due(), dead, fifo)
        };
        if let Some((source_arn, dlq, dead)) = dead {
            broker
                .move_to_dead_letter_queue(&cell, &source_arn, &dlq, dead, now, "maxReceiveCount")
                .await?;
        }
        if !delivered.is_empty() {
            ticket.wait().await?;
            // The inserts of these messages came before this receive's
            // changes in the journal, so what is not cached is in the
            // log, and in redb once `load_bodies` has waited for it.
            let (states, bodies): (Vec<_>, Vec<_>) = delivered
                .into_iter()
                .map(|(seq, state, body)| ((seq, state), (seq, body)))
                .unzip();
            let bodies = inner.load_bodies(cell.id, bodies).await?;
            let messages: Vec<ReceivedMessage> = states
                .into_iter()
                .zip(bodies)
                // A body gone meanwhile: the message was deleted (by a
                // purge, retention or an older handle) since delivery.
                .filter_map(|((seq, state), body)| {
                    body.map(|data| received(cell.id, seq, &state, &data, fifo))
                })
                .collect();
            if let (true, Some(id), false) = (fifo, &options.attempt_id, messages.is_empty()) {
                let seqs = messages
                    .iter()
                    .filter_map(|m| ReceiptHandle::decode(&m.receipt_handle))
                    .map(|h| (h.seq, h.receive))
                    .collect();
                cell.state.lock().attempts.insert(
                    id.clone(),
                    Attempt {
                        expires_at: now + dedup::WINDOW_MS,
                        seqs,
                        messages: messages.clone(),
                    },
                );
            }
            activity::add(&cell.activity.received, messages.len() as u64);
            return Ok(messages);
        }
        drop(ticket);
        let now_instant = tokio::time::Instant::now();
        if now_instant >= deadline {
            activity::add(&cell.activity.empty_receives, 1);
            return Ok(Vec::new());
        }
        // Sleep until a send wakes us, the next timer is due, or the deadline.
        let wake_at = match next_due {
            Some(due) => {
                deadline.min(now_instant + Duration::from_millis(due.saturating_sub(now).max(1)))
            }
            None => deadline,
        };
        tokio::select! {
            _ = &mut notified => {}
            _ = tokio::time::sleep_until(wake_at) => {}
        }
    }
}

/// A delivered message as the receive answers it.
pub(crate) fn received(
    queue_id: u64,
    seq: u64,
    state: &MessageState,
    data: &MessageData,
    fifo: bool,
) -> ReceivedMessage {
    ReceivedMessage {
        message_id: uuid_string(&data.message_id),
        receipt_handle: ReceiptHandle {
            queue_id,
            seq,
            receive: state.receive_count,
            received_at: state.last_receive_at,
        }
        .encode(),
        body: data.body.clone(),
        attributes: data.attributes.clone(),
        system_attributes: data.system_attributes.clone(),
        sent_at: data.sent_at,
        first_receive_at: state.first_receive_at,
        receive_count: state.receive_count,
        group_id: data.group_id.clone(),
        dedup_id: data.dedup_id.clone(),
        sequence_number: fifo.then(|| sequence_number(seq)),
        body_md5: data.body_md5,
    }
}
