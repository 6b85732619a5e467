//! sluice's own actions (JSON target `Sluice.<Action>`, Query
//! `Action=<Action>`): NackMessage (rules X2, X7), PeekMessages (rule X1)
//! and RedriveMessages (rule X3).
//! Documented with examples in docs/extensions.md.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sluice_broker::{Broker, MessageFilter, Nack, Redrive};
use sluice_core::SqsError;
use sluice_core::dead_letter_routes::is_failure_class;
use sluice_core::digest::md5_of_body;
use sluice_core::limits::MAX_VISIBILITY_TIMEOUT;
use sluice_core::message::AttributeValue;
use sluice_core::message::all_chars_allowed;
use sluice_protocol::decode::required;
use sluice_protocol::sluice::{
    NackMessageRequest, PeekMessagesRequest, PeekMessagesResult, PeekedMessage,
    RedriveMessagesRequest, RedriveMessagesResult,
};
use sluice_protocol::sqs::MessageAttributeValue;

use crate::api::sqs::by_handle;
use crate::service::Service;
use sluice_core::limits::in_range;

/// Longest failure reason kept.
const MAX_REASON: usize = 1024;

/// NackMessage: the consumer failed this delivery; keep why, and either
/// retry after a delay or (Permanent) dead-letter it now.
pub async fn nack_message<B: Broker>(
    svc: &Service<B>,
    input: NackMessageRequest,
) -> Result<(), SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let handle = required(input.receipt_handle, "ReceiptHandle")?;
    if let Some(r) = &input.reason {
        if r.chars().count() > MAX_REASON {
            return Err(SqsError::invalid_parameter(format!(
                "Reason must be at most {MAX_REASON} characters."
            )));
        }
        // A message body's characters: a reason is shown beside one.
        if !all_chars_allowed(r) {
            return Err(SqsError::invalid_parameter(
                "Reason contains characters outside the allowed set.",
            ));
        }
    }
    if let Some(c) = &input.failure_class
        && !is_failure_class(c)
    {
        return Err(SqsError::invalid_value(
            "FailureClass",
            c,
            "1 to 64 letters, digits, '-' or '_'.",
        ));
    }
    let retry = input
        .retry_after_seconds
        .map(|s| in_range("RetryAfterSeconds", s, 0, i64::from(MAX_VISIBILITY_TIMEOUT)))
        .transpose()?;
    let permanent = input.permanent.unwrap_or(false);
    if permanent && retry.is_some() {
        return Err(SqsError::new(
            sluice_core::ErrorCode::InvalidParameterCombination,
            "Permanent and RetryAfterSeconds cannot be given together.",
        ));
    }
    let nack = Nack {
        reason: input.reason,
        class: input.failure_class,
        permanent,
        retry_after_seconds: retry,
    };
    by_handle::one(svc, &url, &handle, async |name, inner| {
        svc.broker.nack_message(name, inner, nack).await
    })
    .await
}

/// PeekMessages: read a queue's messages without receiving them.
pub async fn peek_messages<B: Broker>(
    svc: &Service<B>,
    input: PeekMessagesRequest,
) -> Result<PeekMessagesResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let name = &*svc.queue_name(&url)?;
    let limit = match input.max_results {
        Some(m) => in_range("MaxResults", m, 1, 100)? as usize,
        None => 10,
    };
    let after = input
        .next_token
        .map(|t| {
            t.parse::<u64>()
                .map_err(|_| SqsError::invalid_parameter("Invalid NextToken value."))
        })
        .transpose()?;
    let filter = message_filter(Filter {
        sent_after: input.sent_after,
        sent_before: input.sent_before,
        body_contains: input.body_contains,
        attribute_name: input.attribute_name,
        attribute_value: input.attribute_value,
        source_queue_arn: input.source_queue_arn,
        failure_reason_contains: input.failure_reason_contains,
        failure_class: input.failure_class,
    })?;
    let page = svc
        .broker
        .peek_messages(name, &filter, after, limit)
        .await?;
    let messages = page.messages.iter().map(peeked).collect();
    Ok(PeekMessagesResult {
        messages,
        next_token: page.next.map(|next| next.to_string()),
    })
}

/// A peeked message as PeekMessages answers it.
fn peeked(m: &sluice_broker::PeekedMessage) -> PeekedMessage {
    let received = m.first_receive_at > 0;
    PeekedMessage {
        message_id: Some(m.message_id.clone()),
        body: Some(m.body.clone()),
        md5_of_body: Some(md5_of_body(&m.body)),
        state: Some(m.state.to_string()),
        receive_count: Some(i64::from(m.receive_count)),
        sent_timestamp: Some(m.sent_at as i64),
        first_receive_timestamp: received.then_some(m.first_receive_at as i64),
        last_receive_timestamp: received.then_some(m.last_receive_at as i64),
        message_group_id: m.group_id.clone(),
        message_deduplication_id: m.dedup_id.clone(),
        sequence_number: m.sequence_number.clone(),
        failure_reason: m.failure_reason.clone(),
        failure_class: m.failure_class.clone(),
        attributes: system_attributes(&m.system_attributes),
        message_attributes: message_attributes(&m.attributes),
    }
}

