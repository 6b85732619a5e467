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
        source_ip: None,
        principal_org_id: None,
        resource_tags: None,
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

/// A7: what sluice would not enforce is refused, never ignored: a
/// malformed document in SQS's words, a valid one that asks for what
/// sluice does not enforce with the reason after them.
#[test]
fn a7_unsupported_elements_are_refused() {
    let base = json!({"Effect": "Allow", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE});
    let with = |key: &str, value: serde_json::Value| {
        let mut s = base.clone();
        s[key] = value;
        json!({"Statement": [s]}).to_string()
    };
    let malformed = [
        with("NotPrincipal", json!({"AWS": B})),
        with("NotResource", json!(QUEUE)),
        with("Principal", json!({})),
        with("Effect", json!("Maybe")),
        with("Action", json!([])),
        with("Condition", json!({"Bool": {"aws:SourceArn": "true"}})),
        with("Condition", json!({"Bool": {"aws:SecureTransport": "yes"}})),
        with(
            "Condition",
            json!({"IpAddress": {"aws:SourceIp": "10.0.0.0/33"}}),
        ),
        with(
            "Condition",
            json!({"IpAddress": {"aws:SourceIp": "not-an-ip"}}),
        ),
        with(
            "Condition",
            json!({"StringEquals": {"aws:SourceIp": "10.0.0.1"}}),
        ),
        with("Condition", json!({"ArnEquals": {"aws:SourceAccount": B}})),
        with("Condition", json!({"Null": {"aws:SourceArn": "maybe"}})),
        json!({"Statement": [base.clone()], "Extra": 1}).to_string(),
        json!({"Version": "2012-10-17"}).to_string(),
        "[]".to_string(),
        "{not json".to_string(),
    ];
    for doc in malformed {
        assert!(
            matches!(Policy::parse(&doc), Err(Refused::Malformed(_))),
            "{doc}"
        );
        let e = Policy::check_attribute(&doc).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeValue);
        assert_eq!(
            e.message, "Invalid value for the parameter Policy.",
            "{doc}"
        );
    }
    let unsupported = [
        (
            json!({"Statement": [{"Effect": "Allow", "NotPrincipal": {"AWS": B}, "Action": "sqs:*"}]})
                .to_string(),
            "NotPrincipal in an Allow statement",
        ),
        (
            with(
                "Principal",
                json!({"Federated": "cognito-identity.amazonaws.com"}),
            ),
            "Federated principals",
        ),
        (
            with(
                "Principal",
                json!({"AWS": "arn:aws:iam::222222222222:role/x"}),
            ),
            "the principal arn:aws:iam::222222222222:role/x",
        ),
        (with("Principal", json!({"AWS": "22"})), "the principal 22"),
        (
            with("Action", json!("s3:GetObject")),
            "the action s3:GetObject",
        ),
        (
            with(
                "Condition",
                json!({"StringEquals": {"aws:SourceVpc": "vpc-1"}}),
            ),
            "the condition key aws:SourceVpc",
        ),
        (
            with(
                "Condition",
                json!({"ForAnyValue:StringEquals": {"aws:SourceArn": "x"}}),
            ),
            "the set operator ForAnyValue:StringEquals",
        ),
        (
            with(
                "Condition",
                json!({"DateGreaterThan": {"aws:CurrentTime": "2026-01-01"}}),
            ),
            "the condition operator DateGreaterThan",
        ),
    ];
    for (doc, what) in unsupported {
        assert!(
            matches!(Policy::parse(&doc), Err(Refused::Unsupported(_))),
            "{doc}"
        );
        let e = Policy::check_attribute(&doc).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeValue);
        assert!(
            e.message.starts_with(
                "Invalid value for the parameter Policy. Reason: sluice does not enforce "
            ) && e.message.contains(what),
            "{doc}: {}",
            e.message
        );
    }
    assert!(Policy::check_attribute("").is_ok());
    assert!(Policy::check_attribute(&json!({"Statement": base}).to_string()).is_ok());
}

