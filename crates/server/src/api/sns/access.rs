//! The access check of an authenticated SNS request (rule A2): the key's
//! request rate (rule A8), its `allow` patterns against the operation's
//! `sns:` action, and the account of the topic the request names. A key
//! acts on its own account's topics only; another account's topic is
//! refused with `AuthorizationError` as SNS refuses it (recorded:
//! LocalStack test_sns.py, an Unsubscribe of another account's
//! subscription: "… is not authorized to perform: SNS:Unsubscribe on
//! resource …").
//!
//! The `queues` patterns of a key bound the queues it names, not topics:
//! a topic's subscriptions deliver to queues as the topic's owner, and the
//! queue's own checks (rule N8) apply to that delivery.

use sluice_broker::Broker;
use sluice_core::topic_name::sns_arn_parts;
use sluice_protocol::sns::{ErrorCode, Request, SnsError};

use crate::auth::Principal;
use crate::service::{RequestContext, Service};

/// Refuses, with SNS's errors, a request `principal` may not make: over
/// its rate (`Throttling`), an action outside its `allow` patterns, or a
/// topic of another account (`AuthorizationError`). Every refusal is
/// logged once, here. A malformed ARN is left to the action, which
/// answers `InvalidParameter` in SNS's words.
pub async fn authorize<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    principal: &Principal,
    request: &Request,
) -> Result<(), SnsError> {
    let op = request.operation();
    let action = op.name();
    let iam = op.iam_action();
    let arn = named_arn(request);
    if let Some(bucket) = &principal.bucket
        && !bucket.try_take()
    {
        tracing::warn!(
            access_key = principal.access_key_id.as_str(),
            action,
            topic = arn.unwrap_or("-"),
            reason = "over the key's rate limit",
            "request refused: throttled"
        );
        return Err(SnsError::new(ErrorCode::Throttling, "Rate exceeded"));
    }
    let own = principal.account_id.as_str();
    let resource = match arn {
        Some(arn) => topic_arn_of(arn).to_string(),
        None => format!("arn:aws:sns:{}:{own}:*", svc.request_region(ctx)),
    };
    let refuse = |reason: &'static str| {
        tracing::warn!(
            access_key = principal.access_key_id.as_str(),
            action,
            topic = resource.as_str(),
            reason,
            "request refused: access denied"
        );
        authorization_error(own, &principal.access_key_id, iam, &resource)
    };
    if !principal.access.allows_action(iam) {
        return Err(refuse("action not allowed"));
    }
    let foreign = arn
        .and_then(sns_arn_parts)
        .is_some_and(|(_, account, _)| account != own);
    if foreign {
        return Err(refuse("topic of another account"));
    }
    Ok(())
}

