//! Fair queues (rule V10) as the PostgreSQL engine stores them: only
//! grouped messages enter the group index, so that plain standard queues
//! do not pay for it, and a fair queue's ungrouped messages carry a group
//! id of their own (migration 0007). Two engines on one database act as
//! two nodes, each with its own cached view of whether a queue is fair.
//! Without PostgreSQL's binaries every test says SKIPPED and passes.

use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, NewMessage, ReceiveOptions};
use sluice_postgres::{PostgresBroker, testing};

/// Two nodes on a fresh database and a plain connection to it, or `None`
/// without PostgreSQL.
async fn two_nodes() -> Option<(PostgresBroker, PostgresBroker, tokio_postgres::Client)> {
    let (url, a, b) = testing::two_nodes().await?;
    Some((a, b, testing::plain_connection(&url).await))
}

fn ungrouped(bodies: impl IntoIterator<Item = String>) -> Vec<NewMessage> {
    bodies
        .into_iter()
        .map(|body| NewMessage {
            body,
            ..Default::default()
        })
        .collect()
}

fn grouped(body: &str, group: &str) -> NewMessage {
    NewMessage {
        body: body.into(),
        group_id: Some(group.into()),
        ..Default::default()
    }
}

fn at_once(max: u32, visibility: Option<u32>) -> ReceiveOptions {
    ReceiveOptions {
        max_messages: max,
        visibility_timeout: visibility,
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

/// Receives and deletes through `node` until `queue` gives nothing; the
/// bodies received, sorted.
async fn drain(node: &PostgresBroker, queue: &str) -> Vec<String> {
    let mut bodies = Vec::new();
    loop {
        let got = node
            .receive_messages(queue, at_once(10, None))
            .await
            .expect("receive");
        if got.is_empty() {
            break;
        }
        bodies.extend(got.iter().map(|m| m.body.clone()));
        let handles = got.into_iter().map(|m| m.receipt_handle).collect();
        node.delete_messages(queue, handles).await.expect("delete");
    }
    bodies.sort();
    bodies
}

/// Messages of `queue` stored without a group id.
async fn stored_without_group(db: &tokio_postgres::Client, queue: &str) -> i64 {
    db.query_one(
        "SELECT count(*) FROM sluice_messages m JOIN sluice_queues q ON q.id = m.queue_id
         WHERE q.name = $1 AND m.group_id IS NULL",
        &[&queue],
    )
    .await
    .expect("count")
    .get(0)
}

/// The messages of a plain standard queue leave the group and age indexes
/// empty: indexes that only FIFO and fair receives, and retention of moved
/// messages, read cost them nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_standard_messages_stay_out_of_the_group_index() {
    let Some((a, _, db)) = two_nodes().await else {
        return;
    };
    testing::create_queue(&a, "plain", &[]).await;
    for batch in 0..200 {
        a.send_messages("plain", ungrouped((0..10).map(|i| format!("{batch}-{i}"))))
            .await
            .expect("send");
    }
    let size = |index: &'static str| {
        let db = &db;
        async move {
            db.query_one("SELECT pg_relation_size($1::text::regclass)", &[&index])
                .await
                .expect("index size")
                .get::<_, i64>(0)
        }
    };
    // An empty B-tree is its metapage, and at most one empty leaf.
    assert!(
        size("sluice_messages_group").await <= 2 * 8192,
        "ungrouped messages of a plain queue entered the group index"
    );
    // Nor the age index, which holds moved messages only (migration 0008).
    assert!(
        size("sluice_messages_age").await <= 2 * 8192,
        "messages sent to a plain queue entered the age index"
    );
    assert!(
        size("sluice_messages_visible").await > 4 * 8192,
        "the receive index holds the 2,000 messages"
    );
}

/// V10: node B has not seen the queue turn fair (node A sent its first
/// grouped message); the ungrouped messages B sends afterwards are still
/// stored as the fair queue's ungrouped group, so a fair receive finds
/// them, and so are those sent before it turned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_a_node_that_missed_the_turn_still_files_ungrouped_messages() {
    let Some((a, b, db)) = two_nodes().await else {
        return;
    };
    testing::create_queue(&a, "mixed", &[]).await;
    // Both nodes now remember the queue as not fair.
    a.get_queue("mixed").await.expect("read through A");
    b.get_queue("mixed").await.expect("read through B");
    b.send_messages("mixed", ungrouped(["before-0".into(), "before-1".into()]))
        .await
        .expect("send before");
    a.send_messages("mixed", vec![grouped("grouped", "g")])
        .await
        .expect("the first grouped send");
    b.send_messages("mixed", ungrouped(["after-0".into(), "after-1".into()]))
        .await
        .expect("send after, through the node that missed it");
    assert_eq!(stored_without_group(&db, "mixed").await, 0);
    assert_eq!(
        drain(&a, "mixed").await,
        ["after-0", "after-1", "before-0", "before-1", "grouped"]
    );
}

/// V10 under concurrency: while node B sends ungrouped batches from
/// eight tasks, node A turns the queue fair; every message is received
/// once through A's fair receives, none is left stored without a group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_sends_racing_the_turn_to_fair_are_all_delivered() {
    let Some((a, b, db)) = two_nodes().await else {
        return;
    };
    testing::create_queue(&a, "raced", &[]).await;
    b.get_queue("raced").await.expect("read through B");
    let b = Arc::new(b);
    let senders: Vec<_> = (0..8)
        .map(|task| {
            let b = b.clone();
            tokio::spawn(async move {
                for batch in 0..20 {
                    let bodies = (0..10).map(|i| format!("{task:02}-{batch:02}-{i}"));
                    b.send_messages("raced", ungrouped(bodies))
                        .await
                        .expect("send");
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(20)).await;
    a.send_messages("raced", vec![grouped("grouped", "g")])
        .await
        .expect("the first grouped send");
    for sender in senders {
        sender.await.expect("sender");
    }
    assert_eq!(stored_without_group(&db, "raced").await, 0);
    let received = drain(&a, "raced").await;
    let mut expected: Vec<String> = (0..8)
        .flat_map(|task| {
            (0..20).flat_map(move |batch| (0..10).map(move |i| format!("{task:02}-{batch:02}-{i}")))
        })
        .collect();
    expected.push("grouped".into());
    expected.sort();
    assert_eq!(received.len(), expected.len());
    assert_eq!(received, expected);
}

/// V10 and R1: an ungrouped message moved to a fair dead-letter queue is
/// filed with the DLQ's ungrouped messages, where a fair receive finds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_an_ungrouped_message_moved_into_a_fair_queue_is_received() {
    let Some((a, _, db)) = two_nodes().await else {
        return;
    };
    testing::create_queue(&a, "dlq", &[]).await;
    let policy =
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
    testing::create_queue(&a, "src", &[("RedrivePolicy", policy)]).await;
    a.send_messages("dlq", vec![grouped("grouped", "g")])
        .await
        .expect("turn the DLQ fair");
    a.send_messages("src", ungrouped(["failing".into()]))
        .await
        .expect("send");
    let first = a
        .receive_messages("src", at_once(1, Some(0)))
        .await
        .expect("first receive");
    assert_eq!(first.len(), 1);
    let second = a
        .receive_messages("src", at_once(1, None))
        .await
        .expect("second receive");
    assert!(second.is_empty(), "over maxReceiveCount: moved to the DLQ");
    assert_eq!(stored_without_group(&db, "dlq").await, 0);
    assert_eq!(drain(&a, "dlq").await, ["failing", "grouped"]);
}
