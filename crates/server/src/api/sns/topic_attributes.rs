//! A topic's attributes (rule N1): which may be set, how each is checked
//! and kept, and what GetTopicAttributes shows (the stored ones over SNS's
//! defaults). Recorded answers: LocalStack test_sns.py
//! (`test_create_topic_with_attributes`, `test_topic_get_attributes_with_fifo_false`,
//! `test_topic_delivery_policy_crud`) and ballerina's SNS connector
//! against AWS (the feedback sample rate, the policy's actions).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sluice_broker::{Subscription, Topic};
use sluice_core::queue_name::Account;
use sluice_sns::delivery_policy::{effective_topic_policy, normalize_topic_policy};

/// The protocols whose delivery feedback attributes a topic takes.
const FEEDBACK_PROTOCOLS: [&str; 5] = ["HTTP", "Firehose", "Lambda", "Application", "SQS"];

/// Why an attribute is refused: the text after `Invalid parameter: ` (on
/// SetTopicAttributes) or `Invalid parameter: Attributes Reason: ` (on
/// CreateTopic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// True for a FIFO topic (`FifoTopic` true).
pub fn is_fifo(topic: &Topic) -> bool {
    topic
        .attributes
        .get("FifoTopic")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Checks attribute `name`'s `value` on a topic (FIFO or not) and gives
/// the value to keep, or `None` to remove it (an empty `DeliveryPolicy`).
/// `FifoTopic` is only for CreateTopic, which checks it itself.
pub fn check(name: &str, value: &str, fifo: bool) -> Result<Option<String>, Refused> {
    let invalid = |why: &str| Refused(format!("{name}: Invalid value [{value}]. {why}"));
    match name {
        "DisplayName" | "KmsMasterKeyId" => Ok(Some(value.to_string())),
        "Policy" => check_policy(value).map(Some),
        "DeliveryPolicy" if value.is_empty() => Ok(None),
        "DeliveryPolicy" => normalize_topic_policy(value)
            .map(Some)
            .map_err(|e| Refused(format!("DeliveryPolicy: {e}"))),
        "SignatureVersion" => match value {
            "1" | "2" => Ok(Some(value.to_string())),
            _ => Err(invalid("Must be 1 or 2.")),
        },
        "TracingConfig" => match value {
            "PassThrough" | "Active" => Ok(Some(value.to_string())),
            _ => Err(invalid("Must be PassThrough or Active.")),
        },
        "MaximumMessageSize" => match value.parse::<u32>() {
            Ok(n) if (1024..=1_048_576).contains(&n) => Ok(Some(n.to_string())),
            _ => Err(invalid("Must be an integer from 1024 to 1048576.")),
        },
        "ContentBasedDeduplication" if fifo => match value.to_ascii_lowercase().as_str() {
            v @ ("true" | "false") => Ok(Some(v.to_string())),
            _ => Err(invalid("Must be true or false.")),
        },
        "FifoThroughputScope" if fifo => match value {
            "Topic" | "MessageGroup" => Ok(Some(value.to_string())),
            _ => Err(invalid("Must be Topic or MessageGroup.")),
        },
        "ContentBasedDeduplication" | "FifoThroughputScope" => Err(Refused(format!(
            "{name}: Invalid parameter: {name} is only for FIFO topics"
        ))),
        _ => check_feedback(name, value),
    }
}

/// The delivery feedback attributes (`SQSSuccessFeedbackRoleArn`,
/// `SQSSuccessFeedbackSampleRate`, …): kept, a sample rate from 0 to 100
/// (ballerina's SNS connector, recorded against AWS).
fn check_feedback(name: &str, value: &str) -> Result<Option<String>, Refused> {
    let Some(kind) = FEEDBACK_PROTOCOLS.iter().find_map(|p| name.strip_prefix(p)) else {
        return Err(Refused("AttributeName".into()));
    };
    match kind {
        "SuccessFeedbackRoleArn" | "FailureFeedbackRoleArn" => Ok(Some(value.to_string())),
        "SuccessFeedbackSampleRate" => match value.parse::<u8>() {
            Ok(n) if n <= 100 => Ok(Some(value.to_string())),
            _ => Err(Refused(format!(
                "{name}: {value} value provided is not an integer between 0-100"
            ))),
        },
        _ => Err(Refused("AttributeName".into())),
    }
}

/// A topic policy must be a JSON object whose statements' actions are
/// SNS's (ballerina's SNS connector, recorded against AWS: "Policy
/// statement action out of service scope!").
fn check_policy(value: &str) -> Result<String, Refused> {
    let doc: Value = serde_json::from_str(value)
        .map_err(|e| Refused(format!("Policy: failed to parse JSON. {e}")))?;
    let statements = match doc.get("Statement") {
        Some(Value::Array(list)) => list.clone(),
        Some(one @ Value::Object(_)) => vec![one.clone()],
        _ => return Err(Refused("Policy: Statement is required".into())),
    };
    for statement in &statements {
        let actions: Vec<&str> = match statement.get("Action") {
            Some(Value::String(a)) => vec![a.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if actions.iter().any(|a| !is_sns_action(a)) {
            return Err(Refused(
                "Policy statement action out of service scope!".into(),
            ));
        }
    }
    Ok(value.to_string())
}

/// `*`, `SNS:*` or `SNS:<operation>` of the actions a topic policy grants.
pub fn is_sns_action(action: &str) -> bool {
    if action == "*" {
        return true;
    }
    let Some((service, name)) = action.split_once(':') else {
        return false;
    };
    service.eq_ignore_ascii_case("sns")
        && (name == "*"
            || sluice_protocol::sns::Operation::from_name(name).is_some()
            || name.ends_with('*'))
}

/// The policy a topic has until one is set: its owner may do anything to
/// it (recorded: every GetTopicAttributes of a new topic).
pub fn default_policy(topic_arn: &str, owner: &str) -> String {
    json!({
        "Version": "2008-10-17",
        "Id": "__default_policy_ID",
        "Statement": [{
            "Sid": "__default_statement_ID",
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": [
                "SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission",
                "SNS:RemovePermission", "SNS:DeleteTopic", "SNS:Subscribe",
                "SNS:ListSubscriptionsByTopic", "SNS:Publish"
            ],
            "Resource": topic_arn,
            "Condition": {"StringEquals": {"AWS:SourceOwner": owner}}
        }]
    })
    .to_string()
}

/// What GetTopicAttributes shows: SNS's defaults (display name, effective
/// delivery policy, owner, policy, subscription counts, ARN; a FIFO topic's
/// deduplication), then what was set. Internal attributes (`sluice.`…)
/// are left out.
pub fn shown(
    account: &Account,
    topic: &Topic,
    subscriptions: &[Subscription],
) -> BTreeMap<String, String> {
    let arn = account.topic_arn(&topic.key);
    let owner = account.owner_of(&topic.key).to_string();
    let pending = subscriptions
        .iter()
        .filter(|s| s.pending_token.is_some())
        .count();
    let mut out = BTreeMap::new();
    out.insert("DisplayName".into(), String::new());
    out.insert("Owner".into(), owner.clone());
    out.insert("Policy".into(), default_policy(&arn, &owner));
    out.insert(
        "SubscriptionsConfirmed".into(),
        (subscriptions.len() - pending).to_string(),
    );
    out.insert("SubscriptionsPending".into(), pending.to_string());
    out.insert("SubscriptionsDeleted".into(), "0".into());
    out.insert("TopicArn".into(), arn);
    if is_fifo(topic) {
        out.insert("ContentBasedDeduplication".into(), "false".into());
    }
    for (name, value) in &topic.attributes {
        if !name.starts_with("sluice.") {
            out.insert(name.clone(), value.clone());
        }
    }
    out.insert(
        "EffectiveDeliveryPolicy".into(),
        effective_topic_policy(topic.attributes.get("DeliveryPolicy").map(String::as_str)),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(attributes: &[(&str, &str)]) -> Topic {
        Topic {
            key: "t".into(),
            attributes: attributes
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            tags: BTreeMap::new(),
            created_at: 0,
        }
    }

    /// N1: a new standard topic shows exactly SNS's eight attributes, a
    /// FIFO topic two more (recorded: LocalStack test_create_topic_test_arn,
    /// test_create_topic_with_attributes).
    #[test]
    fn n1_a_new_topic_shows_snss_attributes() {
        let account = Account::default();
        let shown_std = shown(&account, &topic(&[]), &[]);
        let names: Vec<&str> = shown_std.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "DisplayName",
                "EffectiveDeliveryPolicy",
                "Owner",
                "Policy",
                "SubscriptionsConfirmed",
                "SubscriptionsDeleted",
                "SubscriptionsPending",
                "TopicArn"
            ]
        );
        assert_eq!(
            shown_std["Policy"],
            r#"{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{"Sid":"__default_statement_ID","Effect":"Allow","Principal":{"AWS":"*"},"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes","SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic","SNS:Publish"],"Resource":"arn:aws:sns:us-east-1:000000000000:t","Condition":{"StringEquals":{"AWS:SourceOwner":"000000000000"}}}]}"#
        );
        let fifo = shown(
            &account,
            &topic(&[("FifoTopic", "true"), ("SignatureVersion", "2")]),
            &[],
        );
        assert_eq!(fifo.len(), 11);
        assert_eq!(fifo["ContentBasedDeduplication"], "false");
        assert_eq!(fifo["SignatureVersion"], "2");
    }

    /// N1: the checks and their words (recorded: the sample rate and the
    /// policy's actions, ballerina's SNS connector against AWS).
    #[test]
    fn n1_attribute_checks() {
        let refused = |name: &str, value: &str| check(name, value, false).err().map(|r| r.0);
        assert_eq!(
            refused("SQSSuccessFeedbackSampleRate", "500").as_deref(),
            Some(
                "SQSSuccessFeedbackSampleRate: 500 value provided is not an integer between 0-100"
            )
        );
        assert_eq!(
            refused(
                "Policy",
                r#"{"Statement":[{"Effect":"Allow","Action":"SNS:Publishx"}]}"#
            )
            .as_deref(),
            Some("Policy statement action out of service scope!")
        );
        assert_eq!(
            refused("FakeAttribute", "x").as_deref(),
            Some("AttributeName")
        );
        assert!(
            check("DeliveryPolicy", "", false).unwrap().is_none(),
            "empty removes it"
        );
        assert_eq!(
            check("ContentBasedDeduplication", "TRUE", true)
                .ok()
                .flatten()
                .as_deref(),
            Some("true")
        );
        assert!(check("ContentBasedDeduplication", "true", false).is_err());
    }
}