/// The topic or subscription ARN a request names, if any: an exhaustive
/// match, so a new operation must say what it names.
fn named_arn(request: &Request) -> Option<&str> {
    match request {
        Request::DeleteTopic(i) => i.topic_arn.as_deref(),
        Request::GetTopicAttributes(i) => i.topic_arn.as_deref(),
        Request::SetTopicAttributes(i) => i.topic_arn.as_deref(),
        Request::AddPermission(i) => i.topic_arn.as_deref(),
        Request::RemovePermission(i) => i.topic_arn.as_deref(),
        Request::Subscribe(i) => i.topic_arn.as_deref(),
        Request::ConfirmSubscription(i) => i.topic_arn.as_deref(),
        Request::ListSubscriptionsByTopic(i) => i.topic_arn.as_deref(),
        Request::PublishBatch(i) => i.topic_arn.as_deref(),
        Request::Publish(i) => i.topic_arn.as_deref().or(i.target_arn.as_deref()),
        Request::Unsubscribe(i) => i.subscription_arn.as_deref(),
        Request::GetSubscriptionAttributes(i) => i.subscription_arn.as_deref(),
        Request::SetSubscriptionAttributes(i) => i.subscription_arn.as_deref(),
        Request::TagResource(i) => i.resource_arn.as_deref(),
        Request::UntagResource(i) => i.resource_arn.as_deref(),
        Request::ListTagsForResource(i) => i.resource_arn.as_deref(),
        Request::GetDataProtectionPolicy(i) => i.resource_arn.as_deref(),
        Request::PutDataProtectionPolicy(i) => i.resource_arn.as_deref(),
        Request::CreateTopic(_) | Request::ListTopics(_) | Request::ListSubscriptions(_) => None,
        Request::CheckIfPhoneNumberIsOptedOut(_)
        | Request::CreatePlatformApplication(_)
        | Request::CreatePlatformEndpoint(_)
        | Request::CreateSMSSandboxPhoneNumber(_)
        | Request::DeleteEndpoint(_)
        | Request::DeletePlatformApplication(_)
        | Request::DeleteSMSSandboxPhoneNumber(_)
        | Request::GetEndpointAttributes(_)
        | Request::GetPlatformApplicationAttributes(_)
        | Request::GetSMSAttributes(_)
        | Request::GetSMSSandboxAccountStatus(_)
        | Request::ListEndpointsByPlatformApplication(_)
        | Request::ListOriginationNumbers(_)
        | Request::ListPhoneNumbersOptedOut(_)
        | Request::ListPlatformApplications(_)
        | Request::ListSMSSandboxPhoneNumbers(_)
        | Request::OptInPhoneNumber(_)
        | Request::SetEndpointAttributes(_)
        | Request::SetPlatformApplicationAttributes(_)
        | Request::SetSMSAttributes(_)
        | Request::VerifySMSSandboxPhoneNumber(_) => None,
    }
}

/// The topic's ARN within a subscription's (`…:topic:id` → `…:topic`).
fn topic_arn_of(arn: &str) -> &str {
    match sns_arn_parts(arn) {
        Some((_, _, resource)) if resource.contains(':') => {
            arn.rsplit_once(':').map_or(arn, |(topic, _)| topic)
        }
        _ => arn,
    }
}

/// SNS's refusal of an action on a resource: `AuthorizationError`, 403,
/// with IAM's words, the action as SNS writes it (`SNS:Publish`).
pub fn authorization_error(
    account: &str,
    access_key_id: &str,
    iam: &str,
    resource: &str,
) -> SnsError {
    let action = iam
        .strip_prefix("sns:")
        .map_or_else(|| iam.to_string(), |name| format!("SNS:{name}"));
    SnsError::new(
        ErrorCode::AuthorizationErrorException,
        format!(
            "User: arn:aws:iam::{account}:user/{access_key_id} is not authorized to perform: \
             {action} on resource: {resource} because no identity-based policy allows the \
             {action} action"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A2: a subscription's ARN is checked as its topic's.
    #[test]
    fn a2_a_subscription_is_its_topics_resource() {
        assert_eq!(
            topic_arn_of("arn:aws:sns:us-east-1:111111111111:t:4b2f"),
            "arn:aws:sns:us-east-1:111111111111:t"
        );
        assert_eq!(
            topic_arn_of("arn:aws:sns:us-east-1:111111111111:t"),
            "arn:aws:sns:us-east-1:111111111111:t"
        );
    }

    /// A2: SNS names the action `SNS:<Operation>` in its refusal
    /// (recorded: "is not authorized to perform: SNS:Unsubscribe").
    #[test]
    fn a2_the_refusal_names_the_action_as_sns_does() {
        let e = authorization_error("1", "AKID", "sns:Unsubscribe", "arn:aws:sns:r:1:t");
        assert_eq!(e.code, ErrorCode::AuthorizationErrorException);
        assert!(e.message.contains(
            "is not authorized to perform: SNS:Unsubscribe on resource: arn:aws:sns:r:1:t"
        ));
    }
}
