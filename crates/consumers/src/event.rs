//! The event POSTed to a handler: Lambda's SQS event, field for field
//! (rule C1), built from what the broker received. Typed, and written
//! straight to its JSON with the writer of SQS's own answers, borrowing
//! the messages' text rather than copying it into a tree first.

use std::borrow::Cow;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use sluice_broker::ReceivedMessage;
use sluice_core::digest::{digest_hex, md5_of_attributes, md5_of_body};
use sluice_core::message::AttributeValue;
use sluice_core::queue_name::Account;
use sluice_protocol::wire::{JsonObject, JsonStyle, ToJson};

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
#[derive(Debug)]
pub struct SqsEvent<'a> {
    /// The records.
    pub records: Vec<SqsRecord<'a>>,
}

/// One message as Lambda gives it to a handler.
#[derive(Debug)]
pub struct SqsRecord<'a> {
    message_id: &'a str,
    /// The engine's handle until [`seal_receipt_handles`] seals it.
    receipt_handle: Cow<'a, str>,
    body: &'a str,
    attributes: RecordAttributes<'a>,
    message_attributes: Vec<(&'a str, RecordAttribute<'a>)>,
    md5_of_body: String,
    /// Null when the message has no attributes.
    md5_of_message_attributes: Option<String>,
    source: &'a EventSource,
}

/// A record's `attributes`: the four every record has, then those the
/// message has. Lambda writes every value as a string.
#[derive(Debug)]
struct RecordAttributes<'a> {
    approximate_receive_count: u32,
    sent_timestamp: u64,
    sender_id: &'a str,
    approximate_first_receive_timestamp: u64,
    message_group_id: Option<&'a str>,
    message_deduplication_id: Option<&'a str>,
    sequence_number: Option<&'a str>,
    aws_trace_header: Option<&'a str>,
    dead_letter_queue_source_arn: Option<&'a str>,
}

/// A message attribute in Lambda's shape: the value under `stringValue`
/// or `binaryValue` (base64), list fields always empty, and `dataType`.
#[derive(Debug)]
struct RecordAttribute<'a> {
    value: RecordValue<'a>,
    data_type: &'a str,
}

/// A message attribute's value as a record holds it.
#[derive(Debug)]
enum RecordValue<'a> {
    String(&'a str),
    /// Base64.
    Binary(String),
}

impl SqsEvent<'_> {
    /// The event's JSON, as it is POSTed. Written member by member with
    /// the escaper of SQS's own answers (bodies are most of the bytes).
    pub fn to_json(&self) -> Vec<u8> {
        let bytes: usize = self.records.iter().map(|r| r.body.len() + 1024).sum();
        let mut out = Vec::with_capacity(bytes + 16);
        let mut event = JsonObject::open(&mut out, JsonStyle::Protocol);
        event.list("Records", true, &self.records);
        event.close();
        out
    }
}

impl ToJson for SqsRecord<'_> {
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle) {
        let mut r = JsonObject::open(out, style);
        r.member("messageId", self.message_id);
        r.member("receiptHandle", self.receipt_handle.as_ref());
        r.member("body", self.body);
        r.member("attributes", &self.attributes);
        r.member("messageAttributes", &Members(&self.message_attributes));
        r.member("md5OfBody", &self.md5_of_body);
        match &self.md5_of_message_attributes {
            Some(digest) => r.member("md5OfMessageAttributes", digest),
            None => r.member("md5OfMessageAttributes", &Null),
        }
        r.member("eventSource", "aws:sqs");
        r.member("eventSourceARN", self.source.queue_arn.as_str());
        r.member("awsRegion", self.source.region.as_str());
        r.close();
    }
}

