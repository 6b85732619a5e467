//! The event POSTed to a handler: Lambda's SQS event, field for field
//! (rule C1), built from what the broker received.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};
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
pub fn build_event(source: &EventSource, messages: &[ReceivedMessage]) -> Value {
    let records: Vec<Value> = messages.iter().map(|m| record(source, m)).collect();
    json!({ "Records": records })
}

/// Replaces each record's engine handle with the one `seal` makes of it
/// (rule A3), as ReceiveMessage gives them: a handler may call the API
/// with the handles of its event.
pub fn seal_receipt_handles(event: &mut Value, seal: impl Fn(&str) -> String) {
    let Some(records) = event.get_mut("Records").and_then(Value::as_array_mut) else {
        return;
    };
    for record in records {
        if let Some(handle) = record.get_mut("receiptHandle")
            && let Some(sealed) = handle.as_str().map(&seal)
        {
            *handle = Value::String(sealed);
        }
    }
}

/// One record. Lambda writes every attribute value as a string, and
/// `md5OfMessageAttributes` as null when the message has none.
pub(super) fn record(source: &EventSource, m: &ReceivedMessage) -> Value {
    let md5_of_body = match &m.body_md5 {
        Some(digest) => digest_hex(digest),
        None => md5_of_body(&m.body),
    };
    json!({
        "messageId": m.message_id,
        "receiptHandle": m.receipt_handle,
        "body": m.body,
        "attributes": system_attributes(source, m),
        "messageAttributes": message_attributes(m),
        "md5OfBody": md5_of_body,
        "md5OfMessageAttributes": md5_of_attributes(&m.attributes),
        "eventSource": "aws:sqs",
        "eventSourceARN": source.queue_arn,
        "awsRegion": source.region,
    })
}

/// The four attributes every record has, then those the message has.
fn system_attributes(source: &EventSource, m: &ReceivedMessage) -> Map<String, Value> {
    let mut out = Map::new();
    let mut put = |name: &str, value: String| {
        out.insert(name.to_string(), Value::String(value));
    };
    put("ApproximateReceiveCount", m.receive_count.to_string());
    put("SentTimestamp", m.sent_at.to_string());
    put(
        "SenderId",
        kept_string(m, "SenderId").unwrap_or_else(|| source.sender_id.clone()),
    );
    put(
        "ApproximateFirstReceiveTimestamp",
        m.first_receive_at.to_string(),
    );
    let optional = [
        ("MessageGroupId", m.group_id.clone()),
        ("MessageDeduplicationId", m.dedup_id.clone()),
        ("SequenceNumber", m.sequence_number.clone()),
        ("AWSTraceHeader", kept_string(m, "AWSTraceHeader")),
        (
            "DeadLetterQueueSourceArn",
            kept_string(m, "DeadLetterQueueSourceArn"),
        ),
    ];
    for (name, value) in optional {
        if let Some(v) = value {
            put(name, v);
        }
    }
    out
}

/// A system attribute kept with the message (the sender's trace header, a
/// dead-lettered message's source).
fn kept_string(m: &ReceivedMessage, name: &str) -> Option<String> {
    m.system_attributes.get(name).and_then(|v| match &v.value {
        AttributeValue::String(s) => Some(s.clone()),
        AttributeValue::Binary(_) => None,
    })
}

/// Lambda's shape: the value under `stringValue` or `binaryValue`
/// (base64), always-empty list fields, and `dataType`.
fn message_attributes(m: &ReceivedMessage) -> Map<String, Value> {
    m.attributes
        .iter()
        .map(|(name, v)| {
            let mut attr = Map::new();
            match &v.value {
                AttributeValue::String(s) => {
                    attr.insert("stringValue".into(), Value::String(s.clone()));
                }
                AttributeValue::Binary(b) => {
                    attr.insert("binaryValue".into(), Value::String(STANDARD.encode(b)));
                }
            }
            attr.insert("stringListValues".into(), json!([]));
            attr.insert("binaryListValues".into(), json!([]));
            attr.insert("dataType".into(), Value::String(v.data_type.clone()));
            (name.clone(), Value::Object(attr))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_core::message::MessageAttributeValue;

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
        let event = build_event(&source(), &[message()]);
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
        let mut event = build_event(&source(), &[message()]);
        seal_receipt_handles(&mut event, |h| format!("sealed:{h}"));
        assert_eq!(
            event["Records"][0]["receiptHandle"],
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
        let event = build_event(&source(), &[m.clone()]);
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
        let event = build_event(&source(), &[m]);
        assert_eq!(event["Records"][0]["attributes"]["SenderId"], "AKIDSENDER");
        let unsigned = build_event(&source(), &[message()]);
        assert_eq!(
            unsigned["Records"][0]["attributes"]["SenderId"],
            source().sender_id
        );
    }
}
