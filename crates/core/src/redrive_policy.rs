//! The redrive documents of a queue: `RedrivePolicy` (where messages go
//! after maxReceiveCount receives, rules R1, R11, R13, R15) and
//! `RedriveAllowPolicy` (which queues may use this one as their
//! dead-letter queue, rule R5), parsed, checked and written back.

use crate::error::{ErrorCode, SqsError};

/// A parsed `RedrivePolicy` (rule R1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedrivePolicy {
    /// ARN of the dead-letter queue.
    pub dead_letter_target_arn: String,
    /// Receives after which a message moves to the DLQ (1–1000).
    pub max_receive_count: u32,
}

impl RedrivePolicy {
    /// Parses and checks a redrive policy document.
    pub fn parse(doc: &str) -> Result<Self, SqsError> {
        let bad = |why: &str| {
            SqsError::new(
                ErrorCode::InvalidAttributeValue,
                format!("Value {doc} for parameter RedrivePolicy is invalid. Reason: {why}"),
            )
        };
        let value: serde_json::Value = serde_json::from_str(doc)
            .map_err(|_| bad("Redrive policy is not a valid JSON map."))?;
        let obj = value
            .as_object()
            .ok_or_else(|| bad("Redrive policy is not a valid JSON map."))?;
        for key in obj.keys() {
            if key != "deadLetterTargetArn" && key != "maxReceiveCount" {
                return Err(bad(&format!(
                    "Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount]. Found {key}"
                )));
            }
        }
        // A policy missing one of its two members is refused as an invalid
        // parameter, like its other invalid values (rule R15; AWS-validated
        // test_redrive_policy_attribute_validity).
        let missing = |member: &str| {
            SqsError::new(
                ErrorCode::InvalidParameterValue,
                format!(
                    "Value {doc} for parameter RedrivePolicy is invalid. Reason: Redrive policy does not contain mandatory attribute: {member}."
                ),
            )
        };
        let arn = obj
            .get("deadLetterTargetArn")
            .and_then(|v| v.as_str())
            .ok_or_else(|| missing("deadLetterTargetArn"))?;
        let given = obj.get("maxReceiveCount");
        let count = match given {
            Some(serde_json::Value::Number(n)) => n.as_u64(),
            Some(serde_json::Value::String(s)) => s.parse::<u64>().ok(),
            None => return Err(missing("maxReceiveCount")),
            _ => None,
        }
        .filter(|n| (1..=1000).contains(n))
        .ok_or_else(|| {
            // The wording AWS is widely reported to use (rule R13), naming
            // the value as given (a string without its quotes).
            let shown = match given {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            SqsError::new(
                ErrorCode::InvalidParameterValue,
                format!(
                    "Value {doc} for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: {shown}, valid values are from 1 to 1000 both inclusive."
                ),
            )
        })?;
        // A target that is no SQS ARN at all is refused before any lookup,
        // as an invalid parameter (rule R11).
        if !looks_like_queue_arn(arn) {
            return Err(SqsError::new(
                ErrorCode::InvalidParameterValue,
                format!(
                    "Value {doc} for parameter RedrivePolicy is invalid. Reason: Invalid value for deadLetterTargetArn."
                ),
            ));
        }
        Ok(Self {
            dead_letter_target_arn: arn.to_string(),
            max_receive_count: count as u32,
        })
    }

    /// The normalised document, as GetQueueAttributes shows it.
    pub fn to_document(&self) -> String {
        serde_json::json!({
            "deadLetterTargetArn": self.dead_letter_target_arn,
            "maxReceiveCount": self.max_receive_count,
        })
        .to_string()
    }
}

/// Whether `arn` has the shape of a queue ARN
/// (`arn:<partition>:sqs:<region>:<account>:<name>`), whoever owns it.
pub(crate) fn looks_like_queue_arn(arn: &str) -> bool {
    let parts: Vec<&str> = arn.split(':').collect();
    parts.len() == 6
        && parts[0] == "arn"
        && parts[1].starts_with("aws")
        && parts[2] == "sqs"
        && parts[3..].iter().all(|p| !p.is_empty())
}

/// A parsed `RedriveAllowPolicy` (rule R5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedriveAllowPolicy {
    /// `allowAll`, `denyAll` or `byQueue`.
    pub permission: String,
    /// For `byQueue`: up to 10 source queue ARNs.
    pub source_queue_arns: Vec<String>,
}

impl RedriveAllowPolicy {
    /// Parses and checks a redrive-allow policy document.
    pub fn parse(doc: &str) -> Result<Self, SqsError> {
        let bad = |why: &str| {
            SqsError::new(
                ErrorCode::InvalidAttributeValue,
                format!("Value {doc} for parameter RedriveAllowPolicy is invalid. Reason: {why}"),
            )
        };
        let value: serde_json::Value = serde_json::from_str(doc)
            .map_err(|_| bad("Redrive allow policy is not a valid JSON map."))?;
        let obj = value
            .as_object()
            .ok_or_else(|| bad("Redrive allow policy is not a valid JSON map."))?;
        let permission = obj
            .get("redrivePermission")
            .and_then(|v| v.as_str())
            .ok_or_else(|| {
                bad("Redrive allow policy does not contain mandatory attribute: redrivePermission.")
            })?;
        if !matches!(permission, "allowAll" | "denyAll" | "byQueue") {
            return Err(bad(
                "Invalid value for redrivePermission: must be allowAll, denyAll or byQueue.",
            ));
        }
        let arns: Vec<String> = match obj.get("sourceQueueArns") {
            None => Vec::new(),
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| bad("sourceQueueArns must be a list of ARNs."))?,
            Some(_) => return Err(bad("sourceQueueArns must be a list of ARNs.")),
        };
        match permission {
            "byQueue" if arns.is_empty() || arns.len() > 10 => {
                return Err(bad(
                    "sourceQueueArns must hold 1 to 10 ARNs when redrivePermission is byQueue.",
                ));
            }
            "allowAll" | "denyAll" if !arns.is_empty() => {
                return Err(bad(
                    "sourceQueueArns can only be given when redrivePermission is byQueue.",
                ));
            }
            _ => {}
        }
        Ok(Self {
            permission: permission.to_string(),
            source_queue_arns: arns,
        })
    }

    /// The normalised document.
    pub fn to_document(&self) -> String {
        let mut obj = serde_json::Map::new();
        obj.insert("redrivePermission".into(), self.permission.clone().into());
        if !self.source_queue_arns.is_empty() {
            obj.insert(
                "sourceQueueArns".into(),
                self.source_queue_arns.clone().into(),
            );
        }
        serde_json::Value::Object(obj).to_string()
    }
}
