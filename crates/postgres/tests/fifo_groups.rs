//! FIFO group blocking beyond the shared suite (rule F1): a group with a
//! message in flight delivers nothing, even when an earlier message of it
//! is visible again. Without PostgreSQL's binaries the test says SKIPPED.

use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, CreateQueue, NewMessage, ReceiveOptions, VisibilityChange};
use sluice_core::ManualClock;
use sluice_core::attributes::QueueConfig;
use sluice_postgres::{PostgresBroker, PostgresOptions, testing};

fn fifo_msg(group: &str, dedup: &str, body: &str) -> NewMessage {
    NewMessage {
        body: body.into(),
        group_id: Some(group.into()),
        dedup_id: Some(dedup.into()),
        ..Default::default()
    }
}

fn receive(max: u32) -> ReceiveOptions {
    ReceiveOptions {
        max_messages: max,
        visibility_timeout: None,
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f1_a_group_with_a_message_in_flight_delivers_nothing() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let broker = PostgresBroker::connect(
        &url,
        Arc::new(ManualClock::default()),
        PostgresOptions::default(),
    )
    .await
    .unwrap();
    let requested = [("FifoQueue".to_string(), "true".to_string())].into();
    broker
        .create_queue(CreateQueue {
            name: "q.fifo".into(),
            config: QueueConfig::for_create("q.fifo", &requested).unwrap(),
            requested,
            tags: Default::default(),
        })
        .await
        .unwrap();
    broker
        .send_messages(
            "q.fifo",
            vec![
                fifo_msg("g", "1", "first"),
                fifo_msg("g", "2", "second"),
                fifo_msg("h", "3", "other group"),
            ],
        )
        .await
        .unwrap();
    let got = broker.receive_messages("q.fifo", receive(2)).await.unwrap();
    let bodies: Vec<&str> = got.iter().map(|m| m.body.as_str()).collect();
    assert_eq!(bodies, ["first", "second"]);
    // "first" is visible again, "second" is still in flight.
    broker
        .change_visibility(
            "q.fifo",
            vec![VisibilityChange {
                receipt_handle: got[0].receipt_handle.clone(),
                visibility_timeout: 0,
            }],
        )
        .await
        .unwrap();
    let next = broker
        .receive_messages("q.fifo", receive(10))
        .await
        .unwrap();
    let bodies: Vec<&str> = next.iter().map(|m| m.body.as_str()).collect();
    assert_eq!(
        bodies,
        ["other group"],
        "group g waits for its message in flight"
    );
}
