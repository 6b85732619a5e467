//! The seeds' story end to end, through the official Rust SDK and raw
//! Query requests: a poison message in a batch, the healthy ones processed,
//! the poison one dead-lettered with its reason, the bug fixed, a selective
//! redrive, processed once. Then the retention arithmetic of seed 001 and
//! the retry backoff policy as a client sets it.

use std::collections::BTreeMap;

use aws_sdk_sqs::types::{QueueAttributeName as Attr, SendMessageBatchRequestEntry};
use serde_json::{Value, json};

use crate::common::{TestServer, code, create_queue, xml_values};

const DAY: u64 = 86_400;

/// The consumer of the story: it fails deterministically on bodies with
/// `"amount": -1` until `fixed`, and says why through NackMessage
/// (Permanent: a deterministic error goes straight to the DLQ).
async fn consume(server: &TestServer, queue_url: &str, fixed: bool) -> Vec<String> {
    let sqs = server.sdk();
    let mut processed = Vec::new();
    loop {
        let got = sqs
            .receive_message()
            .queue_url(queue_url)
            .max_number_of_messages(10)
            .message_attribute_names("All")
            .send()
            .await
            .unwrap();
        if got.messages().is_empty() {
            return processed;
        }
        for m in got.messages() {
            let body = m.body().unwrap().to_string();
            let handle = m.receipt_handle().unwrap().to_string();
            if body.contains("\"amount\": -1") && !fixed {
                let raw = server.raw();
                let url = queue_url.to_string();
                let nack = tokio::task::spawn_blocking(move || {
                    raw.json_target(
                        "Sluice.NackMessage",
                        &json!({
                            "QueueUrl": url,
                            "ReceiptHandle": handle,
                            "Reason": "ValueError: amount must be positive",
                            "Permanent": true,
                        })
                        .to_string(),
                    )
                })
                .await
                .unwrap();
                assert_eq!(nack.status, 200, "{}", nack.body);
                continue;
            }
            if let Some(replays) = m
                .message_attributes()
                .and_then(|a| a.get("sluice.replay-count"))
            {
                // An idempotent consumer can tell a replay (rule R8).
                assert_eq!(replays.string_value(), Some("1"));
            }
            sqs.delete_message()
                .queue_url(queue_url)
                .receipt_handle(handle)
                .send()
                .await
                .unwrap();
            processed.push(body);
        }
    }
}

/// R2, R8, X2, X1, X3: the story of seeds 000 and 001.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_seed_story_poison_message_fixed_and_redriven_once() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    create_queue(&sqs, "payments-dlq").await;
    let payments = sqs
        .create_queue()
        .queue_name("payments")
        .attributes(
            Attr::RedrivePolicy,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:payments-dlq","maxReceiveCount":5}"#,
        )
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let entries: Vec<SendMessageBatchRequestEntry> = [10, 20, -1, 30]
        .iter()
        .enumerate()
        .map(|(i, amount)| {
            SendMessageBatchRequestEntry::builder()
                .id(format!("e{i}"))
                .message_body(format!("{{\"order\": {i}, \"amount\": {amount}}}"))
                .build()
                .unwrap()
        })
        .collect();
    let sent = sqs
        .send_message_batch()
        .queue_url(&payments)
        .set_entries(Some(entries))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.successful().len(), 4);
    let poison_id = sent
        .successful()
        .iter()
        .find(|e| e.id() == "e2")
        .unwrap()
        .message_id()
        .to_string();

    // The healthy ones are processed; the poison one is dead-lettered at
    // once with its reason, without burning five receives.
    let mut processed = consume(&server, &payments, false).await;
    processed.sort();
    assert_eq!(processed.len(), 3, "{processed:?}");
    assert!(processed.iter().all(|b| !b.contains("-1")));
    let dlq = server.raw();
    let peek = tokio::task::spawn_blocking(move || {
        dlq.json_target(
            "Sluice.PeekMessages",
            &json!({"QueueUrl": "http://x/000000000000/payments-dlq"}).to_string(),
        )
    })
    .await
    .unwrap();
    let peek: Value = serde_json::from_str(&peek.body).unwrap();
    let dead = peek["Messages"].as_array().unwrap();
    assert_eq!(dead.len(), 1, "{peek}");
    assert_eq!(dead[0]["MessageId"], poison_id.as_str());
    assert_eq!(
        dead[0]["FailureReason"],
        "ValueError: amount must be positive"
    );
    assert_eq!(dead[0]["ReceiveCount"], 1);
    assert_eq!(
        dead[0]["Attributes"]["DeadLetterQueueSourceArn"],
        "arn:aws:sqs:us-east-1:000000000000:payments"
    );

    // The bug is fixed; a selective redrive of what that bug failed,
    // previewed first.
    let raw = server.raw();
    let (dry, real) = tokio::task::spawn_blocking(move || {
        let req = |dry: bool| {
            json!({
                "QueueUrl": "http://x/000000000000/payments-dlq",
                "FailureReasonContains": "amount must be positive",
                "DryRun": dry,
            })
            .to_string()
        };
        (
            raw.json_target("Sluice.RedriveMessages", &req(true)),
            raw.json_target("Sluice.RedriveMessages", &req(false)),
        )
    })
    .await
    .unwrap();
    let dry: Value = serde_json::from_str(&dry.body).unwrap();
    assert_eq!(
        (dry["Moved"].as_u64(), dry["DryRun"].as_bool()),
        (Some(1), Some(true))
    );
    let real: Value = serde_json::from_str(&real.body).unwrap();
    assert_eq!(real["Moved"], 1, "{real}");

    // Processed once, as a replay; nothing left anywhere.
    let replayed = consume(&server, &payments, true).await;
    assert_eq!(replayed, ["{\"order\": 2, \"amount\": -1}"]);
    let dlq_url = format!("{}/000000000000/payments-dlq", server.endpoint);
    for url in [&payments, &dlq_url] {
        let attrs = sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(Attr::All)
            .send()
            .await
            .unwrap();
        let a = attrs.attributes().unwrap();
        for name in [
            Attr::ApproximateNumberOfMessages,
            Attr::ApproximateNumberOfMessagesNotVisible,
        ] {
            assert_eq!(a[&name], "0", "{url} {name:?}");
        }
    }
}