/// A6: `NotPrincipal`, `NotAction` and `NotResource` apply a statement to
/// what they do not name (the usual "deny everyone but" statements).
#[test]
fn a6_not_principal_not_action_not_resource() {
    let p = policy(json!([
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:*"},
        {"Effect": "Deny", "NotPrincipal": {"AWS": B}, "Action": "sqs:*"},
    ]));
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::Allow);
    assert_eq!(
        p.evaluate(&facts("333333333333", "sqs:SendMessage")),
        Decision::Deny
    );
    let p = policy(json!([
        {"Effect": "Allow", "Principal": "*", "NotAction": ["sqs:Delete*", "sqs:PurgeQueue"]},
    ]));
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::Allow);
    assert_eq!(p.evaluate(&facts(B, "sqs:DeleteQueue")), Decision::NotNamed);
    assert_eq!(p.evaluate(&facts(B, "sqs:PurgeQueue")), Decision::NotNamed);
    let p = policy(json!([
        {"Effect": "Deny", "Principal": "*", "Action": "sqs:*",
         "NotResource": "arn:aws:sqs:us-east-1:111111111111:public-*"},
    ]));
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::Deny);
    let public = RequestFacts {
        resource: "arn:aws:sqs:us-east-1:111111111111:public-events",
        ..facts(B, "sqs:SendMessage")
    };
    assert_eq!(p.evaluate(&public), Decision::NotNamed);
}

/// A6 (IAM's condition evaluation): a negated operator holds when the
/// request has no value for its key, a positive one fails; `…IfExists`
/// holds when the key is absent and tests the value when present; `Null`
/// tests presence; multiple values of a key are alternatives.
#[test]
fn a6_negated_operators_if_exists_and_null() {
    let topic = "arn:aws:sns:us-east-1:111111111111:orders";
    let deny_others = policy(json!([
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage"},
        {"Effect": "Deny", "Principal": "*", "Action": "sqs:SendMessage",
         "Condition": {"ArnNotEquals": {"aws:SourceArn": [topic, "arn:aws:sns:*:111111111111:audit-*"]}}},
    ]));
    let from = |source: &'static str| RequestFacts {
        source_arn: Some(source),
        ..facts(B, "sqs:SendMessage")
    };
    assert_eq!(deny_others.evaluate(&from(topic)), Decision::Allow);
    assert_eq!(
        deny_others.evaluate(&from("arn:aws:sns:eu-west-1:111111111111:audit-7")),
        Decision::Allow
    );
    assert_eq!(
        deny_others.evaluate(&from("arn:aws:sns:us-east-1:111111111111:other")),
        Decision::Deny
    );
    assert_eq!(
        deny_others.evaluate(&facts(B, "sqs:SendMessage")),
        Decision::Deny,
        "no source: a negated operator holds"
    );
    let if_exists = policy(json!([
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage",
         "Condition": {"ArnEqualsIfExists": {"aws:SourceArn": topic}}},
    ]));
    assert_eq!(
        if_exists.evaluate(&facts(B, "sqs:SendMessage")),
        Decision::Allow
    );
    assert_eq!(if_exists.evaluate(&from(topic)), Decision::Allow);
    assert_eq!(
        if_exists.evaluate(&from("arn:aws:sns:us-east-1:111111111111:other")),
        Decision::NotNamed
    );
    let null = policy(json!([
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage",
         "Condition": {"Null": {"aws:SourceArn": "false"}}},
    ]));
    assert_eq!(null.evaluate(&from(topic)), Decision::Allow);
    assert_eq!(
        null.evaluate(&facts(B, "sqs:SendMessage")),
        Decision::NotNamed
    );
    let ignore_case = policy(json!([
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:*",
         "Condition": {"StringEqualsIgnoreCase": {"aws:PrincipalAccount": B},
                       "StringNotEquals": {"aws:PrincipalAccount": "333333333333"}}},
    ]));
    assert_eq!(
        ignore_case.evaluate(&facts(B, "sqs:SendMessage")),
        Decision::Allow
    );
}

