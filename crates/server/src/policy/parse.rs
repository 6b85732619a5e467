//! Reading a policy document (rule A7): every element sluice would not
//! enforce is refused, so that nothing in a policy is silently ignored.

use std::net::IpAddr;

use serde_json::{Map, Value};
use sluice_core::{ErrorCode, SqsError};

use super::document::{
    Cidr, Condition, ConditionKey, Effect, Matched, Operator, Policy, Principals, Refused,
    Statement,
};

/// What SQS answers for a policy it will not take (recorded from SQS,
/// hashicorp/terraform-provider-aws#42209: InvalidAttributeValue, 400,
/// "Invalid value for the parameter Policy.").
const INVALID_POLICY: &str = "Invalid value for the parameter Policy.";

/// SQS's answer to a policy it will not take.
pub fn invalid_policy() -> SqsError {
    SqsError::new(ErrorCode::InvalidAttributeValue, INVALID_POLICY)
}

/// The answer to `refused`: SQS's words for a malformed document; for one
/// that asks what sluice does not enforce, the same code and words with
/// the reason after them.
fn refusal(refused: &Refused) -> SqsError {
    match refused {
        Refused::Malformed(_) => invalid_policy(),
        Refused::Unsupported(what) => SqsError::new(
            ErrorCode::InvalidAttributeValue,
            format!("{INVALID_POLICY} Reason: sluice does not enforce {what}."),
        ),
    }
}

fn malformed(why: impl Into<String>) -> Refused {
    Refused::Malformed(why.into())
}

fn unsupported(what: impl Into<String>) -> Refused {
    Refused::Unsupported(what.into())
}

impl Policy {
    /// Reads `document`, refusing what sluice does not enforce.
    pub fn parse(document: &str) -> Result<Self, Refused> {
        let value: Value =
            serde_json::from_str(document).map_err(|e| malformed(format!("not JSON: {e}")))?;
        let object = value
            .as_object()
            .ok_or_else(|| malformed("not a JSON object"))?;
        for key in object.keys() {
            if !matches!(key.as_str(), "Version" | "Id" | "Statement") {
                return Err(malformed(format!("unknown policy member {key}")));
            }
        }
        let statements = match object.get("Statement") {
            Some(Value::Array(list)) => list.iter().map(statement).collect::<Result<_, _>>()?,
            Some(one @ Value::Object(_)) => vec![statement(one)?],
            Some(_) => return Err(malformed("Statement is not an object or a list")),
            None => return Err(malformed("no Statement")),
        };
        Ok(Self { statements })
    }

    /// Checks a `Policy` attribute value as it is set: empty (no policy)
    /// or a document sluice enforces whole.
    pub fn check_attribute(value: &str) -> Result<(), SqsError> {
        if value.is_empty() {
            return Ok(());
        }
        Self::parse(value).map(|_| ()).map_err(|refused| {
            tracing::info!(reason = refused.as_str(), "queue policy refused");
            refusal(&refused)
        })
    }

