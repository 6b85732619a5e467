//! The push consumers' pitfalls (rule C8): a visibility timeout under 6×
//! the handler's time limit (AWS's advice for Lambda's SQS event source),
//! batches without item failures reported, a consumer's queue without a
//! dead-letter queue, and a consumer whose messages may be replayed but who
//! does not skip completed work (rule I1).

use crate::doctor::report::{Report, Severity};
use crate::doctor::setup::{ConsumerInfo, Consumers, Setup};

/// The checks' ids, for skipping them together.
const CHECKS: [&str; 4] = [
    "consumer-visibility",
    "consumer-batch-failures",
    "consumer-dlq",
    "consumer-idempotency",
];

/// Runs the consumer checks.
pub(super) fn check(setup: &Setup, report: &mut Report) {
    let consumers = match &setup.consumers {
        Consumers::Unknown(why) => {
            for c in CHECKS {
                report.skip(c, why);
            }
            return;
        }
        Consumers::Known(list) => list,
    };
    for c in consumers {
        let Some(q) = setup.queues.iter().find(|q| q.name == c.queue) else {
            continue;
        };
        visibility(c, q.visibility_timeout_secs, report);
        if c.batch_size > 1 && !c.report_batch_item_failures {
            report.add(
                "consumer-batch-failures",
                Severity::Warning,
                &q.name,
                format!(
                    "consumer {} takes batches of up to {} without report_batch_item_failures: \
                     one failed message fails its whole batch, so the others are processed \
                     again and their receive counts rise towards the DLQ without a failure of \
                     their own",
                    c.name, c.batch_size
                ),
                format!(
                    "set report_batch_item_failures = true on consumer {} and answer \
                     batchItemFailures, or set batch_size = 1",
                    c.name
                ),
            );
        }
        if q.redrive.is_none() {
            report.add(
                "consumer-dlq",
                Severity::Warning,
                &q.name,
                format!(
                    "consumer {} reads a queue without a RedrivePolicy: a message its handler \
                     can never process comes back until its retention ends, delivered again \
                     and again, and a permanent item cannot move anywhere",
                    c.name
                ),
                "give the queue a dead-letter queue (RedrivePolicy with maxReceiveCount 5)".into(),
            );
        } else if c.skip_completed.is_none() {
            report.add(
                "consumer-idempotency",
                Severity::Info,
                &q.name,
                format!(
                    "consumer {} reads a queue whose failed messages go to a dead-letter queue \
                     and may be replayed from it; a replayed or redelivered message whose work \
                     half succeeded is delivered again, and without a record of the work it is \
                     done twice",
                    c.name
                ),
                format!(
                    "record the work with idempotency keys (ClaimIdempotencyKey, or Powertools' \
                     idempotency over sluice.powertools) and set skip_completed = \"message_id\" \
                     (or a JSON path to a business id) on consumer {}",
                    c.name
                ),
            );
        }
    }
}

/// `consumer-visibility`: AWS advises a visibility timeout of at least 6×
/// the function's timeout plus the batching window; under the timeout
/// itself the start is refused (the config file can still say so).
fn visibility(c: &ConsumerInfo, visibility_secs: u64, report: &mut Report) {
    let wanted = c.timeout_secs * 6 + c.batching_window_secs;
    if visibility_secs >= wanted {
        return;
    }
    let (severity, consequence) = if visibility_secs < c.timeout_secs {
        (
            Severity::Critical,
            "sluice refuses to start this consumer: a message could reappear while its \
             handler still runs",
        )
    } else {
        (
            Severity::Warning,
            "a handler that times out or fails leaves little room for retries before the \
             message reappears, and a slow delivery runs close to the timeout",
        )
    };
    report.add(
        "consumer-visibility",
        severity,
        &c.queue,
        format!(
            "VisibilityTimeout is {visibility_secs} s but consumer {} may take {} s \
             (timeout_seconds) after a {} s batching window: under 6 × {} + {} = {wanted} s {consequence}",
            c.name, c.timeout_secs, c.batching_window_secs, c.timeout_secs, c.batching_window_secs
        ),
        format!("set VisibilityTimeout to at least {wanted}"),
    );
}
