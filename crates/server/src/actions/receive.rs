//! ReceiveMessage (rules V2, V6, L3, W4).

use std::time::Duration;

use serde_json::{Map, Value, json};
use sluice_broker::{Broker, ReceiveOptions, ReceivedMessage};
use sluice_core::SqsError;
use sluice_core::digest::{digest_hex, md5_of_attributes, md5_of_body};
use sluice_core::limits::{MAX_RECEIVE_BATCH, MAX_VISIBILITY_TIMEOUT, MAX_WAIT_TIME};
use sluice_core::message::{AttributeValue, MessageAttributes, attribute_selected};
use sluice_protocol::requests::{ReceiveMessageInput, required};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::in_range;
use crate::service::Service;

/// System attribute names a receive can ask for.
const SYSTEM_ATTRIBUTES: &[&str] = &[
    "SenderId",
    "SentTimestamp",
    "ApproximateReceiveCount",
    "ApproximateFirstReceiveTimestamp",
    "SequenceNumber",
    "MessageDeduplicationId",
    "MessageGroupId",
    "AWSTraceHeader",
    "DeadLetterQueueSourceArn",
];

/// ReceiveMessage: up to MaxNumberOfMessages, waiting up to WaitTimeSeconds.
pub async fn receive_message<B: Broker>(
    svc: &Service<B>,
    input: ReceiveMessageInput,
) -> Result<Value, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let name = svc.queue_name(&url)?;
    let max = match input.max_number_of_messages {
        Some(n) => in_range("MaxNumberOfMessages", n, 1, i64::from(MAX_RECEIVE_BATCH))?,
        None => 1,
    };
    let visibility = input
        .visibility_timeout
        .map(|v| in_range("VisibilityTimeout", v, 0, i64::from(MAX_VISIBILITY_TIMEOUT)))
        .transpose()?;
    let wait = input
        .wait_time_seconds
        .map(|w| in_range("WaitTimeSeconds", w, 0, i64::from(MAX_WAIT_TIME)))
        .transpose()?;
    if let Some(id) = &input.receive_request_attempt_id {
        super::send::check_fifo_token("ReceiveRequestAttemptId", id)?;
    }
    let meta = svc.broker.get_queue(name).await?;
    let wait = wait.unwrap_or(meta.config.receive_message_wait_time_seconds);
    let messages = svc
        .broker
        .receive_messages(
            name,
            ReceiveOptions {
                max_messages: max,
                visibility_timeout: visibility,
                wait: Duration::from_secs(u64::from(wait)),
                attempt_id: input.receive_request_attempt_id,
            },
        )
        .await?;
    let mut system_names: Vec<String> = input.attribute_names.unwrap_or_default();
    system_names.extend(input.message_system_attribute_names.unwrap_or_default());
    let user_names = input.message_attribute_names.unwrap_or_default();
    let out: Vec<Value> = messages
        .into_iter()
        .map(|m| render(svc, m, &system_names, &user_names))
        .collect();
    let mut result = Map::new();
    if !out.is_empty() {
        // Moved in, not through `json!`, which would copy every message.
        result.insert("Messages".into(), Value::Array(out));
    }
    Ok(Value::Object(result))
}

fn render<B>(
    svc: &Service<B>,
    m: ReceivedMessage,
    system_names: &[String],
    user_names: &[String],
) -> Value {
    let md5 = match &m.body_md5 {
        Some(digest) => digest_hex(digest),
        None => md5_of_body(&m.body),
    };
    // Room for every field a message can carry: no regrowth per message.
    let mut fields = Map::with_capacity(7);
    fields.insert("MessageId".into(), Value::String(m.message_id));
    fields.insert("ReceiptHandle".into(), Value::String(m.receipt_handle));
    fields.insert("MD5OfBody".into(), Value::String(md5));
    fields.insert("Body".into(), Value::String(m.body));
    let mut out = Value::Object(fields);
    let all = system_names.iter().any(|n| n == "All");
    let mut attrs = Map::new();
    for &name in SYSTEM_ATTRIBUTES {
        if !all && !system_names.iter().any(|n| n == name) {
            continue;
        }
        let value = match name {
            "SenderId" => Some(svc.config.account.id.clone()),
            "SentTimestamp" => Some(m.sent_at.to_string()),
            "ApproximateReceiveCount" => Some(m.receive_count.to_string()),
            "ApproximateFirstReceiveTimestamp" => Some(m.first_receive_at.to_string()),
            "SequenceNumber" => m.sequence_number.clone(),
            "MessageDeduplicationId" => m.dedup_id.clone(),
            "MessageGroupId" => m.group_id.clone(),
            // Kept with the message: the sender's trace header, and the
            // source of a dead-lettered message (rule R4).
            "AWSTraceHeader" | "DeadLetterQueueSourceArn" => {
                m.system_attributes.get(name).and_then(|v| match &v.value {
                    AttributeValue::String(s) => Some(s.clone()),
                    AttributeValue::Binary(_) => None,
                })
            }
            _ => None,
        };
        if let Some(v) = value {
            attrs.insert(name.to_string(), Value::String(v));
        }
    }
    if !attrs.is_empty() {
        out["Attributes"] = Value::Object(attrs);
    }
    // The digest covers exactly the attributes returned, as SDKs check it.
    let selected: MessageAttributes = m
        .attributes
        .iter()
        .filter(|(n, _)| attribute_selected(user_names, n))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    if let Some(md5) = md5_of_attributes(&selected) {
        out["MD5OfMessageAttributes"] = json!(md5);
        let rendered: Map<String, Value> = selected
            .into_iter()
            .map(|(n, v)| {
                let mut a = json!({ "DataType": v.data_type });
                match v.value {
                    AttributeValue::String(s) => a["StringValue"] = json!(s),
                    AttributeValue::Binary(b) => a["BinaryValue"] = json!(STANDARD.encode(b)),
                }
                (n, a)
            })
            .collect();
        out["MessageAttributes"] = Value::Object(rendered);
    }
    out
}
