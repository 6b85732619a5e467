//! Typed inputs of the SQS actions, in the JSON protocol's member names
//! (both protocols decode to this shape first).
//!
//! Every member is optional here so that a missing required member is
//! reported as SQS does (`MissingParameter`), not as a parse failure.

use std::collections::BTreeMap;

use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _, IgnoredAny, SeqAccess, Visitor};
use sluice_core::limits::MAX_BATCH_ENTRIES;
use sluice_core::{ErrorCode, SqsError};

use crate::Input;

/// Parses an action's input into its typed form.
pub fn parse<T: DeserializeOwned>(input: Input) -> Result<T, SqsError> {
    let parsed = match input {
        Input::Json(body) => serde_json::from_slice(&body),
        Input::Value(value) => serde_json::from_value(value),
    };
    parsed.map_err(input_error)
}

/// Parses an input, still held by the request, into a view that may
/// borrow its text: nothing is copied or cloned (a second reader of the
/// input, such as the access check, pays no more than the parse). Errors
/// as [`parse`]'s.
pub fn parse_borrowed<'a, T: Deserialize<'a>>(input: &'a Input) -> Result<T, SqsError> {
    let parsed = match input {
        Input::Json(body) => serde_json::from_slice(body),
        Input::Value(value) => T::deserialize(value),
    };
    parsed.map_err(input_error)
}

/// SQS's error for an input that does not parse.
fn input_error(e: serde_json::Error) -> SqsError {
    // A batch refused while it was parsed (see `bounded_entries`).
    let text = e.to_string();
    if text.starts_with(TOO_MANY_ENTRIES) {
        let message = text.split(" at line ").next().unwrap_or(&text);
        return SqsError::new(ErrorCode::TooManyEntriesInBatchRequest, message);
    }
    let why = if e.is_syntax() || e.is_eof() {
        "The request body is not valid JSON"
    } else {
        "The request does not match the action's input"
    };
    SqsError::new(ErrorCode::SerializationException, format!("{why}: {e}"))
}

/// The start of the message of a batch with too many entries, as SQS words it.
const TOO_MANY_ENTRIES: &str = "Maximum number of entries per request are";

/// A batch's entries, refused while they are parsed when there are more
/// than [`MAX_BATCH_ENTRIES`]: the entries past the limit are only counted
/// (skipped without being built), so a body of a million `{}` entries costs
/// no more memory than its bytes.
fn bounded_entries<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Entries<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Entries<T> {
        type Value = Option<Vec<T>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of batch entries")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::new();
            while entries.len() < MAX_BATCH_ENTRIES {
                match seq.next_element()? {
                    Some(entry) => entries.push(entry),
                    None => return Ok(Some(entries)),
                }
            }
            let mut sent = entries.len();
            while seq.next_element::<IgnoredAny>()?.is_some() {
                sent += 1;
            }
            if sent > MAX_BATCH_ENTRIES {
                return Err(A::Error::custom(format!(
                    "{TOO_MANY_ENTRIES} {MAX_BATCH_ENTRIES}. You have sent {sent}."
                )));
            }
            Ok(Some(entries))
        }
    }
    deserializer.deserialize_option(Entries(PhantomData))
}

/// Returns a required member or `MissingParameter`.
pub fn required<T>(value: Option<T>, name: &str) -> Result<T, SqsError> {
    value.ok_or_else(|| SqsError::missing(name))
}

/// A message attribute value as it travels (binary values base64-encoded).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WireAttributeValue {
    /// `String`, `Number`, `Binary`, with an optional `.custom` suffix.
    pub data_type: Option<String>,
    /// For String and Number.
    pub string_value: Option<String>,
    /// For Binary, base64.
    pub binary_value: Option<String>,
    /// Reserved by SQS, not implemented.
    pub string_list_values: Option<Vec<String>>,
    /// Reserved by SQS, not implemented.
    pub binary_list_values: Option<Vec<String>>,
}

/// Attributes by name as they travel.
pub type WireAttributes = BTreeMap<String, WireAttributeValue>;

/// CreateQueue.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateQueueInput {
    /// Required.
    pub queue_name: Option<String>,
    /// Queue attributes.
    pub attributes: Option<BTreeMap<String, String>>,
    /// Tags (lower-case `tags` in the model).
    #[serde(rename = "tags")]
    pub tags: Option<BTreeMap<String, String>>,
}

/// GetQueueUrl.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetQueueUrlInput {
    /// Required.
    pub queue_name: Option<String>,
    /// Must be this server's account when given.
    #[serde(rename = "QueueOwnerAWSAccountId")]
    pub queue_owner_aws_account_id: Option<String>,
}

/// ListQueues.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListQueuesInput {
    /// Only names starting with this.
    pub queue_name_prefix: Option<String>,
    /// Continuation from a previous page.
    pub next_token: Option<String>,
    /// Page size, 1–1000.
    pub max_results: Option<i64>,
}

/// Actions that take only a queue URL (DeleteQueue, PurgeQueue, ListQueueTags).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct QueueUrlInput {
    /// Required.
    pub queue_url: Option<String>,
}

