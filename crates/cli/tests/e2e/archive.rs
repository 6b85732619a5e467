//! Archive before expiry through the real binary (rule X8), on both
//! engines: a queue that keeps what expires is refused on a server without
//! an archive; its messages past retention are found in the archive (in
//! both wire protocols, filtered as PeekMessages filters) and nowhere
//! else; a kill -9 while the archiver works loses none of them; an archive
//! that cannot be written keeps its messages held and counts the failure;
//! a restore sends messages back with their ids and a replay mark. The
//! expected answers are sluice's own rule (no AWS recording covers an
//! extension); the refusal is SQS's error for a bad attribute value.

use std::collections::HashSet;
use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::{Value, json};

use crate::common::{
    RawClient, SluiceProcess, code, messages_in, on_durable, on_postgres, sdk_client, until,
    xml_values,
};

const KEEP: &str = "SluiceArchiveExpired";

/// Messages sent to the archived queue: enough that archiving them takes
/// several passes of the archiver, which the kill -9 interrupts.
const SENT: usize = 1200;

/// X8 on the durable engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x8_expired_messages_are_archived_across_a_kill_and_restored() {
    on_durable(archive_end_to_end).await;
}

/// X8 on a PostgreSQL node. Without PostgreSQL's binaries it says SKIPPED,
/// and fails instead with SLUICE_REQUIRE_POSTGRES=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x8_expired_messages_are_archived_across_a_kill_and_restored_on_postgres() {
    on_postgres(archive_end_to_end).await;
}

/// Calls a `Sluice.<action>` in the JSON protocol; the answer's JSON.
async fn call(raw: &RawClient, action: &str, input: Value) -> (u16, Value) {
    let raw = *raw;
    let target = format!("Sluice.{action}");
    tokio::task::spawn_blocking(move || {
        let r = raw.json_target(&target, &input.to_string());
        let body = serde_json::from_str(&r.body).unwrap_or(Value::String(r.body));
        (r.status, body)
    })
    .await
    .expect("call")
}

/// Every archived message of `queue`, through all pages.
async fn archived(raw: &RawClient, queue: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut input =
            json!({"QueueUrl": format!("http://x/000000000000/{queue}"), "MaxResults": 100});
        if let Some(t) = &token {
            input["NextToken"] = json!(t);
        }
        let (status, page) = call(raw, "ListArchivedMessages", input).await;
        assert_eq!(status, 200, "{page}");
        out.extend(page["Messages"].as_array().cloned().unwrap_or_default());
        match page["NextToken"].as_str() {
            Some(t) => token = Some(t.to_string()),
            None => return out,
        }
    }
}

fn ids(messages: &[Value]) -> HashSet<String> {
    messages
        .iter()
        .filter_map(|m| m["MessageId"].as_str().map(str::to_string))
        .collect()
}

