//! SendMessage and SendMessageBatch (rules V1, V22, L1, L2, L3, W4).

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sluice_broker::{Broker, NewMessage};
use sluice_core::SqsError;
use sluice_core::attributes::QueueConfig;
use sluice_core::digest::{body_digests, digest_hex, md5_of_attributes};
use sluice_core::limits::{MAX_DELAY, MAX_MESSAGE_SIZE};
use sluice_core::message::{
    AttributeValue, BaseType, MessageAttributeValue, MessageAttributes, base_type, message_size,
    validate_body, validate_message_attributes, validate_size,
};
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{
    MessageAttributeValue as WireAttribute, MessageSystemAttributeValue, SendMessageBatchRequest,
    SendMessageBatchRequestEntry as MessageInput, SendMessageBatchResult,
    SendMessageBatchResultEntry, SendMessageRequest, SendMessageResult,
};

use super::batch;
use crate::service::{RequestContext, Service};

/// System attributes a sender may set.
const SENDABLE_SYSTEM_ATTRIBUTES: &[&str] = &[TRACE_HEADER];

/// The system attribute that keeps a send's trace header.
const TRACE_HEADER: &str = "AWSTraceHeader";

/// The system attribute that keeps who sent a message, with
/// authentication on: the access key id that signed the send.
pub const SENDER_ID: &str = "SenderId";

/// Who sends, for the message's `SenderId`: the signing key's access key
/// id with authentication on (the SQS API reference: "For a user, returns
/// the user ID"; sluice's users are named by their access key ids, as in
/// AccessDenied), `None` with it off (receives then give the server's
/// account).
fn sender(ctx: &RequestContext) -> Option<&str> {
    ctx.principal.as_ref().map(|p| p.access_key_id.as_str())
}

/// A checked message and the digests its response carries.
struct Checked {
    message: NewMessage,
    digests: Digests,
}

/// The digests a send's response carries for one message.
struct Digests {
    md5_body: String,
    md5_attributes: Option<String>,
    md5_system: Option<String>,
}

/// SendMessage's message as a batch entry's (without its id): both are
/// checked alike.
fn as_entry(input: SendMessageRequest) -> MessageInput {
    MessageInput {
        id: None,
        message_body: input.message_body,
        delay_seconds: input.delay_seconds,
        message_attributes: input.message_attributes,
        message_system_attributes: input.message_system_attributes,
        message_deduplication_id: input.message_deduplication_id,
        message_group_id: input.message_group_id,
    }
}

/// SendMessage.
pub async fn send_message<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    mut input: SendMessageRequest,
) -> Result<SendMessageResult, SqsError> {
    let url = required(input.queue_url.take(), "QueueUrl")?;
    let name = &*svc.queue_name(&url)?;
    let meta = svc.broker.get_queue(name).await?;
    let checked = check_message(
        as_entry(input),
        &meta.config,
        (ctx.trace_header.as_deref(), sender(ctx)),
        false,
    )?;
    let [Checked { message, digests }] = with_body_digests([checked]);
    let mut sent = svc.broker.send_messages(name, vec![message]).await?;
    let sent = sent
        .pop()
        .ok_or_else(|| SqsError::internal("the engine stored no message"))?;
    Ok(SendMessageResult {
        md5_of_message_body: Some(digests.md5_body),
        md5_of_message_attributes: digests.md5_attributes,
        md5_of_message_system_attributes: digests.md5_system,
        message_id: Some(sent.message_id),
        sequence_number: sent.sequence_number,
    })
}