impl ToJson for RecordAttributes<'_> {
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle) {
        let mut a = JsonObject::open(out, style);
        a.member(
            "ApproximateReceiveCount",
            &self.approximate_receive_count.to_string(),
        );
        a.member("SentTimestamp", &self.sent_timestamp.to_string());
        a.member("SenderId", self.sender_id);
        a.member(
            "ApproximateFirstReceiveTimestamp",
            &self.approximate_first_receive_timestamp.to_string(),
        );
        let optional = [
            ("MessageGroupId", self.message_group_id),
            ("MessageDeduplicationId", self.message_deduplication_id),
            ("SequenceNumber", self.sequence_number),
            ("AWSTraceHeader", self.aws_trace_header),
            (
                "DeadLetterQueueSourceArn",
                self.dead_letter_queue_source_arn,
            ),
        ];
        for (name, value) in optional {
            if let Some(v) = value {
                a.member(name, v);
            }
        }
        a.close();
    }
}

impl ToJson for RecordAttribute<'_> {
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle) {
        let mut a = JsonObject::open(out, style);
        match &self.value {
            RecordValue::String(s) => a.member("stringValue", *s),
            RecordValue::Binary(b) => a.member("binaryValue", b),
        }
        a.list::<String>("stringListValues", true, &[]);
        a.list::<String>("binaryListValues", true, &[]);
        a.member("dataType", self.data_type);
        a.close();
    }
}

/// Named members as one object, in the order given.
struct Members<'m, 'a>(&'m [(&'a str, RecordAttribute<'a>)]);

impl ToJson for Members<'_, '_> {
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle) {
        let mut o = JsonObject::open(out, style);
        for (name, value) in self.0 {
            o.member(name, value);
        }
        o.close();
    }
}

/// JSON's `null`.
struct Null;

impl ToJson for Null {
    fn write_json(&self, out: &mut Vec<u8>, _style: JsonStyle) {
        out.extend_from_slice(b"null");
    }
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
        record.receipt_handle = Cow::Owned(seal(&record.receipt_handle));
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
        receipt_handle: Cow::Borrowed(&m.receipt_handle),
        body: &m.body,
        attributes: record_attributes(source, m),
        message_attributes: message_attributes(m),
        md5_of_body,
        md5_of_message_attributes: md5_of_attributes(&m.attributes),
        source,
    }
}

/// The record as a JSON tree, as the handler would read it, which filter
/// patterns (rule C13) read; `None` only if it could not be read back.
pub(super) fn record_value(source: &EventSource, m: &ReceivedMessage) -> Option<Value> {
    let mut out = Vec::new();
    record(source, m).write_json(&mut out, JsonStyle::Protocol);
    serde_json::from_slice(&out).ok()
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

fn message_attributes(m: &ReceivedMessage) -> Vec<(&str, RecordAttribute<'_>)> {
    m.attributes
        .iter()
        .map(|(name, v)| {
            let value = match &v.value {
                AttributeValue::String(s) => RecordValue::String(s),
                AttributeValue::Binary(b) => RecordValue::Binary(STANDARD.encode(b)),
            };
            let attr = RecordAttribute {
                value,
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
        serde_json::from_slice(&event.to_json()).unwrap()
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

    /// C1: the documented sample's record written out as Lambda writes it,
    /// its members in the sample's order.
    #[test]
    fn c1_record_is_written_in_the_samples_order() {
        let (source, messages) = (source(), [message()]);
        let written = String::from_utf8(build_event(&source, &messages).to_json()).unwrap();
        let expected = concat!(
            r#"{"Records":[{"messageId":"059f36b4-87a3-44ab-83d2-661975830a7d","#,
            r#""receiptHandle":"AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a","body":"Test message.","#,
            r#""attributes":{"ApproximateReceiveCount":"1","SentTimestamp":"1545082649183","#,
            r#""SenderId":"123456789012","ApproximateFirstReceiveTimestamp":"1545082649185"},"#,
            r#""messageAttributes":{},"md5OfBody":"e4e68fb7bd0e697a0ae8f1bb342846b3","#,
            r#""md5OfMessageAttributes":null,"eventSource":"aws:sqs","#,
            r#""eventSourceARN":"arn:aws:sqs:us-east-2:123456789012:my-queue","#,
            r#""awsRegion":"us-east-2"}]}"#
        );
        assert_eq!(written, expected);
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