async fn archive_end_to_end(args: &[&str]) {
    let dir = tempfile::tempdir().expect("dir");
    let archive_dir = dir.path().join("archive");

    // Without an archive, a queue cannot keep what expires.
    let server = SluiceProcess::start(args);
    let sqs = sdk_client(&server.endpoint);
    let e = sqs
        .create_queue()
        .queue_name("kept")
        .attributes(Attr::from(KEEP), "true")
        .send()
        .await
        .expect_err("refused");
    assert_eq!(code(&e), "InvalidAttributeValue");
    let plain = sqs
        .create_queue()
        .queue_name("plain")
        .send()
        .await
        .expect("create")
        .queue_url
        .expect("url");
    let e = sqs
        .set_queue_attributes()
        .queue_url(&plain)
        .attributes(Attr::from(KEEP), "true")
        .send()
        .await
        .expect_err("refused");
    assert_eq!(code(&e), "InvalidAttributeValue");
    server.kill_9();

    let mut with_archive: Vec<&str> = args.to_vec();
    with_archive.extend(["--archive-dir", archive_dir.to_str().expect("path")]);
    let server = SluiceProcess::start(&with_archive);
    let sqs = sdk_client(&server.endpoint);
    let mut urls = Vec::new();
    for name in ["kept", "blocked"] {
        let url = sqs
            .create_queue()
            .queue_name(name)
            .attributes(Attr::MessageRetentionPeriod, "60")
            .attributes(Attr::from(KEEP), "true")
            .send()
            .await
            .expect("create")
            .queue_url
            .expect("url");
        urls.push(url);
    }
    let shown = sqs
        .get_queue_attributes()
        .queue_url(&urls[0])
        .attribute_names(Attr::All)
        .send()
        .await
        .expect("attributes");
    assert_eq!(
        shown.attributes().and_then(|a| a.get(&Attr::from(KEEP))),
        Some(&"true".to_string())
    );
    sqs.create_queue()
        .queue_name("target")
        .send()
        .await
        .expect("create target");
    // The blocked queue's archive cannot be written: a file stands where
    // its directory would go.
    std::fs::create_dir_all(&archive_dir).expect("archive dir");
    std::fs::write(archive_dir.join("blocked"), b"in the way").expect("blocker");

    for chunk in 0..SENT / 10 {
        let mut batch = sqs.send_message_batch().queue_url(&urls[0]);
        for i in 0..10 {
            let n = chunk * 10 + i;
            batch = batch.entries(
                aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
                    .id(format!("m{i}"))
                    .message_body(format!("order {n}"))
                    .build()
                    .expect("entry"),
            );
        }
        let out = batch.send().await.expect("send");
        assert!(out.failed().is_empty(), "{:?}", out.failed());
    }
    sqs.send_message()
        .queue_url(&urls[1])
        .message_body("stuck")
        .send()
        .await
        .expect("send blocked");

    // The moment the archive starts to fill, the node is killed.
    let raw = server.raw();
    let started = until(Duration::from_secs(120), async || {
        !archived(&raw, "kept").await.is_empty()
    })
    .await;
    assert!(started, "nothing was archived within two minutes");
    server.kill_9();

    let server = SluiceProcess::start(&with_archive);
    let sqs = sdk_client(&server.endpoint);
    let raw = server.raw();
    let complete = until(Duration::from_secs(60), async || {
        ids(&archived(&raw, "kept").await).len() == SENT
    })
    .await;
    let kept = archived(&raw, "kept").await;
    assert!(
        complete,
        "every expired message is in the archive after the kill: {} of {SENT}",
        ids(&kept).len()
    );
    assert_eq!(
        messages_in(&sqs, &urls[0]).await,
        0,
        "and none in the queue"
    );
    let bodies: HashSet<&str> = kept.iter().filter_map(|m| m["Body"].as_str()).collect();
    assert!(bodies.contains("order 0") && bodies.contains(&*format!("order {}", SENT - 1)));
    assert!(
        kept[0]["ArchivedTimestamp"].as_i64().is_some(),
        "{}",
        kept[0]
    );

    // The blocked queue's message is held (out of its queue, in no
    // archive) and each failed pass is counted, while the other queue's
    // messages went by it.
    assert_eq!(messages_in(&sqs, &urls[1]).await, 0);
    let failures = async || {
        let page = tokio::task::spawn_blocking(move || raw.request("GET", "/metrics", &[], b""))
            .await
            .expect("metrics");
        page.body
            .lines()
            .find_map(|l| l.strip_prefix("sluice_archive_failures_total "))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    assert!(
        until(Duration::from_secs(10), async || failures().await > 0).await,
        "a failed archive pass is counted"
    );
    let metrics_raw = raw;
    let waiting =
        tokio::task::spawn_blocking(move || metrics_raw.request("GET", "/metrics", &[], b"").body)
            .await
            .expect("metrics");
    assert!(
        waiting.contains("sluice_queue_messages_awaiting_archive{queue=\"blocked\"} 1"),
        "{waiting}"
    );
    std::fs::remove_file(archive_dir.join("blocked")).expect("unblock");
    assert!(
        until(Duration::from_secs(10), async || {
            archived(&raw, "blocked").await.len() == 1
        })
        .await,
        "archived once the archive can be written"
    );

    // Both wire protocols list with PeekMessages' filters.
    let (status, one) = call(
        &raw,
        "ListArchivedMessages",
        json!({"QueueUrl": "http://x/000000000000/kept", "BodyContains": "order 7"}),
    )
    .await;
    assert_eq!(status, 200, "{one}");
    let mut seven: Vec<&str> = one["Messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["Body"].as_str())
        .collect();
    seven.sort_unstable();
    seven.dedup();
    assert_eq!(seven.first(), Some(&"order 7"), "{one}");
    let query_raw = raw;
    let xml = tokio::task::spawn_blocking(move || {
        query_raw.query(
            "/000000000000/kept",
            &[
                ("Action", "ListArchivedMessages"),
                ("BodyContains", "order 1199"),
            ],
        )
    })
    .await
    .expect("query");
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert_eq!(xml_values(&xml.body, "Body"), ["order 1199"]);

    // A restore sends a message back with its id and a replay mark.
    let chosen = kept[0]["MessageId"].as_str().expect("id").to_string();
    let (status, restored) = call(
        &raw,
        "RestoreArchivedMessages",
        json!({"QueueUrl": "http://x/000000000000/kept", "MessageIds": [chosen, "nope"]}),
    )
    .await;
    assert_eq!(status, 200, "{restored}");
    assert_eq!(restored["Restored"], 1, "{restored}");
    assert_eq!(restored["NotFound"], json!(["nope"]));
    let back = sqs
        .receive_message()
        .queue_url(&urls[0])
        .message_attribute_names("All")
        .send()
        .await
        .expect("receive");
    assert_eq!(back.messages().len(), 1);
    let m = &back.messages()[0];
    assert_eq!(m.message_id(), Some(chosen.as_str()), "the id is kept");
    let replays = m
        .message_attributes()
        .and_then(|a| a.get("sluice.replay-count"))
        .and_then(|v| v.string_value());
    assert_eq!(replays, Some("1"));

    // The rest go to another queue, the restored one not again.
    let (status, rest) = call(
        &raw,
        "RestoreArchivedMessages",
        json!({
            "QueueUrl": "http://x/000000000000/kept",
            "DestinationQueueUrl": "http://x/000000000000/target",
        }),
    )
    .await;
    assert_eq!(status, 200, "{rest}");
    assert_eq!(rest["Restored"], (SENT - 1) as i64, "{rest}");
    let target = format!("{}/000000000000/target", server.endpoint);
    assert_eq!(messages_in(&sqs, &target).await, SENT - 1);
    let noted = archived(&raw, "kept").await;
    assert!(
        noted
            .iter()
            .all(|m| m["RestoredTimestamp"].as_i64().is_some()),
        "every archived message shows its restore"
    );
}
