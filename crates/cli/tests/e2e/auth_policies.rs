//! Queue policies end to end (rules A6, A7, docs/security.md), through the
//! Rust SDK with two accounts' keys: another account reaches a queue only
//! where its policy grants it, an explicit Deny wins (over the owner's
//! keys too), conditions are evaluated, and a policy sluice would not
//! enforce whole is refused when it is set.

use aws_sdk_sqs::types::{QueueAttributeName as Attr, SendMessageBatchRequestEntry};
use serde_json::json;

use crate::auth_access::{ACCOUNT_A, ACCOUNT_B, Server, TEAM_A, TEAM_B, credential};
use crate::common::code;

const QUEUE_ARN: &str = "arn:aws:sqs:us-east-1:111122223333:shared";

/// Two accounts' keys; A owns `shared`. Returns (server, A, B, URL).
async fn two_accounts() -> (Server, aws_sdk_sqs::Client, aws_sdk_sqs::Client, String) {
    two_accounts_in(None).await
}

/// [`two_accounts`] on a server of the organisation `organization_id`.
async fn two_accounts_in(
    organization_id: Option<&str>,
) -> (Server, aws_sdk_sqs::Client, aws_sdk_sqs::Client, String) {
    let server = Server::start_in(
        vec![
            credential(TEAM_A, ACCOUNT_A, None, None),
            credential(TEAM_B, ACCOUNT_B, None, None),
        ],
        organization_id,
    )
    .await;
    let (a, b) = (server.sdk(TEAM_A), server.sdk(TEAM_B));
    let url = a
        .create_queue()
        .queue_name("shared")
        .send()
        .await
        .expect("A creates shared")
        .queue_url
        .expect("url");
    (server, a, b, url)
}

async fn set_policy(sqs: &aws_sdk_sqs::Client, url: &str, statements: serde_json::Value) {
    let doc = json!({"Version": "2012-10-17", "Statement": statements});
    sqs.set_queue_attributes()
        .queue_url(url)
        .attributes(Attr::Policy, doc.to_string())
        .send()
        .await
        .expect("set the policy");
}

async fn send(sqs: &aws_sdk_sqs::Client, url: &str) -> Result<(), String> {
    sqs.send_message()
        .queue_url(url)
        .message_body("hello")
        .send()
        .await
        .map(|_| ())
        .map_err(|e| code(&e))
}

async fn receive(sqs: &aws_sdk_sqs::Client, url: &str) -> Result<usize, String> {
    sqs.receive_message()
        .queue_url(url)
        .send()
        .await
        .map(|r| r.messages().len())
        .map_err(|e| code(&e))
}

/// A6: without a policy account B is AccessDenied on A's queue;
/// AddPermission(B, SendMessage) lets B send (single and batch) but not
/// receive nor read attributes; RemovePermission takes it back.
#[tokio::test]
async fn a6_add_permission_grants_exactly_what_it_names() {
    let (_server, a, b, url) = two_accounts().await;
    assert_eq!(send(&b, &url).await, Err("AccessDenied".into()));

    a.add_permission()
        .queue_url(&url)
        .label("b-sends")
        .aws_account_ids(ACCOUNT_B)
        .actions("SendMessage")
        .send()
        .await
        .expect("add permission");
    assert_eq!(send(&b, &url).await, Ok(()));
    b.send_message_batch()
        .queue_url(&url)
        .entries(
            SendMessageBatchRequestEntry::builder()
                .id("1")
                .message_body("batched")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("a batch is authorized as sqs:SendMessage");
    assert_eq!(receive(&b, &url).await, Err("AccessDenied".into()));
    let e = b
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::All)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "AccessDenied");
    // The owner's key is not limited by the policy.
    assert_eq!(receive(&a, &url).await, Ok(1));

    a.remove_permission()
        .queue_url(&url)
        .label("b-sends")
        .send()
        .await
        .expect("remove permission");
    assert_eq!(send(&b, &url).await, Err("AccessDenied".into()));
}

