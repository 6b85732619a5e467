use serde_json::json;
use sluice_core::ErrorCode;

use super::*;

const QUEUE: &str = "arn:aws:sqs:us-east-1:111111111111:orders";
const B: &str = "222222222222";

fn facts<'a>(account: &'a str, action: &'a str) -> RequestFacts<'a> {
    RequestFacts {
        account,
        service: None,
        action,
        resource: QUEUE,
        source_arn: None,
        source_account: None,
        secure_transport: false,
    }
}

fn policy(statements: serde_json::Value) -> Policy {
    Policy::parse(&json!({"Version": "2012-10-17", "Statement": statements}).to_string())
        .expect("supported policy")
}

/// A6: AddPermission's layout grants exactly its accounts and actions
/// (`SQS:` in any case), on its queue.
#[test]
fn a6_add_permission_layout() {
    let p = policy(json!([{
        "Sid": "b-sends",
        "Effect": "Allow",
        "Principal": {"AWS": format!("arn:aws:iam::{B}:root")},
        "Action": "SQS:SendMessage",
        "Resource": QUEUE,
    }]));
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::Allow);
    assert_eq!(
        p.evaluate(&facts(B, "sqs:ReceiveMessage")),
        Decision::NotNamed
    );
    assert_eq!(
        p.evaluate(&facts("333333333333", "sqs:SendMessage")),
        Decision::NotNamed
    );
    let elsewhere = RequestFacts {
        resource: "arn:aws:sqs:us-east-1:111111111111:payments",
        ..facts(B, "sqs:SendMessage")
    };
    assert_eq!(p.evaluate(&elsewhere), Decision::NotNamed);
}

/// A6: principals as "*", {"AWS": "*"}, bare ids and lists; actions and
/// resources with wildcards, lists, any case for actions.
#[test]
fn a6_principals_actions_resources() {
    let p = policy(json!({
        "Effect": "Allow",
        "Principal": {"AWS": [B, "arn:aws:iam::333333333333:root"]},
        "Action": ["sqs:Get*", "sqs:receivemessage"],
        "Resource": "arn:aws:sqs:*:111111111111:ord*",
    }));
    assert_eq!(
        p.evaluate(&facts(B, "sqs:GetQueueAttributes")),
        Decision::Allow
    );
    assert_eq!(
        p.evaluate(&facts("333333333333", "sqs:ReceiveMessage")),
        Decision::Allow
    );
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::NotNamed);
    for anyone in [json!("*"), json!({"AWS": "*"})] {
        let p = policy(
            json!([{"Effect": "Allow", "Principal": anyone, "Action": "sqs:*", "Resource": "*"}]),
        );
        assert_eq!(
            p.evaluate(&facts("444444444444", "sqs:PurgeQueue")),
            Decision::Allow
        );
    }
    let p = policy(json!([{"Effect": "Allow", "Principal": "*", "Action": "*"}]));
    assert_eq!(p.evaluate(&facts(B, "sqs:DeleteMessage")), Decision::Allow);
}

/// A6: an explicit Deny wins over any Allow.
#[test]
fn a6_deny_wins() {
    let p = policy(json!([
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE},
        {"Effect": "Deny", "Principal": {"AWS": B}, "Action": "sqs:ReceiveMessage", "Resource": QUEUE},
    ]));
    assert_eq!(p.evaluate(&facts(B, "sqs:ReceiveMessage")), Decision::Deny);
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::Allow);
}

