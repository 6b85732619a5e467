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

/// A broker on a fresh database holding the plain standard queue
/// `counted`, a monitor of that database's statements, and its name; None
/// (after saying SKIPPED) without PostgreSQL or pg_stat_statements.
async fn counted_queue() -> Option<(PostgresBroker, tokio_postgres::Client, String)> {
    let cluster = testing::cluster()?;
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
        return None;
    }
    let clock = ManualClock::default();
    let broker = PostgresBroker::connect(&url, Arc::new(clock), PostgresOptions::default())
        .await
        .expect("connect to the test database");
    broker
        .create_queue(CreateQueue {
            name: "counted".into(),
            config: QueueConfig::default(),
            requested: BTreeMap::new(),
            tags: BTreeMap::new(),
        })
        .await
        .expect("create the queue");
    // The node now remembers the queue's row: the counts below are the
    // actions' own.
    broker
        .get_queue("counted")
        .await
        .expect("read the queue once");
    Some((broker, monitor, db))
}

/// A receive of at most `max` messages that does not wait.
fn receive_at_once(max: u32) -> ReceiveOptions {
    ReceiveOptions {
        max_messages: max,
        visibility_timeout: None,
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standard_send_receive_and_delete_are_one_statement_each() {
    let Some((broker, monitor, db)) = counted_queue().await else {
        return;
    };
    let receive = receive_at_once(10);

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

/// Requests that reach one node for the same queue at the same moment
/// share statements (the node's combining lanes), and each still gets
/// exactly its own results: its own message ids, its own messages (none
/// delivered twice, none lost), its own handles' outcomes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_share_statements_and_keep_their_own_results() {
    let Some((broker, monitor, db)) = counted_queue().await else {
        return;
    };
    const REQUESTS: usize = 48;

    let before = statements(&monitor, &db).await;
    let sends = (0..REQUESTS).map(|_| {
        let broker = broker.clone();
        tokio::spawn(async move { broker.send_messages("counted", batch(10)).await })
    });
    // Spawned all at once, before any is awaited.
    let sends: Vec<_> = sends.collect();
    let mut sent_ids = std::collections::HashSet::new();
    for send in sends {
        let ids = send.await.expect("join").expect("send");
        assert_eq!(ids.len(), 10, "each send gets its own ten ids");
        for m in ids {
            assert!(sent_ids.insert(m.message_id), "an id given twice");
        }
    }
    let after_sends = statements(&monitor, &db).await;

    let receive = receive_at_once(10);
    let receives = (0..REQUESTS).map(|_| {
        let broker = broker.clone();
        let receive = receive.clone();
        tokio::spawn(async move { broker.receive_messages("counted", receive).await })
    });
    let receives: Vec<_> = receives.collect();
    let mut received = Vec::new();
    for r in receives {
        let got = r.await.expect("join").expect("receive");
        assert!(got.len() <= 10, "a receive got more than it asked for");
        received.push(got);
    }
    let after_receives = statements(&monitor, &db).await;
    // A receive can come back short when the rows it would take were
    // locked by a concurrent receive: what is left is received now.
    loop {
        let got = broker
            .receive_messages("counted", receive.clone())
            .await
            .expect("receive the rest");
        if got.is_empty() {
            break;
        }
        received.push(got);
    }
    let mut seen = std::collections::HashSet::new();
    for m in received.iter().flatten() {
        assert!(sent_ids.contains(&m.message_id), "a message never sent");
        assert!(
            seen.insert(m.message_id.clone()),
            "a message delivered twice"
        );
    }
    assert_eq!(seen.len(), sent_ids.len(), "every message delivered once");

    // Each delete request also carries a forged handle of one of its own
    // messages (a delivery that never happened): only that one fails.
    let deletes = received
        .into_iter()
        .filter(|got| !got.is_empty())
        .map(|got| {
            let broker = broker.clone();
            let mut handles: Vec<String> = got.iter().map(|m| m.receipt_handle.clone()).collect();
            let forged = forge(&handles[0]);
            handles.push(forged);
            tokio::spawn(async move { broker.delete_messages("counted", handles).await })
        });
    let deletes: Vec<_> = deletes.collect();
    let mut delete_requests = 0;
    for d in deletes {
        let results = d.await.expect("join").expect("delete");
        delete_requests += 1;
        let (last, own) = results.split_last().expect("results");
        assert!(own.iter().all(Result::is_ok), "{own:?}");
        let code = last.as_ref().err().map(|e| e.to_sqs().code);
        assert_eq!(code, Some(sluice_core::ErrorCode::ReceiptHandleIsInvalid));
    }
    let after_deletes = statements(&monitor, &db).await;
    let left = broker
        .receive_messages("counted", receive)
        .await
        .expect("receive what is left");
    assert!(
        left.is_empty(),
        "deleted messages came back: {}",
        left.len()
    );

    let (s, r, d) = (
        after_sends - before,
        after_receives - after_sends,
        after_deletes - after_receives,
    );
    eprintln!(
        "{REQUESTS} sends took {s} statements, {REQUESTS} receives {r}, {delete_requests} deletes {d}"
    );
    // Alone, a send is 2 statements, a receive and a delete 1 each.
    assert!(s < 2 * REQUESTS as i64, "sends were not combined: {s}");
    assert!(r < REQUESTS as i64, "receives were not combined: {r}");
    assert!(d < delete_requests, "deletes were not combined: {d}");
}

/// A handle for the same message as `handle` naming a later delivery
/// than any that happened.
fn forge(handle: &str) -> String {
    let mut rh = sluice_core::receipt::ReceiptHandle::decode(handle).expect("a valid handle");
    rh.receive += 5;
    rh.encode()
}

/// A send the database refuses (a NUL byte, which PostgreSQL's text cannot
/// hold; the server's own checks refuse it earlier) fails alone: the
/// requests combined with it are stored, each with its own ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_send_does_not_fail_the_sends_combined_with_it() {
    let Some((broker, _monitor, _db)) = counted_queue().await else {
        return;
    };
    const REQUESTS: usize = 48;
    let sends: Vec<_> = (0..REQUESTS)
        .map(|n| {
            let broker = broker.clone();
            let mut messages = batch(10);
            if n == REQUESTS / 2 {
                messages[3].body = "nul \0 byte".into();
            }
            tokio::spawn(async move { broker.send_messages("counted", messages).await })
        })
        .collect();
    let mut failed = 0;
    for (n, send) in sends.into_iter().enumerate() {
        match send.await.expect("join") {
            Ok(ids) => assert_eq!(ids.len(), 10, "request {n}"),
            Err(e) => {
                assert_eq!(n, REQUESTS / 2, "a good send failed: {e:?}");
                failed += 1;
            }
        }
    }
    assert_eq!(failed, 1, "the refused send must fail");
    let counts = broker.queue_counts("counted").await.expect("counts");
    assert_eq!(counts.visible, (REQUESTS as u64 - 1) * 10);
}

/// Rule L4: the node's count of messages in flight, kept for a second,
/// is counted again once stale (else it only ever grows, and the limit
/// would refuse receives that are within it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l4_a_stale_in_flight_count_is_counted_again() {
    let Some((broker, monitor, db)) = counted_queue().await else {
        return;
    };
    let recounts = || async {
        monitor
            .query_one(
                "SELECT COALESCE(sum(s.calls), 0)::bigint FROM pg_stat_statements s
                 JOIN pg_database d ON d.oid = s.dbid
                 WHERE d.datname = $1 AND s.query LIKE 'SELECT count(*) FROM (SELECT %'",
                &[&db],
            )
            .await
            .expect("read pg_stat_statements")
            .get::<_, i64>(0)
    };
    let receive = receive_at_once(1);
    broker
        .send_messages("counted", batch(3))
        .await
        .expect("send");
    broker
        .receive_messages("counted", receive.clone())
        .await
        .expect("first receive");
    let first = recounts().await;
    assert!(first >= 1, "the first receive counts");
    broker
        .receive_messages("counted", receive.clone())
        .await
        .expect("receive with a fresh count");
    assert_eq!(recounts().await, first, "a fresh count is not read again");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    broker
        .receive_messages("counted", receive)
        .await
        .expect("receive with a stale count");
    assert_eq!(
        recounts().await,
        first + 1,
        "a stale count is counted again"
    );
}
