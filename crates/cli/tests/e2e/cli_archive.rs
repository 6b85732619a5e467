//! `sluice dlq archive list|show|restore` through the real binary (rule
//! X8): messages that reach their retention on a queue with
//! SluiceArchiveExpired=true are listed, filtered, shown whole, restored
//! with their message ids and a replay mark (to their queue or another,
//! never twice without --id), and still listed once their queue is gone.
//! ListArchivedMessages and RestoreArchivedMessages are sluice's own
//! actions: no AWS recording covers them, the expected answers are
//! sluice's rule X8. Retention is at least 60 s in real time, so this test
//! takes about a minute.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName as Attr};
use serde_json::Value;

use crate::cli_run::sluice;
use crate::common::{SluiceProcess, sdk_client};

/// The queue whose expired messages are archived.
const QUEUE: &str = "archived-orders";

/// Message ids of a `--json` list.
fn ids(listed: &Value) -> BTreeSet<String> {
    listed["Messages"]
        .as_array()
        .expect("Messages")
        .iter()
        .map(|m| m["MessageId"].as_str().expect("MessageId").to_string())
        .collect()
}

/// The archived message with this body in a `--json` list.
fn by_body<'a>(listed: &'a Value, body: &str) -> &'a Value {
    listed["Messages"]
        .as_array()
        .expect("Messages")
        .iter()
        .find(|m| m["Body"] == body)
        .unwrap_or_else(|| panic!("no {body} in {listed}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x8_dlq_archive_list_show_and_restore() {
    let dir = tempfile::tempdir().expect("dir");
    let archive = dir.path().join("archive");
    let server = SluiceProcess::start(&[
        "--in-memory",
        "--archive-dir",
        archive.to_str().expect("path"),
    ]);
    let endpoint = server.endpoint.clone();
    let sqs = sdk_client(&endpoint);
    let url = sqs
        .create_queue()
        .queue_name(QUEUE)
        .attributes(Attr::MessageRetentionPeriod, "60")
        .attributes(Attr::from("SluiceArchiveExpired"), "true")
        .send()
        .await
        .expect("create")
        .queue_url
        .expect("url");
    let other = sqs
        .create_queue()
        .queue_name("other-queue")
        .send()
        .await
        .expect("create other")
        .queue_url
        .expect("url");
    let tenant = MessageAttributeValue::builder()
        .data_type("String")
        .string_value("acme")
        .build()
        .expect("attribute");
    let mut sent = BTreeSet::new();
    for body in ["alpha-1", "beta-2", "gamma-3"] {
        let mut send = sqs.send_message().queue_url(&url).message_body(body);
        if body == "alpha-1" {
            send = send.message_attributes("tenant", tenant.clone());
        }
        let id = send.send().await.expect("send").message_id.expect("id");
        sent.insert(id);
    }

    // Archived once past their 60 s retention (the archiver looks every second).
    let started = Instant::now();
    let listed = loop {
        let run = sluice(&endpoint, &["dlq", "archive", "list", QUEUE, "--json"]).await;
        let listed = run.expect_code(0).json();
        if ids(&listed) == sent {
            break listed;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "not all archived after 90 s: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let alpha = by_body(&listed, "alpha-1");
    let alpha_id = alpha["MessageId"].as_str().expect("id").to_string();
    assert_eq!(alpha["MessageAttributes"]["tenant"]["StringValue"], "acme");
    assert!(alpha["ArchivedTimestamp"].as_i64().is_some(), "{alpha}");
    assert!(alpha.get("RestoredTimestamp").is_none(), "{alpha}");

    // The table names every message, not yet restored.
    let table = sluice(&endpoint, &["dlq", "archive", "list", QUEUE])
        .await
        .expect_code(0)
        .stdout;
    for id in &sent {
        assert!(table.contains(id.as_str()), "{id} in\n{table}");
    }
    assert!(
        table.contains("ARCHIVED") && table.contains("RESTORED"),
        "{table}"
    );

    // The filters are PeekMessages's.
    let narrowed = sluice(
        &endpoint,
        &[
            "dlq",
            "archive",
            "list",
            QUEUE,
            "--body-contains",
            "beta",
            "--json",
        ],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(narrowed["Messages"].as_array().expect("list").len(), 1);
    assert_eq!(narrowed["Messages"][0]["Body"], "beta-2");
    let by_attribute = sluice(
        &endpoint,
        &[
            "dlq",
            "archive",
            "list",
            QUEUE,
            "--attribute",
            "tenant=acme",
            "--json",
        ],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(ids(&by_attribute), BTreeSet::from([alpha_id.clone()]));

    // One message whole; an unknown one is a clear error.
    let shown = sluice(&endpoint, &["dlq", "archive", "show", QUEUE, &alpha_id])
        .await
        .expect_code(0)
        .stdout;
    assert!(shown.contains("alpha-1"), "{shown}");
    assert!(shown.contains("tenant (String): acme"), "{shown}");
    assert!(shown.contains("Restored              never"), "{shown}");
    let shown_json = sluice(
        &endpoint,
        &["dlq", "archive", "show", QUEUE, &alpha_id, "--json"],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(shown_json["Message"]["Body"], "alpha-1");
    assert!(
        shown_json["Provenance"]["ArchivedAt"].as_u64().is_some(),
        "{shown_json}"
    );
    // The dead-letter provenance sits beside the archive's times, not
    // under a key of its own; never restored, never replayed.
    assert_eq!(shown_json["Provenance"]["ReplayCount"], 0, "{shown_json}");
    assert!(
        shown_json["Provenance"].get("DeadLetter").is_none(),
        "{shown_json}"
    );
    assert!(shown.contains("Replay count          0"), "{shown}");
    let missing = sluice(&endpoint, &["dlq", "archive", "show", QUEUE, "nope"])
        .await
        .expect_code(1);
    assert!(missing.stderr.contains("MessageNotFound"), "{missing:?}");

    // A restore by id: the unknown id is reported, and the exit code says so.
    let restored = sluice(
        &endpoint,
        &[
            "dlq", "archive", "restore", QUEUE, "--id", &alpha_id, "--id", "nope",
        ],
    )
    .await
    .expect_code(1);
    assert!(
        restored.stdout.contains("restored 1 message(s)"),
        "{restored:?}"
    );
    assert!(restored.stdout.contains(alpha_id.as_str()), "{restored:?}");
    assert!(
        restored.stdout.contains("not found") && restored.stdout.contains("nope"),
        "{restored:?}"
    );
    let back = sqs
        .receive_message()
        .queue_url(&url)
        .message_attribute_names("All")
        .max_number_of_messages(10)
        .wait_time_seconds(5)
        .send()
        .await
        .expect("receive");
    let messages = back.messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let m = &messages[0];
    assert_eq!(m.message_id(), Some(alpha_id.as_str()));
    assert_eq!(m.body(), Some("alpha-1"));
    let attributes = m.message_attributes().expect("attributes");
    assert_eq!(
        attributes["sluice.replay-count"].string_value(),
        Some("1"),
        "{attributes:?}"
    );
    assert_eq!(attributes["tenant"].string_value(), Some("acme"));

    // Without --id: the ones never restored, elsewhere.
    let rest = sluice(
        &endpoint,
        &[
            "dlq",
            "archive",
            "restore",
            QUEUE,
            "--to",
            "other-queue",
            "--json",
        ],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(rest["Restored"], 2, "{rest}");
    let rest_ids: BTreeSet<String> = rest["MessageIds"]
        .as_array()
        .expect("MessageIds")
        .iter()
        .map(|v| v.as_str().expect("id").to_string())
        .collect();
    let mut others = sent.clone();
    others.remove(&alpha_id);
    assert_eq!(rest_ids, others);
    let moved = sqs
        .receive_message()
        .queue_url(&other)
        .max_number_of_messages(10)
        .wait_time_seconds(5)
        .send()
        .await
        .expect("receive other");
    let moved_ids: BTreeSet<String> = (moved.messages().iter())
        .filter_map(|m| m.message_id().map(str::to_string))
        .collect();
    assert_eq!(moved_ids, others);

    // Every one now has a restore time.
    let after = sluice(&endpoint, &["dlq", "archive", "list", QUEUE, "--json"])
        .await
        .expect_code(0)
        .json();
    for m in after["Messages"].as_array().expect("list") {
        assert!(m["RestoredTimestamp"].as_i64().is_some(), "{m}");
    }
    let table = sluice(&endpoint, &["dlq", "archive", "list", QUEUE])
        .await
        .expect_code(0)
        .stdout;
    for id in &sent {
        let row = (table.lines())
            .find(|l| l.contains(id.as_str()))
            .unwrap_or_else(|| panic!("{id} in\n{table}"));
        // Sent, archived and restored: three times of two colons each.
        assert_eq!(row.matches(':').count(), 6, "{row}");
    }

    // The archive outlives its queue: listed by name once it is deleted.
    sqs.delete_queue()
        .queue_url(&url)
        .send()
        .await
        .expect("delete");
    let gone = sluice(&endpoint, &["dlq", "archive", "list", QUEUE, "--json"])
        .await
        .expect_code(0)
        .json();
    assert_eq!(ids(&gone), sent);
}