/// A6: conditions: all must hold, any value of one; a key the request
/// has no value for (aws:SourceArn from a client) matches nothing.
#[test]
fn a6_conditions() {
    let topic = "arn:aws:sns:us-east-1:222222222222:events";
    let p = policy(json!([{
        "Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": QUEUE,
        "Condition": {"ArnEquals": {"aws:SourceArn": topic}},
    }]));
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::NotNamed);
    let from_topic = RequestFacts {
        source_arn: Some(topic),
        ..facts(B, "sqs:SendMessage")
    };
    assert_eq!(p.evaluate(&from_topic), Decision::Allow);

    let p = policy(json!([{
        "Effect": "Allow", "Principal": "*", "Action": "sqs:*",
        "Condition": {
            "StringEquals": {"aws:PrincipalAccount": [B, "333333333333"]},
            "StringLike": {"AWS:SourceAccount": "2222*"},
        },
    }]));
    let with_source = RequestFacts {
        source_account: Some("222222222222"),
        ..facts(B, "sqs:SendMessage")
    };
    assert_eq!(p.evaluate(&with_source), Decision::Allow);
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::NotNamed);

    let p = policy(json!([{
        "Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE,
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }]));
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::Deny);
    let tls = RequestFacts {
        secure_transport: true,
        ..facts(B, "sqs:SendMessage")
    };
    assert_eq!(p.evaluate(&tls), Decision::NotNamed);
    let p = policy(json!([{
        "Effect": "Deny", "Principal": "*", "Action": "sqs:*",
        "Condition": {"Bool": {"aws:SecureTransport": false}},
    }]));
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::Deny);
}

/// A7: what sluice would not enforce is refused, never ignored, with
/// SQS's words for an invalid policy.
#[test]
fn a7_unsupported_elements_are_refused() {
    let base = json!({"Effect": "Allow", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE});
    let with = |key: &str, value: serde_json::Value| {
        let mut s = base.clone();
        s[key] = value;
        json!({"Statement": [s]}).to_string()
    };
    let refused = [
        with("NotPrincipal", json!({"AWS": B})),
        with("NotAction", json!("sqs:SendMessage")),
        with("NotResource", json!(QUEUE)),
        with(
            "Principal",
            json!({"Federated": "cognito-identity.amazonaws.com"}),
        ),
        with("Principal", json!({})),
        with(
            "Principal",
            json!({"AWS": "arn:aws:iam::222222222222:role/x"}),
        ),
        with("Principal", json!({"AWS": "22"})),
        with("Effect", json!("Maybe")),
        with("Action", json!("s3:GetObject")),
        with("Action", json!([])),
        with(
            "Condition",
            json!({"StringNotEquals": {"aws:SourceArn": "x"}}),
        ),
        with(
            "Condition",
            json!({"StringEquals": {"aws:SourceVpc": "vpc-1"}}),
        ),
        with(
            "Condition",
            json!({"ForAnyValue:StringEquals": {"aws:SourceArn": "x"}}),
        ),
        with("Condition", json!({"Bool": {"aws:SourceArn": "true"}})),
        with("Condition", json!({"Bool": {"aws:SecureTransport": "yes"}})),
        json!({"Statement": [base.clone()], "Extra": 1}).to_string(),
        json!({"Version": "2012-10-17"}).to_string(),
        "[]".to_string(),
        "{not json".to_string(),
    ];
    for doc in refused {
        assert!(Policy::parse(&doc).is_err(), "{doc}");
        let e = Policy::check_attribute(&doc).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeValue);
        assert_eq!(e.message, "Invalid value for the parameter Policy.");
    }
    assert!(Policy::check_attribute("").is_ok());
    assert!(Policy::check_attribute(&json!({"Statement": base}).to_string()).is_ok());
}

/// N8: the policy AWS's guide gives for a topic's deliveries lets the SNS
/// service send for that topic only; a client's own request is not the
/// service, whatever its account.
#[test]
fn n8_the_sns_service_principal_with_its_source() {
    let topic = "arn:aws:sns:us-east-1:111111111111:orders";
    let p = policy(json!([{
        "Effect": "Allow",
        "Principal": {"Service": "sns.amazonaws.com"},
        "Action": "sqs:SendMessage",
        "Resource": QUEUE,
        "Condition": {"ArnEquals": {"aws:SourceArn": topic}}
    }]));
    let delivery = |source: &'static str| RequestFacts {
        service: Some("sns.amazonaws.com"),
        source_arn: Some(source),
        source_account: Some("111111111111"),
        ..facts("111111111111", "sqs:SendMessage")
    };
    assert_eq!(p.evaluate(&delivery(topic)), Decision::Allow);
    assert_eq!(
        p.evaluate(&delivery("arn:aws:sns:us-east-1:111111111111:other")),
        Decision::NotNamed
    );
    assert_eq!(
        p.evaluate(&facts("111111111111", "sqs:SendMessage")),
        Decision::NotNamed,
        "a client is not the service"
    );
}
