//! The storage-free rules of moving a message between queues, shared by
//! every engine: the provenance a dead-lettered message carries (rules R4,
//! X2), where a redrive sends it (rule R7), and its replay marks (rule X3).

use sluice_core::clock::Millis;
use sluice_core::message::{AttributeValue, MessageAttributeValue, MessageAttributes};

use crate::types::{REPLAY_COUNT_ATTRIBUTE, Redrive};

/// The system attribute that names a dead-lettered message's source (rule R4).
pub const DEAD_LETTER_SOURCE_ARN: &str = "DeadLetterQueueSourceArn";
/// Provenance kept with a dead-lettered message (rule X2): when it moved.
pub const MOVED_AT: &str = "Sluice.MovedAt";
/// Provenance: its first receive in the source (ms).
pub const FIRST_RECEIVE_AT: &str = "Sluice.FirstReceiveAt";
/// Provenance: its last receive in the source (ms).
pub const LAST_RECEIVE_AT: &str = "Sluice.LastReceiveAt";
/// Provenance: the last failure reason a consumer gave.
pub const LAST_FAILURE_REASON: &str = "Sluice.LastFailureReason";
/// Provenance: the class of the last classified failure (rule X7).
pub const FAILURE_CLASS: &str = "Sluice.FailureClass";

/// Every provenance attribute, [`DEAD_LETTER_SOURCE_ARN`] included.
const PROVENANCE: [&str; 6] = [
    DEAD_LETTER_SOURCE_ARN,
    MOVED_AT,
    FIRST_RECEIVE_AT,
    LAST_RECEIVE_AT,
    LAST_FAILURE_REASON,
    FAILURE_CLASS,
];

/// The queue name at the end of an ARN.
pub fn name_of_arn(arn: &str) -> &str {
    arn.rsplit(':').next().unwrap_or(arn)
}

/// The key of the queue `arn` names, in the region and account of the queue
/// stored under `near`: a dead-letter queue and its sources share both
/// (rule R1), so an engine resolves one from the other without knowing the
/// server's own region (rule W3).
pub fn key_of_arn_near(near: &str, arn: &str) -> String {
    sluice_core::queue_name::key_near(near, name_of_arn(arn))
}

/// The ARN of the queue stored under `queue` (a key), in the same account
/// and region as `sibling_arn`.
pub fn sibling_arn(sibling_arn: &str, queue: &str) -> String {
    let name = sluice_core::queue_name::name_of_key(queue);
    match sibling_arn.rsplit_once(':') {
        Some((prefix, _)) => format!("{prefix}:{name}"),
        None => name.to_string(),
    }
}

/// What a message entering a dead-letter queue records of its past.
#[derive(Debug, Clone, Copy)]
pub struct Provenance<'a> {
    /// The ARN of the queue it failed in.
    pub source_arn: &'a str,
    /// When it moves (ms).
    pub moved_at: Millis,
    /// Its first receive in the source (ms, 0 if none).
    pub first_receive_at: Millis,
    /// Its last receive in the source (ms, 0 if none).
    pub last_receive_at: Millis,
    /// The last failure reason a consumer gave.
    pub failure_reason: Option<&'a str>,
    /// The class of the last classified failure (rule X7).
    pub failure_class: Option<&'a str>,
}

impl Provenance<'_> {
    /// Writes the provenance into a message's system attributes (rules R4,
    /// X2), replacing any left from an earlier stay in a DLQ.
    pub fn record(&self, system_attributes: &mut MessageAttributes) {
        strip_provenance(system_attributes);
        let mut note = |name: &str, value: String| {
            system_attributes.insert(
                name.to_string(),
                MessageAttributeValue {
                    data_type: "String".into(),
                    value: AttributeValue::String(value),
                },
            );
        };
        note(DEAD_LETTER_SOURCE_ARN, self.source_arn.to_string());
        note(MOVED_AT, self.moved_at.to_string());
        note(FIRST_RECEIVE_AT, self.first_receive_at.to_string());
        note(LAST_RECEIVE_AT, self.last_receive_at.to_string());
        if let Some(reason) = self.failure_reason {
            note(LAST_FAILURE_REASON, reason.to_string());
        }
        if let Some(class) = self.failure_class {
            note(FAILURE_CLASS, class.to_string());
        }
    }
}

