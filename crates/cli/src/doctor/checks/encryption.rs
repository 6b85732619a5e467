//! Encryption at rest's pitfalls: a queue whose attributes say its
//! messages are encrypted on a server that stores them clear, a queue
//! whose key the keyring does not hold, and a queue that AWS services
//! deliver to while it is encrypted with the AWS managed key, which on
//! AWS they cannot use.

use serde_json::Value;

use crate::doctor::report::{Report, Severity};
use crate::doctor::setup::{AtRest, QueueSnapshot, Setup, Topics};

/// The KMS alias of the key AWS manages for SQS.
const AWS_MANAGED_ALIAS: &str = "alias/aws/sqs";

/// The services that deliver to queues, by service principal, and their
/// names in findings.
const DELIVERING_SERVICES: [(&str, &str); 3] = [
    ("sns.amazonaws.com", "SNS"),
    ("events.amazonaws.com", "EventBridge"),
    ("s3.amazonaws.com", "S3"),
];

/// Runs the encryption checks.
pub(super) fn check(setup: &Setup, report: &mut Report) {
    at_rest(setup, report);
    for q in &setup.queues {
        aws_managed_key(setup, q, report);
    }
}

/// `sse-unsealed` and `sse-key-missing`: they need the server's side,
/// and are skipped without it only when some queue asks for encryption.
fn at_rest(setup: &Setup, report: &mut Report) {
    let asking: Vec<&QueueSnapshot> = setup.queues.iter().filter(|q| q.sse.asked()).collect();
    if asking.is_empty() {
        return;
    }
    let sealing = match &setup.at_rest {
        AtRest::Unknown(why) => {
            report.skip("sse-unsealed", why);
            report.skip("sse-key-missing", why);
            return;
        }
        AtRest::Known(sealing) => sealing,
    };
    if !sealing.seals {
        for q in asking {
            unsealed(q, report);
        }
        return;
    }
    let Some(missing) = &sealing.keys_missing else {
        report.skip(
            "sse-key-missing",
            "the keyring's keys are known to a running server only (--endpoint)",
        );
        return;
    };
    for q in asking.into_iter().filter(|q| missing.contains(&q.name)) {
        report.add(
            "sse-key-missing",
            Severity::Critical,
            &q.name,
            format!(
                "its {} names no live key of the server's keyring (never added, or retired): \
                 every send to it is refused with KmsNotFound and nothing is stored",
                q.sse.describe()
            ),
            "add a key of that name to the keyring (sluice keys rotate --file KEYRING --name \
             NAME adds one, as the active key; then restart the server), or point \
             KmsMasterKeyId at a key the keyring holds (alias/aws/sqs: its active key)"
                .into(),
        );
    }
}

/// `sse-unsealed`.
fn unsealed(q: &QueueSnapshot, report: &mut Report) {
    report.add(
        "sse-unsealed",
        Severity::Warning,
        &q.name,
        format!(
            "its {} says its messages are encrypted at rest, but this server does not encrypt \
             at rest (no keyring, or in memory): they are stored in the clear (on disk, in the \
             log and in backups) while GetQueueAttributes says otherwise",
            q.sse.describe()
        ),
        "give the server a keyring (sluice keys new --file KEYRING, then sluice serve \
         --encryption-key-file KEYRING, or [encryption] key_file); messages stored before \
         stay clear. If clear at rest is meant, set SqsManagedSseEnabled=false and remove \
         KmsMasterKeyId so the attributes say so"
            .into(),
    );
}

