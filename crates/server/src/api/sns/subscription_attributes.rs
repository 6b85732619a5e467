//! A subscription's attributes (rules N1, N3–N6): which may be set, how
//! each is checked and kept, and what GetSubscriptionAttributes shows.
//! Recorded answers: LocalStack test_sns.py (`test_validate_set_sub_attributes`,
//! `test_subscribe_idempotency`, `test_create_subscriptions_with_attributes`),
//! test_sns_filter_policy.py (`test_set_subscription_filter_policy_scope`),
//! and ballerina's SNS connector against AWS (raw delivery by protocol).

use std::collections::BTreeMap;

use serde_json::Value;
use sluice_broker::Subscription;
use sluice_core::queue_name::{Account, arn_parts};
use sluice_sns::delivery_policy::{effective_subscription_policy, normalize_subscription_policy};
use sluice_sns::filter::{FilterPolicy, FilterPolicyError, Scope};

use super::topic_attributes::Refused;

/// Internal attributes: kept with the subscription, never shown.
pub const CONFIRMED_TOKEN: &str = "sluice.ConfirmedToken";
/// Whether its confirmation was signed (`ConfirmationWasAuthenticated`).
pub const AUTHENTICATED: &str = "sluice.ConfirmationWasAuthenticated";
/// The access key that subscribed it (`SubscriptionPrincipal`).
pub const PRINCIPAL: &str = "sluice.SubscriptionPrincipal";

/// The protocols that take raw delivery (ballerina's SNS connector,
/// recorded against AWS: email and sms refuse it).
const RAW_PROTOCOLS: [&str; 4] = ["sqs", "http", "https", "firehose"];

/// Checks attribute `name`'s `value` for a subscription of `protocol`,
/// given its other attributes (the filter policy's scope), and gives the
/// value to keep, or `None` to remove it.
pub fn check(
    protocol: &str,
    others: &BTreeMap<String, String>,
    name: &str,
    value: &str,
) -> Result<Option<String>, Refused> {
    match name {
        "RawMessageDelivery" => {
            let lower = value.to_ascii_lowercase();
            if lower != "true" && lower != "false" {
                return Err(Refused(format!(
                    "RawMessageDelivery: Invalid value [{value}]. Must be true or false."
                )));
            }
            if lower == "true" && !RAW_PROTOCOLS.contains(&protocol) {
                return Err(Refused(format!(
                    "Delivery protocol [{protocol}] does not support raw message delivery."
                )));
            }
            Ok(Some(lower))
        }
        "FilterPolicyScope" => match value {
            "MessageAttributes" | "MessageBody" => Ok(Some(value.to_string())),
            _ => Err(Refused(format!(
                "FilterPolicyScope: Invalid value [{value}]. Please use either MessageBody or MessageAttributes"
            ))),
        },
        "FilterPolicy" if value.is_empty() => Ok(None),
        "FilterPolicy" => {
            let scope = scope_of(others.get("FilterPolicyScope").map(String::as_str));
            FilterPolicy::parse(value, scope)
                .map(|_| Some(value.to_string()))
                .map_err(|e| Refused(filter_refusal(&e)))
        }
        "RedrivePolicy" => check_redrive_policy(value).map(Some),
        "DeliveryPolicy" if value.is_empty() => Ok(None),
        "DeliveryPolicy" => normalize_subscription_policy(value)
            .map(Some)
            .map_err(|e| Refused(format!("DeliveryPolicy: {e}"))),
        "SubscriptionRoleArn" | "ReplayPolicy" => Ok(Some(value.to_string())),
        _ => Err(Refused("AttributeName".into())),
    }
}

/// A filter policy's scope from the attribute (MessageAttributes when
/// unset).
pub fn scope_of(value: Option<&str>) -> Scope {
    value
        .and_then(Scope::from_name)
        .unwrap_or(Scope::MessageAttributes)
}

/// SNS's words for a refused filter policy: after `FilterPolicy: `, but
/// for the refusals SNS words on their own (a nested policy in the
/// attributes scope).
fn filter_refusal(e: &FilterPolicyError) -> String {
    if e.names_attribute() {
        format!("FilterPolicy: {e}")
    } else {
        e.to_string()
    }
}

/// A subscription's RedrivePolicy: JSON naming an SQS queue's ARN as its
/// `deadLetterTargetArn` (recorded words).
fn check_redrive_policy(value: &str) -> Result<String, Refused> {
    let doc: Value = serde_json::from_str(value)
        .map_err(|e| Refused(format!("RedrivePolicy: failed to parse JSON. {e}")))?;
    let target = doc.get("deadLetterTargetArn").and_then(Value::as_str);
    if target.and_then(arn_parts).is_none() {
        return Err(Refused(
            "RedrivePolicy: deadLetterTargetArn is an invalid arn".into(),
        ));
    }
    Ok(value.to_string())
}