/// SendMessageBatch: each entry succeeds or fails on its own, but for the
/// FIFO ids a whole FIFO request fails on (rule F9).
pub async fn send_message_batch<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: SendMessageBatchRequest,
) -> Result<SendMessageBatchResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    // The Query protocol sends an empty list as no parameters at all.
    let entries = input.entries.unwrap_or_default();
    let ids: Vec<String> = batch::check_ids(
        entries.iter().map(|e| e.id.as_deref()),
        "SendMessageBatchRequestEntry",
    )?
    .into_iter()
    .map(str::to_string)
    .collect();
    let name = &*svc.queue_name(&url)?;
    let meta = svc.broker.get_queue(name).await?;
    let total: usize = entries
        .iter()
        .map(|e| {
            e.message_body.as_deref().map_or(0, str::len)
                + wire_attributes_size(e.message_attributes.as_ref())
        })
        .sum();
    if total > MAX_MESSAGE_SIZE as usize {
        return Err(SqsError::new(
            sluice_core::ErrorCode::BatchRequestTooLong,
            format!(
                "Batch requests cannot be longer than {MAX_MESSAGE_SIZE} bytes. You have sent {total} bytes."
            ),
        ));
    }
    if meta.config.fifo {
        check_fifo_batch(&entries, &meta.config)?;
    }
    let mut failed = Vec::new();
    let mut accepted_ids = Vec::new();
    let mut accepted = Vec::new();
    for (id, entry) in ids.into_iter().zip(entries) {
        let from = (ctx.trace_header.as_deref(), sender(ctx));
        match check_message(entry, &meta.config, from, true) {
            Ok(c) => {
                accepted_ids.push(id);
                accepted.push(c);
            }
            Err(e) => failed.push(batch::failed(&id, &e)),
        }
    }
    let mut successful = Vec::with_capacity(accepted.len());
    if !accepted.is_empty() {
        // The messages go to the engine, the digests stay for the answer:
        // nothing is copied.
        let (answers, messages): (Vec<_>, Vec<_>) = accepted_ids
            .into_iter()
            .zip(with_body_digests(accepted))
            .map(|(id, c)| ((id, c.digests), c.message))
            .unzip();
        let sent = svc.broker.send_messages(name, messages).await?;
        for ((id, digests), sent) in answers.into_iter().zip(sent) {
            successful.push(SendMessageBatchResultEntry {
                id,
                message_id: sent.message_id,
                md5_of_message_body: digests.md5_body,
                md5_of_message_attributes: digests.md5_attributes,
                md5_of_message_system_attributes: digests.md5_system,
                sequence_number: sent.sequence_number,
            });
        }
    }
    Ok(SendMessageBatchResult { successful, failed })
}

/// In a FIFO queue an entry without a group id, or without a
/// deduplication id where the queue does not deduplicate by content, fails
/// the whole request, not only its entry (rule F9).
fn check_fifo_batch(entries: &[MessageInput], config: &QueueConfig) -> Result<(), SqsError> {
    for entry in entries {
        if entry.message_group_id.is_none() {
            return Err(SqsError::invalid_parameter(
                "The request must contain the parameter MessageGroupId.",
            ));
        }
        if entry.message_deduplication_id.is_none() && !config.content_based_deduplication {
            return Err(SqsError::invalid_parameter(NO_DEDUPLICATION_ID));
        }
    }
    Ok(())
}

/// Why a FIFO send without a deduplication id is refused (rule F2).
const NO_DEDUPLICATION_ID: &str = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly";

fn wire_attributes_size(attrs: Option<&BTreeMap<String, WireAttribute>>) -> usize {
    attrs.map_or(0, |a| {
        a.iter()
            .map(|(k, v)| {
                k.len()
                    + v.data_type.as_deref().map_or(0, str::len)
                    + v.string_value.as_deref().map_or(0, str::len)
                    + v.binary_value.as_deref().map_or(0, |b| b.len() * 3 / 4)
            })
            .sum()
    })
}

