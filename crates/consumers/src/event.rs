//! The event POSTed to a handler: Lambda's SQS event, field for field
//! (rule C1), built from what the broker received. Typed, so that each
//! field is named once and the event is written straight to its JSON,
//! borrowing the messages' text rather than copying it into a tree.

use std::collections::BTreeMap;
use std::fmt::Display;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Serialize, Serializer};
use serde_json::Value;
use sluice_broker::ReceivedMessage;
use sluice_core::digest::{digest_hex, md5_of_attributes, md5_of_body};
use sluice_core::message::AttributeValue;
use sluice_core::queue_name::Account;

/// What every record of a queue's batch shares.
#[derive(Debug, Clone)]
pub struct EventSource {
    /// The queue's ARN (`eventSourceARN`).
    pub queue_arn: String,
    /// The region (`awsRegion`).
    pub region: String,
    /// The `SenderId` of a message sent without authentication: the
    /// account, as the receive action gives it.
    pub sender_id: String,
}

impl EventSource {
    /// The source of the queue stored under `queue_key`.
    pub fn new(account: &Account, queue_key: &str) -> Self {
        Self {
            queue_arn: account.queue_arn(queue_key),
            region: account.region.clone(),
            sender_id: account.id.clone(),
        }
    }
}

/// `{"Records": [...]}`, one record per message, in the order received.
#[derive(Debug, Serialize)]
pub struct SqsEvent<'a> {
    /// The records.
    #[serde(rename = "Records")]
    pub records: Vec<SqsRecord<'a>>,
}

/// One message as Lambda gives it to a handler.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SqsRecord<'a> {
    message_id: &'a str,
    /// The engine's handle until [`seal_receipt_handles`] seals it.
    receipt_handle: String,
    body: &'a str,
    attributes: RecordAttributes<'a>,
    message_attributes: BTreeMap<&'a str, RecordAttribute<'a>>,
    md5_of_body: String,
    /// Null when the message has no attributes.
    md5_of_message_attributes: Option<String>,
    event_source: &'static str,
    #[serde(rename = "eventSourceARN")]
    event_source_arn: &'a str,
    aws_region: &'a str,
}

/// A record's `attributes`: every value a string, as Lambda writes them;
/// the four every record has, then those the message has.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct RecordAttributes<'a> {
    #[serde(serialize_with = "as_text")]
    approximate_receive_count: u32,
    #[serde(serialize_with = "as_text")]
    sent_timestamp: u64,
    sender_id: &'a str,
    #[serde(serialize_with = "as_text")]
    approximate_first_receive_timestamp: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    message_group_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message_deduplication_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sequence_number: Option<&'a str>,
    #[serde(rename = "AWSTraceHeader", skip_serializing_if = "Option::is_none")]
    aws_trace_header: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dead_letter_queue_source_arn: Option<&'a str>,
}

