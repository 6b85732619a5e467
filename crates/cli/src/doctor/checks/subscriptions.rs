//! The topics' pitfalls (rules N4–N8): a queue subscribed without a policy
//! that lets its topic send, a subscription without a dead-letter queue, a
//! subscription's dead-letter queue taken for the consumer's, an HTTP
//! subscription never confirmed, and a filter policy that lets nothing
//! through.

use serde_json::Value;
use sluice_server::auth::access::wildcard;

use crate::doctor::report::{Report, Severity};
use crate::doctor::setup::{QueueSnapshot, Setup, SubscriptionInfo, TopicInfo, Topics};

/// The checks' ids, for skipping them together.
const CHECKS: [&str; 5] = [
    "subscription-queue-policy",
    "subscription-dlq",
    "subscription-dlq-mistaken",
    "subscription-unconfirmed",
    "subscription-filter",
];

/// The service principal SNS delivers to queues as.
const SNS_SERVICE: &str = "sns.amazonaws.com";

/// Runs the subscription checks.
pub(super) fn check(setup: &Setup, report: &mut Report) {
    let topics = match &setup.topics {
        Topics::Unknown(why) => {
            for c in CHECKS {
                report.skip(c, why);
            }
            return;
        }
        Topics::Known(list) => list,
    };
    for topic in topics {
        for s in &topic.subscriptions {
            let queue = (s.protocol == "sqs")
                .then(|| setup.queues.iter().find(|q| q.arn == s.endpoint))
                .flatten();
            let subject = queue.map_or_else(|| s.endpoint.clone(), |q| q.name.clone());
            if let Some(q) = queue
                && !lets_topic_send(q, &topic.arn)
            {
                queue_policy(topic, q, report);
            }
            dead_letter(setup, topic, s, queue, &subject, report);
            if s.pending && (s.protocol == "http" || s.protocol == "https") {
                report.add(
                    "subscription-unconfirmed",
                    Severity::Warning,
                    &subject,
                    format!(
                        "the {} subscription to {} is still waiting for its confirmation: \
                         nothing published reaches the endpoint until it is confirmed",
                        s.protocol, topic.arn
                    ),
                    "have the endpoint visit the SubscribeURL of the SubscriptionConfirmation \
                     it was sent, or call ConfirmSubscription with its Token; Subscribe again \
                     to send a new confirmation"
                        .to_string(),
                );
            }
            if s.filter_policy.is_some() && s.delivered == 0 && s.filtered_out > 0 {
                report.add(
                    "subscription-filter",
                    Severity::Warning,
                    &subject,
                    format!(
                        "the filter policy of its subscription to {} let none of the {} \
                         messages published on this node through: it may never match (an \
                         attribute name or a value's type that publishers do not send, a \
                         policy on the attributes while the values are in the body)",
                        topic.arn, s.filtered_out
                    ),
                    "compare the policy with a published message's attributes (or body, with \
                     FilterPolicyScope MessageBody); `sluice peek` on the queue shows what \
                     does arrive"
                        .to_string(),
                );
            }
        }
    }
}

/// `subscription-queue-policy`.
fn queue_policy(topic: &TopicInfo, q: &QueueSnapshot, report: &mut Report) {
    report.add(
        "subscription-queue-policy",
        Severity::Warning,
        &q.name,
        format!(
            "it is subscribed to {} but its Policy does not let the topic send \
             (sqs:SendMessage for the service {SNS_SERVICE}, or for everyone, with \
             aws:SourceArn matching the topic): AWS delivers nothing to it, nor does \
             sluice with authentication on",
            topic.arn
        ),
        format!(
            "set its Policy to allow sqs:SendMessage to {{\"Service\": \"{SNS_SERVICE}\"}} \
             with the condition {{\"ArnEquals\": {{\"aws:SourceArn\": \"{}\"}}}}",
            topic.arn
        ),
    );
}

/// `subscription-dlq` and `subscription-dlq-mistaken`.
fn dead_letter(
    setup: &Setup,
    topic: &TopicInfo,
    s: &SubscriptionInfo,
    queue: Option<&QueueSnapshot>,
    subject: &str,
    report: &mut Report,
) {
    let Some(dlq) = &s.dead_letter_arn else {
        if matches!(s.protocol.as_str(), "sqs" | "http" | "https") {
            report.add(
                "subscription-dlq",
                Severity::Warning,
                subject,
                format!(
                    "its subscription to {} has no RedrivePolicy: what the topic cannot \
                     deliver (the queue deleted, its policy refusing, an endpoint still \
                     failing after the retries) is dropped",
                    topic.arn
                ),
                "set the subscription's RedrivePolicy to \
                 {\"deadLetterTargetArn\": \"<a queue's ARN>\"} (SetSubscriptionAttributes)"
                    .to_string(),
            );
        }
        return;
    };
    if let Some(q) = queue
        && q.redrive.is_none()
    {
        report.add(
            "subscription-dlq-mistaken",
            Severity::Warning,
            &q.name,
            format!(
                "its subscription to {} has a dead-letter queue ({}), but the queue has no \
                 RedrivePolicy: the subscription's catches only what the topic could not \
                 deliver; a message its consumer fails on is received again and again, \
                 never dead-lettered",
                topic.arn,
                tail(dlq)
            ),
            format!(
                "give {} a RedrivePolicy of its own (its consumer's dead-letter queue)",
                q.name
            ),
        );
    }
    let consumers_dlq = setup
        .queues
        .iter()
        .find(|src| src.redrive.as_ref().is_some_and(|(arn, _)| arn == dlq));
    if let Some(src) = consumers_dlq {
        report.add(
            "subscription-dlq-mistaken",
            Severity::Info,
            tail(dlq),
            format!(
                "it is both the dead-letter queue of the subscription to {} and {}'s \
                 RedrivePolicy target: messages the topic could not deliver and messages \
                 {}'s consumer failed on mix, and a redrive sends both to {}",
                topic.arn, src.name, src.name, src.name
            ),
            "give the subscription a dead-letter queue of its own".to_string(),
        );
    }
}

