//! Dead-letter queues and alarms behind the access rules (rule A9,
//! docs/security.md): a RedrivePolicy may name only a dead-letter queue
//! the key may reach, and ListDeadLetterSourceQueues and DescribeAlarms
//! list only queues the key may see. The refusal is SQS's `AccessDenied` (403), as for any
//! queue outside the key's rules (see `auth_access.rs` for its source).

use aws_sdk_sqs::types::QueueAttributeName as Attr;

use crate::auth::{aws_sign_as, status};
use crate::auth_access::{ACCOUNT_A, ACCOUNT_B, Server, TEAM_A, TEAM_B, credential};
use crate::common::{RawResponse, code};

const ADMIN: &str = "AKIDSLUICEADMIN";
const OPS: &str = "AKIDSLUICEOPS";

fn redrive(arn: &str) -> String {
    serde_json::json!({ "deadLetterTargetArn": arn, "maxReceiveCount": 3 }).to_string()
}

fn arn(account: &str, name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:{account}:{name}")
}

async fn create(
    sqs: &aws_sdk_sqs::Client,
    name: &str,
    dlq: Option<&str>,
) -> Result<String, String> {
    let mut req = sqs.create_queue().queue_name(name);
    if let Some(dlq) = dlq {
        req = req.attributes(Attr::RedrivePolicy, redrive(dlq));
    }
    match req.send().await {
        Ok(out) => Ok(out.queue_url.unwrap_or_default()),
        Err(e) => {
            assert_eq!(status(&e), 403, "{e:?}");
            let message = aws_sdk_sqs::error::ProvideErrorMetadata::message(&e)
                .unwrap_or_default()
                .to_string();
            Err(format!("{} {message}", code(&e)))
        }
    }
}

/// A9: CreateQueue and SetQueueAttributes with a RedrivePolicy naming a
/// dead-letter queue outside the key's `queues`, or of another account,
/// are AccessDenied; one inside them works.
#[tokio::test]
async fn a9_a_redrive_policy_names_only_reachable_queues() {
    let server = Server::start(vec![
        credential(ADMIN, "000000000000", None, None),
        credential(OPS, "000000000000", Some(&["sqs:*"]), Some(&["orders*"])),
        credential(TEAM_A, ACCOUNT_A, None, None),
        credential(TEAM_B, ACCOUNT_B, None, None),
    ])
    .await;
    let (admin, ops) = (server.sdk(ADMIN), server.sdk(OPS));
    for name in ["payments-dlq", "orders-dlq"] {
        create(&admin, name, None).await.expect("admin creates");
    }
    let payments_dlq = arn("000000000000", "payments-dlq");
    let refused = create(&ops, "orders-2", Some(&payments_dlq))
        .await
        .expect_err("a dead-letter queue outside orders*");
    assert!(refused.starts_with("AccessDenied "), "{refused}");
    assert!(
        refused.contains(
            "sqs:createqueue on resource: arn:aws:sqs:us-east-1:000000000000:payments-dlq"
        ),
        "{refused}"
    );
    let url = create(&ops, "orders-1", Some(&arn("000000000000", "orders-dlq")))
        .await
        .expect("a dead-letter queue inside orders*");
    let e = ops
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(Attr::RedrivePolicy, redrive(&payments_dlq))
        .send()
        .await
        .expect_err("SetQueueAttributes to a queue outside orders*");
    assert_eq!(code(&e), "AccessDenied", "{e:?}");
    assert_eq!(status(&e), 403);

    // Another account's queue, without a policy granting it.
    let (a, b) = (server.sdk(TEAM_A), server.sdk(TEAM_B));
    create(&a, "a-dlq", None).await.expect("team A creates");
    let refused = create(&b, "b-src", Some(&arn(ACCOUNT_A, "a-dlq")))
        .await
        .expect_err("another account's dead-letter queue");
    assert!(refused.starts_with("AccessDenied "), "{refused}");
}

/// A9: ListDeadLetterSourceQueues lists only the source queues the key
/// may name; a key without limits sees them all.
#[tokio::test]
async fn a9_dead_letter_sources_are_only_those_the_key_may_see() {
    let server = Server::start(vec![
        credential(ADMIN, "000000000000", None, None),
        credential(OPS, "000000000000", Some(&["sqs:*"]), Some(&["orders*"])),
    ])
    .await;
    let (admin, ops) = (server.sdk(ADMIN), server.sdk(OPS));
    let dlq = create(&admin, "orders-dlq", None).await.expect("dlq");
    let target = arn("000000000000", "orders-dlq");
    for name in ["orders-1", "payments"] {
        create(&admin, name, Some(&target)).await.expect("source");
    }
    let sources = |out: aws_sdk_sqs::operation::list_dead_letter_source_queues::ListDeadLetterSourceQueuesOutput| {
        let mut names: Vec<String> = out
            .queue_urls
            .iter()
            .map(|u| u.rsplit('/').next().unwrap_or_default().to_string())
            .collect();
        names.sort();
        names
    };
    let all = admin
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .expect("admin lists");
    assert_eq!(sources(all), ["orders-1", "payments"]);
    let limited = ops
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .expect("ops lists");
    assert_eq!(sources(limited), ["orders-1"]);
}

