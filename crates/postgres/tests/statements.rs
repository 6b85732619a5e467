//! Statements the database runs per action on a plain standard queue,
//! counted by `pg_stat_statements`: one each for SendMessageBatch (plus
//! its announcement, pipelined in the same round trip), ReceiveMessage and
//! DeleteMessageBatch, committed on their own (no BEGIN/COMMIT). Round
//! trips were the engine's throughput limit (see docs/benchmarks.md).
//! Without PostgreSQL, or without the extension, the test says SKIPPED
//! and passes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, CreateQueue, NewMessage, ReceiveOptions};
use sluice_core::ManualClock;
use sluice_core::attributes::QueueConfig;
use sluice_postgres::{PostgresBroker, PostgresOptions, testing};

/// Statements run so far in database `db` (BEGIN and COMMIT included).
async fn statements(monitor: &tokio_postgres::Client, db: &str) -> i64 {
    monitor
        .query_one(
            "SELECT COALESCE(sum(s.calls), 0)::bigint FROM pg_stat_statements s
             JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1",
            &[&db],
        )
        .await
        .expect("read pg_stat_statements")
        .get(0)
}

fn batch(n: usize) -> Vec<NewMessage> {
    (0..n)
        .map(|i| NewMessage {
            body: format!("message {i}"),
            ..Default::default()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standard_send_receive_and_delete_are_one_statement_each() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let db = url.rsplit('/').next().expect("a database name").to_string();
    // The monitor reads from another database, so its own reads are not
    // counted.
    let (monitor, connection) =
        tokio_postgres::connect(&cluster.url("postgres"), tokio_postgres::NoTls)
            .await
            .expect("connect the monitor");
    tokio::spawn(connection);
    if let Err(e) = monitor
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .await
    {
        eprintln!("SKIPPED: pg_stat_statements is not available: {e}");
        return;
    }
    let clock = ManualClock::default();
    let broker = PostgresBroker::connect(&url, Arc::new(clock), PostgresOptions::default())
        .await
        .expect("connect to the test database");
    let config = QueueConfig::default();
    broker
        .create_queue(CreateQueue {
            name: "counted".into(),
            config,
            requested: BTreeMap::new(),
            tags: BTreeMap::new(),
        })
        .await
        .expect("create the queue");
    let receive = ReceiveOptions {
        max_messages: 10,
        visibility_timeout: None,
        wait: Duration::ZERO,
        attempt_id: None,
    };

    // The node re-reads a queue's row and recounts its messages in flight
    // once a second: the fewest statements over a few rounds is what an
    // action costs between those.
    let (mut send, mut recv, mut delete) = (i64::MAX, i64::MAX, i64::MAX);
    for _ in 0..5 {
        // The server reads the queue (GetQueue) before each send and
        // receive: counted with the action.
        let before = statements(&monitor, &db).await;
        broker.get_queue("counted").await.expect("get the queue");
        broker
            .send_messages("counted", batch(10))
            .await
            .expect("send");
        let sent = statements(&monitor, &db).await;
        broker.get_queue("counted").await.expect("get the queue");
        let got = broker
            .receive_messages("counted", receive.clone())
            .await
            .expect("receive");
        assert_eq!(got.len(), 10);
        let received = statements(&monitor, &db).await;
        let handles = got.into_iter().map(|m| m.receipt_handle).collect();
        let results = broker
            .delete_messages("counted", handles)
            .await
            .expect("delete");
        assert!(results.iter().all(Result::is_ok));
        let deleted = statements(&monitor, &db).await;
        send = send.min(sent - before);
        recv = recv.min(received - sent);
        delete = delete.min(deleted - received);
    }
    eprintln!("statements per action: send {send}, receive {recv}, delete {delete}");
    // A send is the insert and, pipelined in the same round trip, its
    // announcement in a transaction of its own (see ANNOUNCE_ARRIVAL).
    assert_eq!((send, recv, delete), (2, 1, 1));
}
