//! Nack: a consumer's failure of a message, retried after a backoff or
//! moved to a dead-letter queue when permanent or when its class's route
//! says so (rules X2, X7).

use sluice_broker::EngineError;
use sluice_broker::Nack;
use sluice_broker::failure::{self, FailureRecord, NackOutcome};
use sluice_broker::moves::{key_of_arn_near, sibling_arn};

use crate::change::Change;
use crate::codec;
use crate::engine::EmbeddedBroker;
use crate::visibility::in_flight_handle;

/// Nack: a consumer failed a message.
pub(crate) async fn nack_message(
    broker: &EmbeddedBroker,
    name: &str,
    receipt_handle: &str,
    nack: Nack,
) -> Result<(), EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    let now = inner.now();
    // A reason is the consumer's text: sealed as the queue's messages are.
    let noted = nack.reason.is_some() || nack.class.is_some();
    let seal = match noted {
        true => inner.sealer(&cell)?,
        false => None,
    };
    let (ticket, dead, visible_now) = {
        let mut st = inner.lock_current(&cell, now)?;
        let mut changes = Vec::new();
        let seq = in_flight_handle(&st, cell.id, receipt_handle, false)?.seq;
        let mut record = FailureRecord::decode(st.failure(seq).map(|r| &**r));
        let dlq = match failure::decide(&st.meta.config, &mut record, &nack)? {
            NackOutcome::Retry => None,
            NackOutcome::DeadLetter {
                target_arn,
                trigger,
            } => {
                let dlq = inner
                    .queues
                    .read()
                    .get(&key_of_arn_near(&st.meta.name, &target_arn))
                    .cloned()
                    .ok_or(EngineError::DeadLetterQueueMissing)?;
                Some((sibling_arn(&target_arn, &st.meta.name), dlq, trigger))
            }
        };
        if let Some(stored) = record.encode().filter(|_| noted) {
            if inner.journal.is_durable() {
                changes.push(Change::PutFailure {
                    queue: cell.id,
                    seq,
                    reason: codec::seal_reason(&stored, seal.as_ref()),
                });
            }
            st.set_failure(seq, stored.into());
        }
        let (dead, visible_now) = match dlq {
            Some((source_arn, dlq, trigger)) => {
                let removed = st.remove(seq);
                (removed.map(|r| (source_arn, dlq, trigger, vec![r])), false)
            }
            None => {
                // An explicit wait wins; otherwise the queue's backoff
                // for this attempt applies.
                let retry = match (nack.retry_after_seconds, st.meta.config.backoff()) {
                    (Some(seconds), _) => u64::from(seconds) * 1000,
                    (None, Some(backoff)) => st
                        .get(seq)
                        .map_or(0, |e| backoff.delay_for(e.receive_count, seq, now)),
                    (None, None) => 0,
                };
                st.set_visibility(seq, now + retry, now);
                if let Some(state) = st.message_state(seq) {
                    inner.put_state(cell.id, seq, &state, &mut changes);
                }
                (None, retry == 0)
            }
        };
        (inner.submit(changes), dead, visible_now)
    };
    // Move before any wait: the message is out of its queue already.
    if let Some((source_arn, dlq, trigger, dead)) = dead {
        broker
            .move_to_dead_letter_queue(&cell, &source_arn, &dlq, dead, now, trigger)
            .await?;
    }
    ticket.wait().await?;
    if visible_now {
        cell.arrivals.notify_waiters();
    }
    Ok(())
}
