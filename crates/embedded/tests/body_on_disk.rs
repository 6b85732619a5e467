//! The durable engine keeps only an index in memory: message bodies not in
//! its bounded cache are read from redb. These tests take the paths where a
//! body is on disk only: after a restart (recovery loads no bodies) and
//! after eviction from a small cache.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{
    Broker, CreateQueue, MessageFilter, Nack, NewMessage, ReceiveOptions, Redrive,
};
use sluice_core::ManualClock;
use sluice_core::attributes::QueueConfig;
use sluice_core::digest::body_digest;
use sluice_core::message::{AttributeValue, MessageAttributeValue, MessageAttributes};
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions};

const POLICY: &str =
    r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;

fn open(dir: &Path, clock: &ManualClock, body_cache_bytes: usize) -> EmbeddedBroker {
    let options = EmbeddedOptions {
        body_cache_bytes,
        ..Default::default()
    };
    EmbeddedBroker::open_with(dir, Arc::new(clock.clone()), options)
        .expect("open")
        .0
}

async fn create(b: &EmbeddedBroker, name: &str, attrs: &[(&str, &str)]) {
    let requested: BTreeMap<String, String> = attrs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    b.create_queue(CreateQueue {
        name: name.into(),
        config: QueueConfig::for_create(name, &requested).expect("config"),
        requested,
        tags: BTreeMap::new(),
    })
    .await
    .expect("create");
}

fn attributes(n: usize) -> MessageAttributes {
    let mut a = MessageAttributes::new();
    a.insert(
        "n".into(),
        MessageAttributeValue {
            data_type: "Number".into(),
            value: AttributeValue::String(n.to_string()),
        },
    );
    a
}

fn message(n: usize) -> NewMessage {
    NewMessage {
        body: format!("body {n} {}", "x".repeat(1000)),
        attributes: attributes(n),
        ..Default::default()
    }
}

fn receive(max: u32) -> ReceiveOptions {
    ReceiveOptions {
        max_messages: max,
        visibility_timeout: Some(30),
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

/// Bodies, attributes, ids and the bodies' MD5s come back whole after a
/// restart, when no body is in memory; the index alone gave the counts.
#[tokio::test]
async fn restart_then_receive_reads_bodies_from_disk() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = ManualClock::default();
    let sent = {
        let b = open(dir.path(), &clock, 64 << 20);
        create(&b, "q", &[]).await;
        // As the server sends: with the body's MD5 it computed.
        let messages = (0..10)
            .map(|n| NewMessage {
                body_md5: Some(body_digest(&message(n).body)),
                ..message(n)
            })
            .collect();
        b.send_messages("q", messages).await.expect("send")
    };
    let b = open(dir.path(), &clock, 64 << 20);
    assert_eq!(b.cached_body_bytes(), 0, "recovery loads no body");
    assert_eq!(b.queue_counts("q").await.expect("counts").visible, 10);
    let got = b.receive_messages("q", receive(10)).await.expect("receive");
    assert_eq!(got.len(), 10);
    for (n, m) in got.iter().enumerate() {
        assert_eq!(m.message_id, sent[n].message_id);
        assert_eq!(m.body, message(n).body);
        assert_eq!(m.attributes, attributes(n));
        // Kept on disk with the body: the receive need not hash it again.
        assert_eq!(m.body_md5, Some(body_digest(&m.body)));
    }
    let handles = got.into_iter().map(|m| m.receipt_handle).collect();
    let deleted = b.delete_messages("q", handles).await.expect("delete");
    assert!(deleted.iter().all(Result::is_ok));
    assert_eq!(b.queue_counts("q").await.expect("counts").visible, 0);
}

/// The cache stays within its budget however many messages wait, and the
/// evicted bodies are read back in order.
#[tokio::test]
async fn the_body_cache_is_bounded_and_evicted_bodies_are_read_back() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = ManualClock::default();
    let budget = 16 << 10;
    let b = open(dir.path(), &clock, budget);
    create(&b, "q", &[]).await;
    for chunk in 0..50 {
        let batch = (chunk * 10..chunk * 10 + 10).map(message).collect();
        b.send_messages("q", batch).await.expect("send");
        assert!(b.cached_body_bytes() <= budget, "{}", b.cached_body_bytes());
    }
    assert!(b.cached_body_bytes() > 0, "recent bodies stay cached");
    let mut bodies = Vec::new();
    loop {
        let got = b.receive_messages("q", receive(10)).await.expect("receive");
        if got.is_empty() {
            break;
        }
        bodies.extend(got.into_iter().map(|m| m.body));
    }
    let expected: Vec<String> = (0..500).map(|n| message(n).body).collect();
    assert_eq!(bodies, expected);
}