/// Validates one message against the queue's configuration; `trace` is the
/// request's `X-Amzn-Trace-Id` header, `in_batch` tells an entry of
/// SendMessageBatch.
fn check_message(
    mut input: MessageInput,
    config: &QueueConfig,
    (trace, sender): (Option<&str>, Option<&str>),
    in_batch: bool,
) -> Result<Checked, SqsError> {
    let body = required(input.message_body.take(), "MessageBody")?;
    validate_body(&body)?;
    let attributes = to_attributes(input.message_attributes.take())?;
    validate_message_attributes(&attributes)?;
    let system_attributes = to_attributes(input.message_system_attributes.take())?;
    for (n, v) in &system_attributes {
        if !SENDABLE_SYSTEM_ATTRIBUTES.contains(&n.as_str()) || v.data_type != "String" {
            return Err(SqsError::invalid_parameter(format!(
                "Message system attribute name '{n}' is invalid."
            )));
        }
    }
    let limit = config.maximum_message_size;
    validate_size(&body, &attributes, limit).map_err(|e| {
        // AWS words a batch entry's failure differently (rule L7).
        if in_batch {
            SqsError::invalid_parameter(format!(
                "One or more parameters cannot be validated. Reason: Message must be shorter than {limit} bytes."
            ))
        } else {
            e
        }
    })?;
    debug_assert!(message_size(&body, &attributes) <= config.maximum_message_size as usize);
    let delay_seconds = match input.delay_seconds {
        Some(d) if !(0..=i64::from(MAX_DELAY)).contains(&d) => {
            return Err(SqsError::invalid_value(
                "DelaySeconds",
                d,
                &format!("DelaySeconds must be >= 0 and <= {MAX_DELAY}"),
            ));
        }
        Some(d) => Some(d as u32),
        None => None,
    };
    let (group_id, dedup_id) = check_fifo_ids(&input, config, &body, delay_seconds)?;
    // FIFO messages take the queue's delay, even when 0 is given (rule F8).
    let delay_seconds = delay_seconds.filter(|_| !config.fifo);
    // The digest covers the system attributes the request carried.
    let md5_system = md5_of_attributes(&system_attributes);
    let mut system_attributes = system_attributes;
    add_server_attributes(&mut system_attributes, trace, sender);
    Ok(Checked {
        digests: Digests {
            // Filled by `with_body_digests` with the other accepted bodies'.
            md5_body: String::new(),
            md5_attributes: md5_of_attributes(&attributes),
            md5_system,
        },
        message: NewMessage {
            body,
            attributes,
            system_attributes,
            delay_seconds,
            group_id,
            dedup_id,
            body_md5: None,
            keep_id: None,
        },
    })
}

/// The checked messages with their bodies' MD5s, hashed together: side by
/// side where the CPU can, which makes a batch's hashing several times
/// cheaper than one body after another. The engine keeps each digest for
/// the receives, the answer shows it.
fn with_body_digests<C: AsMut<[Checked]>>(mut checked: C) -> C {
    let all = checked.as_mut();
    let bodies: Vec<&str> = all.iter().map(|c| c.message.body.as_str()).collect();
    let digests = body_digests(&bodies);
    for (c, digest) in all.iter_mut().zip(digests) {
        c.digests.md5_body = digest_hex(&digest);
        c.message.body_md5 = Some(digest);
    }
    checked
}

/// An attribute value as it travels: a message attribute's or a message
/// system attribute's (two shapes of the model with the same members).
trait Wire {
    fn into_parts(self) -> WireAttribute;
}

impl Wire for WireAttribute {
    fn into_parts(self) -> WireAttribute {
        self
    }
}

impl Wire for MessageSystemAttributeValue {
    fn into_parts(self) -> WireAttribute {
        WireAttribute {
            string_value: self.string_value,
            binary_value: self.binary_value,
            string_list_values: self.string_list_values,
            binary_list_values: self.binary_list_values,
            data_type: self.data_type,
        }
    }
}

/// The system attributes the server keeps with a message: the request's
/// trace header and, with authentication on, who sent it.
fn add_server_attributes(
    system_attributes: &mut MessageAttributes,
    trace: Option<&str>,
    sender: Option<&str>,
) {
    if let Some(trace) = trace {
        // AWS keeps the header as AWSTraceHeader (rule V22); one given as a
        // system attribute wins.
        system_attributes
            .entry(TRACE_HEADER.to_string())
            .or_insert_with(|| MessageAttributeValue {
                data_type: "String".into(),
                value: AttributeValue::String(trace.to_string()),
            });
    }
    if let Some(sender) = sender {
        // Not sendable (refused when sent): the server's to set.
        system_attributes.insert(
            SENDER_ID.to_string(),
            MessageAttributeValue {
                data_type: "String".into(),
                value: AttributeValue::String(sender.to_string()),
            },
        );
    }
}

