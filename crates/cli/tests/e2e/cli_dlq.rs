//! `sluice dlq …` run as the real binary against a server:
//! list, peek, show (X1, X2), redrive (X3, R7), tasks, cancel, export and
//! import (X4), and the errors of bad input.

use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName as Attr};
use serde_json::{Value, json};

use crate::cli_run::sluice;
use crate::common::{TestServer, create_queue};

const DLQ_ARN: &str = "arn:aws:sqs:us-east-1:000000000000:orders-dlq";
const ORDERS_ARN: &str = "arn:aws:sqs:us-east-1:000000000000:orders";

/// A queue whose RedrivePolicy targets orders-dlq (maxReceiveCount 5).
async fn source(sqs: &aws_sdk_sqs::Client, name: &str) -> String {
    sqs.create_queue()
        .queue_name(name)
        .attributes(
            Attr::RedrivePolicy,
            format!(r#"{{"deadLetterTargetArn":"{DLQ_ARN}","maxReceiveCount":5}}"#),
        )
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap()
}

/// Sends `body` (with a `tenant` attribute), receives it and nacks it
/// permanently with `reason`: it lands in orders-dlq with its provenance.
async fn dead_letter(server: &TestServer, queue: &str, body: &str, reason: &str) {
    let sqs = server.sdk();
    sqs.send_message()
        .queue_url(queue)
        .message_body(body)
        .message_attributes(
            "tenant",
            MessageAttributeValue::builder()
                .data_type("String")
                .string_value(if body.contains('1') { "acme" } else { "globex" })
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let got = sqs.receive_message().queue_url(queue).send().await.unwrap();
    let handle = got.messages()[0].receipt_handle().unwrap().to_string();
    let raw = server.raw();
    let nack =
        json!({"QueueUrl": queue, "ReceiptHandle": handle, "Permanent": true, "Reason": reason})
            .to_string();
    let r = tokio::task::spawn_blocking(move || raw.json_target("Sluice.NackMessage", &nack))
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
}

/// orders-dlq (14 days) behind orders and payments, holding three
/// dead-lettered orders (two bad JSON, one timeout) and one payment.
async fn dlq_with_failures(server: &TestServer) -> (String, String, String) {
    let sqs = server.sdk();
    let dlq = sqs
        .create_queue()
        .queue_name("orders-dlq")
        .attributes(Attr::MessageRetentionPeriod, "1209600")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let orders = source(&sqs, "orders").await;
    let payments = source(&sqs, "payments").await;
    dead_letter(server, &orders, "order 1 {bad", "invalid JSON in body").await;
    dead_letter(server, &orders, "order 2 {bad", "invalid JSON in body").await;
    dead_letter(server, &orders, "order 3", "timeout calling inventory").await;
    dead_letter(server, &payments, "payment 1", "card declined").await;
    (dlq, orders, payments)
}

async fn visible(sqs: &aws_sdk_sqs::Client, url: &str) -> u64 {
    let a = sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(Attr::ApproximateNumberOfMessages)
        .send()
        .await
        .unwrap();
    a.attributes().unwrap()[&Attr::ApproximateNumberOfMessages]
        .parse()
        .unwrap()
}

fn ids(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["MessageId"].as_str().unwrap().to_string())
        .collect()
}

/// X1, X2, R6: `dlq list` finds the DLQ from the redrive policies, with its
/// depth, retention and sources; `dlq peek` filters without receiving;
/// `dlq show` gives one message's provenance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x1_x2_dlq_list_peek_and_show() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let (dlq, _, _) = dlq_with_failures(&server).await;
    create_queue(&sqs, "unrelated").await;
    let ep = &server.endpoint;

    let list = sluice(ep, &["dlq", "list", "--json"])
        .await
        .expect_code(0)
        .json();
    let dlqs = list["DeadLetterQueues"].as_array().unwrap();
    assert_eq!(dlqs.len(), 1, "{list}");
    let d = &dlqs[0];
    assert_eq!(d["Name"], "orders-dlq");
    assert_eq!(d["Visible"], 4);
    assert_eq!(d["InFlight"], 0);
    assert_eq!(d["RetentionSeconds"], 1_209_600);
    assert!(d["OldestMessageAgeSeconds"].is_number(), "{d}");
    let sources: Vec<&str> = d["Sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["Name"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["orders", "payments"]);
    assert_eq!(d["Sources"][0]["MaxReceiveCount"], 5);
    let table = sluice(ep, &["dlq", "list"]).await.expect_code(0);
    assert!(
        table.stdout.contains("orders (5), payments (5)"),
        "{}",
        table.stdout
    );

    let peek = |args: &'static [&'static str]| {
        let mut all = vec!["dlq", "peek", "orders-dlq", "--json"];
        all.extend_from_slice(args);
        async move { sluice(ep, &all).await.expect_code(0).json()["Messages"].clone() }
    };
    assert_eq!(peek(&["--all"]).await.as_array().unwrap().len(), 4);
    assert_eq!(peek(&["--limit", "3"]).await.as_array().unwrap().len(), 3);
    let json_failures = peek(&["--reason", "JSON"]).await;
    assert_eq!(json_failures.as_array().unwrap().len(), 2);
    assert!(
        json_failures[0]["Body"]
            .as_str()
            .unwrap()
            .starts_with("order 1")
    );
    let from_payments = peek(&["--source", "payments"]).await;
    assert_eq!(from_payments[0]["Body"], "payment 1");
    assert_eq!(from_payments.as_array().unwrap().len(), 1);
    let acme = peek(&["--attribute", "tenant=acme"]).await;
    assert_eq!(
        acme.as_array().unwrap().len(),
        2,
        "order 1 and payment 1: {acme}"
    );
    let body = peek(&["--body-contains", "order 3"]).await;
    assert_eq!(body[0]["FailureReason"], "timeout calling inventory");
    // The test server's clock stands at 2026-01-01T00:00:00Z.
    let later = peek(&["--since", "2026-01-01T00:00:01Z"]).await;
    assert_eq!(later.as_array().unwrap().len(), 0);
    let ago = peek(&["--until", "2h"]).await;
    assert_eq!(
        ago.as_array().unwrap().len(),
        4,
        "sent long before 2 hours ago"
    );
    let window = peek(&["--since", "2025-12-31", "--until", "2026-01-02"]).await;
    assert_eq!(window.as_array().unwrap().len(), 4);
    // Peeking received nothing: the receive counts are those of the source.
    let all = peek(&["--all"]).await;
    assert!(
        all.as_array()
            .unwrap()
            .iter()
            .all(|m| m["ReceiveCount"] == 1 && m["State"] == "visible")
    );
    assert_eq!(visible(&sqs, &dlq).await, 4);

    let id = json_failures[1]["MessageId"].as_str().unwrap();
    let show = sluice(ep, &["dlq", "show", "orders-dlq", id, "--json"])
        .await
        .expect_code(0)
        .json();
    assert_eq!(show["Message"]["Body"], "order 2 {bad");
    let p = &show["Provenance"];
    assert_eq!(p["SourceQueueArn"], ORDERS_ARN);
    assert_eq!(p["LastFailureReason"], "invalid JSON in body");
    assert_eq!(p["ReceiveCount"], 1);
    assert_eq!(p["ReplayCount"], 0);
    assert!(p["MovedAt"].as_u64().unwrap() > 0, "{p}");
    assert!(p["FirstReceiveAt"].as_u64().unwrap() > 0, "{p}");
    let text = sluice(ep, &["dlq", "show", "orders-dlq", id])
        .await
        .expect_code(0);
    for expected in [
        "Source queue          orders",
        "invalid JSON in body",
        "order 2 {bad",
        "tenant (String): globex",
    ] {
        assert!(
            text.stdout.contains(expected),
            "{expected:?} in {}",
            text.stdout
        );
    }
}