/// R2, R4 with the body on disk only: the receive past maxReceiveCount
/// moves the message (rewritten by the journal writer) with its body,
/// attributes and provenance, also across another restart.
#[tokio::test]
async fn dead_letter_move_of_a_message_whose_body_is_on_disk() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = ManualClock::default();
    {
        let b = open(dir.path(), &clock, 0);
        create(&b, "dlq", &[]).await;
        create(&b, "src", &[("RedrivePolicy", POLICY)]).await;
        b.send_messages("src", vec![message(7)])
            .await
            .expect("send");
        let got = b.receive_messages("src", receive(1)).await.expect("first");
        assert_eq!(got.len(), 1);
        clock.advance_secs(31);
        let moved = b.receive_messages("src", receive(1)).await.expect("second");
        assert!(moved.is_empty(), "moved, not delivered");
        assert_eq!(b.queue_counts("dlq").await.expect("counts").visible, 1);
    }
    let b = open(dir.path(), &clock, 0);
    assert_eq!(b.queue_counts("src").await.expect("counts").visible, 0);
    let got = b.receive_messages("dlq", receive(1)).await.expect("dlq");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body, message(7).body);
    assert_eq!(got[0].attributes, attributes(7));
    assert_eq!(got[0].receive_count, 2);
    assert!(
        got[0]
            .system_attributes
            .contains_key("DeadLetterQueueSourceArn")
    );
}

/// X2 with the body on disk: a permanent nack after a restart moves the
/// message with the consumer's reason.
#[tokio::test]
async fn permanent_nack_after_restart_keeps_body_and_reason() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = ManualClock::default();
    {
        let b = open(dir.path(), &clock, 64 << 20);
        create(&b, "dlq", &[]).await;
        create(&b, "src", &[("RedrivePolicy", POLICY)]).await;
        b.send_messages("src", vec![message(3)])
            .await
            .expect("send");
    }
    let b = open(dir.path(), &clock, 64 << 20);
    let got = b
        .receive_messages("src", receive(1))
        .await
        .expect("receive");
    b.nack_message(
        "src",
        &got[0].receipt_handle,
        Nack {
            reason: Some("schema mismatch".into()),
            class: None,
            permanent: true,
            retry_after_seconds: None,
        },
    )
    .await
    .expect("nack");
    let page = b
        .peek_messages("dlq", &MessageFilter::default(), None, 10)
        .await
        .expect("peek");
    assert_eq!(page.messages.len(), 1);
    assert_eq!(page.messages[0].body, message(3).body);
    assert_eq!(
        page.messages[0].failure_reason.as_deref(),
        Some("schema mismatch")
    );
}

/// R7, X1 with bodies on disk: a peek filters on bodies it reads from disk,
/// and a redrive moves messages whose bodies it had to read.
#[tokio::test]
async fn peek_and_redrive_read_bodies_from_disk() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = ManualClock::default();
    let b = open(dir.path(), &clock, 0);
    create(&b, "dlq", &[]).await;
    create(&b, "src", &[("RedrivePolicy", POLICY)]).await;
    b.send_messages("src", (0..10).map(message).collect())
        .await
        .expect("send");
    for _ in 0..2 {
        b.receive_messages("src", receive(10))
            .await
            .expect("receive");
        clock.advance_secs(31);
    }
    assert_eq!(b.queue_counts("dlq").await.expect("counts").visible, 10);
    let only_3 = MessageFilter {
        body_contains: Some("body 3 ".into()),
        ..Default::default()
    };
    let page = b
        .peek_messages("dlq", &only_3, None, 10)
        .await
        .expect("peek");
    assert_eq!(page.messages.len(), 1);
    assert_eq!(page.messages[0].body, message(3).body);
    let outcome = b
        .redrive_messages(
            "dlq",
            &Redrive {
                max: 100,
                ..Default::default()
            },
        )
        .await
        .expect("redrive");
    assert_eq!(outcome.moved, 10);
    let got = b
        .receive_messages("src", receive(10))
        .await
        .expect("receive");
    let mut bodies: Vec<String> = got.into_iter().map(|m| m.body).collect();
    bodies.sort();
    let mut expected: Vec<String> = (0..10).map(|n| message(n).body).collect();
    expected.sort();
    assert_eq!(bodies, expected);
}

/// A purge and retention remove messages whose bodies are on disk only,
/// from the index and from the store.
#[tokio::test]
async fn purge_and_retention_of_messages_on_disk() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = ManualClock::default();
    {
        let b = open(dir.path(), &clock, 0);
        create(&b, "p", &[]).await;
        create(&b, "r", &[("MessageRetentionPeriod", "60")]).await;
        b.send_messages("p", (0..5).map(message).collect())
            .await
            .expect("send");
        b.send_messages("r", (0..5).map(message).collect())
            .await
            .expect("send");
        b.purge_queue("p").await.expect("purge");
        clock.advance_secs(61);
        b.sweep();
        assert_eq!(b.queue_counts("r").await.expect("counts").visible, 0);
    }
    let (_, stats) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).expect("open");
    assert_eq!(stats.messages, 0, "gone from the store too");
}
