//! Rule H6: the PostgreSQL database of a `sluice serve --postgres` node is
//! restarted (stopped as a crash would, then started, as its own user)
//! while two producers and a consumer run against the node. Meanwhile
//! requests get 503 ServiceUnavailable, which clients retry; afterwards
//! the node serves again without help, every acknowledged message is
//! received, and no message is delivered twice within its visibility
//! timeout. The cluster is the test's own (the shared one serves the
//! other tests). Without PostgreSQL's binaries it says SKIPPED, and fails
//! instead with SLUICE_REQUIRE_POSTGRES=1.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_sqs::config::http::HttpResponse;
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, QueueAttributeName, SendMessageBatchRequestEntry,
};
use sluice_postgres::testing;

use crate::common::SluiceProcess;

/// The queue's visibility timeout.
const VISIBILITY: Duration = Duration::from_secs(10);
/// Longest a request may take before the test calls it hung.
const REQUEST_PATIENCE: Duration = Duration::from_secs(20);

/// What the clients saw.
#[derive(Default)]
struct Seen {
    /// Every body a producer tried to send.
    attempted: HashSet<String>,
    /// Message ids of acknowledged sends.
    acked: HashSet<String>,
    /// When an acknowledged send was answered, by message id.
    acked_at: HashMap<String, Instant>,
    /// When the consumer received each message id, in order.
    deliveries: HashMap<String, Vec<Instant>>,
    /// Bodies received.
    received: HashSet<String>,
    /// Failed requests: when, the operation, the HTTP status (0: none) and
    /// the error code.
    errors: Vec<(Instant, &'static str, u16, String)>,
}

impl Seen {
    fn error<E: ProvideErrorMetadata + std::fmt::Debug>(
        &mut self,
        op: &'static str,
        e: &SdkError<E, HttpResponse>,
    ) {
        let status = e.raw_response().map_or(0, |r| r.status().as_u16());
        let code = match e.code() {
            Some(code) => code.to_string(),
            None => format!("{e:?}"),
        };
        self.errors.push((Instant::now(), op, status, code));
    }