/// A6: an explicit Deny wins over an Allow of everything, in SQS's words
/// for it, and binds the owner's own keys too.
#[tokio::test]
async fn a6_an_explicit_deny_wins() {
    let (_server, a, b, url) = two_accounts().await;
    set_policy(
        &a,
        &url,
        json!([
            {"Effect": "Allow", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE_ARN},
            {"Effect": "Deny", "Principal": {"AWS": ACCOUNT_B}, "Action": "SQS:Receive*", "Resource": QUEUE_ARN},
            {"Effect": "Deny", "Principal": {"AWS": format!("arn:aws:iam::{ACCOUNT_A}:root")}, "Action": "sqs:PurgeQueue"},
        ]),
    )
    .await;
    assert_eq!(send(&b, &url).await, Ok(()));
    let e = b
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "AccessDenied");
    assert_eq!(
        aws_sdk_sqs::error::ProvideErrorMetadata::message(&e),
        Some(
            "User: arn:aws:iam::444455556666:user/AKIDSLUICETEAMB is not authorized to perform: \
             sqs:receivemessage on resource: arn:aws:sqs:us-east-1:111122223333:shared with an \
             explicit deny in a resource-based policy"
        )
    );
    let e = a.purge_queue().queue_url(&url).send().await.unwrap_err();
    assert_eq!(code(&e), "AccessDenied");
    assert_eq!(receive(&a, &url).await, Ok(1));
}