/// A `Sluice.<action>` JSON request signed with `key`, off the runtime.
pub(crate) async fn signed_sluice(
    server: &Server,
    key: &str,
    action: &str,
    body: serde_json::Value,
) -> RawResponse {
    let headers = [
        ("Content-Type", "application/x-amz-json-1.0"),
        ("X-Amz-Target", &*format!("Sluice.{action}")),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()));
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let body = body.to_string();
    let (target, extra) = aws_sign_as(
        key,
        server.addr(),
        "POST",
        "/",
        &borrowed,
        body.as_bytes(),
        &format!("{key}-secret"),
        None,
    );
    let raw = server.raw();
    tokio::task::spawn_blocking(move || {
        let mut all: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        all.extend(extra.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        raw.request("POST", &target, &all, body.as_bytes())
    })
    .await
    .expect("request")
}

/// A9: DescribeAlarms lists only the alarms on queues the key may see.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_alarms_are_described_only_on_queues_the_key_may_see() {
    let server = Server::start(vec![
        credential(ADMIN, "000000000000", None, None),
        credential(
            OPS,
            "000000000000",
            Some(&["sqs:*", "sluice:*"]),
            Some(&["orders*"]),
        ),
    ])
    .await;
    let admin = server.sdk(ADMIN);
    for name in ["orders-1", "payments"] {
        let url = create(&admin, name, None).await.expect("queue");
        let put = signed_sluice(
            &server,
            ADMIN,
            "PutAlarm",
            serde_json::json!({"AlarmName": format!("{name}-backlog"), "QueueUrl": url,
                   "MetricName": "ApproximateNumberOfMessagesVisible", "Period": 10,
                   "Threshold": 100, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                   "Actions": ["http://127.0.0.1:9/hook"]}),
        )
        .await;
        assert_eq!(put.status, 200, "{}", put.body);
    }
    let names = |r: RawResponse| {
        assert_eq!(r.status, 200, "{}", r.body);
        let v: serde_json::Value = serde_json::from_str(&r.body).expect("json");
        let mut names: Vec<String> = v["Alarms"]
            .as_array()
            .expect("alarms")
            .iter()
            .map(|a| a["AlarmName"].as_str().unwrap_or_default().to_string())
            .collect();
        names.sort();
        names
    };
    let all = signed_sluice(&server, ADMIN, "DescribeAlarms", serde_json::json!({})).await;
    assert_eq!(names(all), ["orders-1-backlog", "payments-backlog"]);
    let limited = signed_sluice(&server, OPS, "DescribeAlarms", serde_json::json!({})).await;
    assert_eq!(names(limited), ["orders-1-backlog"]);
}

/// A2, A9: a push consumer is reached through the queue it reads. A key
/// limited to `orders*` cannot pause, update or delete the consumer of
/// `payments` (named only by the consumer's name) and does not see it in
/// ListConsumers; it manages its own queue's consumer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_consumers_are_reached_only_through_queues_the_key_may_see() {
    let server = Server::start(vec![
        credential(ADMIN, "000000000000", None, None),
        credential(
            OPS,
            "000000000000",
            Some(&["sqs:*", "sluice:*"]),
            Some(&["orders*"]),
        ),
    ])
    .await;
    let admin = server.sdk(ADMIN);
    let mut urls = Vec::new();
    for name in ["orders", "payments"] {
        let url = admin
            .create_queue()
            .queue_name(name)
            .attributes(Attr::VisibilityTimeout, "180")
            .send()
            .await
            .expect("create")
            .queue_url
            .expect("url");
        urls.push(url);
    }
    for (name, url) in [("orders-worker", &urls[0]), ("pay-worker", &urls[1])] {
        let made = signed_sluice(
            &server,
            ADMIN,
            "CreateConsumer",
            serde_json::json!({"Name": name, "QueueUrl": url, "Url": "http://127.0.0.1:9/", "TimeoutSeconds": 5}),
        )
        .await;
        assert_eq!(made.status, 200, "{}", made.body);
    }

    for action in ["PauseConsumer", "UpdateConsumer", "DeleteConsumer"] {
        let mut body = serde_json::json!({"Name": "pay-worker"});
        if action == "UpdateConsumer" {
            body["QueueUrl"] = serde_json::json!(urls[0]);
            body["Url"] = serde_json::json!("http://127.0.0.1:9/");
        }
        let refused = signed_sluice(&server, OPS, action, body).await;
        assert_eq!(refused.status, 403, "{action}: {}", refused.body);
        assert_eq!(
            refused.header("x-amzn-query-error"),
            Some("AccessDenied;Sender"),
            "{action}"
        );
        assert!(refused.body.contains(":payments"), "{}", refused.body);
    }

    let listed = signed_sluice(&server, OPS, "ListConsumers", serde_json::json!({})).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let names: Vec<String> = serde_json::from_str::<serde_json::Value>(&listed.body).expect("json")
        ["Consumers"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|c| c["Name"].as_str().map(String::from))
        .collect();
    assert_eq!(names, ["orders-worker"]);

    let own = signed_sluice(
        &server,
        OPS,
        "DeleteConsumer",
        serde_json::json!({"Name": "orders-worker"}),
    )
    .await;
    assert_eq!(own.status, 200, "{}", own.body);
    let all = signed_sluice(&server, ADMIN, "ListConsumers", serde_json::json!({})).await;
    assert!(all.body.contains("pay-worker"), "{}", all.body);
    assert!(!all.body.contains("orders-worker"), "{}", all.body);
}
