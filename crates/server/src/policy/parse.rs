//! Reading a policy document (rule A7): every element sluice would not
//! enforce is refused, so that nothing in a policy is silently ignored.

use serde_json::{Map, Value};
use sluice_core::{ErrorCode, SqsError};

use super::document::{
    Condition, ConditionKey, Effect, Operator, Policy, Principals, Refused, Statement,
};

/// SQS's answer to a policy it will not take (recorded from SQS,
/// hashicorp/terraform-provider-aws#42209: InvalidAttributeValue, 400,
/// "Invalid value for the parameter Policy.").
pub fn invalid_policy() -> SqsError {
    SqsError::new(
        ErrorCode::InvalidAttributeValue,
        "Invalid value for the parameter Policy.",
    )
}

impl Policy {
    /// Reads `document`, refusing what sluice does not enforce.
    pub fn parse(document: &str) -> Result<Self, Refused> {
        let value: Value = serde_json::from_str(document).map_err(|e| format!("not JSON: {e}"))?;
        let object = value.as_object().ok_or("not a JSON object")?;
        for key in object.keys() {
            if !matches!(key.as_str(), "Version" | "Id" | "Statement") {
                return Err(format!("unsupported policy member {key}"));
            }
        }
        let statements = match object.get("Statement") {
            Some(Value::Array(list)) => list.iter().map(statement).collect::<Result<_, _>>()?,
            Some(one @ Value::Object(_)) => vec![statement(one)?],
            Some(_) => return Err("Statement is not an object or a list".into()),
            None => return Err("no Statement".into()),
        };
        Ok(Self { statements })
    }

    /// Checks a `Policy` attribute value as it is set: empty (no policy)
    /// or a document sluice enforces whole.
    pub fn check_attribute(value: &str) -> Result<(), SqsError> {
        if value.is_empty() {
            return Ok(());
        }
        Self::parse(value).map(|_| ()).map_err(|reason| {
            tracing::info!(reason, "queue policy refused");
            invalid_policy()
        })
    }
}

/// One string or a list of strings.
fn strings(value: &Value, what: &str) -> Result<Vec<String>, Refused> {
    let list = match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("{what} holds a non-string"))?,
        _ => return Err(format!("{what} is not a string or a list")),
    };
    if list.is_empty() {
        return Err(format!("{what} is empty"));
    }
    Ok(list)
}

fn statement(value: &Value) -> Result<Statement, Refused> {
    let object = value.as_object().ok_or("a statement is not an object")?;
    for key in object.keys() {
        if !matches!(
            key.as_str(),
            "Sid" | "Effect" | "Principal" | "Action" | "Resource" | "Condition"
        ) {
            return Err(format!("unsupported statement member {key}"));
        }
    }
    let effect = match object.get("Effect").and_then(Value::as_str) {
        Some("Allow") => Effect::Allow,
        Some("Deny") => Effect::Deny,
        _ => return Err("Effect is not Allow or Deny".into()),
    };
    let principals = principals(object.get("Principal").ok_or("no Principal")?)?;
    let actions = strings(object.get("Action").ok_or("no Action")?, "Action")?;
    for action in &actions {
        let ok = action == "*"
            || action.split_once(':').is_some_and(|(service, name)| {
                service.eq_ignore_ascii_case("sqs") && !name.is_empty()
            });
        if !ok {
            return Err(format!("action {action} is not sqs:<Action>"));
        }
    }
    let resources = object
        .get("Resource")
        .map(|r| strings(r, "Resource"))
        .transpose()?;
    let conditions = match object.get("Condition") {
        None => Vec::new(),
        Some(Value::Object(block)) => conditions(block)?,
        Some(_) => return Err("Condition is not an object".into()),
    };
    Ok(Statement {
        effect,
        principals,
        actions,
        resources,
        conditions,
    })
}

fn principals(value: &Value) -> Result<Principals, Refused> {
    let map = match value {
        Value::String(s) if s == "*" => return Ok(Principals::Anyone),
        Value::Object(map) => map,
        _ => return Err("Principal is not \"*\" or an object".into()),
    };
    if let Some(other) = map.keys().find(|k| *k != "AWS" && *k != "Service") {
        return Err(format!("unsupported principal type {other}"));
    }
    let names = match map.get("AWS") {
        Some(aws) => strings(aws, "Principal")?,
        None => Vec::new(),
    };
    let services = match map.get("Service") {
        Some(service) => strings(service, "Principal")?,
        None => Vec::new(),
    };
    if names.is_empty() && services.is_empty() {
        return Err("Principal names no principal".into());
    }
    if names.iter().any(|n| n == "*") {
        return Ok(Principals::Anyone);
    }
    let accounts = names
        .iter()
        .map(|n| {
            let account = n
                .strip_prefix("arn:aws:iam::")
                .and_then(|rest| rest.strip_suffix(":root"))
                .unwrap_or(n);
            if account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit()) {
                Ok(account.to_string())
            } else {
                Err(format!("unsupported principal {n}"))
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(Principals::Named { accounts, services })
}

fn conditions(block: &Map<String, Value>) -> Result<Vec<Condition>, Refused> {
    let mut out = Vec::new();
    for (operator, keys) in block {
        let operator = match operator.as_str() {
            "StringEquals" => Operator::StringEquals,
            "StringLike" => Operator::StringLike,
            "ArnEquals" => Operator::ArnEquals,
            "ArnLike" => Operator::ArnLike,
            "Bool" => Operator::Bool,
            other => return Err(format!("unsupported condition operator {other}")),
        };
        let keys = keys
            .as_object()
            .ok_or("a condition operator's value is not an object")?;
        for (key, values) in keys {
            // Condition keys are case-insensitive, as in IAM.
            let key = match key.to_ascii_lowercase().as_str() {
                "aws:sourcearn" => ConditionKey::SourceArn,
                "aws:sourceaccount" => ConditionKey::SourceAccount,
                "aws:principalaccount" => ConditionKey::PrincipalAccount,
                "aws:securetransport" => ConditionKey::SecureTransport,
                _ => return Err(format!("unsupported condition key {key}")),
            };
            let values = match values {
                Value::Bool(b) => vec![b.to_string()],
                Value::Array(items) if items.iter().all(Value::is_boolean) => {
                    items.iter().map(|b| b.to_string()).collect()
                }
                other => strings(other, "a condition value")?,
            };
            let boolean = key == ConditionKey::SecureTransport;
            if boolean != (operator == Operator::Bool) {
                return Err(format!("operator {operator:?} does not apply to {key:?}"));
            }
            if boolean
                && values
                    .iter()
                    .any(|v| !v.eq_ignore_ascii_case("true") && !v.eq_ignore_ascii_case("false"))
            {
                return Err("Bool takes true or false".into());
            }
            out.push(Condition {
                operator,
                key,
                values,
            });
        }
    }
    Ok(out)
}
