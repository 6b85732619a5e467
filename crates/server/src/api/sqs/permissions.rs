//! AddPermission and RemovePermission: statements in the queue's Policy.
//!
//! sluice keeps and shows the policy as SQS does; with authentication on
//! it is enforced (rule A6, `crate::authorize` and `crate::policy`).

use serde_json::{Value, json};
use sluice_broker::{Broker, MetaChange};
use sluice_core::SqsError;
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{AddPermissionRequest, Operation, RemovePermissionRequest};

use crate::service::Service;

/// True for an action name AddPermission accepts (`SQS:` is added in the
/// policy): `*`, or an operation SQS lets a queue share.
fn shareable(action: &str) -> bool {
    action == "*" || Operation::from_name(action).is_some_and(Operation::shareable)
}

fn statements(policy: Option<&str>) -> Vec<Value> {
    policy
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|v| v.get("Statement").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

/// One item as a string, several as a list, as AWS writes policy members.
fn one_or_list(mut items: Vec<String>) -> Value {
    if items.len() == 1 {
        Value::String(items.remove(0))
    } else {
        json!(items)
    }
}

fn label_of(statement: &Value) -> Option<&str> {
    statement.get("Sid").and_then(Value::as_str)
}

/// AddPermission: adds a statement labelled `Label`.
pub async fn add_permission<B: Broker>(
    svc: &Service<B>,
    input: AddPermissionRequest,
) -> Result<(), SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let label = required(input.label, "Label")?;
    let accounts = required(input.aws_account_ids, "AWSAccountIds")?;
    let actions = required(input.actions, "Actions")?;
    if label.is_empty()
        || label.len() > 80
        || !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(SqsError::invalid_value(
            "Label",
            &label,
            "Must be 1 to 80 alphanumeric characters, hyphens or underscores.",
        ));
    }
    if accounts.is_empty() {
        return Err(SqsError::missing("AWSAccountIds"));
    }
    if actions.is_empty() {
        return Err(SqsError::missing("Actions"));
    }
    if let Some(bad) = actions.iter().find(|a| !shareable(a)) {
        return Err(SqsError::invalid_value(
            "ActionName",
            bad,
            "Please refer to the appropriate WSDL for a list of valid actions.",
        ));
    }
    let name = &*svc.queue_name(&url)?;
    let meta = svc.broker.get_queue(name).await?;
    let mut stmts = statements(meta.config.policy.as_deref());
    if stmts.iter().any(|s| label_of(s) == Some(label.as_str())) {
        return Err(SqsError::invalid_value("Label", &label, "Already exists."));
    }
    // The statement as AWS writes it (rule V15; recorded answer, LocalStack
    // snapshot test_sqs.py::test_sqs_permission_lifecycle): members in this
    // order, a single principal or action as a string, several as a list,
    // the accounts listed last given first.
    let principals: Vec<String> = accounts
        .iter()
        .rev()
        .map(|a| format!("arn:aws:iam::{a}:root"))
        .collect();
    let actions: Vec<String> = actions.iter().map(|a| format!("SQS:{a}")).collect();
    let arn = svc.queue_arn(name);
    stmts.push(json!({
        "Sid": label,
        "Effect": "Allow",
        "Principal": { "AWS": one_or_list(principals) },
        "Action": one_or_list(actions),
        "Resource": arn,
    }));
    let policy = json!({
        "Version": "2008-10-17",
        "Id": format!("{arn}/SQSDefaultPolicy"),
        "Statement": stmts,
    });
    let attrs = [("Policy".to_string(), policy.to_string())]
        .into_iter()
        .collect();
    svc.broker
        .update_queue(name, MetaChange::SetAttributes(attrs))
        .await?;
    Ok(())
}

/// RemovePermission: removes the statement labelled `Label`.
pub async fn remove_permission<B: Broker>(
    svc: &Service<B>,
    input: RemovePermissionRequest,
) -> Result<(), SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let label = required(input.label, "Label")?;
    let name = &*svc.queue_name(&url)?;
    let meta = svc.broker.get_queue(name).await?;
    let policy: Option<Value> = meta
        .config
        .policy
        .as_deref()
        .and_then(|p| serde_json::from_str(p).ok());
    let mut stmts = statements(meta.config.policy.as_deref());
    let before = stmts.len();
    stmts.retain(|s| label_of(s) != Some(label.as_str()));
    if stmts.len() == before {
        return Err(SqsError::invalid_value(
            "Label",
            &label,
            "can't find label.",
        ));
    }
    let new_policy = match (policy, stmts.is_empty()) {
        (_, true) | (None, _) => String::new(),
        (Some(mut p), false) => {
            p["Statement"] = Value::Array(stmts);
            p.to_string()
        }
    };
    let attrs = [("Policy".to_string(), new_policy)].into_iter().collect();
    svc.broker
        .update_queue(name, MetaChange::SetAttributes(attrs))
        .await?;
    Ok(())
}
