//! Every way a message enters a standard queue, all at once, while
//! consumers drain it (rules V1, V10, R2, R7, X2). An engine that keeps
//! its own order of a queue's messages for its receives (a position its
//! receives have read up to, say) must keep it for every one of these
//! paths and under every interleaving of them, or a message stored by one
//! of them is never received: this is the test that says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::{Nack, Redrive};

/// How many of each kind of message the test moves.
const SENT: usize = 100;
const DEAD_LETTERED: usize = 30;
const NACKED: usize = 20;
const REDRIVEN: usize = 60;

/// `prefix-000`, `prefix-001`, …
fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i:03}")).collect()
}

fn refs(names: &[String]) -> Vec<&str> {
    names.iter().map(String::as_str).collect()
}

/// V1, V10, R2, R7, X2: sends (some of them grouped, which turns the queue
/// fair midway), moves into it as a dead-letter queue (past
/// maxReceiveCount, and by a permanent nack) and redrives into it, all
/// running at once while two consumers receive and delete: every message
/// is received once, none twice, and the queues are empty after.
pub async fn v1_r2_r7_every_way_in_while_consumers_drain<H: Harness>(h: &H) {
    create(h, "target", &[]).await;
    create(h, "fed", &[("RedrivePolicy", &redrive("target", 1))]).await;
    create(h, "nacked", &[("RedrivePolicy", &redrive("target", 5))]).await;
    create(h, "parked", &[]).await;
    // What the other paths move, waiting in their own queues.
    for chunk in names("fed", DEAD_LETTERED).chunks(10) {
        send(h, "fed", &refs(chunk)).await;
    }
    for chunk in names("nacked", NACKED).chunks(10) {
        send(h, "nacked", &refs(chunk)).await;
    }
    for chunk in names("redriven", REDRIVEN).chunks(10) {
        send(h, "parked", &refs(chunk)).await;
    }
    let producing = Arc::new(AtomicUsize::new(4));
    let mut producers = Vec::new();

    // Sends, every third batch grouped: the first grouped one turns the
    // queue fair while the others are stored and received.
    let (b, left) = (h.broker().clone(), producing.clone());
    producers.push(tokio::spawn(async move {
        for (i, chunk) in names("sent", SENT).chunks(10).enumerate() {
            let batch = chunk
                .iter()
                .map(|body| NewMessage {
                    body: body.clone(),
                    group_id: (i % 3 == 1).then(|| format!("tenant-{}", i % 2)),
                    ..Default::default()
                })
                .collect();
            b.send_messages("target", batch).await.expect("send");
            tokio::task::yield_now().await;
        }
        left.fetch_sub(1, Ordering::SeqCst);
    }));

    // Moves past maxReceiveCount: a receive delivers each once (hidden for
    // no time), the next moves it into its dead-letter queue, `target`.
    let (b, left) = (h.broker().clone(), producing.clone());
    producers.push(tokio::spawn(async move {
        let mut o = opts(10);
        o.visibility_timeout = Some(0);
        // Bounded: an engine that moved nothing must fail, not hang.
        for _ in 0..1000 {
            if b.queue_counts("fed").await.expect("counts") == QueueCounts::default() {
                break;
            }
            b.receive_messages("fed", o.clone()).await.expect("receive");
            tokio::task::yield_now().await;
        }
        left.fetch_sub(1, Ordering::SeqCst);
    }));

    // Moves by a permanent failure: each message received, then nacked.
    let (b, left) = (h.broker().clone(), producing.clone());
    producers.push(tokio::spawn(async move {
        let mut o = opts(5);
        o.visibility_timeout = Some(300);
        loop {
            let got = b
                .receive_messages("nacked", o.clone())
                .await
                .expect("receive");
            if got.is_empty() {
                break;
            }
            for m in got {
                let nack = Nack {
                    reason: Some("cannot be processed".into()),
                    class: None,
                    permanent: true,
                    retry_after_seconds: None,
                };
                b.nack_message("nacked", &m.receipt_handle, nack)
                    .await
                    .expect("nack");
            }
            tokio::task::yield_now().await;
        }
        left.fetch_sub(1, Ordering::SeqCst);
    }));

    // Redrives into `target`, a few messages a step.
    let (b, left) = (h.broker().clone(), producing.clone());
    producers.push(tokio::spawn(async move {
        let step = Redrive {
            destination: Some("target".into()),
            max: 7,
            ..Default::default()
        };
        for _ in 0..1000 {
            if b.redrive_messages("parked", &step)
                .await
                .expect("redrive")
                .moved
                == 0
            {
                break;
            }
            tokio::task::yield_now().await;
        }
        left.fetch_sub(1, Ordering::SeqCst);
    }));

    // Two consumers, until every producer is done and the queue answers
    // empty three times running.
    let mut consumers = Vec::new();
    for _ in 0..2 {
        let (b, left) = (h.broker().clone(), producing.clone());
        consumers.push(tokio::spawn(async move {
            let mut o = opts(10);
            o.visibility_timeout = Some(300);
            let (mut received, mut empty) = (Vec::new(), 0);
            // Bounded too: after 5,000 empty answers (about ten seconds) a
            // consumer stops, and what it did not receive fails the test.
            let mut idle = 0;
            while empty < 3 && idle < 5000 {
                let got = b
                    .receive_messages("target", o.clone())
                    .await
                    .expect("receive");
                if got.is_empty() {
                    idle += 1;
                    if left.load(Ordering::SeqCst) == 0 {
                        empty += 1;
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    continue;
                }
                empty = 0;
                let handles = got.iter().map(|m| m.receipt_handle.clone()).collect();
                let deleted = b.delete_messages("target", handles).await.expect("delete");
                assert!(deleted.iter().all(Result::is_ok), "{deleted:?}");
                received.extend(got.into_iter().map(|m| m.body));
            }
            received
        }));
    }
    for p in producers {
        p.await.expect("producer");
    }
    let mut received = Vec::new();
    for c in consumers {
        received.extend(c.await.expect("consumer"));
    }
    received.sort();
    let mut expected: Vec<String> = [
        names("sent", SENT),
        names("fed", DEAD_LETTERED),
        names("nacked", NACKED),
        names("redriven", REDRIVEN),
    ]
    .concat();
    expected.sort();
    let missing: Vec<&String> = expected
        .iter()
        .filter(|m| received.binary_search(m).is_err())
        .collect();
    assert!(missing.is_empty(), "never received: {missing:?}");
    assert_eq!(received, expected, "each message received exactly once");
    for q in ["target", "fed", "nacked", "parked"] {
        assert_eq!(counts(h, q).await, QueueCounts::default(), "{q} is empty");
    }
}