/// Whether `q`'s policy lets the topic `topic_arn` send to it: an Allow of
/// `sqs:SendMessage` for the SNS service (or everyone, or the topic's
/// account) whose conditions on `aws:SourceArn` and `aws:SourceAccount`
/// hold, and no Deny that applies.
fn lets_topic_send(q: &QueueSnapshot, topic_arn: &str) -> bool {
    let Some(policy) = q.policy.as_deref() else {
        return false;
    };
    let Ok(doc) = serde_json::from_str::<Value>(policy) else {
        return false;
    };
    let statements = match doc.get("Statement") {
        Some(Value::Array(list)) => list.clone(),
        Some(one @ Value::Object(_)) => vec![one.clone()],
        _ => return false,
    };
    let topic_account = topic_arn.split(':').nth(4).unwrap_or_default();
    let applies = |st: &Value| {
        principal_matches(st.get("Principal"), topic_account)
            && strings(st.get("Action"))
                .iter()
                .any(|a| wildcard(a, "sqs:SendMessage", true))
            && st
                .get("Resource")
                .is_none_or(|r| strings(Some(r)).iter().any(|p| wildcard(p, &q.arn, false)))
            && conditions_hold(st.get("Condition"), topic_arn, topic_account)
    };
    let effect = |st: &Value, e: &str| st.get("Effect").and_then(Value::as_str) == Some(e);
    let denied = statements
        .iter()
        .any(|st| effect(st, "Deny") && applies(st));
    !denied
        && statements
            .iter()
            .any(|st| effect(st, "Allow") && applies(st))
}

/// A policy value as its strings (one, or a list).
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

fn principal_matches(principal: Option<&Value>, topic_account: &str) -> bool {
    match principal {
        Some(Value::String(s)) => s == "*",
        Some(Value::Object(map)) => {
            let service = strings(map.get("Service"));
            let aws = strings(map.get("AWS"));
            service.iter().any(|s| s == SNS_SERVICE)
                || aws.iter().any(|a| {
                    a == "*"
                        || a == topic_account
                        || a == &format!("arn:aws:iam::{topic_account}:root")
                })
        }
        _ => false,
    }
}

/// Conditions on the source hold for the topic; others are taken to hold.
fn conditions_hold(condition: Option<&Value>, topic_arn: &str, topic_account: &str) -> bool {
    let Some(Value::Object(block)) = condition else {
        return true;
    };
    block.values().all(|keys| {
        let Value::Object(keys) = keys else {
            return true;
        };
        keys.iter().all(|(key, values)| {
            let values = strings(Some(values));
            match key.to_ascii_lowercase().as_str() {
                "aws:sourcearn" => values.iter().any(|v| wildcard(v, topic_arn, false)),
                "aws:sourceaccount" => values.iter().any(|v| v == topic_account),
                _ => true,
            }
        })
    })
}

/// The last part of an ARN: the queue's name.
fn tail(arn: &str) -> &str {
    arn.rsplit(':').next().unwrap_or(arn)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOPIC: &str = "arn:aws:sns:us-east-1:000000000000:orders";

    fn queue(policy: Option<serde_json::Value>) -> QueueSnapshot {
        QueueSnapshot {
            name: "orders-q".into(),
            arn: "arn:aws:sqs:us-east-1:000000000000:orders-q".into(),
            policy: policy.map(|p| p.to_string()),
            ..QueueSnapshot::default()
        }
    }

    /// N8: the policy AWS's guide gives lets the topic send; one for
    /// another topic, a Deny, or none at all does not.
    #[test]
    fn n8_which_policies_let_the_topic_send() {
        let allow = |arn: &str| {
            serde_json::json!({"Version": "2012-10-17", "Statement": [{
                "Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"},
                "Action": "sqs:SendMessage", "Resource": "arn:aws:sqs:us-east-1:000000000000:orders-q",
                "Condition": {"ArnEquals": {"aws:SourceArn": arn}}}]})
        };
        assert!(lets_topic_send(&queue(Some(allow(TOPIC))), TOPIC));
        assert!(lets_topic_send(
            &queue(Some(allow("arn:aws:sns:*:000000000000:*"))),
            TOPIC
        ));
        assert!(!lets_topic_send(
            &queue(Some(allow("arn:aws:sns:us-east-1:000000000000:other"))),
            TOPIC
        ));
        assert!(!lets_topic_send(&queue(None), TOPIC));
        let everyone = serde_json::json!({"Statement": {"Effect": "Allow", "Principal": "*", "Action": "sqs:*"}});
        assert!(lets_topic_send(&queue(Some(everyone)), TOPIC));
        let denied = serde_json::json!({"Statement": [
            {"Effect": "Allow", "Principal": "*", "Action": "*"},
            {"Effect": "Deny", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage"}]});
        assert!(!lets_topic_send(&queue(Some(denied)), TOPIC));
        let receive_only = serde_json::json!({"Statement": {"Effect": "Allow", "Principal": "*", "Action": "sqs:ReceiveMessage"}});
        assert!(!lets_topic_send(&queue(Some(receive_only)), TOPIC));
    }
}