/// The value a subscription has for `name`: what was set, or SNS's
/// default (`RawMessageDelivery` false, `FilterPolicyScope`
/// MessageAttributes), for comparing a repeated Subscribe's attributes.
pub fn effective<'a>(attributes: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    attributes.get(name).map(String::as_str).or(match name {
        "RawMessageDelivery" => Some("false"),
        "FilterPolicyScope" => Some("MessageAttributes"),
        _ => None,
    })
}

/// What GetSubscriptionAttributes shows.
pub fn shown(
    account: &Account,
    subscription: &Subscription,
    topic_effective_delivery: &str,
) -> BTreeMap<String, String> {
    let a = &subscription.attributes;
    let mut out = BTreeMap::new();
    let pending = subscription.pending_token.is_some();
    out.insert(
        "ConfirmationWasAuthenticated".into(),
        a.get(AUTHENTICATED)
            .cloned()
            .unwrap_or_else(|| (!pending).to_string()),
    );
    out.insert("Endpoint".into(), subscription.endpoint.clone());
    out.insert("Owner".into(), subscription.owner.clone());
    out.insert("PendingConfirmation".into(), pending.to_string());
    out.insert("Protocol".into(), subscription.protocol.clone());
    out.insert(
        "RawMessageDelivery".into(),
        effective(a, "RawMessageDelivery")
            .unwrap_or("false")
            .to_string(),
    );
    out.insert(
        "SubscriptionArn".into(),
        account.subscription_arn(&subscription.topic, &subscription.id),
    );
    out.insert(
        "SubscriptionPrincipal".into(),
        a.get(PRINCIPAL)
            .cloned()
            .unwrap_or_else(|| format!("arn:aws:iam::{}:root", subscription.owner)),
    );
    out.insert("TopicArn".into(), account.topic_arn(&subscription.topic));
    // The scope shows only beside a policy (recorded).
    if let Some(policy) = a.get("FilterPolicy") {
        out.insert("FilterPolicy".into(), policy.clone());
        out.insert(
            "FilterPolicyScope".into(),
            effective(a, "FilterPolicyScope")
                .unwrap_or("MessageAttributes")
                .to_string(),
        );
    }
    for name in ["RedrivePolicy", "SubscriptionRoleArn", "ReplayPolicy"] {
        if let Some(v) = a.get(name) {
            out.insert(name.into(), v.clone());
        }
    }
    if let Some(policy) = a.get("DeliveryPolicy") {
        out.insert("DeliveryPolicy".into(), policy.clone());
        out.insert(
            "EffectiveDeliveryPolicy".into(),
            effective_subscription_policy(Some(policy), topic_effective_delivery),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(protocol: &str, name: &str, value: &str) -> String {
        check(protocol, &BTreeMap::new(), name, value)
            .err()
            .map(|r| r.0)
            .unwrap_or_default()
    }

    /// N1: the checks in SNS's words (recorded: LocalStack
    /// test_validate_set_sub_attributes, test_set_subscription_filter_policy_scope;
    /// ballerina's SNS connector for raw delivery by protocol).
    #[test]
    fn n1_subscription_attribute_checks() {
        assert_eq!(refused("sqs", "FakeAttribute", "x"), "AttributeName");
        assert_eq!(
            refused("sqs", "RawMessageDelivery", "test-ValUe"),
            "RawMessageDelivery: Invalid value [test-ValUe]. Must be true or false."
        );
        assert_eq!(
            refused("sqs", "RawMessageDelivery", ""),
            "RawMessageDelivery: Invalid value []. Must be true or false."
        );
        assert_eq!(
            refused("email", "RawMessageDelivery", "true"),
            "Delivery protocol [email] does not support raw message delivery."
        );
        assert_eq!(
            refused(
                "sqs",
                "RedrivePolicy",
                r#"{"deadLetterTargetArn":"fake-arn"}"#
            ),
            "RedrivePolicy: deadLetterTargetArn is an invalid arn"
        );
        assert!(
            refused("sqs", "RedrivePolicy", "{invalidjson}")
                .starts_with("RedrivePolicy: failed to parse JSON.")
        );
        assert_eq!(
            refused("sqs", "FilterPolicyScope", "RandomValue"),
            "FilterPolicyScope: Invalid value [RandomValue]. Please use either MessageBody or MessageAttributes"
        );
        assert_eq!(
            check("sqs", &BTreeMap::new(), "RawMessageDelivery", "TrUe")
                .ok()
                .flatten()
                .as_deref(),
            Some("true"),
            "kept in lower case"
        );
        assert!(
            check("sqs", &BTreeMap::new(), "FilterPolicy", "")
                .unwrap()
                .is_none()
        );
    }
}
