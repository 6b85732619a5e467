//! ReceiveMessage (rules V2, V6, V21, L3, L7, W4, H5).

use std::time::Duration;

use sluice_broker::{Broker, ReceiveOptions, ReceivedMessage};
use sluice_core::SqsError;
use sluice_core::digest::{digest_hex, md5_of_attributes, md5_of_body};
use sluice_core::limits::{MAX_RECEIVE_BATCH, MAX_VISIBILITY_TIMEOUT, MAX_WAIT_TIME};
use sluice_core::message::{
    AttributeValue, MessageAttributes, attribute_filters, attribute_selected,
};
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{
    Message, MessageAttributeValue, ReceiveMessageRequest, ReceiveMessageResult,
};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::service::Service;
use sluice_core::limits::in_range;

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
    input: ReceiveMessageRequest,
) -> Result<ReceiveMessageResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let name = &*svc.queue_name(&url)?;
    let max = match input.max_number_of_messages {
        Some(n) => in_range("MaxNumberOfMessages", n, 1, i64::from(MAX_RECEIVE_BATCH))?,
        None => 1,
    };
    let visibility = input
        .visibility_timeout
        .map(|v| within("VisibilityTimeout", v, MAX_VISIBILITY_TIMEOUT))
        .transpose()?;
    let wait = input
        .wait_time_seconds
        .map(|w| within("WaitTimeSeconds", w, MAX_WAIT_TIME))
        .transpose()?;
    if let Some(id) = &input.receive_request_attempt_id {
        super::send::check_fifo_token("ReceiveRequestAttemptId", id)?;
    }
    let meta = svc.broker.get_queue(name).await?;
    let mut wait = wait.unwrap_or(meta.config.receive_message_wait_time_seconds);
    // Beyond the server's cap on waiting long polls, a receive answers with
    // what is there now instead of waiting (rule H5).
    let place = if wait > 0 {
        let place = svc.metrics.long_polls.take();
        if place.is_none() {
            wait = 0;
        }
        place
    } else {
        None
    };
    // Before the receive: once messages are in flight, their handles must
    // reach the client.
    let sealer = svc.handle_sealer().await?;
    let mut messages = svc
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
    drop(place);
    let mut system_names: Vec<String> = input.attribute_names.unwrap_or_default();
    system_names.extend(input.message_system_attribute_names.unwrap_or_default());
    let user_names = input.message_attribute_names.unwrap_or_default();
    let filters = attribute_filters(&user_names);
    ReceivedMessage::fill_body_digests(&mut messages);
    Ok(ReceiveMessageResult {
        messages: messages
            .into_iter()
            .map(|mut m| {
                m.receipt_handle = sealer.seal(name, &m.receipt_handle);
                render(svc, m, &system_names, &filters)
            })
            .collect(),
    })
}

/// A receive's VisibilityTimeout and WaitTimeSeconds: 0 to `max`, in AWS's
/// words for them (rule L7), which differ from MaxNumberOfMessages'.
fn within(name: &str, value: i64, max: u32) -> Result<u32, SqsError> {
    u32::try_from(value)
        .ok()
        .filter(|v| *v <= max)
        .ok_or_else(|| {
            SqsError::invalid_value(
                name,
                value,
                &format!("Must be >= 0 and <= {max}, if provided."),
            )
        })
}

fn render<B>(
    svc: &Service<B>,
    m: ReceivedMessage,
    system_names: &[String],
    filters: &[&str],
) -> Message {
    let md5_of_body = match &m.body_md5 {
        Some(digest) => digest_hex(digest),
        None => md5_of_body(&m.body),
    };
    let all = system_names.iter().any(|n| n == "All");
    let mut attributes = std::collections::BTreeMap::new();
    for &name in SYSTEM_ATTRIBUTES {
        if !all && !system_names.iter().any(|n| n == name) {
            continue;
        }
        let value = match name {
            // The signing key's, kept at send with authentication on;
            // the server's account otherwise.
            "SenderId" => {
                Some(kept_string(&m, name).unwrap_or_else(|| svc.config.account.id.clone()))
            }
            "SentTimestamp" => Some(m.sent_at.to_string()),
            "ApproximateReceiveCount" => Some(m.receive_count.to_string()),
            "ApproximateFirstReceiveTimestamp" => Some(m.first_receive_at.to_string()),
            "SequenceNumber" => m.sequence_number.clone(),
            "MessageDeduplicationId" => m.dedup_id.clone(),
            "MessageGroupId" => m.group_id.clone(),
            // Kept with the message: the sender's trace header, and the
            // source of a dead-lettered message (rule R4).
            "AWSTraceHeader" | "DeadLetterQueueSourceArn" => kept_string(&m, name),
            _ => None,
        };
        if let Some(v) = value {
            attributes.insert(name.to_string(), v);
        }
    }
    // The digest covers exactly the attributes returned, as SDKs check it.
    let selected: MessageAttributes = m
        .attributes
        .iter()
        .filter(|(n, _)| attribute_selected(filters, n))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let md5_of_message_attributes = md5_of_attributes(&selected);
    let message_attributes = selected
        .into_iter()
        .map(|(n, v)| {
            let (string_value, binary_value) = match v.value {
                AttributeValue::String(s) => (Some(s), None),
                AttributeValue::Binary(b) => (None, Some(STANDARD.encode(b))),
            };
            let value = MessageAttributeValue {
                string_value,
                binary_value,
                data_type: Some(v.data_type),
                ..MessageAttributeValue::default()
            };
            (n, value)
        })
        .collect();
    Message {
        message_id: Some(m.message_id),
        receipt_handle: Some(m.receipt_handle),
        md5_of_body: Some(md5_of_body),
        body: Some(m.body),
        attributes,
        md5_of_message_attributes,
        message_attributes,
    }
}

/// A system attribute kept with the message (trace header, sender,
/// dead-letter source).
fn kept_string(m: &ReceivedMessage, name: &str) -> Option<String> {
    m.system_attributes.get(name).and_then(|v| match &v.value {
        AttributeValue::String(s) => Some(s.clone()),
        AttributeValue::Binary(_) => None,
    })
}