/// A message's system attributes as sluice's answers show them: the text
/// ones (provenance, failure), by name.
pub(super) fn system_attributes(
    attrs: &sluice_core::message::MessageAttributes,
) -> std::collections::BTreeMap<String, String> {
    attrs
        .iter()
        .filter_map(|(k, v)| match &v.value {
            AttributeValue::String(s) => Some((k.clone(), s.clone())),
            AttributeValue::Binary(_) => None,
        })
        .collect()
}

/// A message's attributes as SQS's answers show them.
pub(super) fn message_attributes(
    attrs: &sluice_core::message::MessageAttributes,
) -> std::collections::BTreeMap<String, MessageAttributeValue> {
    attrs
        .iter()
        .map(|(n, v)| {
            let (string_value, binary_value) = match &v.value {
                AttributeValue::String(s) => (Some(s.clone()), None),
                AttributeValue::Binary(b) => (None, Some(STANDARD.encode(b))),
            };
            let value = MessageAttributeValue {
                string_value,
                binary_value,
                data_type: Some(v.data_type.clone()),
                ..MessageAttributeValue::default()
            };
            (n.clone(), value)
        })
        .collect()
}

/// The message filter of PeekMessages, RedriveMessages and
/// ListArchivedMessages, as given.
pub(super) struct Filter {
    pub(super) sent_after: Option<i64>,
    pub(super) sent_before: Option<i64>,
    pub(super) body_contains: Option<String>,
    pub(super) attribute_name: Option<String>,
    pub(super) attribute_value: Option<String>,
    pub(super) source_queue_arn: Option<String>,
    pub(super) failure_reason_contains: Option<String>,
    pub(super) failure_class: Option<String>,
}

/// Turns the filter parameters into a broker filter.
pub(super) fn message_filter(input: Filter) -> Result<MessageFilter, SqsError> {
    let attribute = match (input.attribute_name, input.attribute_value) {
        (Some(n), Some(v)) => Some((n, v)),
        (None, None) => None,
        _ => {
            return Err(SqsError::new(
                sluice_core::ErrorCode::InvalidParameterCombination,
                "AttributeName and AttributeValue go together.",
            ));
        }
    };
    let millis = |v: Option<i64>| v.map(|t| t.max(0) as u64);
    Ok(MessageFilter {
        sent_after: millis(input.sent_after),
        sent_before: millis(input.sent_before),
        body_contains: input.body_contains,
        attribute,
        source_arn: input.source_queue_arn,
        reason_contains: input.failure_reason_contains,
        failure_class: input.failure_class,
    })
}

/// Replays allowed by default before a message is refused (rule X3).
const DEFAULT_MAX_REPLAYS: u32 = 3;

/// RedriveMessages: selective redrive (rule X3). Moves up to MaxMessages
/// matching messages out of a DLQ, back to their sources or to a
/// destination, marking each as a replay; refuses messages replayed
/// MaxReplays times; with DryRun reports what would move.
pub async fn redrive_messages<B: Broker>(
    svc: &Service<B>,
    input: RedriveMessagesRequest,
) -> Result<RedriveMessagesResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let name = &*svc.queue_name(&url)?;
    let max = match input.max_messages {
        Some(m) => in_range("MaxMessages", m, 1, 1000)? as usize,
        None => 100,
    };
    let max_replays = match input.max_replays {
        Some(m) => in_range("MaxReplays", m, 1, 1000)?,
        None => DEFAULT_MAX_REPLAYS,
    };
    let destination = match &input.destination_arn {
        Some(arn) => Some(svc.key_from_arn(arn).ok_or_else(|| {
            SqsError::invalid_value("DestinationArn", arn, "Not a queue ARN of this server.")
        })?),
        None => None,
    };
    if let Some(d) = &destination {
        svc.broker.get_queue(d).await?;
    }
    let dry_run = input.dry_run.unwrap_or(false);
    let redrive = Redrive {
        destination,
        max,
        filter: message_filter(Filter {
            sent_after: input.sent_after,
            sent_before: input.sent_before,
            body_contains: input.body_contains,
            attribute_name: input.attribute_name,
            attribute_value: input.attribute_value,
            source_queue_arn: input.source_queue_arn,
            failure_reason_contains: input.failure_reason_contains,
            failure_class: input.failure_class,
        })?,
        mark_replay: true,
        max_replays: Some(max_replays),
        dry_run,
    };
    let outcome = svc.broker.redrive_messages(name, &redrive).await?;
    if !dry_run {
        // Audit: every redrive is recorded with what it moved.
        tracing::info!(
            target: "sluice::audit",
            queue = name,
            destination = redrive.destination.as_deref().unwrap_or("each message's source"),
            moved = outcome.moved,
            refused = outcome.refused,
            unmovable = outcome.unmovable,
            message_ids = ?outcome.message_ids,
            "selective redrive"
        );
    }
    Ok(RedriveMessagesResult {
        moved: Some(outcome.moved as i64),
        refused: Some(outcome.refused as i64),
        unmovable: Some(outcome.unmovable as i64),
        reason: outcome.reason,
        message_ids: outcome.message_ids,
        dry_run: Some(dry_run),
    })
}
