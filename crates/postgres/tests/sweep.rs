//! The retention sweep (rule V7) deletes expired messages of queues nobody
//! reads, and runs on one node at a time: while another session holds the
//! sweep's lock, a node's sweep does nothing. Without PostgreSQL's
//! binaries the test says SKIPPED.

use std::sync::Arc;

use sluice_broker::{Broker, CreateQueue, NewMessage};
use sluice_core::ManualClock;
use sluice_core::attributes::QueueConfig;
use sluice_postgres::{PostgresBroker, PostgresOptions, SWEEP_LOCK_KEY as SWEEP_LOCK, testing};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v7_sweep_expires_unread_queues_on_one_node_at_a_time() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let clock = ManualClock::default();
    let broker = PostgresBroker::connect(&url, Arc::new(clock.clone()), PostgresOptions::default())
        .await
        .unwrap();
    let requested = [("MessageRetentionPeriod".to_string(), "60".to_string())].into();
    broker
        .create_queue(CreateQueue {
            name: "q".into(),
            config: QueueConfig::for_create("q", &requested).unwrap(),
            requested,
            tags: Default::default(),
        })
        .await
        .unwrap();
    broker
        .send_messages(
            "q",
            vec![NewMessage {
                body: "old".into(),
                ..Default::default()
            }],
        )
        .await
        .unwrap();
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