    /// Whether evaluating it needs the queue's tags (`aws:ResourceTag/…`).
    pub fn reads_tags(&self) -> bool {
        self.statements.iter().any(|s| {
            s.conditions
                .iter()
                .any(|c| matches!(c.key, ConditionKey::ResourceTag(_)))
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
            .ok_or_else(|| malformed(format!("{what} holds a non-string")))?,
        _ => return Err(malformed(format!("{what} is not a string or a list"))),
    };
    if list.is_empty() {
        return Err(malformed(format!("{what} is empty")));
    }
    Ok(list)
}

/// The member `name` or its `Not…` form, exactly one of them.
fn one_of<'a>(
    object: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<(&'a Value, bool)>, Refused> {
    let not = format!("Not{name}");
    match (object.get(name), object.get(&not)) {
        (Some(_), Some(_)) => Err(malformed(format!("both {name} and {not}"))),
        (Some(v), None) => Ok(Some((v, false))),
        (None, Some(v)) => Ok(Some((v, true))),
        (None, None) => Ok(None),
    }
}

fn statement(value: &Value) -> Result<Statement, Refused> {
    let object = value
        .as_object()
        .ok_or_else(|| malformed("a statement is not an object"))?;
    for key in object.keys() {
        if !matches!(
            key.as_str(),
            "Sid"
                | "Effect"
                | "Principal"
                | "NotPrincipal"
                | "Action"
                | "NotAction"
                | "Resource"
                | "NotResource"
                | "Condition"
        ) {
            return Err(malformed(format!("unknown statement member {key}")));
        }
    }
    let effect = match object.get("Effect").and_then(Value::as_str) {
        Some("Allow") => Effect::Allow,
        Some("Deny") => Effect::Deny,
        _ => return Err(malformed("Effect is not Allow or Deny")),
    };
    let (principal, negated) =
        one_of(object, "Principal")?.ok_or_else(|| malformed("no Principal"))?;
    // Allowing everyone but the named would grant every account, this
    // server's and any other: IAM's guidance is never to write it.
    if negated && effect == Effect::Allow {
        return Err(unsupported(
            "NotPrincipal in an Allow statement (it grants everyone but the named; \
             use it with Deny)",
        ));
    }
    let principals = Matched {
        items: principals(principal)?,
        negated,
    };
    let (action, negated) = one_of(object, "Action")?.ok_or_else(|| malformed("no Action"))?;
    let actions = strings(action, "Action")?;
    for action in &actions {
        let ok = action == "*"
            || action.split_once(':').is_some_and(|(service, name)| {
                service.eq_ignore_ascii_case("sqs") && !name.is_empty()
            });
        if !ok {
            return Err(unsupported(format!(
                "the action {action} on a queue (only sqs:<Action> patterns and \"*\")"
            )));
        }
    }
    let actions = Matched {
        items: actions,
        negated,
    };
    let resources = one_of(object, "Resource")?
        .map(|(r, negated)| strings(r, "Resource").map(|items| Matched { items, negated }))
        .transpose()?;
    let conditions = match object.get("Condition") {
        None => Vec::new(),
        Some(Value::Object(block)) => conditions(block)?,
        Some(_) => return Err(malformed("Condition is not an object")),
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
        _ => return Err(malformed("Principal is not \"*\" or an object")),
    };
    if let Some(other) = map.keys().find(|k| *k != "AWS" && *k != "Service") {
        return Err(unsupported(format!(
            "{other} principals (only \"AWS\" accounts and \"Service\")"
        )));
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
        return Err(malformed("Principal names no principal"));
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
                Err(unsupported(format!(
                    "the principal {n} (only 12-digit accounts, arn:aws:iam::<account>:root and \"*\")"
                )))
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(Principals::Named { accounts, services })
}

fn conditions(block: &Map<String, Value>) -> Result<Vec<Condition>, Refused> {
    let mut out = Vec::new();
    for (name, keys) in block {
        let (operator, if_exists) = operator(name)?;
        let keys = keys
            .as_object()
            .ok_or_else(|| malformed("a condition operator's value is not an object"))?;
        for (key, values) in keys {
            let key = condition_key(key)?;
            let values = match values {
                Value::Bool(b) => vec![b.to_string()],
                Value::Array(items) if items.iter().all(Value::is_boolean) => {
                    items.iter().map(|b| b.to_string()).collect()
                }
                other => strings(other, "a condition value")?,
            };
            check_operator_fits(operator, &key, name)?;
            let is_boolean =
                |v: &String| v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false");
            if matches!(operator, Operator::Bool | Operator::Null) && !values.iter().all(is_boolean)
            {
                return Err(malformed(format!("{name} takes true or false")));
            }
            let ranges = if matches!(operator, Operator::IpAddress | Operator::NotIpAddress) {
                values.iter().map(|v| cidr(v)).collect::<Result<_, _>>()?
            } else {
                Vec::new()
            };
            out.push(Condition {
                operator,
                if_exists,
                key,
                values,
                ranges,
            });
        }
    }
    Ok(out)
}

/// A condition operator's name, `…IfExists` split off.
fn operator(name: &str) -> Result<(Operator, bool), Refused> {
    if name.contains(':') {
        return Err(unsupported(format!(
            "the set operator {name} (the keys sluice evaluates hold one value)"
        )));
    }
    let (base, if_exists) = match name.strip_suffix("IfExists") {
        Some(base) => (base, true),
        None => (name, false),
    };
    let operator = match base {
        "StringEquals" => Operator::StringEquals,
        "StringNotEquals" => Operator::StringNotEquals,
        "StringEqualsIgnoreCase" => Operator::StringEqualsIgnoreCase,
        "StringNotEqualsIgnoreCase" => Operator::StringNotEqualsIgnoreCase,
        "StringLike" => Operator::StringLike,
        "StringNotLike" => Operator::StringNotLike,
        "ArnEquals" => Operator::ArnEquals,
        "ArnLike" => Operator::ArnLike,
        "ArnNotEquals" => Operator::ArnNotEquals,
        "ArnNotLike" => Operator::ArnNotLike,
        "Bool" => Operator::Bool,
        "IpAddress" => Operator::IpAddress,
        "NotIpAddress" => Operator::NotIpAddress,
        "Null" if !if_exists => Operator::Null,
        _ => {
            return Err(unsupported(format!(
                "the condition operator {name} (String…, Arn…, Bool, IpAddress, NotIpAddress, \
                 Null, each also …IfExists)"
            )));
        }
    };
    Ok((operator, if_exists))
}

/// A condition key's name; keys are case-insensitive, as in IAM, and so is
/// the tag key of `aws:ResourceTag/<key>`.
fn condition_key(name: &str) -> Result<ConditionKey, Refused> {
    let lower = name.to_ascii_lowercase();
    if let Some(tag) = lower.strip_prefix("aws:resourcetag/") {
        if tag.is_empty() {
            return Err(malformed("aws:ResourceTag/ names no tag"));
        }
        return Ok(ConditionKey::ResourceTag(tag.to_string()));
    }
    Ok(match lower.as_str() {
        "aws:sourcearn" => ConditionKey::SourceArn,
        "aws:sourceaccount" => ConditionKey::SourceAccount,
        "aws:principalaccount" => ConditionKey::PrincipalAccount,
        "aws:principalorgid" => ConditionKey::PrincipalOrgId,
        "aws:securetransport" => ConditionKey::SecureTransport,
        "aws:sourceip" => ConditionKey::SourceIp,
        _ => {
            return Err(unsupported(format!(
                "the condition key {name} (aws:SourceArn, aws:SourceAccount, \
                 aws:PrincipalAccount, aws:PrincipalOrgID, aws:SecureTransport, aws:SourceIp, \
                 aws:ResourceTag/<key>)"
            )));
        }
    })
}

/// Refuses an operator on a key of another type: a Bool on an ARN, an
/// address range on a string.
fn check_operator_fits(operator: Operator, key: &ConditionKey, name: &str) -> Result<(), Refused> {
    use Operator::*;
    let fits = match key {
        ConditionKey::SecureTransport => matches!(operator, Bool | Null),
        ConditionKey::SourceIp => matches!(operator, IpAddress | NotIpAddress | Null),
        ConditionKey::SourceArn => !matches!(operator, Bool | IpAddress | NotIpAddress),
        _ => !matches!(
            operator,
            Bool | IpAddress | NotIpAddress | ArnEquals | ArnLike | ArnNotEquals | ArnNotLike
        ),
    };
    if fits {
        Ok(())
    } else {
        Err(malformed(format!("{name} does not apply to {key:?}")))
    }
}

/// An `IpAddress` value: `203.0.113.0/24`, `2001:db8::/32`, or one address.
fn cidr(value: &str) -> Result<Cidr, Refused> {
    let bad = || malformed(format!("{value} is not an IP address or CIDR range"));
    let (address, prefix) = match value.split_once('/') {
        Some((address, prefix)) => (address, Some(prefix)),
        None => (value, None),
    };
    let network: IpAddr = address.trim().parse().map_err(|_| bad())?;
    let bits = if network.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        Some(p) => p
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|&p| p <= bits)
            .ok_or_else(bad)?,
        None => bits,
    };
    Ok(Cidr { network, prefix })
}