    fn hung(&mut self, op: &'static str) {
        self.errors
            .push((Instant::now(), op, 0, "no answer in time".to_string()));
    }
}

type Shared = Arc<Mutex<Seen>>;

/// A producer: batches of 5 unique bodies until `stop`.
async fn produce(
    sqs: aws_sdk_sqs::Client,
    url: String,
    who: usize,
    seen: Shared,
    stop: Arc<AtomicBool>,
) {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let mut batch = sqs.send_message_batch().queue_url(&url);
        let mut bodies = HashMap::new();
        for i in 0..5 {
            let body = format!("p{who}-{n}");
            n += 1;
            bodies.insert(format!("e{i}"), body.clone());
            seen.lock().unwrap().attempted.insert(body.clone());
            batch = batch.entries(
                SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(body)
                    .build()
                    .unwrap(),
            );
        }
        match tokio::time::timeout(REQUEST_PATIENCE, batch.send()).await {
            Ok(Ok(out)) => {
                let now = Instant::now();
                let mut seen = seen.lock().unwrap();
                for ok in out.successful() {
                    seen.acked.insert(ok.message_id().to_string());
                    seen.acked_at.insert(ok.message_id().to_string(), now);
                }
                for failed in out.failed() {
                    let code = failed.code().to_string();
                    seen.errors.push((now, "SendMessageBatch entry", 200, code));
                }
            }
            Ok(Err(e)) => {
                seen.lock().unwrap().error("SendMessageBatch", &e);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(_) => seen.lock().unwrap().hung("SendMessageBatch"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The consumer: receives, records each delivery, deletes, until `stop`.
async fn consume(sqs: aws_sdk_sqs::Client, url: String, seen: Shared, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let receive = sqs
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send();
        let got = match tokio::time::timeout(REQUEST_PATIENCE, receive).await {
            Ok(Ok(got)) => got,
            Ok(Err(e)) => {
                seen.lock().unwrap().error("ReceiveMessage", &e);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Err(_) => {
                seen.lock().unwrap().hung("ReceiveMessage");
                continue;
            }
        };
        let now = Instant::now();
        let messages = got.messages();
        if messages.is_empty() {
            continue;
        }
        let mut delete = sqs.delete_message_batch().queue_url(&url);
        {
            let mut seen = seen.lock().unwrap();
            for (i, m) in messages.iter().enumerate() {
                let id = m.message_id().unwrap().to_string();
                seen.deliveries.entry(id).or_default().push(now);
                seen.received.insert(m.body().unwrap().to_string());
                delete = delete.entries(
                    DeleteMessageBatchRequestEntry::builder()
                        .id(format!("d{i}"))
                        .receipt_handle(m.receipt_handle().unwrap())
                        .build()
                        .unwrap(),
                );
            }
        }
        match tokio::time::timeout(REQUEST_PATIENCE, delete.send()).await {
            // A delete that failed leaves the message to come back once
            // its visibility timeout is over, which is allowed.
            Ok(Ok(_)) => {}
            Ok(Err(e)) => seen.lock().unwrap().error("DeleteMessageBatch", &e),
            Err(_) => seen.lock().unwrap().hung("DeleteMessageBatch"),
        }
    }
}

/// H6: a restart of the database under load: retryable errors meanwhile,
/// the node back by itself, nothing acknowledged lost, nothing delivered
/// twice within the visibility timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn h6_a_database_restart_under_load_loses_nothing_and_delivers_nothing_early() {
    let Some(cluster) = testing::private_cluster() else {
        return;
    };
    let db = cluster.fresh_database().await;
    let node = SluiceProcess::start(&["--postgres", &db, "--postgres-pool-size", "8"]);
    let sqs = node.sdk();
    let url = sqs
        .create_queue()
        .queue_name("restart")
        .attributes(
            QueueAttributeName::VisibilityTimeout,
            VISIBILITY.as_secs().to_string(),
        )
        .send()
        .await
        .expect("create queue")
        .queue_url
        .unwrap();

    let seen: Shared = Arc::default();
    let stop_producers = Arc::new(AtomicBool::new(false));
    let stop_consumer = Arc::new(AtomicBool::new(false));
    let producers: Vec<_> = (0..2)
        .map(|who| {
            tokio::spawn(produce(
                sqs.clone(),
                url.clone(),
                who,
                seen.clone(),
                stop_producers.clone(),
            ))
        })
        .collect();
    let consumer = tokio::spawn(consume(
        sqs.clone(),
        url.clone(),
        seen.clone(),
        stop_consumer.clone(),
    ));

    tokio::time::sleep(Duration::from_secs(2)).await;
    let acked_before = seen.lock().unwrap().acked.len();
    assert!(acked_before > 0, "the producers ran before the restart");
    // The restart, as the cluster's owner runs it: stop, a while down, start.
    let cluster = Arc::new(cluster);
    let down_at = Instant::now();
    {
        let cluster = cluster.clone();
        tokio::task::spawn_blocking(move || cluster.stop())
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    {
        let cluster = cluster.clone();
        tokio::task::spawn_blocking(move || cluster.start())
            .await
            .unwrap();
    }
    let up_at = Instant::now();
    tokio::time::sleep(Duration::from_secs(4)).await;
    stop_producers.store(true, Ordering::Relaxed);
    for p in producers {
        p.await.unwrap();
    }

    // The consumer goes on until it has seen every acknowledged message.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let missing = {
            let seen = seen.lock().unwrap();
            seen.acked
                .iter()
                .filter(|id| !seen.deliveries.contains_key(*id))
                .count()
        };
        if missing == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{missing} acknowledged messages were never received"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Long enough for a message whose delete failed to come back early.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop_consumer.store(true, Ordering::Relaxed);
    consumer.await.unwrap();

    let seen = seen.lock().unwrap();
    // Meanwhile: errors, every one a retryable 503.
    let during = seen
        .errors
        .iter()
        .filter(|(at, ..)| *at >= down_at && *at <= up_at + Duration::from_secs(1))
        .count();
    assert!(during > 0, "no request failed while the database was down");
    let not_retryable: Vec<_> = seen
        .errors
        .iter()
        // (200: a batch entry refused alone, with the same code.)
        .filter(|(_, _, status, code)| {
            !(matches!(status, 503 | 200) && code == "ServiceUnavailable")
        })
        .collect();
    assert!(
        not_retryable.is_empty(),
        "errors other than a retryable 503: {not_retryable:?}"
    );
    // The node reconnected by itself: sends after the restart succeeded.
    let acked_after = seen.acked_at.values().filter(|at| **at > up_at).count();
    assert!(acked_after > 0, "no send succeeded after the restart");
    // Nothing acknowledged lost (checked above), nothing unsent received.
    assert!(
        seen.received.iter().all(|b| seen.attempted.contains(b)),
        "a message nobody sent"
    );
    // No message delivered twice within its visibility timeout (the client
    // sees a delivery at most a request's latency after the server made it).
    let slack = Duration::from_millis(1500);
    for (id, times) in &seen.deliveries {
        for pair in times.windows(2) {
            assert!(
                pair[1] - pair[0] + slack >= VISIBILITY,
                "{id} delivered again after {:?}, within its visibility timeout",
                pair[1] - pair[0]
            );
        }
    }
    let redelivered = seen.deliveries.values().filter(|t| t.len() > 1).count();
    eprintln!(
        "H6: {} acknowledged ({acked_before} before the restart, {acked_after} after it), \
         {} received, {redelivered} delivered again, {} failed requests ({during} during the outage)",
        seen.acked.len(),
        seen.deliveries.len(),
        seen.errors.len()
    );
}
