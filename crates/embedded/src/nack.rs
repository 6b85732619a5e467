//! Nack: a consumer's failure of a message, retried after a backoff or
//! moved to the dead-letter queue when permanent.

use sluice_broker::EngineError;
use sluice_broker::Nack;
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
    let seal = match nack.reason {
        Some(_) => inner.sealer(&cell)?,
        None => None,
    };
    let (ticket, dead, visible_now) = {
        let mut st = inner.lock_current(&cell, now)?;
        let mut changes = Vec::new();
        let seq = in_flight_handle(&st, cell.id, receipt_handle, false)?.seq;
        let dlq = if nack.permanent {
            let policy = st
                .meta
                .config
                .redrive()
                .ok_or(EngineError::NoRedrivePolicy)?;
            let dlq = inner
                .queues
                .read()
                .get(&key_of_arn_near(
                    &st.meta.name,
                    &policy.dead_letter_target_arn,
                ))
                .cloned()
                .ok_or(EngineError::DeadLetterQueueMissing)?;
            Some((
                sibling_arn(&policy.dead_letter_target_arn, &st.meta.name),
                dlq,
            ))
        } else {
            None
        };
        if let Some(reason) = nack.reason {
            if inner.journal.is_durable() {
                changes.push(Change::PutFailure {
                    queue: cell.id,
                    seq,
                    reason: codec::seal_reason(&reason, seal.as_ref()),
                });
            }
            st.set_failure(seq, reason.into());
        }
        let (dead, visible_now) = match dlq {
            Some((source_arn, dlq)) => {
                let removed = st.remove(seq);
                (removed.map(|r| (source_arn, dlq, vec![r])), false)
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
    if let Some((source_arn, dlq, dead)) = dead {
        broker
            .move_to_dead_letter_queue(&cell, &source_arn, &dlq, dead, now, "permanent nack")
            .await?;
    }
    ticket.wait().await?;
    if visible_now {
        cell.arrivals.notify_waiters();
    }
    Ok(())
}
