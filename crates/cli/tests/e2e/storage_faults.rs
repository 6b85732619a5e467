//! Storage faults seen through the server and the Rust SDK (rules D3,
//! D5): the embedded engine runs on `FaultStorage`, a file system in
//! memory whose byte budget can run out and whose syncs can fail. A send
//! that cannot be made durable gets SQS's retryable ServiceUnavailable
//! (503, `Receiver` fault: AWS's common error for "a temporary failure of
//! the server"), which the SDK's standard retry strategy retries; once
//! the storage takes writes again the engine reopens it by itself and
//! the same server, never restarted, takes sends again.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use aws_sdk_sqs::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::config::{
    BehaviorVersion, ConfigBag, Credentials, Intercept, Region, RuntimeComponents,
};
use aws_sdk_sqs::error::BoxError;
use aws_sdk_sqs::types::QueueAttributeName as Attr;
use sluice_embedded::{EmbeddedOptions, FaultStorage};

use crate::common::{TestServer, code, create_queue};
use crate::metrics::{plain, scrape};

/// Attempts to reopen the storage come at most this often.
const REOPEN_INTERVAL: Duration = Duration::from_millis(50);

/// A server on `storage` that checkpoints as in production (every
/// second) and tries to reopen its storage every [`REOPEN_INTERVAL`].
async fn server_on(storage: &FaultStorage) -> TestServer {
    let options = EmbeddedOptions {
        reopen_interval: REOPEN_INTERVAL,
        ..EmbeddedOptions::default()
    };
    TestServer::start_on(storage, options).await
}

/// `sluice_storage_writes_refused` on the server's `/metrics`.
async fn writes_refused(server: &TestServer) -> f64 {
    plain(&scrape(server).await, "sluice_storage_writes_refused")
}

/// Sends `body`: true when acknowledged, false when refused
/// with the retryable 503 ServiceUnavailable, and a panic on any other
/// answer.
async fn send(sqs: &aws_sdk_sqs::Client, url: &str, body: &str) -> bool {
    match sqs
        .send_message()
        .queue_url(url)
        .message_body(body)
        .send()
        .await
    {
        Ok(out) => {
            assert!(out.message_id().is_some());
            true
        }
        Err(e) => {
            let raw = e.raw_response().expect("an answer");
            assert_eq!(raw.status().as_u16(), 503, "{e:?}");
            assert_eq!(
                raw.headers().get("x-amzn-query-error"),
                Some("ServiceUnavailable;Receiver")
            );
            assert_eq!(code(&e), "ServiceUnavailable", "{e:?}");
            false
        }
    }
}

/// Sends 60 KiB bodies until one is refused: the disk, whose budget was
/// set to what it holds, takes the first ones into the zeros the log's
/// segment was made ready with. Returns the acknowledged bodies and the
/// refused one.
async fn fill_the_disk(
    sqs: &aws_sdk_sqs::Client,
    url: &str,
    storage: &FaultStorage,
) -> (Vec<String>, String) {
    storage.set_space(Some(storage.used()));
    let filler = "x".repeat(60 << 10);
    let mut acked = Vec::new();
    loop {
        let body = format!("full-{:02}-{filler}", acked.len());
        if !send(sqs, url, &body).await {
            return (acked, body);
        }
        acked.push(body);
        assert!(acked.len() < 100, "a full disk took 6 MiB");
    }
}