/// Removes the provenance of a stay in a DLQ: a redriven message starts
/// afresh, marked only by its replay count.
pub fn strip_provenance(system_attributes: &mut MessageAttributes) {
    for name in PROVENANCE {
        system_attributes.remove(name);
    }
}

/// The last failure reason recorded in a message's provenance.
pub fn recorded_failure(system_attributes: &MessageAttributes) -> Option<&str> {
    recorded(system_attributes, LAST_FAILURE_REASON)
}

/// The failure class recorded in a message's provenance (rule X7).
pub fn recorded_class(system_attributes: &MessageAttributes) -> Option<&str> {
    recorded(system_attributes, FAILURE_CLASS)
}

fn recorded<'a>(system_attributes: &'a MessageAttributes, name: &str) -> Option<&'a str> {
    match system_attributes.get(name).map(|a| &a.value) {
        Some(AttributeValue::String(r)) => Some(r),
        _ => None,
    }
}

/// How many times a selective redrive already replayed a message (rule X3).
pub fn replay_count(attributes: &MessageAttributes) -> u32 {
    match attributes.get(REPLAY_COUNT_ATTRIBUTE).map(|a| &a.value) {
        Some(AttributeValue::String(n)) => n.parse().unwrap_or(0),
        _ => 0,
    }
}

/// Counts one more replay in a message's attributes (rule X3).
pub fn mark_replay(attributes: &mut MessageAttributes) {
    let count = replay_count(attributes) + 1;
    attributes.insert(
        REPLAY_COUNT_ATTRIBUTE.to_string(),
        MessageAttributeValue {
            data_type: "Number".into(),
            value: AttributeValue::String(count.to_string()),
        },
    );
}

/// The queue a redrive out of the queue stored under `dlq` sends a message
/// to: the redrive's destination, or the source its provenance names
/// (rule R7), in the DLQ's region.
pub fn redrive_destination(
    redrive: &Redrive,
    dlq: &str,
    system_attributes: &MessageAttributes,
) -> Option<String> {
    redrive.destination.clone().or_else(|| {
        match system_attributes
            .get(DEAD_LETTER_SOURCE_ARN)
            .map(|v| &v.value)
        {
            Some(AttributeValue::String(arn)) => Some(key_of_arn_near(dlq, arn)),
            _ => None,
        }
    })
}

/// The FailureReason of a move task whose destination queue is gone (rule R10).
pub const NON_EXISTENT_QUEUE: &str = "AWS.SimpleQueueService.NonExistentQueue";

/// Why a redrive could not move a message whose destination is `target`.
/// A missing destination is named by its error code alone, as AWS lists
/// it in a failed task's FailureReason (rule R10).
pub fn unmovable_reason(target: Option<&str>) -> String {
    match target {
        Some(_) => NON_EXISTENT_QUEUE.into(),
        None => "A message has no DeadLetterQueueSourceArn and no destination was given".into(),
    }
}

/// Why a redrive refuses a message replayed `replays` times already.
pub fn refused_reason(message_id: &str, replays: u32) -> String {
    format!(
        "message {message_id} was already replayed {replays} times; fix the consumer or raise the limit"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x2_provenance_is_recorded_replaced_and_stripped() {
        let mut attrs = MessageAttributes::new();
        let p = Provenance {
            source_arn: "arn:aws:sqs:us-east-1:000000000000:orders",
            moved_at: 5,
            first_receive_at: 1,
            last_receive_at: 4,
            failure_reason: Some("bad"),
            failure_class: Some("validation"),
        };
        p.record(&mut attrs);
        assert_eq!(attrs.len(), 6);
        assert_eq!(recorded_failure(&attrs), Some("bad"));
        assert_eq!(recorded_class(&attrs), Some("validation"));
        Provenance {
            failure_reason: None,
            failure_class: None,
            ..p
        }
        .record(&mut attrs);
        assert_eq!(
            (recorded_failure(&attrs), recorded_class(&attrs)),
            (None, None),
            "an old reason or class does not linger"
        );
        strip_provenance(&mut attrs);
        assert!(attrs.is_empty());
    }

    #[test]
    fn x3_replays_count_up() {
        let mut attrs = MessageAttributes::new();
        assert_eq!(replay_count(&attrs), 0);
        mark_replay(&mut attrs);
        mark_replay(&mut attrs);
        assert_eq!(replay_count(&attrs), 2);
        assert_eq!(attrs[REPLAY_COUNT_ATTRIBUTE].data_type, "Number");
    }
}
