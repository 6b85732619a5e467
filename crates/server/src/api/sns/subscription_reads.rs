//! ListSubscriptions, ListSubscriptionsByTopic, GetSubscriptionAttributes,
//! SetSubscriptionAttributes (rule N1). Recorded answers: LocalStack
//! test_sns.py (`test_list_subscriptions_by_topic_pagination`,
//! `test_publish_no_confirm_subscription`, `test_validate_set_sub_attributes`,
//! `test_get_subscription_attributes_error_not_exists`).

use sluice_broker::{Broker, Subscription};
use sluice_protocol::sns::{
    GetSubscriptionAttributesInput, GetSubscriptionAttributesResponse,
    ListSubscriptionsByTopicInput, ListSubscriptionsByTopicResponse, ListSubscriptionsInput,
    ListSubscriptionsResponse, SetSubscriptionAttributesInput, SnsError,
    Subscription as SubscriptionEntry,
};
use sluice_sns::delivery_policy::effective_topic_policy;

use super::errors::{engine, required};
use super::subscription_attributes;
use super::subscriptions::check_fifo_dead_letter;
use super::topic_attributes::{Refused, is_fifo};
use super::topics::named_topic;
use super::{arns, paging};
use crate::service::{RequestContext, Service};

/// A subscription as the lists show it; an unconfirmed one's ARN is
/// `PendingConfirmation` there (recorded).
fn entry<B: Broker>(svc: &Service<B>, s: &Subscription) -> (String, SubscriptionEntry) {
    let account = &svc.config.account;
    let arn = account.subscription_arn(&s.topic, &s.id);
    let shown = if s.pending_token.is_some() {
        "PendingConfirmation".to_string()
    } else {
        arn.clone()
    };
    let entry = SubscriptionEntry {
        subscription_arn: Some(shown),
        owner: Some(s.owner.clone()),
        protocol: Some(s.protocol.clone()),
        endpoint: Some(s.endpoint.clone()),
        topic_arn: Some(account.topic_arn(&s.topic)),
    };
    (arn, entry)
}

/// ListSubscriptions: the subscriptions of the request's region and
/// account, by 100.
pub async fn list_subscriptions<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ListSubscriptionsInput,
) -> Result<ListSubscriptionsResponse, SnsError> {
    let account = &svc.config.account;
    let region = svc.request_region(ctx).to_string();
    let owner = svc.request_account(ctx).to_string();
    let entries = svc
        .broker
        .subscriptions(None)
        .await
        .map_err(engine)?
        .iter()
        .filter(|s| account.region_of(&s.topic) == region && s.owner == owner)
        .map(|s| entry(svc, s))
        .collect();
    let (subscriptions, next_token) = paging::page(entries, input.next_token.as_deref())?;
    Ok(ListSubscriptionsResponse {
        subscriptions,
        next_token,
    })
}

/// ListSubscriptionsByTopic: a missing topic is `NotFound`.
pub async fn list_subscriptions_by_topic<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ListSubscriptionsByTopicInput,
) -> Result<ListSubscriptionsByTopicResponse, SnsError> {
    let topic = named_topic(svc, ctx, "TopicArn", input.topic_arn).await?;
    let entries = svc
        .broker
        .subscriptions(Some(&topic.key))
        .await
        .map_err(engine)?
        .iter()
        .map(|s| entry(svc, s))
        .collect();
    let (subscriptions, next_token) = paging::page(entries, input.next_token.as_deref())?;
    Ok(ListSubscriptionsByTopicResponse {
        subscriptions,
        next_token,
    })
}

/// The subscription a request names by its ARN.
async fn named_subscription<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    arn: Option<String>,
) -> Result<Subscription, SnsError> {
    let arn = required(arn, "SubscriptionArn")?;
    let (_, id) = arns::subscription(svc, ctx, &arn)?;
    svc.broker.get_subscription(&id).await.map_err(engine)
}

/// GetSubscriptionAttributes.
pub async fn get_subscription_attributes<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: GetSubscriptionAttributesInput,
) -> Result<GetSubscriptionAttributesResponse, SnsError> {
    let subscription = named_subscription(svc, ctx, input.subscription_arn).await?;
    let topic_delivery = match svc.broker.get_topic(&subscription.topic).await {
        Ok(topic) => {
            effective_topic_policy(topic.attributes.get("DeliveryPolicy").map(String::as_str))
        }
        Err(_) => effective_topic_policy(None),
    };
    Ok(GetSubscriptionAttributesResponse {
        attributes: subscription_attributes::shown(
            &svc.config.account,
            &subscription,
            &topic_delivery,
        ),
    })
}

/// SetSubscriptionAttributes: one attribute, checked against the others.
pub async fn set_subscription_attributes<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: SetSubscriptionAttributesInput,
) -> Result<(), SnsError> {
    let subscription = named_subscription(svc, ctx, input.subscription_arn).await?;
    let name = required(input.attribute_name, "AttributeName")?;
    let value = input.attribute_value.unwrap_or_default();
    let topic_fifo = match svc.broker.get_topic(&subscription.topic).await {
        Ok(topic) => is_fifo(&topic),
        Err(_) => false,
    };
    let changed = svc
        .broker
        .update_subscription(&subscription.id, move |s: &mut Subscription| {
            let refused = |Refused(why): Refused| SnsError::invalid_parameter(why);
            let checked = subscription_attributes::check(&s.protocol, &s.attributes, &name, &value)
                .map_err(refused)?;
            if let (Some(policy), "RedrivePolicy") = (&checked, name.as_str()) {
                check_fifo_dead_letter(&s.protocol, &s.endpoint, topic_fifo, policy)
                    .map_err(refused)?;
            }
            match checked {
                Some(kept) => {
                    s.attributes.insert(name, kept);
                }
                None => {
                    s.attributes.remove(&name);
                }
            }
            Ok(())
        })
        .await
        .map_err(engine)?;
    changed.map(|_| ())
}