/// GetQueueAttributes.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetQueueAttributesInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Names, or `All`.
    pub attribute_names: Option<Vec<String>>,
}

/// SetQueueAttributes.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SetQueueAttributesInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required.
    pub attributes: Option<BTreeMap<String, String>>,
}

/// The message part of SendMessage and of each SendMessageBatch entry.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MessageInput {
    /// Batch entry id (batch only).
    pub id: Option<String>,
    /// Required.
    pub message_body: Option<String>,
    /// 0–900.
    pub delay_seconds: Option<i64>,
    /// User attributes.
    pub message_attributes: Option<WireAttributes>,
    /// System attributes (`AWSTraceHeader`).
    pub message_system_attributes: Option<WireAttributes>,
    /// FIFO deduplication id.
    pub message_deduplication_id: Option<String>,
    /// Message group.
    pub message_group_id: Option<String>,
}

/// SendMessage.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SendMessageInput {
    /// Required.
    pub queue_url: Option<String>,
    /// The message.
    #[serde(flatten)]
    pub message: MessageInput,
}

/// SendMessageBatch.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SendMessageBatchInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required, 1–10; more are refused while parsing.
    #[serde(default, deserialize_with = "bounded_entries")]
    pub entries: Option<Vec<MessageInput>>,
}

/// ReceiveMessage.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReceiveMessageInput {
    /// Required.
    pub queue_url: Option<String>,
    /// System attributes to return (deprecated name).
    pub attribute_names: Option<Vec<String>>,
    /// System attributes to return.
    pub message_system_attribute_names: Option<Vec<String>>,
    /// User attributes to return: names, `All`, `prefix.*`.
    pub message_attribute_names: Option<Vec<String>>,
    /// 1–10, default 1.
    pub max_number_of_messages: Option<i64>,
    /// Overrides the queue's.
    pub visibility_timeout: Option<i64>,
    /// 0–20; the queue's when absent.
    pub wait_time_seconds: Option<i64>,
    /// FIFO retry id.
    pub receive_request_attempt_id: Option<String>,
}

/// DeleteMessage.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteMessageInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required.
    pub receipt_handle: Option<String>,
}

/// A DeleteMessageBatch or ChangeMessageVisibilityBatch entry.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct HandleEntry {
    /// Required.
    pub id: Option<String>,
    /// Required.
    pub receipt_handle: Option<String>,
    /// Required for visibility changes.
    pub visibility_timeout: Option<i64>,
}

/// DeleteMessageBatch and ChangeMessageVisibilityBatch.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct HandleBatchInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required, 1–10; more are refused while parsing.
    #[serde(default, deserialize_with = "bounded_entries")]
    pub entries: Option<Vec<HandleEntry>>,
}

/// ChangeMessageVisibility.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ChangeMessageVisibilityInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required.
    pub receipt_handle: Option<String>,
    /// Required, 0–43200.
    pub visibility_timeout: Option<i64>,
}

/// TagQueue.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TagQueueInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required.
    pub tags: Option<BTreeMap<String, String>>,
}

/// UntagQueue.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UntagQueueInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required.
    pub tag_keys: Option<Vec<String>>,
}

/// AddPermission.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AddPermissionInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required: the statement id.
    pub label: Option<String>,
    /// Required: principals.
    #[serde(rename = "AWSAccountIds")]
    pub aws_account_ids: Option<Vec<String>>,
    /// Required: action names.
    pub actions: Option<Vec<String>>,
}

/// RemovePermission.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RemovePermissionInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required.
    pub label: Option<String>,
}

/// ListDeadLetterSourceQueues.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListDeadLetterSourceQueuesInput {
    /// Required: the dead-letter queue.
    pub queue_url: Option<String>,
    /// Continuation.
    pub next_token: Option<String>,
    /// 1–1000.
    pub max_results: Option<i64>,
}

/// StartMessageMoveTask.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StartMessageMoveTaskInput {
    /// Required: the dead-letter queue's ARN.
    pub source_arn: Option<String>,
    /// Where to move; each message's source when absent.
    pub destination_arn: Option<String>,
    /// 1–500.
    pub max_number_of_messages_per_second: Option<i64>,
}

/// ListMessageMoveTasks.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListMessageMoveTasksInput {
    /// Required.
    pub source_arn: Option<String>,
    /// 1–10, default 1.
    pub max_results: Option<i64>,
}

/// CancelMessageMoveTask.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CancelMessageMoveTaskInput {
    /// Required.
    pub task_handle: Option<String>,
}

/// NackMessage (sluice's own action).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NackMessageInput {
    /// Required.
    pub queue_url: Option<String>,
    /// Required: the delivery that failed.
    pub receipt_handle: Option<String>,
    /// Why it failed, up to 1,024 characters.
    pub reason: Option<String>,
    /// Deterministic failure: to the DLQ now.
    pub permanent: Option<bool>,
    /// Retry no sooner than this, 0–43,200 s.
    pub retry_after_seconds: Option<i64>,
}

