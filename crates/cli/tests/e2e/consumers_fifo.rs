//! Push consumers on FIFO queues (rule C3): one batch in flight per
//! message group, each group in order, and a failed item holding back the
//! rest of its group, through a real HTTP handler.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName;
use serde_json::Value;
use sluice_consumers as consumers;

use crate::common::TestServer;
use crate::consumers::{Handler, Reply, remaining, spec, start, until};

/// The message groups of an event's records.
fn groups(event: &Value) -> BTreeSet<String> {
    records(event).map(|(group, _, _)| group).collect()
}

/// (group, body, message id) of each record, in the event's order.
fn records(event: &Value) -> impl Iterator<Item = (String, String, String)> + '_ {
    event["Records"].as_array().unwrap().iter().map(|r| {
        let text = |v: &Value| v.as_str().unwrap().to_string();
        (
            text(&r["attributes"]["MessageGroupId"]),
            text(&r["body"]),
            text(&r["messageId"]),
        )
    })
}

async fn fifo_queue(server: &TestServer, name: &str) -> String {
    server
        .sdk()
        .create_queue()
        .queue_name(name)
        .attributes(QueueAttributeName::FifoQueue, "true")
        .attributes(QueueAttributeName::ContentBasedDeduplication, "true")
        .attributes(QueueAttributeName::VisibilityTimeout, "1")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap()
}

/// C3: the handler fails `a2` once and names only it; sluice holds back
/// `a3` and `a4` (later in the same batch and group) while `a1` and group
/// B succeed. Every message is then handled exactly once, each group in
/// send order; batches of one group are never in flight together, while
/// the two groups' batches do run at the same time.
#[tokio::test]
async fn c3_fifo_groups_in_order_and_a_failure_holds_back_its_group() {
    let server = TestServer::start_real_time().await;
    let url = fifo_queue(&server, "orders.fifo").await;
    let sqs = server.sdk();
    for (group, body) in [
        ("A", "a1"),
        ("A", "a2"),
        ("A", "a3"),
        ("A", "a4"),
        ("B", "b1"),
        ("B", "b2"),
        ("B", "b3"),
    ] {
        sqs.send_message()
            .queue_url(&url)
            .message_body(body)
            .message_group_id(group)
            .send()
            .await
            .unwrap();
    }
    // What the handler processed, in order. Like a FIFO Lambda function it
    // stops a group at its failure, but it names only the failed item.
    let handled = Arc::new(Mutex::new(Vec::<String>::new()));
    let failed_a2 = Arc::new(AtomicBool::new(false));
    let (h, f) = (handled.clone(), failed_a2.clone());
    let handler = Handler::start(Arc::new(move |event, _| {
        let mut stopped = BTreeSet::new();
        let mut failures = Vec::new();
        for (group, body, id) in records(event) {
            if stopped.contains(&group) {
                continue;
            }
            if body == "a2" && !f.swap(true, Ordering::SeqCst) {
                failures.push(serde_json::json!({ "itemIdentifier": id }));
                stopped.insert(group);
                continue;
            }
            h.lock().unwrap().push(body);
        }
        Reply {
            delay: Duration::from_millis(300),
            ..Reply::ok(&serde_json::json!({ "batchItemFailures": failures }).to_string())
        }
    }))
    .await;
    let mut s = spec("fifo-worker", "orders.fifo", &handler.url);
    s.batch_size = 4;
    s.max_concurrency = 3;
    let _consumers = start(&server, vec![s]).await;
    assert!(
        until(Duration::from_secs(10), async || remaining(&server, &url)
            .await
            == 0)
        .await,
        "all handled; events: {:?}",
        handler.events()
    );
    let events = handler.events();
    let first_failure = events
        .iter()
        .find(|e| records(e).any(|(_, body, _)| body == "a2"))
        .unwrap();
    assert!(
        records(first_failure).any(|(_, body, _)| body == "a3"),
        "a3 was in the batch in which a2 failed: {first_failure}"
    );
    let handled = handled.lock().unwrap().clone();
    let of = |prefix: &str| -> Vec<String> {
        handled
            .iter()
            .filter(|b| b.starts_with(prefix))
            .cloned()
            .collect()
    };
    assert_eq!(of("a"), ["a1", "a2", "a3", "a4"], "group A once, in order");
    assert_eq!(of("b"), ["b1", "b2", "b3"], "group B once, in order");
    for e in &events {
        for group in ["A", "B"] {
            let mut in_group: Vec<String> = records(e)
                .filter(|(g, _, _)| g == group)
                .map(|(_, body, _)| body)
                .collect();
            let delivered = in_group.clone();
            in_group.sort();
            assert_eq!(delivered, in_group, "send order within a batch: {e}");
        }
    }
    let overlapping = handler.overlapping();
    assert!(!overlapping.is_empty(), "the groups ran in parallel");
    for (i, j) in overlapping {
        assert!(
            groups(&events[i]).is_disjoint(&groups(&events[j])),
            "one batch per group in flight: {} and {}",
            events[i],
            events[j]
        );
    }
    let redelivered: Vec<String> = events
        .iter()
        .flat_map(|e| e["Records"].as_array().unwrap().clone())
        .filter(|r| r["body"] == "a3")
        .map(|r| {
            r["attributes"]["ApproximateReceiveCount"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(redelivered, ["1", "2"], "a3 went back with a2");
}

/// C3: a FIFO consumer gets Lambda's batch limit of 10, and no batching
/// window, at start.
#[tokio::test]
async fn c3_fifo_batch_size_is_checked_at_start() {
    let server = TestServer::start_real_time().await;
    fifo_queue(&server, "big.fifo").await;
    let mut s = spec("big-worker", "big.fifo", "http://127.0.0.1:9/");
    s.batch_size = 10;
    consumers::check_consumers(&server.service.broker, std::slice::from_ref(&s))
        .await
        .unwrap();
    s.batch_size = 11;
    let err = consumers::check_consumers(&server.service.broker, &[s])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("big-worker") && err.contains("batch_size"),
        "{err}"
    );
}