/// Bad input: an unknown queue is the SQS error, a bad filter a usage
/// error, an unknown message id a clear error; all exit non-zero.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dlq_bad_input_is_a_clear_error() {
    let server = TestServer::start().await;
    create_queue(&server.sdk(), "orders-dlq").await;
    let ep = &server.endpoint;
    let r = sluice(ep, &["dlq", "peek", "nope"]).await.expect_code(1);
    assert!(r.stderr.starts_with("error: QueueDoesNotExist: "), "{r:?}");
    let r = sluice(ep, &["dlq", "redrive", "orders-dlq", "--to", "nope"])
        .await
        .expect_code(1);
    assert!(r.stderr.contains("QueueDoesNotExist"), "{r:?}");
    let r = sluice(ep, &["dlq", "peek", "orders-dlq", "--since", "yesterday"])
        .await
        .expect_code(2);
    assert!(r.stderr.contains("--since"), "{r:?}");
    let r = sluice(ep, &["dlq", "peek", "orders-dlq", "--attribute", "tenant"])
        .await
        .expect_code(2);
    assert!(r.stderr.contains("NAME=VALUE"), "{r:?}");
    let r = sluice(
        ep,
        &[
            "dlq",
            "peek",
            "orders-dlq",
            "--since",
            "1h",
            "--until",
            "2h",
        ],
    )
    .await
    .expect_code(1);
    assert!(r.stderr.contains("--since must be before --until"), "{r:?}");
    let r = sluice(ep, &["dlq", "show", "orders-dlq", "no-such-id"])
        .await
        .expect_code(1);
    assert!(r.stderr.contains("MessageNotFound"), "{r:?}");
    let r = sluice(
        ep,
        &["dlq", "redrive", "orders-dlq", "--task", "--reason", "x"],
    )
    .await
    .expect_code(1);
    assert!(r.stderr.contains("no filters"), "{r:?}");
    let r = sluice(ep, &["dlq", "cancel", "not-a-handle"]).await;
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.starts_with("error: "), "{r:?}");
    let r = sluice("http://127.0.0.1:1", &["dlq", "list"])
        .await
        .expect_code(1);
    assert!(
        r.stderr
            .contains("cannot reach the server at http://127.0.0.1:1"),
        "{r:?}"
    );
}