/// R3 (seed 001): a standard DLQ keeps the original enqueue time: a message
/// one day old entering a 4-day DLQ is gone 3 days later, not 4. Through
/// the SDK (JSON) and raw Query requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r3_one_day_in_the_source_three_days_left_in_a_four_day_dlq() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let raw = server.raw();
    let dlq = sqs
        .create_queue()
        .queue_name("dlq")
        .attributes(Attr::MessageRetentionPeriod, (4 * DAY).to_string())
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    // The source through Query, as an older client would.
    let created = tokio::task::spawn_blocking(move || {
        raw.query(
            "/",
            &[
                ("Action", "CreateQueue"),
                ("QueueName", "src"),
                ("Attribute.1.Name", "RedrivePolicy"),
                (
                    "Attribute.1.Value",
                    r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#,
                ),
                ("Attribute.2.Name", "MessageRetentionPeriod"),
                ("Attribute.2.Value", &(7 * DAY).to_string()),
            ],
        )
    })
    .await
    .unwrap();
    assert_eq!(created.status, 200, "{}", created.body);
    let src = xml_values(&created.body, "QueueUrl").remove(0);
    sqs.send_message()
        .queue_url(&src)
        .message_body("late")
        .send()
        .await
        .unwrap();
    sqs.receive_message()
        .queue_url(&src)
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    server.clock.advance_secs(DAY);
    // The receive that would go past maxReceiveCount moves it.
    let got = sqs.receive_message().queue_url(&src).send().await.unwrap();
    assert!(got.messages().is_empty());
    let raw = server.raw();
    let visible = || async move {
        let body = tokio::task::spawn_blocking(move || {
            raw.query(
                "/000000000000/dlq",
                &[
                    ("Action", "GetQueueAttributes"),
                    ("AttributeName.1", "ApproximateNumberOfMessages"),
                ],
            )
            .body
        })
        .await
        .unwrap();
        xml_values(&body, "Value")
    };
    assert_eq!(visible().await, ["1"]);
    server.clock.advance_secs(3 * DAY - 1);
    assert_eq!(visible().await, ["1"], "3 days minus 1 s");
    server.clock.advance_secs(1);
    assert_eq!(visible().await, ["0"], "gone after 3 days");
    let left = sqs.receive_message().queue_url(&dlq).send().await.unwrap();
    assert!(left.messages().is_empty());
}

/// X (retry backoff): the queue attribute set and read through the SDK and
/// Query, its effect on a failing consumer, and a bad document refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_retry_backoff_policy_through_real_clients() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let policy = Attr::from("SluiceRetryBackoff");
    let url = create_queue(&sqs, "flaky").await;
    let err = sqs
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(policy.clone(), r#"{"initialDelaySeconds":0}"#)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&err), "InvalidAttributeValue");
    sqs.set_queue_attributes()
        .queue_url(&url)
        .attributes(
            policy.clone(),
            r#"{"initialDelaySeconds":30,"maxDelaySeconds":600,"jitter":false}"#,
        )
        .attributes(Attr::VisibilityTimeout, "10")
        .send()
        .await
        .unwrap();
    let attrs: BTreeMap<String, String> = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::All)
        .send()
        .await
        .unwrap()
        .attributes()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.clone()))
        .collect();
    assert_eq!(
        attrs["SluiceRetryBackoff"],
        r#"{"initialDelaySeconds":30,"maxDelaySeconds":600,"jitter":false}"#
    );
    let raw = server.raw();
    let query = tokio::task::spawn_blocking(move || {
        raw.query(
            "/000000000000/flaky",
            &[
                ("Action", "GetQueueAttributes"),
                ("AttributeName.1", "SluiceRetryBackoff"),
            ],
        )
    })
    .await
    .unwrap();
    assert_eq!(
        xml_values(&query.body, "Value"),
        [r#"{"initialDelaySeconds":30,"maxDelaySeconds":600,"jitter":false}"#]
    );

    sqs.send_message()
        .queue_url(&url)
        .message_body("fails twice")
        .send()
        .await
        .unwrap();
    let receive = || async {
        sqs.receive_message()
            .queue_url(&url)
            .send()
            .await
            .unwrap()
            .messages()
            .len()
    };
    assert_eq!(receive().await, 1);
    // Second attempt: 10 s visibility + 30 s backoff.
    server.clock.advance_secs(39);
    assert_eq!(receive().await, 0, "still backing off at 39 s");
    server.clock.advance_secs(1);
    assert_eq!(receive().await, 1);
    // Third attempt: 10 s + 60 s.
    server.clock.advance_secs(69);
    assert_eq!(receive().await, 0, "still backing off at 69 s");
    server.clock.advance_secs(1);
    assert_eq!(receive().await, 1);
}

