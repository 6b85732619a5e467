//! Push consumers on several `sluice serve --postgres` nodes over one
//! database: a consumer created at run time through one node is kept in
//! the database, run and listed by every node and outlives them all (rule
//! C9); `max_concurrency` holds across the nodes (rule C14), and a node
//! killed with batches in flight loses nothing; the core delivery cases
//! (rules C2, C11) hold with the consumer running on both nodes. Real
//! binaries on a fresh database of a throwaway PostgreSQL; without its
//! binaries each test says SKIPPED and passes, with
//! SLUICE_REQUIRE_POSTGRES=1 each fails instead.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::{Value, json};
use sluice_core::digest::md5_of_body;
use sluice_postgres::testing;

use crate::alarms::{metrics, sluice};
use crate::common::{RawClient, SluiceProcess, approximate, send_bodies};
use crate::consumers::{Handler, Reply, bodies, until};

/// A fresh database's URL, or `None` without PostgreSQL.
async fn database() -> Option<String> {
    Some(testing::cluster()?.fresh_database().await)
}

/// A node on the database at `url`.
fn node(url: &str) -> SluiceProcess {
    SluiceProcess::start(&["--postgres", url, "--postgres-pool-size", "8"])
}

/// A queue with this visibility timeout (and maybe a redrive policy).
async fn queue(node: &SluiceProcess, name: &str, visibility: u32, redrive: Option<&str>) -> String {
    let mut create = node
        .sdk()
        .create_queue()
        .queue_name(name)
        .attributes(Attr::VisibilityTimeout, visibility.to_string());
    if let Some(r) = redrive {
        create = create.attributes(Attr::RedrivePolicy, r);
    }
    create.send().await.unwrap().queue_url.unwrap()
}

/// Sends `bodies` through `node`, ten at a time.
async fn send_all(node: &SluiceProcess, url: &str, bodies: &[String]) {
    send_bodies(&node.sdk(), url, bodies).await;
}

/// Visible plus in-flight messages of a queue.
async fn remaining(node: &SluiceProcess, url: &str) -> usize {
    crate::common::messages_in(&node.sdk(), url).await
}

/// A sluice action that must succeed.
async fn ok(raw: RawClient, action: &str, body: Value) -> Value {
    let (status, v, r) = sluice(raw, action, body).await;
    assert_eq!(status, 200, "{action}: {}", r.body);
    v
}

/// The consumer `name` as `ListConsumers` on `raw`'s node shows it.
async fn listed(raw: RawClient, name: &str) -> Option<Value> {
    ok(raw, "ListConsumers", json!({}))
        .await
        .get("Consumers")
        .and_then(Value::as_array)
        .and_then(|all| all.iter().find(|c| c["Name"] == name).cloned())
}

