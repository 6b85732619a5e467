//! CreateTopic, DeleteTopic, GetTopicAttributes, SetTopicAttributes,
//! ListTopics (rule N1).

use std::collections::BTreeMap;

use sluice_broker::{Broker, EngineError, Topic};
use sluice_core::topic_name::is_valid_topic_name;
use sluice_protocol::sns::{
    CreateTopicInput, CreateTopicResponse, DeleteTopicInput, GetTopicAttributesInput,
    GetTopicAttributesResponse, ListTopicsInput, ListTopicsResponse, SetTopicAttributesInput,
    SnsError, Topic as TopicEntry,
};

use super::errors::{engine, required};
use super::tags::{check_tags, tags_of};
use super::topic_attributes::{self, Refused, is_fifo};
use super::{arns, paging};
use crate::service::{RequestContext, Service};

/// CreateTopic: idempotent for the same attributes and tags (recorded:
/// LocalStack test_create_topic_different_attrs,
/// test_create_duplicate_topic_check_idempotency).
pub async fn create_topic<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: CreateTopicInput,
) -> Result<CreateTopicResponse, SnsError> {
    let name = required(input.name, "Name")?;
    let given = input.attributes.unwrap_or_default();
    let fifo = given
        .get("FifoTopic")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    // The name is checked before anything else (recorded).
    if !is_valid_topic_name(&name, fifo) {
        return Err(SnsError::invalid_parameter("Topic Name"));
    }
    let mut attributes = BTreeMap::new();
    for (attr, value) in &given {
        if attr == "FifoTopic" {
            match value.to_ascii_lowercase().as_str() {
                // `false` is the default, and kept as nothing (recorded).
                "false" => {}
                "true" => {
                    attributes.insert(attr.clone(), "true".to_string());
                }
                _ => {
                    return Err(attributes_reason(&format!(
                        "FifoTopic: Invalid value [{value}]. Must be true or false."
                    )));
                }
            }
            continue;
        }
        match topic_attributes::check(attr, value, fifo) {
            Ok(Some(kept)) => {
                attributes.insert(attr.clone(), kept);
            }
            Ok(None) => {}
            Err(Refused(why)) => return Err(attributes_reason(&why)),
        }
    }
    let tags = tags_of(input.tags.unwrap_or_default())?;
    check_tags(&tags, 0)?;
    let key = svc.request_key(ctx, &name);
    let topic = Topic {
        key: key.clone(),
        attributes: attributes.clone(),
        tags: tags.clone(),
        created_at: svc.now(),
    };
    let (stored, created) = svc.broker.create_topic(topic).await.map_err(engine)?;
    if !created {
        if attributes
            .iter()
            .any(|(k, v)| stored.attributes.get(k) != Some(v))
        {
            return Err(attributes_reason(
                "Topic already exists with different attributes",
            ));
        }
        if tags.iter().any(|(k, v)| stored.tags.get(k) != Some(v)) {
            return Err(SnsError::invalid_parameter(
                "Tags Reason: Topic already exists with different tags",
            ));
        }
    }
    Ok(CreateTopicResponse {
        topic_arn: Some(svc.config.account.topic_arn(&key)),
    })
}

/// CreateTopic's words for an attribute it refuses.
fn attributes_reason(why: &str) -> SnsError {
    SnsError::invalid_parameter(format!("Attributes Reason: {why}"))
}

/// DeleteTopic: with its subscriptions; a topic that is gone is deleted
/// already (recorded: test_delete_topic_idempotency).
pub async fn delete_topic<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: DeleteTopicInput,
) -> Result<(), SnsError> {
    let arn = required(input.topic_arn, "TopicArn")?;
    let key = arns::topic_key(svc, ctx, "TopicArn", &arn)?;
    match svc.broker.delete_topic(&key).await {
        Ok(()) | Err(EngineError::TopicDoesNotExist) => Ok(()),
        Err(e) => Err(engine(e)),
    }
}

/// The topic a request names by its ARN.
pub async fn named_topic<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    param: &str,
    arn: Option<String>,
) -> Result<Topic, SnsError> {
    let arn = required(arn, param)?;
    let key = arns::topic_key(svc, ctx, param, &arn)?;
    svc.broker.get_topic(&key).await.map_err(engine)
}

/// GetTopicAttributes.
pub async fn get_topic_attributes<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: GetTopicAttributesInput,
) -> Result<GetTopicAttributesResponse, SnsError> {
    let topic = named_topic(svc, ctx, "TopicArn", input.topic_arn).await?;
    let subscriptions = svc
        .broker
        .subscriptions(Some(&topic.key))
        .await
        .map_err(engine)?;
    Ok(GetTopicAttributesResponse {
        attributes: topic_attributes::shown(&svc.config.account, &topic, &subscriptions),
    })
}

/// SetTopicAttributes: one attribute; `FifoTopic` is CreateTopic's only
/// (recorded: test_topic_get_attributes_with_fifo_false).
pub async fn set_topic_attributes<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: SetTopicAttributesInput,
) -> Result<(), SnsError> {
    let arn = required(input.topic_arn, "TopicArn")?;
    let name = required(input.attribute_name, "AttributeName")?;
    let value = input.attribute_value.unwrap_or_default();
    let key = arns::topic_key(svc, ctx, "TopicArn", &arn)?;
    if name == "FifoTopic" {
        return Err(SnsError::invalid_parameter("AttributeName"));
    }
    let changed = svc
        .broker
        .update_topic(&key, move |topic: &mut Topic| {
            match topic_attributes::check(&name, &value, is_fifo(topic)) {
                Ok(Some(kept)) => {
                    topic.attributes.insert(name, kept);
                }
                Ok(None) => {
                    topic.attributes.remove(&name);
                }
                Err(Refused(why)) => return Err(SnsError::invalid_parameter(why)),
            }
            Ok(())
        })
        .await
        .map_err(engine)?;
    changed.map(|_| ())
}

/// ListTopics: the topics of the request's region and account, by 100.
pub async fn list_topics<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ListTopicsInput,
) -> Result<ListTopicsResponse, SnsError> {
    let account = &svc.config.account;
    let region = svc.request_region(ctx);
    let owner = svc.request_account(ctx);
    let arns: Vec<(String, String)> = svc
        .broker
        .list_topics()
        .await
        .map_err(engine)?
        .into_iter()
        .filter(|key| account.region_of(key) == region && account.owner_of(key) == owner)
        .map(|key| {
            let arn = account.topic_arn(&key);
            (arn.clone(), arn)
        })
        .collect();
    let (page, next_token) = paging::page(arns, input.next_token.as_deref())?;
    Ok(ListTopicsResponse {
        topics: page
            .into_iter()
            .map(|arn| TopicEntry {
                topic_arn: Some(arn),
            })
            .collect(),
        next_token,
    })
}
