//! The retention sweep (rule V7) deletes expired messages of queues nobody
//! reads, and runs on one node at a time: while another session holds the
//! sweep's lock, a node's sweep does nothing. It finds expired messages
//! through indexes only, wherever they sit in the queue. Without
//! PostgreSQL's binaries the tests say SKIPPED.

use std::sync::Arc;

use std::collections::BTreeMap;
use std::time::Duration;

use sluice_broker::{Broker, CreateQueue, NewMessage, ReceiveOptions};
use sluice_core::ManualClock;
use sluice_core::attributes::QueueConfig;
use sluice_postgres::{PostgresBroker, PostgresOptions, SWEEP_LOCK_KEY as SWEEP_LOCK, testing};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v7_sweep_expires_unread_queues_on_one_node_at_a_time() {
    let Some((broker, clock, url)) = node().await else {
        return;
    };
    create(&broker, "q", &[("MessageRetentionPeriod", "60")]).await;
    send(&broker, "q", "old").await;
    let (other_node, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let stored = || async {
        other_node
            .query_one("SELECT count(*) FROM sluice_messages", &[])
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    clock.advance_secs(60);

    other_node
        .execute("SELECT pg_advisory_lock($1)", &[&SWEEP_LOCK])
        .await
        .unwrap();
    assert!(!broker.sweep().await.unwrap(), "another node is sweeping");
    assert_eq!(stored().await, 1, "nothing swept meanwhile");
    other_node
        .execute("SELECT pg_advisory_unlock($1)", &[&SWEEP_LOCK])
        .await
        .unwrap();
    assert!(broker.sweep().await.unwrap());
    assert_eq!(stored().await, 0, "the expired message is gone");
}

/// A node on a fresh database, its clock and the database's URL, or
/// `None` without PostgreSQL.
async fn node() -> Option<(PostgresBroker, ManualClock, String)> {
    let url = testing::cluster()?.fresh_database().await;
    let clock = ManualClock::default();
    let broker = PostgresBroker::connect(&url, Arc::new(clock.clone()), PostgresOptions::default())
        .await
        .unwrap();
    Some((broker, clock, url))
}

async fn create(broker: &PostgresBroker, name: &str, pairs: &[(&str, &str)]) {
    let requested: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    broker
        .create_queue(CreateQueue {
            name: name.into(),
            config: QueueConfig::for_create(name, &requested).unwrap(),
            requested,
            tags: Default::default(),
        })
        .await
        .unwrap();
}

async fn send(broker: &PostgresBroker, queue: &str, body: &str) {
    let message = NewMessage {
        body: body.into(),
        ..Default::default()
    };
    broker.send_messages(queue, vec![message]).await.unwrap();
}

/// V7 and R3: a message dead-lettered into a standard queue keeps its
/// first enqueue time, so it can expire before messages sent to that
/// queue ahead of it. The sweep (and the retention a read runs first)
/// takes each message at its own age: the moved one while the one ahead
/// of it stays, then the others in turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v7_r3_expired_messages_are_found_wherever_they_sit() {
    const DAY: u64 = 86_400;
    let Some((broker, clock, url)) = node().await else {
        return;
    };
    create(&broker, "dlq", &[("MessageRetentionPeriod", "345600")]).await;
    let policy =
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
    create(
        &broker,
        "src",
        &[
            ("MessageRetentionPeriod", "1209600"),
            ("RedrivePolicy", policy),
        ],
    )
    .await;
    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let stored = || async {
        let mut bodies: Vec<String> = db
            .query(
                "SELECT m.body FROM sluice_messages m JOIN sluice_queues q ON q.id = m.queue_id
                 WHERE q.name = 'dlq'",
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        bodies.sort();
        bodies
    };

    send(&broker, "src", "moved").await;
    clock.advance_secs(DAY / 2);
    send(&broker, "dlq", "ahead").await;
    clock.advance_secs(DAY / 2);
    let receive = |visibility| ReceiveOptions {
        max_messages: 1,
        visibility_timeout: Some(visibility),
        wait: Duration::ZERO,
        attempt_id: None,
    };
    assert_eq!(
        broker
            .receive_messages("src", receive(0))
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        broker
            .receive_messages("src", receive(30))
            .await
            .unwrap()
            .is_empty(),
        "over maxReceiveCount: moved to the DLQ"
    );
    send(&broker, "dlq", "behind").await;
    assert_eq!(stored().await, ["ahead", "behind", "moved"]);

    // Day 4: the moved message is 4 days old, the one ahead of it 3.5.
    clock.advance_secs(3 * DAY);
    assert!(broker.sweep().await.unwrap());
    assert_eq!(stored().await, ["ahead", "behind"]);
    // Day 4.5: the one ahead expires; here the count's retention takes it.
    clock.advance_secs(DAY / 2);
    assert_eq!(broker.queue_counts("dlq").await.unwrap().visible, 1);
    assert_eq!(stored().await, ["behind"]);
    clock.advance_secs(DAY / 2);
    assert!(broker.sweep().await.unwrap());
    assert!(stored().await.is_empty());
}