/// A6: conditions. A grant on `aws:SourceArn` (a topic's, as for SNS)
/// does not let a client's own request in: it has no source; a grant on
/// `aws:PrincipalAccount` does, for that account only; a Deny when
/// `aws:SecureTransport` is false refuses plain-HTTP requests.
#[tokio::test]
async fn a6_conditions_are_evaluated() {
    let (_server, a, b, url) = two_accounts().await;
    set_policy(
        &a,
        &url,
        json!([{
            "Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sqs:SendMessage",
            "Resource": QUEUE_ARN,
            "Condition": {"ArnEquals": {"aws:SourceArn": "arn:aws:sns:us-east-1:444455556666:events"}},
        }]),
    )
    .await;
    assert_eq!(send(&b, &url).await, Err("AccessDenied".into()));

    set_policy(
        &a,
        &url,
        json!([{
            "Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": QUEUE_ARN,
            "Condition": {"StringEquals": {"aws:PrincipalAccount": ACCOUNT_B}},
        }]),
    )
    .await;
    assert_eq!(send(&b, &url).await, Ok(()));
    set_policy(
        &a,
        &url,
        json!([{
            "Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": QUEUE_ARN,
            "Condition": {"StringEquals": {"aws:PrincipalAccount": "999999999999"}},
        }]),
    )
    .await;
    assert_eq!(send(&b, &url).await, Err("AccessDenied".into()));

    set_policy(
        &a,
        &url,
        json!([
            {"Effect": "Allow", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE_ARN},
            {"Effect": "Deny", "Principal": "*", "Action": "sqs:SendMessage", "Resource": QUEUE_ARN,
             "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
        ]),
    )
    .await;
    assert_eq!(send(&b, &url).await, Err("AccessDenied".into()));
    assert_eq!(send(&a, &url).await, Err("AccessDenied".into()));
    // The message the PrincipalAccount grant let in.
    assert_eq!(receive(&b, &url).await, Ok(1));
}

/// A6: the conditions stacks write beside the service principals:
/// `aws:SourceIp` ranges (the test's client is 127.0.0.1), a `Deny` with
/// `NotIpAddress` that binds the owner too, `aws:PrincipalOrgID` against
/// the configured organisation, and tag-based access on the queue's tags
/// (`aws:ResourceTag/…`), which follows a retag at once.
#[tokio::test]
async fn a6_source_ip_organisation_and_tags() {
    let (_server, a, b, url) = two_accounts_in(Some("o-a1b2c3d4e5")).await;
    let allow_b_when = |condition: serde_json::Value| {
        json!([{
            "Effect": "Allow", "Principal": {"AWS": ACCOUNT_B}, "Action": "sqs:SendMessage",
            "Resource": QUEUE_ARN, "Condition": condition,
        }])
    };
    for (condition, expected) in [
        (
            json!({"IpAddress": {"aws:SourceIp": ["10.0.0.0/8", "127.0.0.0/8"]}}),
            Ok(()),
        ),
        (
            json!({"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}),
            Err("AccessDenied".to_string()),
        ),
        (
            json!({"NotIpAddress": {"aws:SourceIp": "10.0.0.0/8"}}),
            Ok(()),
        ),
        (
            json!({"StringEquals": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}}),
            Ok(()),
        ),
        (
            json!({"StringEquals": {"aws:PrincipalOrgID": "o-zzzzzzzzzz"}}),
            Err("AccessDenied".into()),
        ),
        (
            json!({"StringEquals": {"aws:ResourceTag/team": "payments"}}),
            Err("AccessDenied".into()),
        ),
    ] {
        set_policy(&a, &url, allow_b_when(condition.clone())).await;
        assert_eq!(send(&b, &url).await, expected, "{condition}");
    }
    a.tag_queue()
        .queue_url(&url)
        .tags("Team", "payments")
        .send()
        .await
        .unwrap();
    assert_eq!(send(&b, &url).await, Ok(()), "tagged for the policy");
    a.tag_queue()
        .queue_url(&url)
        .tags("Team", "search")
        .send()
        .await
        .unwrap();
    assert_eq!(send(&b, &url).await, Err("AccessDenied".into()), "retagged");

    set_policy(
        &a,
        &url,
        json!([{"Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE_ARN,
                "Condition": {"NotIpAddress": {"aws:SourceIp": "10.0.0.0/8"}}}]),
    )
    .await;
    assert_eq!(
        send(&a, &url).await,
        Err("AccessDenied".into()),
        "the owner too"
    );
}

/// A7: a policy with an element sluice would not enforce (a role as a
/// principal, a federated principal, a condition key or operator it does
/// not evaluate) is refused at SetQueueAttributes and CreateQueue with
/// SQS's code and words and the reason after them; a malformed one in
/// SQS's words alone; the queue keeps its policy.
#[tokio::test]
async fn a7_an_unsupported_policy_is_refused_when_set() {
    let (_server, a, b, url) = two_accounts().await;
    let base =
        json!({"Effect": "Allow", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE_ARN});
    let variants = [
        (
            "Principal",
            json!({"AWS": "arn:aws:iam::444455556666:role/app"}),
            Some("the principal arn:aws:iam::444455556666:role/app"),
        ),
        (
            "Principal",
            json!({"Federated": "cognito-identity.amazonaws.com"}),
            Some("Federated principals"),
        ),
        (
            "Condition",
            json!({"StringEquals": {"aws:SourceVpce": "vpce-1"}}),
            Some("the condition key aws:SourceVpce"),
        ),
        (
            "Condition",
            json!({"DateLessThan": {"aws:CurrentTime": "2030-01-01T00:00:00Z"}}),
            Some("the condition operator DateLessThan"),
        ),
        ("Effect", json!("Perhaps"), None),
    ];
    for (member, value, reason) in variants {
        let mut statement = base.clone();
        statement[member] = value;
        let doc = json!({"Statement": [statement]}).to_string();
        let e = a
            .set_queue_attributes()
            .queue_url(&url)
            .attributes(Attr::Policy, &doc)
            .send()
            .await
            .expect_err("refused");
        assert_eq!(code(&e), "InvalidAttributeValue", "{doc}");
        let message = aws_sdk_sqs::error::ProvideErrorMetadata::message(&e).unwrap_or_default();
        match reason {
            Some(what) => assert!(
                message.starts_with(
                    "Invalid value for the parameter Policy. Reason: sluice does not enforce "
                ) && message.contains(what),
                "{message}"
            ),
            None => assert_eq!(message, "Invalid value for the parameter Policy."),
        }
        let e = a
            .create_queue()
            .queue_name("other")
            .attributes(Attr::Policy, &doc)
            .send()
            .await
            .expect_err("refused");
        assert_eq!(code(&e), "InvalidAttributeValue", "{doc}");
    }
    let kept = a
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::Policy)
        .send()
        .await
        .unwrap();
    assert!(kept.attributes().is_none_or(|m| m.is_empty()), "{kept:?}");
    assert_eq!(send(&b, &url).await, Err("AccessDenied".into()));
}
