//! Publish and PublishBatch (rules N1, N2, N7): the message checked, given
//! its id (and on a FIFO topic its sequence number, or the id of the
//! message it repeats), delivered to every subscription before the answer
//! (`fanout.rs`). Recorded answers: LocalStack test_sns.py (J, K and L of
//! the recorded cases: `test_publish_wrong_arn_format`,
//! `test_unknown_topic_publish`, `test_publish_batch_exceptions`,
//! `test_publish_batch_invalid_entry_id`, `test_publish_batch_too_long_message`).

use std::collections::BTreeMap;

use sluice_broker::{Broker, Topic};
use sluice_protocol::sns::{
    BatchResultErrorEntry, ErrorCode, MessageAttributeValue, PublishBatchInput,
    PublishBatchRequestEntry, PublishBatchResponse, PublishBatchResultEntry, PublishInput,
    PublishResponse, SnsError,
};

use super::arns;
use super::errors::required;
use super::fanout;
use super::message_checks::{
    DEFAULT_MAX_SIZE, check_attributes, check_fifo_token, check_subject, size, structured,
};
use super::outgoing::Outgoing;
use super::topic_attributes::is_fifo;
use super::topics::named_topic;
use crate::service::{RequestContext, Service};

/// What one message of a Publish or a batch entry carries.
struct Given {
    message: Option<String>,
    subject: Option<String>,
    structure: Option<String>,
    attributes: Option<BTreeMap<String, MessageAttributeValue>>,
    dedup_id: Option<String>,
    group_id: Option<String>,
}

/// Publish: to the topic `TopicArn` (or `TargetArn`) names.
pub async fn publish<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: PublishInput,
) -> Result<PublishResponse, SnsError> {
    let topic = target(
        svc,
        ctx,
        input.topic_arn,
        input.target_arn,
        input.phone_number,
    )
    .await?;
    let given = Given {
        message: input.message,
        subject: input.subject,
        structure: input.message_structure,
        attributes: input.message_attributes,
        dedup_id: input.message_deduplication_id,
        group_id: input.message_group_id,
    };
    let mut outgoing = check(&topic, given, None)?;
    check_subject(outgoing.subject.as_deref())?;
    if outgoing.size > max_size(&topic) {
        return Err(SnsError::invalid_parameter("Message too long"));
    }
    let assigned = svc.sns.assign(
        &topic,
        outgoing.group_id.as_deref(),
        outgoing.dedup_id.as_deref(),
        svc.now(),
    );
    outgoing.message_id = assigned.message_id;
    outgoing.sequence_number = assigned.sequence_number;
    if assigned.fresh {
        let messages = std::slice::from_ref(&outgoing);
        if let Err(e) = fanout::deliver(svc, ctx, &topic, messages).await {
            // Not delivered: a retry of it is no duplicate.
            forget(svc, &topic, messages);
            return Err(e);
        }
        svc.metrics.topics.published(&topic.key, 1);
    }
    Ok(PublishResponse {
        message_id: Some(outgoing.message_id),
        sequence_number: outgoing.sequence_number,
    })
}

/// The topic a Publish names: `TopicArn`, or `TargetArn` naming a topic;
/// SMS (`PhoneNumber`) and mobile endpoints are not sluice's.
async fn target<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    topic_arn: Option<String>,
    target_arn: Option<String>,
    phone_number: Option<String>,
) -> Result<Topic, SnsError> {
    match (topic_arn, target_arn, phone_number) {
        (Some(arn), _, _) => named_topic(svc, ctx, "TopicArn", Some(arn)).await,
        (None, Some(arn), _) => {
            arns::topic_key(svc, ctx, "TargetArn", &arn).map_err(|e| {
                if arn.contains("endpoint/") {
                    SnsError::invalid_parameter(
                        "TargetArn Reason: No endpoint found for the target arn specified",
                    )
                } else {
                    e
                }
            })?;
            named_topic(svc, ctx, "TargetArn", Some(arn)).await
        }
        (None, None, Some(number)) => Err(SnsError::invalid_parameter(format!(
            "PhoneNumber Reason: {number} is not valid to publish to: sluice does not send SMS"
        ))),
        (None, None, None) => Err(SnsError::invalid_parameter(
            "TopicArn or TargetArn Reason: no value for required parameter",
        )),
    }
}

/// The most bytes a message to `topic` may have.
fn max_size(topic: &Topic) -> usize {
    topic
        .attributes
        .get("MaximumMessageSize")
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_MAX_SIZE)
}

