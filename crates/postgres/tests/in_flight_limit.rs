//! The in-flight limit (rule L4) on the PostgreSQL engine. Reaching
//! 120,000 messages in flight through the engine takes 12,000 receives,
//! so these tests store the messages in flight in one statement, as those
//! receives would have left them (received once, hidden for an hour).
//! Without PostgreSQL's binaries every test says SKIPPED and passes.

use std::time::Duration;

use sluice_broker::{Broker, NewMessage, ReceiveOptions};
use sluice_core::ErrorCode;
use sluice_core::limits::MAX_INFLIGHT;
use sluice_postgres::{PostgresBroker, testing};

/// An engine on a fresh database and a plain connection to it, or `None`
/// without PostgreSQL.
async fn engine() -> Option<(PostgresBroker, tokio_postgres::Client)> {
    let (url, node, _) = testing::two_nodes().await?;
    Some((node, testing::plain_connection(&url).await))
}

/// Sends ten messages to `queue` through the engine (of one group on a
/// FIFO queue), and stores `MAX_INFLIGHT` more beside them as receives
/// would have left them: each of its own group, received once, hidden for
/// an hour. Their sequences are negative, out of the way of the engine's.
async fn fill_to_the_limit(node: &PostgresBroker, db: &tokio_postgres::Client, queue: &str) {
    let fifo = queue.ends_with(".fifo");
    let ready = (0..10)
        .map(|i| NewMessage {
            body: "x".into(),
            group_id: fifo.then(|| "ready".to_string()),
            dedup_id: fifo.then(|| i.to_string()),
            ..Default::default()
        })
        .collect();
    node.send_messages(queue, ready).await.expect("send");
    let stored = db
        .execute(
            "INSERT INTO sluice_messages (queue_id, seq, message_id, body, attributes,
                 system_attributes, group_id, dedup_id, sent_at, enqueued_at, visible_at,
                 receive_count, first_receive_at, last_receive_at)
             SELECT m.queue_id, -n, md5(n::text)::uuid, m.body, m.attributes,
                 m.system_attributes, CASE WHEN m.group_id IS NULL THEN NULL ELSE 'g' || n END,
                 m.dedup_id, m.sent_at, m.enqueued_at, m.visible_at + 3600000, 1, m.sent_at,
                 m.sent_at
             FROM sluice_messages m JOIN sluice_queues q ON q.id = m.queue_id,
                  generate_series(1, $2::bigint) n
             WHERE q.name = $1
               AND m.seq = (SELECT min(seq) FROM sluice_messages WHERE queue_id = q.id)",
            &[&queue, &(MAX_INFLIGHT as i64)],
        )
        .await
        .expect("store messages in flight");
    assert_eq!(stored, MAX_INFLIGHT as u64);
}

fn ten() -> ReceiveOptions {
    ReceiveOptions {
        max_messages: 10,
        visibility_timeout: None,
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

/// L4: a standard queue at the limit answers `OverLimit` while messages
/// are ready (SQS Developer Guide, "Amazon SQS message quotas").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l4_standard_queue_at_the_limit_is_over_limit() {
    let Some((node, db)) = engine().await else {
        return;
    };
    testing::create_queue(&node, "q", &[]).await;
    fill_to_the_limit(&node, &db, "q").await;
    let refused = node.receive_messages("q", ten()).await.unwrap_err();
    assert_eq!(refused.to_sqs().code, ErrorCode::OverLimit);
}

/// L4: a FIFO queue at the limit answers an empty receive, no error, although
/// a group has ten messages ready ("If you reach this quota for a FIFO
/// queue, Amazon SQS returns no error messages", same page).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l4_fifo_queue_at_the_limit_is_an_empty_receive() {
    let Some((node, db)) = engine().await else {
        return;
    };
    testing::create_queue(&node, "q.fifo", &[("FifoQueue", "true")]).await;
    fill_to_the_limit(&node, &db, "q.fifo").await;
    let got = node
        .receive_messages("q.fifo", ten())
        .await
        .expect("receive");
    assert!(got.is_empty(), "{} messages past the limit", got.len());
    // Below the limit the ready group is served again.
    db.execute(
        "UPDATE sluice_messages SET visible_at = visible_at - 3600000 WHERE seq = -1",
        &[],
    )
    .await
    .expect("return one message");
    // The engine caches its in-flight count for a moment: a second receive
    // after the cache expires sees the room.
    let mut served = Vec::new();
    for _ in 0..50 {
        served = node
            .receive_messages("q.fifo", ten())
            .await
            .expect("receive");
        if !served.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !served.is_empty(),
        "the queue stayed closed below the limit"
    );
}
