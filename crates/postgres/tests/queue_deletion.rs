//! DeleteQueue (rule V9) racing the inserts of other nodes. Messages and
//! FIFO deduplication rows hold no foreign key to their queue's row (its
//! per-row check was a tenth of the database's cost of a send): every
//! insert holds the queue's row `FOR SHARE` instead, and DeleteQueue deletes
//! the queue's rows itself. These tests look for what that must never
//! leave behind: a row whose queue is gone, a send answered as stored into
//! a deleted queue, a message moved out of its queue into a deleted one.
//! (The move's own guard, a DLQ deleted between its lookup and its insert,
//! cannot be reached from outside: the lookup holds the DLQ's row.)
//! Without PostgreSQL's binaries every test says SKIPPED and passes.

use std::time::Duration;

use sluice_broker::{Broker, EngineError, NewMessage, ReceiveOptions};
use sluice_postgres::{PostgresBroker, testing};

/// Rows of `table` whose queue no longer exists.
async fn orphans(db: &tokio_postgres::Client, table: &str) -> i64 {
    db.query_one(
        &format!(
            "SELECT count(*) FROM {table} t
             WHERE NOT EXISTS (SELECT 1 FROM sluice_queues q WHERE q.id = t.queue_id)"
        ),
        &[],
    )
    .await
    .expect("count orphans")
    .get(0)
}

fn message(body: String, fifo: bool) -> NewMessage {
    NewMessage {
        group_id: fifo.then(|| "g".to_string()),
        dedup_id: fifo.then(|| body.clone()),
        body,
        ..Default::default()
    }
}

/// Node `a` sends batches to `queue` until a send is refused, while node
/// `b` deletes the queue; the batches answered as stored.
async fn send_while_deleted(a: &PostgresBroker, b: &PostgresBroker, queue: &str, fifo: bool) {
    let sender = async {
        let mut stored = 0;
        for i in 0.. {
            let batch = (0..10)
                .map(|j| message(format!("m{i}-{j}"), fifo))
                .collect();
            match a.send_messages(queue, batch).await {
                Ok(sent) => stored += sent.len(),
                Err(EngineError::QueueDoesNotExist) => return stored,
                Err(e) => panic!("send: {e:?}"),
            }
            tokio::task::yield_now().await;
        }
        unreachable!("the loop ends with the queue")
    };
    let deleter = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        b.delete_queue(queue).await.expect("delete the queue");
    };
    let (stored, ()) = tokio::join!(sender, deleter);
    assert!(stored > 0, "some batches went in before the delete");
    // The sender's node still remembers the queue: its next send is
    // refused all the same, as the database holds no row to lock.
    let late = a
        .send_messages(queue, vec![message("late".into(), fifo)])
        .await;
    assert!(
        matches!(late, Err(EngineError::QueueDoesNotExist)),
        "{late:?}"
    );
}

/// V9: standard and FIFO sends through one node racing DeleteQueue through
/// another leave no message and no deduplication id behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v9_sends_racing_delete_queue_leave_nothing_behind() {
    let Some((url, a, b)) = testing::two_nodes().await else {
        return;
    };
    let db = testing::plain_connection(&url).await;
    testing::create_queue(&a, "plain", &[]).await;
    testing::create_queue(&a, "ordered.fifo", &[("FifoQueue", "true")]).await;
    send_while_deleted(&a, &b, "plain", false).await;
    send_while_deleted(&a, &b, "ordered.fifo", true).await;
    assert_eq!(orphans(&db, "sluice_messages").await, 0);
    assert_eq!(orphans(&db, "sluice_dedup").await, 0);
}

/// V9 and R2: a dead-letter queue deleted through another node: the
/// receive that would have moved a message there (the DLQ's row is read,
/// and held, in the receive's transaction) delivers it instead, and it
/// stays in its queue; nothing is stored under the deleted DLQ's id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v9_a_message_is_not_moved_into_a_deleted_dead_letter_queue() {
    let Some((url, a, b)) = testing::two_nodes().await else {
        return;
    };
    let db = testing::plain_connection(&url).await;
    testing::create_queue(&a, "dlq", &[]).await;
    let policy =
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
    testing::create_queue(&a, "src", &[("RedrivePolicy", policy)]).await;
    a.send_messages("src", vec![message("failing".into(), false)])
        .await
        .expect("send");
    let options = |visibility| ReceiveOptions {
        max_messages: 1,
        visibility_timeout: visibility,
        wait: Duration::ZERO,
        attempt_id: None,
    };
    let first = a
        .receive_messages("src", options(Some(0)))
        .await
        .expect("first receive");
    assert_eq!(first.len(), 1);
    b.delete_queue("dlq").await.expect("delete the DLQ");
    let second = a
        .receive_messages("src", options(Some(0)))
        .await
        .expect("second receive");
    assert_eq!(second.len(), 1, "delivered, as its DLQ is gone");
    assert_eq!(orphans(&db, "sluice_messages").await, 0);
    let left: i64 = db
        .query_one(
            "SELECT count(*) FROM sluice_messages m JOIN sluice_queues q ON q.id = m.queue_id
             WHERE q.name = 'src'",
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(left, 1, "the message stays in its queue");
}
