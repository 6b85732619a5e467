//! DescribeTopics: every topic of the caller's account and region (or
//! those named), with its attributes as GetTopicAttributes shows them,
//! its subscriptions with theirs, and what became of their messages on
//! this node (rules N4–N6). One call gives the console's topics page and
//! `sluice doctor`'s subscription checks what they read.

use sluice_broker::{Broker, Subscription, Topic};
use sluice_core::SqsError;
use sluice_protocol::sluice::{
    DescribeTopicsRequest, DescribeTopicsResult, SubscriptionDetail, TopicDetail,
};

use crate::api::sns::subscription_attributes;
use crate::api::sns::topic_attributes;
use crate::metrics::topics::Outcome;
use crate::service::{RequestContext, Service};

/// DescribeTopics.
pub async fn describe_topics<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: DescribeTopicsRequest,
) -> Result<DescribeTopicsResult, SqsError> {
    let account = &svc.config.account;
    let region = svc.request_region(ctx);
    let owner = svc.request_account(ctx);
    let named: Option<Vec<String>> = input.topic_arns.map(|arns| {
        arns.iter()
            .filter_map(|arn| account.topic_key_from_arn(arn))
            .collect()
    });
    let keys: Vec<String> = (svc.broker.list_topics().await?)
        .into_iter()
        .filter(|key| account.region_of(key) == region && account.owner_of(key) == owner)
        .filter(|key| named.as_ref().is_none_or(|n| n.contains(key)))
        .collect();
    let mut topics = Vec::with_capacity(keys.len());
    for key in keys {
        // A topic deleted since the list is simply not shown.
        let Ok(topic) = svc.broker.get_topic(&key).await else {
            continue;
        };
        let subscriptions = svc.broker.subscriptions(Some(&key)).await?;
        topics.push(detail(svc, &topic, &subscriptions));
    }
    Ok(DescribeTopicsResult { topics })
}

/// One topic as DescribeTopics shows it.
fn detail<B: Broker>(
    svc: &Service<B>,
    topic: &Topic,
    subscriptions: &[Subscription],
) -> TopicDetail {
    let account = &svc.config.account;
    let attributes = topic_attributes::shown(account, topic, subscriptions);
    let delivery = attributes
        .get("EffectiveDeliveryPolicy")
        .cloned()
        .unwrap_or_default();
    let counts = &svc.metrics.topics;
    let subscriptions = subscriptions
        .iter()
        .map(|s| {
            let count = |outcome| {
                let n = counts.outcome_count(&topic.key, &s.id, &s.protocol, outcome);
                Some(i64::try_from(n).unwrap_or(i64::MAX))
            };
            let [delivered, filtered_out, failed, dead_lettered, dropped] = Outcome::ALL.map(count);
            SubscriptionDetail {
                subscription_arn: Some(account.subscription_arn(&s.topic, &s.id)),
                protocol: Some(s.protocol.clone()),
                endpoint: Some(without_password(&s.endpoint)),
                pending_confirmation: Some(s.pending_token.is_some()),
                attributes: subscription_attributes::shown(account, s, &delivery)
                    .into_iter()
                    .filter(|(name, _)| name != "Endpoint")
                    .collect(),
                delivered_count: delivered,
                filtered_out_count: filtered_out,
                failed_count: failed,
                dead_lettered_count: dead_lettered,
                dropped_count: dropped,
            }
        })
        .collect();
    TopicDetail {
        topic_arn: Some(account.topic_arn(&topic.key)),
        attributes: attributes.into_iter().collect(),
        published_count: Some(
            i64::try_from(counts.published_count(&topic.key)).unwrap_or(i64::MAX),
        ),
        subscriptions,
    }
}

/// An endpoint URL with any password in it hidden (`https://user:pass@…`
/// delivers with basic authentication; the console shows the URL).
fn without_password(endpoint: &str) -> String {
    let Some((scheme, rest)) = endpoint.split_once("://") else {
        return endpoint.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:****@{host}{}", &rest[authority_end..]),
            None => endpoint.to_string(),
        },
        None => endpoint.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N6: a basic-authentication password never leaves the server.
    #[test]
    fn n6_endpoint_passwords_are_hidden() {
        assert_eq!(
            without_password("https://ops:s3cret@hooks.example.com/sns?x=1"),
            "https://ops:****@hooks.example.com/sns?x=1"
        );
        assert_eq!(
            without_password("https://hooks.example.com/a@b"),
            "https://hooks.example.com/a@b"
        );
        assert_eq!(
            without_password("arn:aws:sqs:us-east-1:000000000000:q"),
            "arn:aws:sqs:us-east-1:000000000000:q"
        );
    }
}