/// Turns attributes as they travel into checked-type values.
fn to_attributes<W: Wire>(
    wire: Option<BTreeMap<String, W>>,
) -> Result<MessageAttributes, SqsError> {
    let mut out = MessageAttributes::new();
    for (name, v) in wire.unwrap_or_default() {
        let v = v.into_parts();
        let data_type = v.data_type.filter(|t| !t.is_empty()).ok_or_else(|| {
            SqsError::invalid_parameter(format!(
                "The message attribute '{name}' must contain non-empty message attribute type."
            ))
        })?;
        if v.string_list_values.is_some_and(|l| !l.is_empty())
            || v.binary_list_values.is_some_and(|l| !l.is_empty())
        {
            return Err(SqsError::invalid_parameter(
                "Message attribute list values in SendMessage operation are not supported.",
            ));
        }
        let value = match (base_type(&data_type), v.string_value, v.binary_value) {
            (Some(BaseType::Binary), None, Some(b64)) => {
                AttributeValue::Binary(STANDARD.decode(b64.as_bytes()).map_err(|_| {
                    SqsError::invalid_parameter(format!(
                        "The binary value of message attribute '{name}' is not valid base64."
                    ))
                })?)
            }
            (Some(BaseType::Binary), _, _) => AttributeValue::Binary(Vec::new()),
            (_, Some(s), None) => AttributeValue::String(s),
            // Neither, or both: the type's value is missing; reported by validation.
            (Some(BaseType::String | BaseType::Number), _, _) => {
                AttributeValue::String(String::new())
            }
            (None, s, _) => AttributeValue::String(s.unwrap_or_default()),
        };
        out.insert(name, MessageAttributeValue { data_type, value });
    }
    Ok(out)
}

/// The FIFO rules of a send (rules F1, F2): a group id is required, a
/// deduplication id unless the queue deduplicates by content, no per-message
/// delay; standard queues take a group id (fair queues) but no dedup id.
fn check_fifo_ids(
    input: &MessageInput,
    config: &QueueConfig,
    body: &str,
    delay_seconds: Option<u32>,
) -> Result<(Option<String>, Option<String>), SqsError> {
    for (name, value) in [
        ("MessageGroupId", &input.message_group_id),
        ("MessageDeduplicationId", &input.message_deduplication_id),
    ] {
        if let Some(v) = value {
            check_fifo_token(name, v)?;
        }
    }
    if !config.fifo {
        if let Some(d) = &input.message_deduplication_id {
            return Err(SqsError::invalid_value(
                "MessageDeduplicationId",
                d,
                "The request include parameter that is not valid for this queue type",
            ));
        }
        return Ok((input.message_group_id.clone(), None));
    }
    let group = required(input.message_group_id.clone(), "MessageGroupId")?;
    // A per-message delay of 0 is accepted (and leaves the queue's delay
    // in force: the caller drops it); any other is refused (rule F8).
    if let Some(d) = delay_seconds.filter(|&d| d != 0) {
        return Err(SqsError::invalid_value(
            "DelaySeconds",
            d,
            "The request include parameter that is not valid for this queue type.",
        ));
    }
    let dedup = match (
        &input.message_deduplication_id,
        config.content_based_deduplication,
    ) {
        (Some(d), _) => d.clone(),
        (None, true) => sluice_core::digest::sha256_hex(body.as_bytes()),
        (None, false) => {
            return Err(SqsError::invalid_parameter(NO_DEDUPLICATION_ID));
        }
    };
    Ok((Some(group), Some(dedup)))
}

/// Group, deduplication and receive attempt ids: 1–128 characters of
/// letters, digits and punctuation.
pub(crate) fn check_fifo_token(name: &str, value: &str) -> Result<(), SqsError> {
    let ok = !value.is_empty() && value.len() <= 128 && value.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        Ok(())
    } else {
        Err(SqsError::invalid_value(
            name,
            value,
            &format!(
                "{name} can only include alphanumeric and punctuation characters. 1 to 128 in length."
            ),
        ))
    }
}
