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
    let server = Server::start(vec![
        credential(TEAM_A, ACCOUNT_A, None, None),
        credential(TEAM_B, ACCOUNT_B, None, None),
    ])
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

/// A7: a policy with an element sluice would not enforce (NotPrincipal,
/// an unknown condition operator or key) is refused
/// at SetQueueAttributes and CreateQueue as SQS refuses an invalid policy,
/// and the queue keeps its policy.
#[tokio::test]
async fn a7_an_unsupported_policy_is_refused_when_set() {
    let (_server, a, b, url) = two_accounts().await;
    let base =
        json!({"Effect": "Allow", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE_ARN});
    let variants = [
        ("NotPrincipal", json!({"AWS": ACCOUNT_B})),
        (
            "Condition",
            json!({"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}),
        ),
        (
            "Condition",
            json!({"StringEquals": {"aws:SourceVpce": "vpce-1"}}),
        ),
    ];
    for (member, value) in variants {
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
        assert_eq!(
            aws_sdk_sqs::error::ProvideErrorMetadata::message(&e),
            Some("Invalid value for the parameter Policy.")
        );
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