/// The checks that fail a whole Publish or PublishBatch: the message, its
/// structure and attributes, and the FIFO rules (all but the subject,
/// which fails only its batch entry).
fn check(topic: &Topic, given: Given, entry: Option<usize>) -> Result<Outgoing, SnsError> {
    let message = given.message.unwrap_or_default();
    if message.is_empty() {
        return Err(SnsError::invalid_parameter("Empty message"));
    }
    let by_protocol = match given.structure.as_deref() {
        None => None,
        Some("json") => Some(structured(&message)?),
        Some(_) => return Err(SnsError::invalid_parameter("MessageStructure")),
    };
    let attributes = check_attributes(given.attributes.unwrap_or_default(), entry)?;
    let fifo = is_fifo(topic);
    if let Some(group) = &given.group_id {
        check_fifo_token("MessageGroupId", group)?;
    }
    let dedup_id = match (fifo, given.dedup_id) {
        (false, Some(_)) => {
            return Err(SnsError::invalid_parameter(
                "MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type",
            ));
        }
        (false, None) => None,
        (true, given_id) => {
            if given.group_id.is_none() {
                return Err(SnsError::invalid_parameter(
                    "The MessageGroupId parameter is required for FIFO topics",
                ));
            }
            match given_id {
                Some(id) => {
                    check_fifo_token("MessageDeduplicationId", &id)?;
                    Some(id)
                }
                // Content-based: the SHA-256 of the body alone (recorded:
                // test_message_to_fifo_sqs).
                None if content_based(topic) => {
                    Some(sluice_core::digest::sha256_hex(message.as_bytes()))
                }
                None => {
                    return Err(SnsError::invalid_parameter(
                        "The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                    ));
                }
            }
        }
    };
    let size = size(&message, &attributes);
    Ok(Outgoing {
        message_id: String::new(),
        sequence_number: None,
        message,
        by_protocol,
        subject: given.subject,
        attributes,
        group_id: given.group_id,
        dedup_id,
        size,
    })
}

fn content_based(topic: &Topic) -> bool {
    topic
        .attributes
        .get("ContentBasedDeduplication")
        .is_some_and(|v| v == "true")
}

/// PublishBatch: 1–10 entries of distinct ids; an attribute, structure or
/// FIFO refusal fails the whole request, a bad subject only its entry.
pub async fn publish_batch<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: PublishBatchInput,
) -> Result<PublishBatchResponse, SnsError> {
    let topic = named_topic(svc, ctx, "TopicArn", input.topic_arn).await?;
    let entries = required(
        input.publish_batch_request_entries,
        "PublishBatchRequestEntries",
    )?;
    check_ids(&entries)?;
    let mut failed = Vec::new();
    let mut accepted: Vec<(String, Outgoing)> = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let id = entry.id.clone().unwrap_or_default();
        let given = Given {
            message: entry.message,
            subject: entry.subject,
            structure: entry.message_structure,
            attributes: entry.message_attributes,
            dedup_id: entry.message_deduplication_id,
            group_id: entry.message_group_id,
        };
        let outgoing = check(&topic, given, Some(i + 1))?;
        match check_subject(outgoing.subject.as_deref()) {
            Ok(()) => accepted.push((id, outgoing)),
            Err(e) => failed.push(BatchResultErrorEntry {
                id,
                code: e.code.query_code().to_string(),
                message: Some(e.message),
                sender_fault: true,
            }),
        }
    }
    let total: usize = accepted.iter().map(|(_, o)| o.size).sum();
    if total > max_size(&topic) {
        return Err(SnsError::new(
            ErrorCode::BatchRequestTooLongException,
            "The length of all the messages put together is more than the limit.",
        ));
    }
    let mut fresh = Vec::new();
    let mut successful = Vec::with_capacity(accepted.len());
    for (id, mut outgoing) in accepted {
        let assigned = svc.sns.assign(
            &topic,
            outgoing.group_id.as_deref(),
            outgoing.dedup_id.as_deref(),
            svc.now(),
        );
        outgoing.message_id = assigned.message_id;
        outgoing.sequence_number = assigned.sequence_number;
        if assigned.fresh {
            fresh.push(outgoing.clone());
        }
        successful.push(PublishBatchResultEntry {
            id: Some(id),
            message_id: Some(outgoing.message_id),
            sequence_number: outgoing.sequence_number,
        });
    }
    if !fresh.is_empty() {
        if let Err(e) = fanout::deliver(svc, ctx, &topic, &fresh).await {
            forget(svc, &topic, &fresh);
            return Err(e);
        }
        svc.metrics.topics.published(&topic.key, fresh.len() as u64);
    }
    Ok(PublishBatchResponse { successful, failed })
}

/// Forgets the deduplication ids of messages whose delivery failed, so
/// that the publisher's retry delivers them (rule N7).
fn forget<B: Broker>(svc: &Service<B>, topic: &Topic, messages: &[Outgoing]) {
    for m in messages {
        if let Some(dedup_id) = m.dedup_id.as_deref() {
            svc.sns.forget(topic, m.group_id.as_deref(), dedup_id);
        }
    }
}

/// A batch's entries: 1–10, ids of at most 80 letters, digits, `-` and
/// `_`, each once.
fn check_ids(entries: &[PublishBatchRequestEntry]) -> Result<(), SnsError> {
    if entries.is_empty() {
        return Err(SnsError::new(
            ErrorCode::EmptyBatchRequestException,
            "The batch request doesn't contain any entries.",
        ));
    }
    if entries.len() > 10 {
        return Err(SnsError::new(
            ErrorCode::TooManyEntriesInBatchRequestException,
            "The batch request contains more entries than permissible.",
        ));
    }
    let mut seen: Vec<&str> = Vec::with_capacity(entries.len());
    for entry in entries {
        let id = entry.id.as_deref().unwrap_or_default();
        if seen.contains(&id) {
            return Err(SnsError::new(
                ErrorCode::BatchEntryIdsNotDistinctException,
                "Two or more batch entries in the request have the same Id.",
            ));
        }
        seen.push(id);
    }
    for id in seen {
        if id.len() > 80 {
            return Err(SnsError::new(
                ErrorCode::InvalidBatchEntryIdException,
                format!("The Id of a batch entry in the batch request is too long: {id}"),
            ));
        }
        if id.is_empty()
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(SnsError::new(
                ErrorCode::InvalidBatchEntryIdException,
                format!(
                    "The Id of a batch entry in the batch request contains an impermissible character: {id}"
                ),
            ));
        }
    }
    Ok(())
}
