//! Losing the database: clients get a retryable `ServiceUnavailable`,
//! never a wrong answer, and the engine reconnects by itself once the
//! database is back. Without PostgreSQL's binaries the test says SKIPPED.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_broker::{Broker, Coordination, CreateQueue, NewMessage, ReceiveOptions};
use sluice_core::attributes::QueueConfig;
use sluice_core::{ErrorCode, ManualClock};
use sluice_postgres::{PostgresBroker, PostgresOptions, testing};

fn message(body: &str) -> NewMessage {
    NewMessage {
        body: body.into(),
        ..Default::default()
    }
}

fn receive_now() -> ReceiveOptions {
    ReceiveOptions {
        max_messages: 10,
        visibility_timeout: None,
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

async fn admin(cluster: &testing::TestCluster, sql: &str) {
    let (client, connection) =
        tokio_postgres::connect(&cluster.url("postgres"), tokio_postgres::NoTls)
            .await
            .expect("admin connection");
    let driver = tokio::spawn(connection);
    client.batch_execute(sql).await.expect(sql);
    drop(client);
    let _ = driver.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_database_is_service_unavailable_then_recovers() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let db = url.rsplit('/').next().unwrap().to_string();
    let options = PostgresOptions {
        pool_size: 2,
        wait_timeout: Duration::from_secs(1),
        keyring: None,
    };
    let broker = PostgresBroker::connect(&url, Arc::new(ManualClock::default()), options)
        .await
        .unwrap();
    broker
        .create_queue(CreateQueue {
            name: "q".into(),
            config: QueueConfig::default(),
            requested: Default::default(),
            tags: Default::default(),
        })
        .await
        .unwrap();
    broker
        .send_messages("q", vec![message("before")])
        .await
        .unwrap();

    // The database goes away: its sessions end and no new one is accepted.
    admin(
        cluster,
        &format!(
            "ALTER DATABASE {db} ALLOW_CONNECTIONS false;
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db}';"
        ),
    )
    .await;
    let unavailable = |code: ErrorCode| assert_eq!(code, ErrorCode::ServiceUnavailable);
    unavailable(
        broker
            .send_messages("q", vec![message("x")])
            .await
            .unwrap_err()
            .to_sqs()
            .code,
    );
    unavailable(
        broker
            .receive_messages("q", receive_now())
            .await
            .unwrap_err()
            .to_sqs()
            .code,
    );
    unavailable(broker.queue_counts("q").await.unwrap_err().to_sqs().code);
    unavailable(broker.list_queues().await.unwrap_err().to_sqs().code);
    // GetQueue answers from the node's queue cache for up to a second (as
    // it would had the request come just before the outage); after that
    // it must not pretend either.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let e = broker.get_queue("q").await.unwrap_err();
    unavailable(e.to_sqs().code);
    assert!(
        !e.to_sqs().message.to_lowercase().contains("sql"),
        "{}",
        e.to_sqs().message
    );

    // Back again: the engine reconnects without help, and nothing was lost.
    admin(
        cluster,
        &format!("ALTER DATABASE {db} ALLOW_CONNECTIONS true"),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let got = loop {
        match broker.receive_messages("q", receive_now()).await {
            Ok(got) => break got,
            Err(e) => {
                unavailable(e.to_sqs().code);
                assert!(Instant::now() < deadline, "never reconnected");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    let bodies: Vec<&str> = got.iter().map(|m| m.body.as_str()).collect();
    assert_eq!(bodies, ["before"], "the failed send stored nothing");
}

/// Background jobs run on one node at a time: a claim excludes every other
/// node until it is dropped, and when its database session ends (the node
/// died, or lost the database) it says so and another node may take it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_claim_is_exclusive_and_ends_with_its_session() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let db = url.rsplit('/').next().unwrap().to_string();
    let node = || async {
        PostgresBroker::connect(
            &url,
            Arc::new(ManualClock::default()),
            PostgresOptions::default(),
        )
        .await
        .unwrap()
    };
    let (a, b) = (node().await, node().await);
    let held = a.claim_job("move-task:t1").await.unwrap().expect("free");
    assert!(held.is_held());
    assert!(
        b.claim_job("move-task:t1").await.unwrap().is_none(),
        "held by A"
    );
    assert!(
        b.claim_job("move-task:t2").await.unwrap().is_some(),
        "another job is free"
    );
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(5);
    let again = loop {
        if let Some(c) = b.claim_job("move-task:t1").await.unwrap() {
            break c;
        }
        assert!(Instant::now() < deadline, "never released");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // B's session ends under it: the claim says it no longer holds.
    admin(
        cluster,
        &format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = '{db}' AND pid <> pg_backend_pid()"
        ),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while again.is_held() {
        assert!(
            Instant::now() < deadline,
            "a lost session still claims to hold"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while a.claim_job("move-task:t1").await.ok().flatten().is_none() {
        assert!(Instant::now() < deadline, "the job never became free");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