/// A message attribute in Lambda's shape: the value under `stringValue`
/// or `binaryValue` (base64), list fields always empty, and `dataType`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordAttribute<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    string_value: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    binary_value: Option<String>,
    string_list_values: [&'a str; 0],
    binary_list_values: [&'a str; 0],
    data_type: &'a str,
}

/// Writes a number as Lambda does every attribute value: as a string.
fn as_text<T: Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// The event for `messages`, in the order received.
pub fn build_event<'a>(source: &'a EventSource, messages: &'a [ReceivedMessage]) -> SqsEvent<'a> {
    SqsEvent {
        records: messages.iter().map(|m| record(source, m)).collect(),
    }
}

/// Replaces each record's engine handle with the one `seal` makes of it
/// (rule A3), as ReceiveMessage gives them: a handler may call the API
/// with the handles of its event.
pub fn seal_receipt_handles(event: &mut SqsEvent<'_>, seal: impl Fn(&str) -> String) {
    for record in &mut event.records {
        record.receipt_handle = seal(&record.receipt_handle);
    }
}

/// One record. Lambda writes every attribute value as a string, and
/// `md5OfMessageAttributes` as null when the message has none.
pub(super) fn record<'a>(source: &'a EventSource, m: &'a ReceivedMessage) -> SqsRecord<'a> {
    let md5_of_body = match &m.body_md5 {
        Some(digest) => digest_hex(digest),
        None => md5_of_body(&m.body),
    };
    SqsRecord {
        message_id: &m.message_id,
        receipt_handle: m.receipt_handle.clone(),
        body: &m.body,
        attributes: record_attributes(source, m),
        message_attributes: message_attributes(m),
        md5_of_body,
        md5_of_message_attributes: md5_of_attributes(&m.attributes),
        event_source: "aws:sqs",
        event_source_arn: &source.queue_arn,
        aws_region: &source.region,
    }
}

/// The record as a JSON tree, which filter patterns (rule C13) read.
pub(super) fn record_value(source: &EventSource, m: &ReceivedMessage) -> Value {
    // Cannot fail: every map key is a string and every value plain data.
    serde_json::to_value(record(source, m)).unwrap_or_default()
}

fn record_attributes<'a>(source: &'a EventSource, m: &'a ReceivedMessage) -> RecordAttributes<'a> {
    RecordAttributes {
        approximate_receive_count: m.receive_count,
        sent_timestamp: m.sent_at,
        sender_id: kept_string(m, "SenderId").unwrap_or(&source.sender_id),
        approximate_first_receive_timestamp: m.first_receive_at,
        message_group_id: m.group_id.as_deref(),
        message_deduplication_id: m.dedup_id.as_deref(),
        sequence_number: m.sequence_number.as_deref(),
        aws_trace_header: kept_string(m, "AWSTraceHeader"),
        dead_letter_queue_source_arn: kept_string(m, "DeadLetterQueueSourceArn"),
    }
}

/// A system attribute kept with the message (the sender's trace header, a
/// dead-lettered message's source).
fn kept_string<'a>(m: &'a ReceivedMessage, name: &str) -> Option<&'a str> {
    m.system_attributes.get(name).and_then(|v| match &v.value {
        AttributeValue::String(s) => Some(s.as_str()),
        AttributeValue::Binary(_) => None,
    })
}

