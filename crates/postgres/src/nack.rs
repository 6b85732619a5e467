//! NackMessage: a consumer's failure of an in-flight message, its reason
//! and class kept, retried after a backoff or dead-lettered at once when
//! permanent or when its class's route says so (rules X2, X7).

use crate::encryption::message_rows;
use crate::sealing::{open_reason, seal_reason};
use sluice_broker::failure::{self, FailureRecord, NackOutcome};
use sluice_broker::{EngineError, Nack};

use crate::dead_letter::{
    DeadLetterRoute, dead_letter_target, key_of_arn_near, move_to_dead_letter_queue,
};
use crate::engine::{PostgresBroker, announce, execute, expire, queue_row};
use crate::error;
use crate::rows::MESSAGE_COLUMNS;
use crate::visibility::in_flight;

/// Records a consumer's failure of an in-flight message (rule X2).
pub(crate) async fn nack(
    b: &PostgresBroker,
    name: &str,
    receipt_handle: &str,
    nack: Nack,
) -> Result<(), EngineError> {
    let inner = &b.inner;
    let now = inner.now();
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let q = queue_row(&tx, name, "").await?;
    expire(inner, &tx, &q, now).await?;
    let found = in_flight(&tx, &q, receipt_handle, now, false).await?;
    let seq = found.handle.seq as i64;
    // The failures so far, which the nack adds to (rule X7).
    let noted = nack.reason.is_some() || nack.class.is_some();
    let mut record = FailureRecord::default();
    if noted {
        let stored = found
            .failure_reason
            .map(|s| open_reason(&s, &inner.data_keys))
            .transpose()?;
        record = FailureRecord::decode(stored.as_deref());
    }
    let dlq = match failure::decide(&q.config, &mut record, &nack)? {
        NackOutcome::Retry => None,
        NackOutcome::DeadLetter {
            target_arn,
            trigger,
        } => {
            let dlq = dead_letter_target(&tx, &key_of_arn_near(name, &target_arn))
                .await?
                .ok_or(EngineError::DeadLetterQueueMissing)?;
            Some((target_arn, dlq, trigger))
        }
    };
    if let Some(stored) = record.encode().filter(|_| noted) {
        // The consumer's text: sealed as the queue's messages are.
        let stored = seal_reason(b.sealer(&q, None).await?.as_ref(), &stored);
        execute(
            &tx,
            "UPDATE sluice_messages SET failure_reason = $3 WHERE queue_id = $1 AND seq = $2",
            &[&q.id, &seq, &stored],
        )
        .await?;
    }
    let visible_now = match dlq {
        Some((target_arn, dlq, trigger)) => {
            let sql = format!(
                "SELECT {MESSAGE_COLUMNS} FROM sluice_messages WHERE queue_id = $1 AND seq = $2"
            );
            let rows = message_rows(&inner.data_keys, &tx, &sql, &[&q.id, &seq]).await?;
            let route = DeadLetterRoute {
                source: &q,
                dead_letter_target_arn: &target_arn,
                dlq: &dlq,
                trigger,
            };
            move_to_dead_letter_queue(b, &tx, route, rows, now).await?;
            Some(dlq.name)
        }
        None => {
            // An explicit wait wins; otherwise the queue's backoff for the
            // attempt that failed (the handle carries its receive count).
            let attempt = found.handle.receive;
            let retry = match (nack.retry_after_seconds, q.config.backoff()) {
                (Some(seconds), _) => i64::from(seconds) * 1000,
                (None, Some(backoff)) => backoff.delay_for(attempt, seq as u64, now as u64) as i64,
                (None, None) => 0,
            };
            execute(
                &tx,
                "UPDATE sluice_messages SET visible_at = $3 WHERE queue_id = $1 AND seq = $2",
                &[&q.id, &seq, &(now + retry)],
            )
            .await?;
            if retry == 0 {
                announce(&tx, name).await?;
                Some(name.to_string())
            } else {
                None
            }
        }
    };
    tx.commit().await.map_err(error::db)?;
    if let Some(woken) = visible_now {
        inner.wake(&woken);
    }
    Ok(())
}