/// How many batches `node` delivered for `consumer` (its own metrics).
async fn deliveries(node: &SluiceProcess, consumer: &str) -> u64 {
    let prefix = format!("sluice_consumer_deliveries_total{{consumer=\"{consumer}\"}} ");
    metrics(node.raw())
        .await
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// Every body the handler got, with how many times.
fn delivered_times(handler: &Handler) -> BTreeMap<String, usize> {
    let mut times = BTreeMap::new();
    for body in handler.events().iter().flat_map(bodies) {
        *times.entry(body).or_default() += 1;
    }
    times
}

/// C9, C10: a consumer created through A is listed by B at once and run
/// by B (it delivers with A gone); B's pause and change reach A; both
/// nodes restarted still list and run it, paused and changed as it was
/// left; deleted through one node, it is gone from the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c9_a_run_time_consumer_is_kept_in_the_database_for_every_node() {
    let Some(db) = database().await else {
        return;
    };
    let handler = Handler::start(Arc::new(|_, _| Reply::ok(""))).await;
    let (a, b) = (node(&db), node(&db));
    let jobs = queue(&a, "jobs", 10, None).await;
    ok(
        a.raw(),
        "CreateConsumer",
        json!({"Name": "w", "QueueUrl": jobs, "Url": handler.url,
               "BatchSize": 1, "TimeoutSeconds": 5}),
    )
    .await;
    let on_b = listed(b.raw(), "w").await.expect("B lists A's consumer");
    assert_eq!(
        (&on_b["Source"], &on_b["QueueName"], &on_b["BatchSize"]),
        (&json!("api"), &json!("jobs"), &json!(1))
    );
    let (status, v, _) = sluice(
        b.raw(),
        "CreateConsumer",
        json!({"Name": "w", "QueueUrl": jobs, "Url": handler.url}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(v["message"], "consumer w already exists", "{v}");

    // Paused and changed through B: A follows within its sync.
    ok(b.raw(), "PauseConsumer", json!({"Name": "w"})).await;
    ok(
        b.raw(),
        "UpdateConsumer",
        json!({"Name": "w", "BatchSize": 5}),
    )
    .await;
    assert!(
        until(Duration::from_secs(5), async || {
            listed(a.raw(), "w")
                .await
                .is_some_and(|c| c["State"] == "stopped" && c["BatchSize"] == 5)
        })
        .await,
        "A sees B's pause and change: {:?}",
        listed(a.raw(), "w").await
    );
    send_all(&a, &jobs, &["while paused".to_string()]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(handler.events().is_empty(), "paused on both nodes");

    // Both restarted: still kept, still paused, still changed.
    a.terminate();
    b.terminate();
    let (a, b) = (node(&db), node(&db));
    for n in [&a, &b] {
        let c = listed(n.raw(), "w").await.expect("kept across restarts");
        assert_eq!(
            (&c["State"], &c["BatchSize"]),
            (&json!("stopped"), &json!(5))
        );
    }
    ok(a.raw(), "ResumeConsumer", json!({"Name": "w"})).await;
    assert!(
        until(Duration::from_secs(5), async || delivered_times(&handler)
            .contains_key("while paused"))
        .await,
        "delivered once resumed"
    );

    // B runs it alone once A is gone.
    a.kill_9();
    tokio::time::sleep(Duration::from_secs(2)).await;
    send_all(&b, &jobs, &["through B".to_string()]).await;
    assert!(
        until(Duration::from_secs(10), async || delivered_times(&handler)
            .contains_key("through B"))
        .await,
        "B delivers with A gone"
    );
    assert!(deliveries(&b, "w").await >= 1, "B delivered it");

    // Deleted through a restarted A: gone from B too.
    let a = node(&db);
    ok(a.raw(), "DeleteConsumer", json!({"Name": "w"})).await;
    assert_eq!(listed(b.raw(), "w").await, None, "gone from B");
    let (status, v, _) = sluice(b.raw(), "DeleteConsumer", json!({"Name": "w"})).await;
    assert_eq!(status, 404, "already deleted: {v}");
    assert_eq!(v["message"], "consumer w does not exist");
    let seen = handler.events().len();
    send_all(&b, &jobs, &["after delete".to_string()]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(handler.events().len(), seen, "no node delivers it any more");
}

/// C14: with max_concurrency 2 and the consumer running on two nodes,
/// the handler never has more than 2 batches at once, and has 2 (the
/// limit is not 1); both nodes delivered. Each node alone would take 2.
/// The backlog arrives once both nodes run the consumer, each long-polling
/// the empty queue on one slot (a consumer starts at a limit of 1, rule
/// C7): otherwise the node that started first could hold both slots from
/// batch to batch, and the other would never be seen to deliver.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c14_max_concurrency_holds_across_nodes() {
    let Some(db) = database().await else {
        return;
    };
    let handler = Handler::start(Arc::new(|_, _| Reply {
        delay: Duration::from_millis(400),
        ..Reply::ok("")
    }))
    .await;
    let (a, b) = (node(&db), node(&db));
    let busy = queue(&a, "busy", 30, None).await;
    let sent: Vec<String> = (0..40).map(|i| format!("m{i}")).collect();
    ok(
        a.raw(),
        "CreateConsumer",
        json!({"Name": "busy-worker", "QueueUrl": busy, "Url": handler.url,
               "BatchSize": 1, "MaxConcurrency": 2, "TimeoutSeconds": 5}),
    )
    .await;
    assert!(
        until(Duration::from_secs(10), async || listed(
            b.raw(),
            "busy-worker"
        )
        .await
        .is_some())
        .await,
        "node B runs the consumer"
    );
    // Both poll loops on their first long poll, one slot each.
    tokio::time::sleep(Duration::from_secs(2)).await;
    send_all(&a, &busy, &sent).await;
    assert!(
        until(Duration::from_secs(60), async || remaining(&a, &busy).await
            == 0)
        .await,
        "the backlog was worked off"
    );
    let expected: BTreeMap<String, usize> = sent.into_iter().map(|b| (b, 1)).collect();
    assert_eq!(delivered_times(&handler), expected, "each message once");
    assert_eq!(
        handler
            .most_in_flight
            .load(std::sync::atomic::Ordering::SeqCst),
        2,
        "never more than max_concurrency across both nodes, and that many"
    );
    let (on_a, on_b) = (
        deliveries(&a, "busy-worker").await,
        deliveries(&b, "busy-worker").await,
    );
    assert!(
        on_a > 0 && on_b > 0,
        "both nodes delivered: A {on_a}, B {on_b}"
    );
}

/// C14, C4: a node killed (kill -9) with both of the consumer's slots
/// leased and its batches at the handler loses nothing: the other node
/// delivers the messages again once their visibility timeout has passed
/// and the dead node's leases have run out, and then has both slots (two
/// batches at once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c14_a_node_killed_mid_delivery_loses_nothing_and_frees_its_slots() {
    let Some(db) = database().await else {
        return;
    };
    // The first two deliveries (A's) hang until A is gone; later ones
    // take long enough to overlap.
    let handler = Handler::start(Arc::new(|_, n| Reply {
        delay: if n < 2 {
            Duration::from_secs(30)
        } else {
            Duration::from_millis(1500)
        },
        ..Reply::ok("")
    }))
    .await;
    let a = node(&db);
    let crash = queue(&a, "crash", 5, None).await;
    let sent = ["one".to_string(), "two".to_string()];
    send_all(&a, &crash, &sent).await;
    ok(
        a.raw(),
        "CreateConsumer",
        json!({"Name": "crash-worker", "QueueUrl": crash, "Url": handler.url,
               "BatchSize": 1, "MaxConcurrency": 2, "TimeoutSeconds": 5}),
    )
    .await;
    assert!(
        until(Duration::from_secs(10), async || handler.events().len()
            == 2)
        .await,
        "A has both batches at the handler"
    );
    a.kill_9();
    let b = node(&db);
    assert!(
        until(Duration::from_secs(40), async || handler.events().len()
            >= 4)
        .await,
        "B delivers both messages again: {:?}",
        delivered_times(&handler)
    );
    assert!(
        until(Duration::from_secs(10), async || remaining(&b, &crash)
            .await
            == 0)
        .await,
        "and deletes them"
    );
    let events = handler.events();
    let mut again: Vec<String> = events[2..].iter().flat_map(bodies).collect();
    again.sort();
    assert_eq!(again, ["one", "two"], "each once more, none lost");
    for e in &events[2..] {
        assert_eq!(
            e["Records"][0]["attributes"]["ApproximateReceiveCount"],
            "2"
        );
    }
    assert!(
        handler.overlapping().contains(&(2, 3)),
        "B had both slots at once: A's leases were freed"
    );
}

/// C2 on two nodes: only the item named in batchItemFailures comes back
/// (once, its receive count 2); the others are deleted, the queue ends
/// empty, whichever node delivered which batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c2_partial_failure_on_two_nodes() {
    let Some(db) = database().await else {
        return;
    };
    let failed_once = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handler = Handler::start(Arc::new(move |event, _| {
        let named: Vec<String> = event["Records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["body"] == "b")
            .filter(|_| !failed_once.swap(true, std::sync::atomic::Ordering::SeqCst))
            .map(|r| format!(r#"{{"itemIdentifier":{}}}"#, r["messageId"]))
            .collect();
        Reply::ok(&format!(r#"{{"batchItemFailures":[{}]}}"#, named.join(",")))
    }))
    .await;
    let (a, b) = (node(&db), node(&db));
    let part = queue(&a, "part", 1, None).await;
    send_all(&b, &part, &["a".into(), "b".into(), "c".into()]).await;
    ok(
        a.raw(),
        "CreateConsumer",
        json!({"Name": "part-worker", "QueueUrl": part, "Url": handler.url,
               "TimeoutSeconds": 1, "ReportBatchItemFailures": true}),
    )
    .await;
    assert!(
        until(Duration::from_secs(15), async || remaining(&b, &part).await
            == 0)
        .await,
        "all handled"
    );
    let times = delivered_times(&handler);
    assert_eq!(
        times,
        BTreeMap::from([("a".into(), 1), ("b".into(), 2), ("c".into(), 1)]),
        "only the failed item again"
    );
    let last_b = handler
        .events()
        .iter()
        .flat_map(|e| e["Records"].as_array().unwrap().clone())
        .rfind(|r| r["body"] == "b")
        .unwrap();
    assert_eq!(last_b["attributes"]["ApproximateReceiveCount"], "2");
}

/// C2, C11 on two nodes: a handler answering 500 has the poison message
/// delivered maxReceiveCount (2) times in all, then it is in the
/// dead-letter queue with the last failure's reason, whichever node
/// delivered it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c2_c11_poison_reaches_the_dlq_on_two_nodes() {
    let Some(db) = database().await else {
        return;
    };
    let handler = Handler::start(Arc::new(|_, _| Reply {
        status: 500,
        ..Reply::ok(r#"{"errorMessage":"db down"}"#)
    }))
    .await;
    let (a, b) = (node(&db), node(&db));
    let dlq = queue(&a, "poison-dlq", 30, None).await;
    let redrive = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:poison-dlq","maxReceiveCount":2}"#;
    let poison = queue(&a, "poison", 1, Some(redrive)).await;
    ok(
        b.raw(),
        "CreateConsumer",
        json!({"Name": "poison-worker", "QueueUrl": poison, "Url": handler.url,
               "TimeoutSeconds": 1}),
    )
    .await;
    // Both nodes run it before the message arrives.
    tokio::time::sleep(Duration::from_secs(2)).await;
    send_all(&a, &poison, &["poison".to_string()]).await;
    assert!(
        until(Duration::from_secs(15), async || approximate(
            &a.sdk(),
            &dlq,
            Attr::ApproximateNumberOfMessages
        )
        .await
            == 1)
        .await,
        "dead-lettered"
    );
    let events = handler.events();
    assert_eq!(events.len(), 2, "delivered maxReceiveCount times in all");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(
            e["Records"][0]["attributes"]["ApproximateReceiveCount"],
            (i + 1).to_string()
        );
    }
    assert_eq!(remaining(&a, &poison).await, 0);
    let peek = ok(a.raw(), "PeekMessages", json!({ "QueueUrl": dlq })).await;
    assert_eq!(
        peek["Messages"][0]["FailureReason"],
        "consumer poison-worker: HTTP 500: db down"
    );
}

/// C1, W4 on PostgreSQL, whose engine keeps no body digest: each record's
/// `md5OfBody` is its own body's (lengths around MD5's 64-byte blocks,
/// two-byte characters), with a filter (rule C13) that reads the records
/// before delivery and drops every other message. The node hashes a
/// receive's bodies together; the expected digests are `md5_of_body`'s,
/// one body at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1_w4_each_record_has_its_bodys_digest_on_postgres() {
    let Some(db) = database().await else {
        return;
    };
    let handler = Handler::start(Arc::new(|_, _| Reply::ok(""))).await;
    let a = node(&db);
    let url = queue(&a, "digests", 30, None).await;
    let mut sent: Vec<String> = Vec::new();
    for (i, n) in [1, 54, 55, 56, 63, 64, 65, 119, 120, 1000]
        .into_iter()
        .enumerate()
    {
        let fill = if i % 3 == 0 { "é" } else { "x" };
        sent.push(format!("m{}", fill.repeat(n)));
        sent.push(format!("skip{}", fill.repeat(n)));
    }
    send_all(&a, &url, &sent).await;
    ok(
        a.raw(),
        "CreateConsumer",
        json!({"Name": "digests-worker", "QueueUrl": url, "Url": handler.url,
               "BatchSize": 10, "Filters": [r#"{"body": [{"prefix": "m"}]}"#]}),
    )
    .await;
    assert!(
        until(Duration::from_secs(15), async || remaining(&a, &url).await
            == 0)
        .await,
        "all handled or filtered out"
    );
    let records: Vec<Value> = handler
        .events()
        .iter()
        .flat_map(|e| e["Records"].as_array().unwrap().clone())
        .collect();
    let mut got: Vec<&str> = records
        .iter()
        .map(|r| r["body"].as_str().unwrap())
        .collect();
    got.sort();
    let mut want: Vec<&str> = sent
        .iter()
        .filter(|b| b.starts_with('m'))
        .map(String::as_str)
        .collect();
    want.sort();
    assert_eq!(got, want, "the admitted messages, each once");
    for r in &records {
        let body = r["body"].as_str().unwrap();
        assert_eq!(r["md5OfBody"], md5_of_body(body), "{body:?}");
    }
}