fn message_attributes(m: &ReceivedMessage) -> BTreeMap<&str, RecordAttribute<'_>> {
    m.attributes
        .iter()
        .map(|(name, v)| {
            let (string_value, binary_value) = match &v.value {
                AttributeValue::String(s) => (Some(s.as_str()), None),
                AttributeValue::Binary(b) => (None, Some(STANDARD.encode(b))),
            };
            let attr = RecordAttribute {
                string_value,
                binary_value,
                string_list_values: [],
                binary_list_values: [],
                data_type: &v.data_type,
            };
            (name.as_str(), attr)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sluice_core::message::MessageAttributeValue;

    /// The event as the handler reads it.
    fn json_of(event: &SqsEvent<'_>) -> Value {
        serde_json::from_slice(&serde_json::to_vec(event).unwrap()).unwrap()
    }

    fn message() -> ReceivedMessage {
        ReceivedMessage {
            message_id: "059f36b4-87a3-44ab-83d2-661975830a7d".into(),
            receipt_handle: "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a".into(),
            body: "Test message.".into(),
            attributes: Default::default(),
            system_attributes: Default::default(),
            sent_at: 1545082649183,
            first_receive_at: 1545082649185,
            receive_count: 1,
            group_id: None,
            dedup_id: None,
            sequence_number: None,
            body_md5: None,
        }
    }

    fn source() -> EventSource {
        let account = Account {
            id: "123456789012".into(),
            region: "us-east-2".into(),
        };
        EventSource::new(&account, "my-queue")
    }

    /// C1: the record of AWS's documented sample event ("Example Amazon SQS
    /// message event (standard queue)", Lambda developer guide, "Using Lambda
    /// with Amazon SQS"), rebuilt field for field, with its types: every
    /// attribute a string, the MD5 of "Test message.", and
    /// `md5OfMessageAttributes` null without attributes.
    #[test]
    fn c1_record_matches_the_documented_sample() {
        let (source, messages) = (source(), [message()]);
        let event = json_of(&build_event(&source, &messages));
        let expected = json!({"Records": [{
            "messageId": "059f36b4-87a3-44ab-83d2-661975830a7d",
            "receiptHandle": "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a",
            "body": "Test message.",
            "attributes": {
                "ApproximateReceiveCount": "1",
                "SentTimestamp": "1545082649183",
                "SenderId": "123456789012",
                "ApproximateFirstReceiveTimestamp": "1545082649185"
            },
            "messageAttributes": {},
            "md5OfBody": "e4e68fb7bd0e697a0ae8f1bb342846b3",
            "md5OfMessageAttributes": null,
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-2:123456789012:my-queue",
            "awsRegion": "us-east-2"
        }]});
        assert_eq!(event, expected);
    }

    /// A3: the records carry sealed handles, as ReceiveMessage gives them.
    #[test]
    fn a3_records_carry_sealed_handles() {
        let (source, messages) = (source(), [message()]);
        let mut event = build_event(&source, &messages);
        seal_receipt_handles(&mut event, |h| format!("sealed:{h}"));
        assert_eq!(
            json_of(&event)["Records"][0]["receiptHandle"],
            "sealed:AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a"
        );
    }

    /// C1: message attributes in the sample's shape (`stringValue`, empty
    /// `stringListValues` and `binaryListValues`, `dataType`), binary in
    /// base64, the attributes' digest, and the FIFO and kept attributes.
    #[test]
    fn c1_attributes_and_fifo_fields() {
        let mut m = message();
        m.attributes.insert(
            "myAttribute".into(),
            MessageAttributeValue {
                data_type: "String".into(),
                value: AttributeValue::String("myValue".into()),
            },
        );
        m.attributes.insert(
            "raw".into(),
            MessageAttributeValue {
                data_type: "Binary".into(),
                value: AttributeValue::Binary(vec![1, 2, 3]),
            },
        );
        m.system_attributes.insert(
            "AWSTraceHeader".into(),
            MessageAttributeValue {
                data_type: "String".into(),
                value: AttributeValue::String("Root=1-5759e988-bd862e3fe1be46a994272793".into()),
            },
        );
        m.group_id = Some("g".into());
        m.dedup_id = Some("d".into());
        m.sequence_number = Some("18849496460467696128".into());
        let (source, messages) = (source(), [m.clone()]);
        let event = json_of(&build_event(&source, &messages));
        let r = &event["Records"][0];
        assert_eq!(
            r["messageAttributes"]["myAttribute"],
            json!({"stringValue": "myValue", "stringListValues": [], "binaryListValues": [], "dataType": "String"})
        );
        assert_eq!(r["messageAttributes"]["raw"]["binaryValue"], "AQID");
        assert_eq!(
            r["md5OfMessageAttributes"],
            json!(md5_of_attributes(&m.attributes).unwrap())
        );
        assert_eq!(r["attributes"]["MessageGroupId"], "g");
        assert_eq!(r["attributes"]["MessageDeduplicationId"], "d");
        assert_eq!(r["attributes"]["SequenceNumber"], "18849496460467696128");
        assert_eq!(
            r["attributes"]["AWSTraceHeader"],
            "Root=1-5759e988-bd862e3fe1be46a994272793"
        );
        assert!(r["attributes"].get("DeadLetterQueueSourceArn").is_none());
    }

    /// A12: a message sent with authentication on carries its sender's
    /// access key id as SenderId in the event, as a receive gives it.
    #[test]
    fn a12_sender_id_is_the_messages_sender() {
        let mut m = message();
        m.system_attributes.insert(
            "SenderId".into(),
            MessageAttributeValue {
                data_type: "String".into(),
                value: AttributeValue::String("AKIDSENDER".into()),
            },
        );
        let (source, signed, plain) = (source(), [m], [message()]);
        let event = json_of(&build_event(&source, &signed));
        assert_eq!(event["Records"][0]["attributes"]["SenderId"], "AKIDSENDER");
        let unsigned = json_of(&build_event(&source, &plain));
        assert_eq!(
            unsigned["Records"][0]["attributes"]["SenderId"],
            source.sender_id
        );
    }
}