/// X3: a dry run shows what would move and moves nothing; the redrive moves
/// only the matching messages back to their source, marked as replays; a
/// message over the replay limit is refused, with its id and why; --to
/// picks the destination; --rate moves in steps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x3_dlq_redrive_selective_dry_run_refusal_destination_and_rate() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let (dlq, orders, payments) = dlq_with_failures(&server).await;
    let ep = &server.endpoint;

    let dry = sluice(
        ep,
        &[
            "dlq",
            "redrive",
            "orders-dlq",
            "--reason",
            "JSON",
            "--dry-run",
            "--json",
        ],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(dry["DryRun"], true);
    assert_eq!(dry["Moved"], 2);
    assert_eq!(dry["MessageIds"].as_array().unwrap().len(), 2);
    assert_eq!(visible(&sqs, &dlq).await, 4, "a dry run moves nothing");
    assert_eq!(visible(&sqs, &orders).await, 0);

    let moved = sluice(
        ep,
        &["dlq", "redrive", "orders-dlq", "--reason", "JSON", "--json"],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(moved["Moved"], 2);
    assert_eq!(moved["MessageIds"], dry["MessageIds"]);
    assert_eq!(moved["Refused"], 0);
    assert_eq!(visible(&sqs, &dlq).await, 2);
    let back = sluice(ep, &["dlq", "peek", "orders", "--json"])
        .await
        .expect_code(0)
        .json();
    let back = back["Messages"].as_array().unwrap();
    assert_eq!(back.len(), 2);
    for m in back {
        assert!(m["Body"].as_str().unwrap().contains("{bad"));
        assert_eq!(
            m["MessageAttributes"]["sluice.replay-count"]["StringValue"],
            "1"
        );
    }

    // They fail again: with --max-replays 1 the redrive refuses them.
    for _ in 0..2 {
        let got = sqs
            .receive_message()
            .queue_url(&orders)
            .send()
            .await
            .unwrap();
        let handle = got.messages()[0].receipt_handle().unwrap().to_string();
        let raw = server.raw();
        let nack = json!({"QueueUrl": orders, "ReceiptHandle": handle, "Permanent": true, "Reason": "invalid JSON in body"}).to_string();
        tokio::task::spawn_blocking(move || raw.json_target("Sluice.NackMessage", &nack))
            .await
            .unwrap();
    }
    let refused = sluice(
        ep,
        &[
            "dlq",
            "redrive",
            "orders-dlq",
            "--reason",
            "JSON",
            "--max-replays",
            "1",
            "--json",
        ],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(refused["Moved"], 0);
    assert_eq!(refused["Refused"], 2);
    let refused_ids: Vec<&str> = refused["RefusedMessages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["ReplayCount"], 1);
            assert!(
                r["Reason"]
                    .as_str()
                    .unwrap()
                    .contains("already replayed 1 times")
            );
            r["MessageId"].as_str().unwrap()
        })
        .collect();
    let in_dlq = sluice(
        ep,
        &["dlq", "peek", "orders-dlq", "--reason", "JSON", "--json"],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(refused_ids, ids(&in_dlq["Messages"]));
    let text = sluice(
        ep,
        &[
            "dlq",
            "redrive",
            "orders-dlq",
            "--reason",
            "JSON",
            "--max-replays",
            "1",
        ],
    )
    .await
    .expect_code(0);
    assert!(
        text.stdout.contains("refused 2 message(s)"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains(refused_ids[0]), "{}", text.stdout);

    // --to: the payment goes to orders, not back to payments.
    let to = sluice(
        ep,
        &[
            "dlq",
            "redrive",
            "orders-dlq",
            "--source",
            "payments",
            "--to",
            "orders",
            "--json",
        ],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(to["Moved"], 1);
    assert_eq!(to["DestinationArn"], ORDERS_ARN);
    assert_eq!(visible(&sqs, &payments).await, 0);
    assert_eq!(visible(&sqs, &orders).await, 1);

    // --rate 1: two of the remaining three (replayed once at most, under the
    // default limit of 3) move one a second, in steps.
    let rated = sluice(
        ep,
        &[
            "dlq",
            "redrive",
            "orders-dlq",
            "--rate",
            "1",
            "--max",
            "2",
            "--json",
        ],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(rated["Moved"], 2);
    assert_eq!(rated["Steps"], 2, "{rated}");
    assert_eq!(visible(&sqs, &dlq).await, 1);
}

/// R7: `--task` starts a message move task; `dlq tasks` lists it with its
/// handle while it runs; `dlq cancel` stops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_dlq_redrive_task_then_tasks_and_cancel() {
    let server = TestServer::start().await;
    let (_, _, _) = dlq_with_failures(&server).await;
    let ep = &server.endpoint;
    let started = sluice(
        ep,
        &[
            "dlq",
            "redrive",
            "orders-dlq",
            "--task",
            "--rate",
            "1",
            "--json",
        ],
    )
    .await
    .expect_code(0)
    .json();
    let handle = started["TaskHandle"].as_str().unwrap().to_string();
    assert!(!handle.is_empty());
    let tasks = sluice(ep, &["dlq", "tasks", "--json"])
        .await
        .expect_code(0)
        .json();
    let t = &tasks["Tasks"][0];
    assert_eq!(t["Status"], "RUNNING", "{tasks}");
    assert_eq!(t["TaskHandle"], handle.as_str());
    assert_eq!(t["SourceArn"], DLQ_ARN);
    assert_eq!(t["ApproximateNumberOfMessagesToMove"], 4);
    let text = sluice(ep, &["dlq", "tasks", "orders-dlq"])
        .await
        .expect_code(0);
    assert!(
        text.stdout.contains("RUNNING") && text.stdout.contains(&handle),
        "{}",
        text.stdout
    );
    sluice(ep, &["dlq", "cancel", &handle, "--json"])
        .await
        .expect_code(0);
    let after = sluice(ep, &["dlq", "tasks", "orders-dlq", "--json"])
        .await
        .expect_code(0)
        .json();
    let status = after["Tasks"][0]["Status"].as_str().unwrap();
    assert!(status == "CANCELLING" || status == "CANCELLED", "{after}");
    let again = sluice(ep, &["dlq", "cancel", &handle]).await;
    assert_eq!(
        again.code, 1,
        "a task no longer running cannot be cancelled: {again:?}"
    );
}

/// Messages with a binary attribute, a non-ASCII multi-line body and
/// several attribute types.
async fn tricky_messages(server: &TestServer, queue: &str, fifo: bool) {
    let sqs = server.sdk();
    let bodies = [
        "¡Hola, señor! 你好 🚀\nsecond line",
        "{\"plain\": true}",
        "tab\tand \"quotes\"",
    ];
    for (i, body) in bodies.iter().enumerate() {
        let mut send = sqs
            .send_message()
            .queue_url(queue)
            .message_body(*body)
            .message_attributes(
                "blob",
                MessageAttributeValue::builder()
                    .data_type("Binary")
                    .binary_value(aws_sdk_sqs::primitives::Blob::new(vec![
                        0u8, 1, 2, 255, i as u8,
                    ]))
                    .build()
                    .unwrap(),
            )
            .message_attributes(
                "amount",
                MessageAttributeValue::builder()
                    .data_type("Number.EUR")
                    .string_value(format!("{i}.50"))
                    .build()
                    .unwrap(),
            )
            .message_attributes(
                "city",
                MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value("Zürich")
                    .build()
                    .unwrap(),
            );
        if fifo {
            send = send
                .message_group_id(format!("group-{}", i % 2))
                .message_deduplication_id(format!("dedup-{i}"));
        }
        send.send().await.unwrap();
    }
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// X4: export writes JSON Lines without receiving anything; import sends
/// them to another queue; a second export has the same bodies and
/// attributes, byte for byte (binary attribute and non-ASCII body included).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x4_export_import_round_trip_is_lossless() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let archive = create_queue(&sqs, "archive").await;
    let copy = create_queue(&sqs, "copy").await;
    tricky_messages(&server, &archive, false).await;
    // One in flight: export shows it too and leaves it in flight.
    sqs.receive_message()
        .queue_url(&archive)
        .send()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("archive.jsonl");
    let first_s = first.to_str().unwrap();
    let ep = &server.endpoint;

    let r = sluice(ep, &["dlq", "export", "archive", "--out", first_s])
        .await
        .expect_code(0);
    assert!(r.stderr.contains("exported 3 message(s)"), "{r:?}");
    let exported = lines(&std::fs::read_to_string(&first).unwrap());
    assert_eq!(exported.len(), 3);
    let receive_counts: Vec<&Value> = exported.iter().map(|m| &m["ReceiveCount"]).collect();
    assert_eq!(receive_counts, [&json!(1), &json!(0), &json!(0)]);
    assert_eq!(
        exported[0]["MessageAttributes"]["blob"]["DataType"],
        "Binary"
    );
    assert_eq!(
        exported[0]["MessageAttributes"]["blob"]["BinaryValue"],
        "AAEC/wA="
    );
    let again = sluice(ep, &["dlq", "export", "archive"])
        .await
        .expect_code(0);
    let again = lines(&again.stdout);
    assert_eq!(
        again.iter().map(|m| &m["ReceiveCount"]).collect::<Vec<_>>(),
        receive_counts,
        "exporting received nothing"
    );

    let imported = sluice(ep, &["dlq", "import", "copy", "--in", first_s, "--json"])
        .await
        .expect_code(0)
        .json();
    assert_eq!(imported["Sent"], 3);
    assert_eq!(imported["Failed"], json!([]));
    let second = sluice(ep, &["dlq", "export", "copy"]).await.expect_code(0);
    let second = lines(&second.stdout);
    assert_eq!(second.len(), 3);
    for (a, b) in exported.iter().zip(&second) {
        assert_eq!(a["Body"], b["Body"]);
        assert_eq!(a["MD5OfBody"], b["MD5OfBody"]);
        assert_eq!(a["MessageAttributes"], b["MessageAttributes"]);
        assert_ne!(a["MessageId"], b["MessageId"]);
    }
    assert_eq!(visible(&sqs, &copy).await, 3);
}

/// X4, F1: a FIFO queue's export keeps the group ids, and the import into
/// another FIFO queue keeps them (dedup ids default to the original ids, so
/// importing the same file twice adds nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x4_fifo_export_import_keeps_groups() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let mut urls = Vec::new();
    for name in ["events.fifo", "replay.fifo"] {
        urls.push(
            sqs.create_queue()
                .queue_name(name)
                .attributes(Attr::FifoQueue, "true")
                .send()
                .await
                .unwrap()
                .queue_url
                .unwrap(),
        );
    }
    tricky_messages(&server, &urls[0], true).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.jsonl");
    let file_s = file.to_str().unwrap();
    let ep = &server.endpoint;
    sluice(ep, &["dlq", "export", "events.fifo", "--out", file_s])
        .await
        .expect_code(0);
    let exported = lines(&std::fs::read_to_string(&file).unwrap());
    let table = sluice(ep, &["dlq", "peek", "events.fifo"])
        .await
        .expect_code(0);
    assert!(
        table.stdout.lines().next().unwrap().contains("GROUP"),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains("group-1"), "{}", table.stdout);
    let groups: Vec<&Value> = exported.iter().map(|m| &m["MessageGroupId"]).collect();
    assert_eq!(
        groups,
        [&json!("group-0"), &json!("group-1"), &json!("group-0")]
    );
    for _ in 0..2 {
        let r = sluice(
            ep,
            &["dlq", "import", "replay.fifo", "--in", file_s, "--json"],
        )
        .await
        .expect_code(0)
        .json();
        assert_eq!(r["Sent"], 3);
    }
    let replay = sluice(ep, &["dlq", "export", "replay.fifo"])
        .await
        .expect_code(0);
    let replay = lines(&replay.stdout);
    assert_eq!(replay.len(), 3, "the second import was deduplicated");
    for (a, b) in exported.iter().zip(&replay) {
        assert_eq!(a["MessageGroupId"], b["MessageGroupId"]);
        assert_eq!(a["Body"], b["Body"]);
        assert_eq!(a["MessageAttributes"], b["MessageAttributes"]);
    }
}

/// X4: a bad file is refused before anything is sent, naming the line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x4_import_refuses_a_bad_file_and_sends_nothing() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let q = create_queue(&sqs, "copy").await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.jsonl");
    std::fs::write(&file, "{\"Body\":\"fine\"}\n\nnot json\n").unwrap();
    let r = sluice(
        &server.endpoint,
        &["dlq", "import", "copy", "--in", file.to_str().unwrap()],
    )
    .await
    .expect_code(1);
    assert!(r.stderr.contains("line 3: not JSON"), "{r:?}");
    assert_eq!(visible(&sqs, &q).await, 0);
    let r = sluice(
        &server.endpoint,
        &["dlq", "import", "copy", "--in", "/no/such/file"],
    )
    .await
    .expect_code(1);
    assert!(r.stderr.contains("cannot read /no/such/file"), "{r:?}");
}
