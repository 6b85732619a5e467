//! AddPermission, RemovePermission (statements in a topic's Policy), and
//! Get/PutDataProtectionPolicy (kept with the topic, not shown among its
//! attributes) (rule N1; recorded: LocalStack test_topic_add_permission,
//! test_add_permission_errors, test_data_protection_policy_crud).

use serde_json::{Value, json};
use sluice_broker::{Broker, Topic};
use sluice_protocol::sns::{
    AddPermissionInput, GetDataProtectionPolicyInput, GetDataProtectionPolicyResponse,
    PutDataProtectionPolicyInput, RemovePermissionInput, SnsError,
};

use super::arns;
use super::errors::{engine, required};
use super::topic_attributes::default_policy;
use crate::service::{RequestContext, Service};

/// Where a topic's data protection policy is kept: an attribute of the
/// topic that GetTopicAttributes does not show (`sluice.` attributes).
const DATA_PROTECTION: &str = "sluice.DataProtectionPolicy";

/// The operations AddPermission may grant (ballerina's SNS connector
/// granted all eleven against AWS).
const SHAREABLE: [&str; 11] = [
    "GetTopicAttributes",
    "SetTopicAttributes",
    "AddPermission",
    "RemovePermission",
    "DeleteTopic",
    "Subscribe",
    "ListSubscriptionsByTopic",
    "Publish",
    "GetDataProtectionPolicy",
    "PutDataProtectionPolicy",
    "ListTagsForResource",
];

/// One item as a string, several as a list, as AWS writes policy members.
fn one_or_list(mut items: Vec<String>) -> Value {
    if items.len() == 1 {
        Value::String(items.remove(0))
    } else {
        json!(items)
    }
}

/// The topic's policy document: the one set, or the default.
fn policy_of(svc_account: &sluice_core::queue_name::Account, topic: &Topic) -> Value {
    let text = topic.attributes.get("Policy").cloned().unwrap_or_else(|| {
        default_policy(
            &svc_account.topic_arn(&topic.key),
            svc_account.owner_of(&topic.key),
        )
    });
    match serde_json::from_str(&text) {
        Ok(doc @ Value::Object(_)) => doc,
        _ => json!({"Statement": []}),
    }
}

/// AddPermission: a statement labelled `Label` granting the accounts the
/// actions.
pub async fn add_permission<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: AddPermissionInput,
) -> Result<(), SnsError> {
    let arn = required(input.topic_arn, "TopicArn")?;
    let label = required(input.label, "Label")?;
    let accounts = required(input.aws_account_id, "AWSAccountId")?;
    let actions = required(input.action_name, "ActionName")?;
    let key = arns::topic_key(svc, ctx, "TopicArn", &arn)?;
    if actions.iter().any(|a| !SHAREABLE.contains(&a.as_str())) {
        return Err(SnsError::invalid_parameter(
            "Policy statement action out of service scope!",
        ));
    }
    if accounts
        .iter()
        .any(|a| a.len() != 12 || !a.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(SnsError::invalid_parameter(
            "A provided account ID is not valid",
        ));
    }
    let account = svc.config.account.clone();
    let statement = json!({
        "Sid": label,
        "Effect": "Allow",
        "Principal": {"AWS": one_or_list(accounts.iter().map(|a| format!("arn:aws:iam::{a}:root")).collect())},
        "Action": one_or_list(actions.iter().map(|a| format!("SNS:{a}")).collect()),
        "Resource": arn,
    });
    let changed = svc
        .broker
        .update_topic(&key, move |topic: &mut Topic| {
            let mut policy = policy_of(&account, topic);
            let added = with_statements(&mut policy, |statements| {
                let exists = statements
                    .iter()
                    .any(|s| s.get("Sid").and_then(Value::as_str) == Some(label.as_str()));
                if !exists {
                    statements.push(statement);
                }
                !exists
            });
            if !added {
                return Err(SnsError::invalid_parameter("Statement already exists"));
            }
            topic.attributes.insert("Policy".into(), policy.to_string());
            Ok(())
        })
        .await
        .map_err(engine)?;
    changed.map(|_| ())
}

/// Runs `f` on the policy's statements (none when it has no list of them)
/// and puts them back.
fn with_statements<R>(policy: &mut Value, f: impl FnOnce(&mut Vec<Value>) -> R) -> R {
    let mut statements = match policy.get_mut("Statement").map(Value::take) {
        Some(Value::Array(list)) => list,
        _ => Vec::new(),
    };
    let out = f(&mut statements);
    if let Value::Object(doc) = policy {
        doc.insert("Statement".into(), Value::Array(statements));
    }
    out
}

/// RemovePermission: removes the statement labelled `Label`; a label that
/// is not there is no error.
pub async fn remove_permission<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: RemovePermissionInput,
) -> Result<(), SnsError> {
    let arn = required(input.topic_arn, "TopicArn")?;
    let label = required(input.label, "Label")?;
    let key = arns::topic_key(svc, ctx, "TopicArn", &arn)?;
    let account = svc.config.account.clone();
    let changed = svc
        .broker
        .update_topic(&key, move |topic: &mut Topic| {
            let mut policy = policy_of(&account, topic);
            with_statements(&mut policy, |statements| {
                statements.retain(|s| s.get("Sid").and_then(Value::as_str) != Some(label.as_str()))
            });
            topic.attributes.insert("Policy".into(), policy.to_string());
            Ok::<(), SnsError>(())
        })
        .await
        .map_err(engine)?;
    changed.map(|_| ())
}

/// GetDataProtectionPolicy: the document as it was put.
pub async fn get_data_protection_policy<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: GetDataProtectionPolicyInput,
) -> Result<GetDataProtectionPolicyResponse, SnsError> {
    let arn = required(input.resource_arn, "ResourceArn")?;
    let key = arns::topic_key(svc, ctx, "ResourceArn", &arn)?;
    let topic = svc.broker.get_topic(&key).await.map_err(engine)?;
    Ok(GetDataProtectionPolicyResponse {
        data_protection_policy: topic.attributes.get(DATA_PROTECTION).cloned(),
    })
}

/// PutDataProtectionPolicy: kept as given, a JSON document. sluice keeps
/// it and shows it back; it does not apply it to messages.
pub async fn put_data_protection_policy<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: PutDataProtectionPolicyInput,
) -> Result<(), SnsError> {
    let arn = required(input.resource_arn, "ResourceArn")?;
    let document = required(input.data_protection_policy, "DataProtectionPolicy")?;
    if serde_json::from_str::<Value>(&document).is_err() {
        return Err(SnsError::invalid_parameter(
            "DataProtectionPolicy Reason: failed to parse JSON",
        ));
    }
    let key = arns::topic_key(svc, ctx, "ResourceArn", &arn)?;
    let changed = svc
        .broker
        .update_topic(&key, move |topic: &mut Topic| {
            topic.attributes.insert(DATA_PROTECTION.into(), document);
            Ok::<(), SnsError>(())
        })
        .await
        .map_err(engine)?;
    changed.map(|_| ())
}
