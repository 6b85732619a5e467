//! TagResource, UntagResource, ListTagsForResource (rule N1): a topic's
//! tags, at most 50, keys of 1–128 characters and values of at most 256
//! (recorded: LocalStack test_tags, test_tags_removed_after_deletion;
//! ballerina's SNS connector against AWS for the quota and the lengths).

use std::collections::BTreeMap;

use sluice_broker::{Broker, EngineError, Topic};
use sluice_protocol::sns::{
    ErrorCode, ListTagsForResourceRequest, ListTagsForResourceResponse, SnsError, Tag,
    TagResourceRequest, TagResourceResponse, UntagResourceRequest, UntagResourceResponse,
};

use super::arns;
use super::errors::{engine, required};
use crate::service::{RequestContext, Service};

/// The most tags a topic holds.
const MAX_TAGS: usize = 50;

/// Tags as a request lists them, by key: a key given twice, or too long,
/// is refused in SNS's words.
pub fn tags_of(tags: Vec<Tag>) -> Result<BTreeMap<String, String>, SnsError> {
    let mut out = BTreeMap::new();
    for (i, tag) in tags.into_iter().enumerate() {
        let position = i + 1;
        let key = tag
            .key
            .ok_or_else(|| too_long_or_missing(position, "key", None))?;
        let value = tag.value.unwrap_or_default();
        if key.is_empty() || key.chars().count() > 128 {
            return Err(too_long_or_missing(position, "key", Some((&key, 128))));
        }
        if value.chars().count() > 256 {
            return Err(too_long_or_missing(position, "value", Some((&value, 256))));
        }
        if out.insert(key, value).is_some() {
            return Err(SnsError::invalid_parameter(
                "Duplicated keys are not allowed.",
            ));
        }
    }
    Ok(out)
}

/// SNS's `ValidationError` for a tag member of the wrong length.
fn too_long_or_missing(position: usize, member: &str, value: Option<(&str, usize)>) -> SnsError {
    let message = match value {
        Some((text, max)) if !text.is_empty() => format!(
            "1 validation error detected: Value '{text}' at 'tags.{position}.member.{member}' failed to satisfy constraint: Member must have length less than or equal to {max}"
        ),
        _ => format!(
            "1 validation error detected: Value null at 'tags.{position}.member.{member}' failed to satisfy constraint: Member must not be null"
        ),
    };
    SnsError::new(ErrorCode::ValidationError, message)
}

/// Refuses more than [`MAX_TAGS`] tags on a topic.
pub fn check_tags(tags: &BTreeMap<String, String>, _existing: usize) -> Result<(), SnsError> {
    if tags.len() > MAX_TAGS {
        return Err(quota());
    }
    Ok(())
}

fn quota() -> SnsError {
    SnsError::new(
        ErrorCode::TagLimitExceededException,
        "Could not complete request: tag quota of per resource exceeded",
    )
}

/// The key of the topic a tag operation names; tags are on topics only.
fn resource<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    arn: Option<String>,
) -> Result<String, SnsError> {
    let arn = required(arn, "ResourceArn")?;
    arns::topic_key(svc, ctx, "ResourceArn", &arn)
}

/// A missing topic, in the tag operations' words.
fn not_found(e: EngineError) -> SnsError {
    match e {
        EngineError::TopicDoesNotExist => SnsError::new(
            ErrorCode::ResourceNotFoundException,
            "Resource does not exist",
        ),
        other => engine(other),
    }
}

/// TagResource: adds tags, a key given again taking its new value.
pub async fn tag_resource<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: TagResourceRequest,
) -> Result<TagResourceResponse, SnsError> {
    let key = resource(svc, ctx, input.resource_arn)?;
    let tags = tags_of(required(input.tags, "Tags")?)?;
    let changed = svc
        .broker
        .update_topic(&key, move |topic: &mut Topic| {
            let mut next = topic.tags.clone();
            next.extend(tags);
            if next.len() > MAX_TAGS {
                return Err(quota());
            }
            topic.tags = next;
            Ok(())
        })
        .await
        .map_err(not_found)?;
    changed.map(|_| TagResourceResponse {})
}

/// UntagResource: a key that is not there is no error.
pub async fn untag_resource<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: UntagResourceRequest,
) -> Result<UntagResourceResponse, SnsError> {
    let key = resource(svc, ctx, input.resource_arn)?;
    let keys = required(input.tag_keys, "TagKeys")?;
    let changed = svc
        .broker
        .update_topic(&key, move |topic: &mut Topic| {
            for k in &keys {
                topic.tags.remove(k);
            }
            Ok::<(), SnsError>(())
        })
        .await
        .map_err(not_found)?;
    changed.map(|_| UntagResourceResponse {})
}

/// ListTagsForResource: `Tags` is written even when there is none.
pub async fn list_tags_for_resource<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ListTagsForResourceRequest,
) -> Result<ListTagsForResourceResponse, SnsError> {
    let key = resource(svc, ctx, input.resource_arn)?;
    let topic = svc.broker.get_topic(&key).await.map_err(not_found)?;
    Ok(ListTagsForResourceResponse {
        tags: topic
            .tags
            .into_iter()
            .map(|(key, value)| Tag {
                key: Some(key),
                value: Some(value),
            })
            .collect(),
    })
}