/// A6: `aws:SourceIp` with `IpAddress`/`NotIpAddress` over IPv4 and IPv6
/// ranges and single addresses; an IPv4 client seen as IPv6 is compared
/// as IPv4.
#[test]
fn a6_source_ip_ranges() {
    let p = policy(json!([
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:*",
         "Condition": {"IpAddress": {"aws:SourceIp": ["10.1.0.0/16", "2001:db8::/32", "192.0.2.7"]}}},
        {"Effect": "Deny", "Principal": "*", "Action": "sqs:PurgeQueue",
         "Condition": {"NotIpAddress": {"aws:SourceIp": "10.1.2.0/24"}}},
    ]));
    let at = |ip: &str, action: &'static str| RequestFacts {
        source_ip: Some(ip.parse().unwrap()),
        ..facts(B, action)
    };
    assert_eq!(
        p.evaluate(&at("10.1.200.3", "sqs:SendMessage")),
        Decision::Allow
    );
    assert_eq!(
        p.evaluate(&at("::ffff:10.1.2.3", "sqs:SendMessage")),
        Decision::Allow
    );
    assert_eq!(
        p.evaluate(&at("2001:db8:1::9", "sqs:SendMessage")),
        Decision::Allow
    );
    assert_eq!(
        p.evaluate(&at("192.0.2.7", "sqs:SendMessage")),
        Decision::Allow
    );
    assert_eq!(
        p.evaluate(&at("192.0.2.8", "sqs:SendMessage")),
        Decision::NotNamed
    );
    assert_eq!(
        p.evaluate(&at("10.2.0.1", "sqs:SendMessage")),
        Decision::NotNamed
    );
    assert_eq!(
        p.evaluate(&at("10.1.2.3", "sqs:PurgeQueue")),
        Decision::Allow
    );
    assert_eq!(
        p.evaluate(&at("10.1.3.3", "sqs:PurgeQueue")),
        Decision::Deny
    );
    assert_eq!(
        p.evaluate(&facts(B, "sqs:SendMessage")),
        Decision::NotNamed,
        "a service has no address"
    );
}

/// A6: `aws:PrincipalOrgID` against the organisation the server's
/// accounts belong to, and tag-based access on the queue's tags
/// (`aws:ResourceTag/<key>`, the key in any case).
#[test]
fn a6_organisation_and_resource_tags() {
    let p = policy(json!([
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:*",
         "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}}},
    ]));
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::NotNamed);
    let member = RequestFacts {
        principal_org_id: Some("o-a1b2c3d4e5"),
        ..facts(B, "sqs:SendMessage")
    };
    assert_eq!(p.evaluate(&member), Decision::Allow);

    let p = policy(json!([
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:*",
         "Condition": {"StringEquals": {"aws:ResourceTag/Team": ["payments", "billing"]}}},
    ]));
    assert!(p.reads_tags());
    let tagged = |team: &str| [("team".to_string(), team.to_string())].into();
    let payments: std::collections::BTreeMap<String, String> = tagged("payments");
    let search: std::collections::BTreeMap<String, String> = tagged("search");
    let with_tags = |tags| RequestFacts {
        resource_tags: Some(tags),
        ..facts(B, "sqs:SendMessage")
    };
    assert_eq!(p.evaluate(&with_tags(&payments)), Decision::Allow);
    assert_eq!(p.evaluate(&with_tags(&search)), Decision::NotNamed);
    assert_eq!(p.evaluate(&facts(B, "sqs:SendMessage")), Decision::NotNamed);
    assert!(!policy(json!({"Effect": "Allow", "Principal": "*", "Action": "*"})).reads_tags());
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