/// Audit (every move to a DLQ and every redrive is recorded): the
/// real binary logs each move with its message id, queues, trigger and
/// reason, and each redrive with the ids it moved, under the
/// `sluice::audit` target that `RUST_LOG=sluice::audit=info` selects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_audit_log_records_every_move_and_redrive() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--in-memory", "--bind", "127.0.0.1:0"])
        .env("RUST_LOG", "warn,sluice::audit=info")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let endpoint = line
        .trim()
        .strip_prefix("sluice listening on ")
        .unwrap()
        .to_string();
    let sqs = crate::common::sdk_client(&endpoint);
    create_queue(&sqs, "audit-dlq").await;
    let src = sqs
        .create_queue()
        .queue_name("audited")
        .attributes(
            Attr::RedrivePolicy,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:audit-dlq","maxReceiveCount":1}"#,
        )
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let mut ids = Vec::new();
    for body in ["overused", "nacked"] {
        let sent = sqs
            .send_message()
            .queue_url(&src)
            .message_body(body)
            .send()
            .await
            .unwrap();
        ids.push(sent.message_id().unwrap().to_string());
    }
    let got = sqs
        .receive_message()
        .queue_url(&src)
        .max_number_of_messages(10)
        .visibility_timeout(30)
        .send()
        .await
        .unwrap();
    let nacked = got
        .messages()
        .iter()
        .find(|m| m.body() == Some("nacked"))
        .unwrap();
    let handle = nacked.receipt_handle().unwrap().to_string();
    let body = json!({"QueueUrl": src, "ReceiptHandle": handle, "Reason": "schema v3 unknown", "Permanent": true});
    let raw = crate::common::RawClient::at(&endpoint);
    let http = |target: &'static str, body: Value| async move {
        tokio::task::spawn_blocking(move || raw.json_target(target, &body.to_string()))
            .await
            .unwrap()
    };
    let nack = http("Sluice.NackMessage", body).await;
    assert_eq!(nack.status, 200, "{}", nack.body);
    let over = got
        .messages()
        .iter()
        .find(|m| m.body() == Some("overused"))
        .unwrap();
    sqs.change_message_visibility()
        .queue_url(&src)
        .receipt_handle(over.receipt_handle().unwrap())
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    // The other one goes past maxReceiveCount on the next receive.
    let got = sqs.receive_message().queue_url(&src).send().await.unwrap();
    assert!(got.messages().is_empty());
    let dlq_url = src.replace("audited", "audit-dlq");
    let redrive = http(
        "Sluice.RedriveMessages",
        json!({"QueueUrl": dlq_url, "BodyContains": "overused"}),
    )
    .await;
    assert_eq!(redrive.status, 200, "{}", redrive.body);
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    child.wait().unwrap();

    let text = std::fs::read_to_string(log.path()).unwrap();
    let audit: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("sluice::audit"))
        .collect();
    let moved = |id: &str| {
        audit
            .iter()
            .find(|l| l.contains("moved message to dead-letter queue") && l.contains(id))
            .unwrap_or_else(|| panic!("no move of {id} in {audit:#?}"))
    };
    let over = moved(&ids[0]);
    assert!(
        over.contains("trigger=\"maxReceiveCount\"")
            && over.contains("dead_letter_queue=audit-dlq"),
        "{over}"
    );
    let nack = moved(&ids[1]);
    assert!(
        nack.contains("trigger=\"permanent nack\"") && nack.contains("schema v3 unknown"),
        "{nack}"
    );
    let redrive = audit
        .iter()
        .find(|l| l.contains("selective redrive"))
        .unwrap_or_else(|| panic!("no redrive in {audit:#?}"));
    assert!(
        redrive.contains("moved=1") && redrive.contains("queue=\"audit-dlq\""),
        "{redrive}"
    );
}