/// Sends `body` until acknowledged, for up to 10 s; every refusal before
/// is the retryable 503. Returns the refusals seen.
async fn send_until_accepted(sqs: &aws_sdk_sqs::Client, url: &str, body: &str) -> usize {
    for refused in 0..1000 {
        if send(sqs, url, body).await {
            return refused;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server did not take sends again within 10 s");
}

/// Receives and deletes every message of `url` (the engine's clock does
/// not move, so a received message never comes back on its own): each
/// body with how often it was received.
async fn drain(sqs: &aws_sdk_sqs::Client, url: &str) -> BTreeMap<String, usize> {
    let mut received = BTreeMap::new();
    loop {
        let got = sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .visibility_timeout(600)
            .send()
            .await
            .expect("receive after the recovery");
        if got.messages().is_empty() {
            return received;
        }
        for m in got.messages() {
            *received
                .entry(m.body().unwrap_or_default().to_string())
                .or_insert(0) += 1;
            sqs.delete_message()
                .queue_url(url)
                .receipt_handle(m.receipt_handle().unwrap_or_default())
                .send()
                .await
                .expect("delete after the recovery");
        }
    }
}

/// Every acknowledged body was received exactly once; anything else
/// received is one of the refused sends (a failed batch may be read back
/// whole: it was never acknowledged, so a client that retried it may see
/// it twice, as SQS's at-least-once delivery allows), at most once.
fn assert_exactly_once(received: &BTreeMap<String, usize>, acked: &[String], refused: &[String]) {
    for body in acked {
        assert_eq!(
            received.get(body),
            Some(&1),
            "acknowledged {:.12} received {:?} times",
            body,
            received.get(body)
        );
    }
    for (body, times) in received {
        assert_eq!(*times, 1, "{body:.12} received {times} times");
        assert!(
            acked.contains(body) || refused.contains(body),
            "{body:.12} was never sent"
        );
    }
}

async fn visible(sqs: &aws_sdk_sqs::Client, url: &str) -> u64 {
    let out = sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(Attr::ApproximateNumberOfMessages)
        .send()
        .await
        .expect("attributes need no write");
    out.attributes().unwrap()[&Attr::ApproximateNumberOfMessages]
        .parse()
        .unwrap()
}

/// Counts the attempts of every call made through a client.
#[derive(Debug, Default)]
struct CountAttempts(Arc<AtomicU32>);

impl Intercept for CountAttempts {
    fn name(&self) -> &'static str {
        "CountAttempts"
    }

    fn read_before_attempt(
        &self,
        _: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// The Rust SDK with its standard retry strategy (3 attempts, short
/// backoff), counting its attempts.
fn retrying_sdk(endpoint: &str) -> (aws_sdk_sqs::Client, Arc<AtomicU32>) {
    let attempts = Arc::new(AtomicU32::new(0));
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new("test", "test", None, None, "sluice-tests"))
        .http_client(aws_smithy_http_client::Builder::new().build_http())
        .retry_config(
            RetryConfig::standard()
                .with_max_attempts(3)
                .with_initial_backoff(Duration::from_millis(1))
                .with_max_backoff(Duration::from_millis(5)),
        )
        .interceptor(CountAttempts(attempts.clone()))
        .build();
    (aws_sdk_sqs::Client::from_conf(config), attempts)
}

/// D3, D5 through the SDK on a full disk: sends are acknowledged until
/// the byte budget runs out; then SendMessage gets the retryable 503
/// ServiceUnavailable (the SDK's standard strategy retries it: three
/// attempts for one call) and is never acknowledged. Meanwhile what needs
/// no write answers (GetQueueAttributes, ListQueues), while ReceiveMessage
/// gets the 503 too, and takes nothing: a receive must record its receive
/// count and visibility deadline durably (rule D1) before it answers. Once the
/// budget is raised the engine reopens its storage by itself, the same
/// server takes sends again, and every acknowledged message is received
/// exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d5_a_full_disk_refuses_sends_with_503_and_the_server_takes_them_again_once_space_returns()
{
    let storage = FaultStorage::new();
    let server = server_on(&storage).await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "full-disk").await;
    let mut acked = Vec::new();
    for i in 0..5 {
        let body = format!("before-{i}");
        assert!(
            send(&sqs, &url, &body).await,
            "a send before the disk filled"
        );
        acked.push(body);
    }
    assert_eq!(writes_refused(&server).await, 0.0);
    let (filled, first_refused) = fill_the_disk(&sqs, &url, &storage).await;
    acked.extend(filled);
    assert_eq!(writes_refused(&server).await, 1.0, "the gauge while full");
    let mut refused = vec![first_refused];
    for i in 0..5 {
        let body = format!("while-full-{i}");
        assert!(!send(&sqs, &url, &body).await, "a send on a full disk");
        refused.push(body);
        tokio::time::sleep(REOPEN_INTERVAL / 2).await;
    }
    let (retrying, attempts) = retrying_sdk(&server.endpoint);
    let e = retrying
        .send_message()
        .queue_url(&url)
        .message_body("retried")
        .send()
        .await
        .expect_err("a send on a full disk");
    refused.push("retried".into());
    assert_eq!(e.raw_response().map(|r| r.status().as_u16()), Some(503));
    assert_eq!(code(&e), "ServiceUnavailable");
    assert_eq!(attempts.load(Ordering::SeqCst), 3, "the SDK retries a 503");
    // What needs no write goes on.
    assert!(visible(&sqs, &url).await >= acked.len() as u64);
    let queues = sqs
        .list_queues()
        .send()
        .await
        .expect("listing needs no write");
    assert_eq!(queues.queue_urls().len(), 1);
    let before = visible(&sqs, &url).await;
    for _ in 0..3 {
        let e = sqs
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .send()
            .await
            .expect_err("a receive must record its receive count");
        assert_eq!(e.raw_response().map(|r| r.status().as_u16()), Some(503));
        assert_eq!(code(&e), "ServiceUnavailable");
    }
    assert_eq!(
        visible(&sqs, &url).await,
        before,
        "a refused receive took messages"
    );

    storage.set_space(None);
    send_until_accepted(&sqs, &url, "after-0").await;
    assert_eq!(
        writes_refused(&server).await,
        0.0,
        "the gauge once reopened"
    );
    acked.push("after-0".into());
    for i in 1..5 {
        let body = format!("after-{i}");
        assert!(send(&sqs, &url, &body).await, "a send after the recovery");
        acked.push(body);
    }
    assert_exactly_once(&drain(&sqs, &url).await, &acked, &refused);
}

/// D3, D5 through the SDK after a failed `fdatasync` of the log: the
/// send whose batch it was gets the retryable 503 and is never
/// acknowledged; the log is never synced again to carry on, so the next
/// sends are refused the same way until the engine, on its own, has
/// reopened the storage (the storage takes writes again at once). Then
/// the same server takes sends, and every acknowledged message is
/// received exactly once (the failed send at most once: its bytes may
/// be read back whole).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d5_a_failed_log_sync_refuses_the_send_with_503_and_the_server_recovers_by_itself() {
    let storage = FaultStorage::new();
    let server = server_on(&storage).await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "failed-sync").await;
    let mut acked = Vec::new();
    for i in 0..5 {
        let body = format!("before-{i}");
        assert!(send(&sqs, &url, &body).await, "a send before the fault");
        acked.push(body);
    }
    storage.fail_sync_of(".wal");
    assert!(
        !send(&sqs, &url, "failed").await,
        "the send whose sync failed"
    );
    let mut refused = vec!["failed".to_string()];
    // Refused, or taken by the storage already reopened: never lost.
    let body = "next".to_string();
    if send(&sqs, &url, &body).await {
        acked.push(body);
    } else {
        refused.push(body);
    }
    assert!(visible(&sqs, &url).await >= acked.len() as u64);
    send_until_accepted(&sqs, &url, "after-0").await;
    acked.push("after-0".into());
    for i in 1..5 {
        let body = format!("after-{i}");
        assert!(send(&sqs, &url, &body).await, "a send after the recovery");
        acked.push(body);
    }
    assert_exactly_once(&drain(&sqs, &url).await, &acked, &refused);
}