/// PeekMessages (sluice's own action).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PeekMessagesInput {
    /// Required.
    pub queue_url: Option<String>,
    /// 1–100, default 10.
    pub max_results: Option<i64>,
    /// From a previous page.
    pub next_token: Option<String>,
    /// Which messages.
    #[serde(flatten)]
    pub filter: FilterInput,
}

/// The message filter of PeekMessages and RedriveMessages.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FilterInput {
    /// Sent at or after, ms since the epoch.
    pub sent_after: Option<i64>,
    /// Sent before, ms since the epoch.
    pub sent_before: Option<i64>,
    /// The body contains this text.
    pub body_contains: Option<String>,
    /// With `AttributeValue`: a message attribute's string value.
    pub attribute_name: Option<String>,
    /// See `AttributeName`.
    pub attribute_value: Option<String>,
    /// Dead-lettered from this queue.
    pub source_queue_arn: Option<String>,
    /// The last failure reason contains this text.
    pub failure_reason_contains: Option<String>,
}

/// RedriveMessages (sluice's own action).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RedriveMessagesInput {
    /// Required: the dead-letter queue.
    pub queue_url: Option<String>,
    /// Where to; each message's source when absent.
    pub destination_arn: Option<String>,
    /// 1–1,000, default 100.
    pub max_messages: Option<i64>,
    /// Report what would move; move nothing.
    pub dry_run: Option<bool>,
    /// Refuse messages already replayed this many times (default 3).
    pub max_replays: Option<i64>,
    /// Which messages.
    #[serde(flatten)]
    pub filter: FilterInput,
}

/// PutAlarm (sluice's own action): create or replace an alarm on a queue
/// metric (rule M2).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutAlarmInput {
    /// Required: unique name; an existing alarm of this name is replaced.
    pub alarm_name: Option<String>,
    /// Required: the queue whose metric is watched.
    pub queue_url: Option<String>,
    /// Required: a CloudWatch SQS metric name, or one of sluice's own.
    pub metric_name: Option<String>,
    /// Average, Sum, Minimum, Maximum or SampleCount (default Maximum).
    pub statistic: Option<String>,
    /// Seconds per period (default 60).
    pub period: Option<i64>,
    /// How many recent periods are evaluated (default 1).
    pub evaluation_periods: Option<i64>,
    /// How many of them must breach to alarm (default: all).
    pub datapoints_to_alarm: Option<i64>,
    /// Required: the value compared with.
    pub threshold: Option<f64>,
    /// Required: GreaterThanOrEqualToThreshold, GreaterThanThreshold,
    /// LessThanThreshold or LessThanOrEqualToThreshold.
    pub comparison_operator: Option<String>,
    /// missing (default), notBreaching, breaching or ignore.
    pub treat_missing_data: Option<String>,
    /// Webhook URLs and queue ARNs notified on state changes.
    pub actions: Option<Vec<String>>,
    /// Free text for the people who get the notification.
    pub alarm_description: Option<String>,
}

/// DescribeAlarms (sluice's own action).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAlarmsInput {
    /// Only these alarms.
    pub alarm_names: Option<Vec<String>>,
    /// Only alarms on this queue.
    pub queue_url: Option<String>,
    /// Only alarms in this state.
    pub state_value: Option<String>,
}

/// DeleteAlarms (sluice's own action).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteAlarmsInput {
    /// Required: the alarms to delete; unknown names are ignored.
    pub alarm_names: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// L8: a JSON batch of more than 10 entries is refused while parsing
    /// with SQS's code and count; 10 entries parse.
    #[test]
    fn l8_batches_are_refused_while_parsed() {
        let batch = |n: usize| {
            let entries = vec!["{}"; n].join(",");
            crate::Input::Json(bytes::Bytes::from(format!(
                r#"{{"QueueUrl":"u","Entries":[{entries}]}}"#
            )))
        };
        let ten: SendMessageBatchInput = parse(batch(10)).unwrap();
        assert_eq!(ten.entries.unwrap().len(), 10);
        let e = parse::<HandleBatchInput>(batch(100_000)).unwrap_err();
        assert_eq!(e.code, ErrorCode::TooManyEntriesInBatchRequest);
        assert_eq!(
            e.message,
            "Maximum number of entries per request are 10. You have sent 100000."
        );
        let none: HandleBatchInput = parse(crate::Input::Json(bytes::Bytes::from_static(
            br#"{"QueueUrl":"u","Entries":null}"#,
        )))
        .unwrap();
        assert!(none.entries.is_none());
        let absent: HandleBatchInput =
            parse(crate::Input::Value(serde_json::json!({"QueueUrl": "u"}))).unwrap();
        assert!(absent.entries.is_none());
        let as_value = serde_json::json!({"Entries": vec![serde_json::json!({}); 11]});
        let e = parse::<SendMessageBatchInput>(crate::Input::Value(as_value)).unwrap_err();
        assert_eq!(e.code, ErrorCode::TooManyEntriesInBatchRequest);
    }
}