/// `sse-aws-managed-key`: on AWS, SNS, EventBridge and S3 cannot use the
/// AWS managed key (its key policy cannot be changed to let them), so
/// what they deliver to a queue encrypted with it never arrives, and
/// nothing tells the sender. sluice delivers it, so the fault appears
/// only once deployed.
fn aws_managed_key(setup: &Setup, q: &QueueSnapshot, report: &mut Report) {
    let Some(key) = q.sse.kms_key_id.as_deref().filter(|k| is_aws_managed(k)) else {
        return;
    };
    let services = allowed_services(q.policy.as_deref());
    let mut principals: Vec<&str> = services.iter().map(|(p, _)| *p).collect();
    let mut senders: Vec<String> = services
        .iter()
        .map(|(principal, name)| format!("{name} (its Policy allows {principal})"))
        .collect();
    if let Topics::Known(topics) = &setup.topics {
        for t in topics {
            let subscribed =
                (t.subscriptions.iter()).any(|s| s.protocol == "sqs" && s.endpoint == q.arn);
            if subscribed {
                senders.push(format!("the topic {} (subscribed)", t.arn));
                if !principals.contains(&"sns.amazonaws.com") {
                    principals.push("sns.amazonaws.com");
                }
            }
        }
    }
    if senders.is_empty() {
        return;
    }
    report.add(
        "sse-aws-managed-key",
        Severity::Warning,
        &q.name,
        format!(
            "its KmsMasterKeyId is {key}, the AWS managed key, and {} send to it: on AWS these \
             services cannot use the AWS managed key, whose key policy cannot be changed to let \
             them, so their deliveries fail and nothing tells the sender (sluice delivers them: \
             the fault shows only once deployed)",
            senders.join(", ")
        ),
        format!(
            "use a customer managed key whose key policy allows {} kms:GenerateDataKey and \
             kms:Decrypt, and set KmsMasterKeyId to its alias/NAME; on sluice the same \
             alias/NAME names the keyring key NAME",
            principals.join(", ")
        ),
    );
}

/// `alias/aws/sqs`, alone or at the end of a KMS ARN.
fn is_aws_managed(kms_key_id: &str) -> bool {
    kms_key_id == AWS_MANAGED_ALIAS || kms_key_id.ends_with(&format!(":{AWS_MANAGED_ALIAS}"))
}

/// The delivering services an Allow statement of `policy` names as its
/// principal: (service principal, name).
fn allowed_services(policy: Option<&str>) -> Vec<(&'static str, &'static str)> {
    let Some(doc) = policy.and_then(|p| serde_json::from_str::<Value>(p).ok()) else {
        return Vec::new();
    };
    let statements = match doc.get("Statement") {
        Some(Value::Array(list)) => list.clone(),
        Some(one @ Value::Object(_)) => vec![one.clone()],
        _ => return Vec::new(),
    };
    let mut services: Vec<String> = Vec::new();
    for st in &statements {
        if st.get("Effect").and_then(Value::as_str) != Some("Allow") {
            continue;
        }
        match st.get("Principal").and_then(|p| p.get("Service")) {
            Some(Value::String(s)) => services.push(s.clone()),
            Some(Value::Array(list)) => {
                services.extend(list.iter().filter_map(|v| v.as_str().map(str::to_string)));
            }
            _ => {}
        }
    }
    DELIVERING_SERVICES
        .into_iter()
        .filter(|(p, _)| services.iter().any(|s| s == p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x5_the_aws_managed_key_by_alias_or_arn() {
        assert!(is_aws_managed("alias/aws/sqs"));
        assert!(is_aws_managed(
            "arn:aws:kms:us-east-1:000000000000:alias/aws/sqs"
        ));
        assert!(!is_aws_managed("alias/orders"));
        assert!(!is_aws_managed("alias/aws/sqs-orders"));
    }

    #[test]
    fn x5_the_services_a_policy_lets_deliver() {
        let policy = serde_json::json!({"Statement": [
            {"Effect": "Allow", "Principal": {"Service": ["events.amazonaws.com", "lambda.amazonaws.com"]},
             "Action": "sqs:SendMessage"},
            {"Effect": "Allow", "Principal": {"Service": "s3.amazonaws.com"}, "Action": "sqs:SendMessage"},
            {"Effect": "Deny", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:*"}]})
        .to_string();
        assert_eq!(
            allowed_services(Some(&policy)),
            [
                ("events.amazonaws.com", "EventBridge"),
                ("s3.amazonaws.com", "S3")
            ]
        );
        let one = r#"{"Statement": {"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage"}}"#;
        assert_eq!(allowed_services(Some(one)), [("sns.amazonaws.com", "SNS")]);
        let everyone = r#"{"Statement": {"Effect": "Allow", "Principal": "*", "Action": "*"}}"#;
        assert!(allowed_services(Some(everyone)).is_empty());
        assert!(allowed_services(Some("not json")).is_empty());
        assert!(allowed_services(None).is_empty());
    }
}
