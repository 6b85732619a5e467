//! The numeric limits of SQS (rules L1–L5 in SEMANTICS.md), and the range
//! check every integer parameter goes through ([`in_range`]): the actions,
//! the alarms' definitions and the consumers' settings answer an
//! out-of-range value in the same words.

use crate::error::SqsError;

/// Smallest allowed `MaximumMessageSize`.
pub const MIN_MAX_MESSAGE_SIZE: u32 = 1024;
/// Largest allowed and default `MaximumMessageSize` (1 MiB).
pub const MAX_MESSAGE_SIZE: u32 = 1_048_576;
/// Largest `VisibilityTimeout` in seconds (12 hours).
pub const MAX_VISIBILITY_TIMEOUT: u32 = 43_200;
/// Default `VisibilityTimeout` in seconds.
pub const DEFAULT_VISIBILITY_TIMEOUT: u32 = 30;
/// Smallest `MessageRetentionPeriod` in seconds.
pub const MIN_RETENTION: u32 = 60;
/// Largest `MessageRetentionPeriod` in seconds (14 days).
pub const MAX_RETENTION: u32 = 1_209_600;
/// Default `MessageRetentionPeriod` in seconds (4 days).
pub const DEFAULT_RETENTION: u32 = 345_600;
/// Largest `DelaySeconds`.
pub const MAX_DELAY: u32 = 900;
/// Largest `WaitTimeSeconds` / `ReceiveMessageWaitTimeSeconds`.
pub const MAX_WAIT_TIME: u32 = 20;
/// Largest `MaxNumberOfMessages` for one receive.
pub const MAX_RECEIVE_BATCH: u32 = 10;
/// Most entries in one batch request.
pub const MAX_BATCH_ENTRIES: usize = 10;
/// Most message attributes on one message.
pub const MAX_MESSAGE_ATTRIBUTES: usize = 10;
/// Most messages in flight per queue before receives answer `OverLimit`.
pub const MAX_INFLIGHT: usize = 120_000;
/// Longest queue name.
pub const MAX_QUEUE_NAME: usize = 80;
/// Longest batch entry id.
pub const MAX_BATCH_ID: usize = 80;
/// Seconds after DeleteQueue before the name can be created again (rule V19).
pub const RECREATE_AFTER_DELETE_SECS: u64 = 60;
/// Seconds between two purges of one queue.
pub const PURGE_INTERVAL_SECS: u64 = 60;
/// Smallest and largest `KmsDataKeyReusePeriodSeconds`.
pub const KMS_REUSE_RANGE: (u32, u32) = (60, 86_400);
/// Default `KmsDataKeyReusePeriodSeconds`.
pub const DEFAULT_KMS_REUSE: u32 = 300;
/// Most tags on one queue.
pub const MAX_TAGS: usize = 50;
/// Largest `ListQueues` page.
pub const MAX_LIST_RESULTS: i32 = 1000;
/// Largest HTTP body the server reads: a full batch plus encoding overhead.
pub const MAX_REQUEST_BODY: usize = 4 * 1024 * 1024;

/// In a standard queue whose maxReceiveCount is above this, a message
/// received this many times goes to the back of the queue (rule V12).
pub const BACK_OF_QUEUE_RECEIVES: u32 = 3;

/// Parses an integer parameter into a range, or SQS's InvalidParameterValue.
pub fn in_range(name: &str, value: i64, min: i64, max: i64) -> Result<u32, SqsError> {
    if (min..=max).contains(&value) {
        Ok(value as u32)
    } else {
        Err(SqsError::invalid_value(
            name,
            value,
            &format!("Must be between {min} and {max}, if provided."),
        ))
    }
}
