//! Push consumers (rules C1, C2, C4, C5): an in-process sluice on the system
//! clock delivers batches to a real HTTP handler running in the test.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_sqs::primitives::Blob;
use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName};
use serde_json::Value;
use sluice_consumers::{self as consumers, ConsumerSpec, Consumers};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::common::{TestServer, create_queue};

/// The handler's answer to one POST.
#[derive(Clone)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) function_error: bool,
    pub(crate) body: String,
    pub(crate) delay: Duration,
    /// A `Retry-After` header's value.
    pub(crate) retry_after: Option<String>,
}

impl Reply {
    pub(crate) fn ok(body: &str) -> Self {
        Reply {
            status: 200,
            function_error: false,
            body: body.to_string(),
            delay: Duration::ZERO,
            retry_after: None,
        }
    }
}

/// Decides the answer to the `n`-th event (0-based).
pub(crate) type Behaviour = Arc<dyn Fn(&Value, usize) -> Reply + Send + Sync>;

/// A tiny HTTP/1.1 handler: records every event and answers by `behaviour`.
pub(crate) struct Handler {
    pub(crate) url: String,
    events: Arc<Mutex<Vec<Value>>>,
    /// Per event (by index): when the handler got it and when it answered.
    spans: Arc<Mutex<Vec<(usize, Instant, Instant)>>>,
    pub(crate) most_in_flight: Arc<AtomicUsize>,
    /// TLS handshakes that failed (an https:// handler whose certificate
    /// the consumer does not trust).
    pub(crate) handshake_failures: Arc<AtomicUsize>,
}

/// What every connection of a handler records into, and how it answers.
#[derive(Clone)]
struct Recorder {
    events: Arc<Mutex<Vec<Value>>>,
    spans: Arc<Mutex<Vec<(usize, Instant, Instant)>>>,
    in_flight: Arc<AtomicUsize>,
    most_in_flight: Arc<AtomicUsize>,
    behaviour: Behaviour,
}

impl Recorder {
    /// Reads one event off `stream`, records it and answers it.
    async fn answer<S: AsyncRead + AsyncWrite + Unpin>(self, mut stream: S) {
        let Some(event) = read_request(&mut stream).await else {
            return;
        };
        let started = Instant::now();
        let n = {
            let mut all = self.events.lock().unwrap();
            all.push(event.clone());
            all.len() - 1
        };
        let current = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(current, Ordering::SeqCst);
        let reply = (self.behaviour)(&event, n);
        tokio::time::sleep(reply.delay).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.spans
            .lock()
            .unwrap()
            .push((n, started, Instant::now()));
        write_reply(stream, &reply).await;
    }
}

impl Handler {
    pub(crate) async fn start(behaviour: Behaviour) -> Self {
        Self::start_at("127.0.0.1:0".parse().unwrap(), behaviour).await
    }

    /// A handler listening on `addr` (a port given up earlier, say).
    pub(crate) async fn start_at(addr: std::net::SocketAddr, behaviour: Behaviour) -> Self {
        let listener = TcpListener::bind(addr).await.unwrap();
        Self::serving(listener, None, behaviour)
    }

    /// An https:// handler presenting the certificate of `tls`.
    pub(crate) async fn start_tls(tls: TlsAcceptor, behaviour: Behaviour) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serving(listener, Some(tls), behaviour)
    }

    fn serving(listener: TcpListener, tls: Option<TlsAcceptor>, behaviour: Behaviour) -> Self {
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!(
            "{scheme}://{}/2015-03-31/functions/function/invocations",
            listener.local_addr().unwrap()
        );
        let recorder = Recorder {
            events: Arc::new(Mutex::new(Vec::new())),
            spans: Arc::new(Mutex::new(Vec::new())),
            in_flight: Arc::new(AtomicUsize::new(0)),
            most_in_flight: Arc::new(AtomicUsize::new(0)),
            behaviour,
        };
        let handshake_failures = Arc::new(AtomicUsize::new(0));
        let handler = Handler {
            url,
            events: recorder.events.clone(),
            spans: recorder.spans.clone(),
            most_in_flight: recorder.most_in_flight.clone(),
            handshake_failures: handshake_failures.clone(),
        };
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (recorder, tls, failures) =
                    (recorder.clone(), tls.clone(), handshake_failures.clone());
                tokio::spawn(async move {
                    match tls {
                        None => recorder.answer(stream).await,
                        Some(tls) => match tls.accept(stream).await {
                            Ok(stream) => recorder.answer(stream).await,
                            Err(_) => {
                                failures.fetch_add(1, Ordering::SeqCst);
                            }
                        },
                    }
                });
            }
        });
        handler
    }

    pub(crate) fn events(&self) -> Vec<Value> {
        self.events.lock().unwrap().clone()
    }

    /// When the handler answered event `n`, once it has.
    pub(crate) fn answered_at(&self, n: usize) -> Option<Instant> {
        let spans = self.spans.lock().unwrap();
        spans.iter().find(|s| s.0 == n).map(|s| s.2)
    }

    /// Pairs of events (by index) the handler was working on at once.
    pub(crate) fn overlapping(&self) -> Vec<(usize, usize)> {
        let spans = self.spans.lock().unwrap().clone();
        let mut out = Vec::new();
        for (i, &(a, a_start, a_end)) in spans.iter().enumerate() {
            for &(b, b_start, b_end) in &spans[i + 1..] {
                if a_start < b_end && b_start < a_end {
                    out.push((a.min(b), a.max(b)));
                }
            }
        }
        out
    }
}

/// Reads one request's JSON body (headers up to the blank line, then
/// Content-Length bytes).
async fn read_request<S: AsyncRead + Unpin>(stream: &mut S) -> Option<Value> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        let text = String::from_utf8_lossy(&buf);
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().ok())?
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return serde_json::from_slice(&buf[end + 4..end + 4 + length]).ok();
            }
        }
    }
}

async fn write_reply<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, reply: &Reply) {
    let mut extra = String::new();
    if reply.function_error {
        extra.push_str("X-Amz-Function-Error: Unhandled\r\n");
    }
    if let Some(value) = &reply.retry_after {
        extra.push_str(&format!("Retry-After: {value}\r\n"));
    }
    let text = format!(
        "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{}",
        reply.status,
        reply.body.len(),
        reply.body
    );
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_millis(100), stream.read_to_end(&mut rest)).await;
}

pub(crate) fn spec(name: &str, queue: &str, url: &str) -> ConsumerSpec {
    ConsumerSpec {
        skip_completed: None,
        name: name.into(),
        queue: queue.into(),
        url: url.into(),
        batch_size: 10,
        batching_window: Duration::ZERO,
        max_concurrency: 2,
        timeout: Duration::from_secs(1),
        report_batch_item_failures: true,
        filter: Vec::new(),
    }
}

/// Checks and starts `specs` on `server`.
pub(crate) async fn start(server: &TestServer, specs: Vec<ConsumerSpec>) -> Consumers {
    let svc = &server.service;
    consumers::check_consumers(&svc.broker, &specs)
        .await
        .unwrap();
    consumers::spawn_consumers(svc.consumer_host(), specs)
}

/// A queue with this visibility timeout (and maybe a redrive policy).
pub(crate) async fn queue(
    server: &TestServer,
    name: &str,
    visibility: u32,
    redrive: Option<&str>,
) -> String {
    let mut create = server.sdk().create_queue().queue_name(name).attributes(
        QueueAttributeName::VisibilityTimeout,
        visibility.to_string(),
    );
    if let Some(r) = redrive {
        create = create.attributes(QueueAttributeName::RedrivePolicy, r);
    }
    create.send().await.unwrap().queue_url.unwrap()
}

pub(crate) async fn send(server: &TestServer, url: &str, body: &str) -> String {
    server
        .sdk()
        .send_message()
        .queue_url(url)
        .message_body(body)
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap()
}

pub(crate) use crate::common::until;

/// The messages of a queue not yet deleted: visible, in flight or delayed.
pub(crate) async fn remaining(server: &TestServer, url: &str) -> usize {
    crate::common::messages_in(&server.sdk(), url).await
}

pub(crate) fn bodies(event: &Value) -> Vec<String> {
    let mut out: Vec<String> = event["Records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["body"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

/// C1: the event has Lambda's fields and types (AWS's documented sample,
/// "Example Amazon SQS message event", cited in consumers/event.rs), with
/// the digests SendMessage answered; the handled message is deleted.
#[tokio::test]
async fn c1_event_has_lambdas_fields() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "ev", 5, None).await;
    let sent = server
        .sdk()
        .send_message()
        .queue_url(&url)
        .message_body("Test message.")
        .message_attributes(
            "myAttribute",
            MessageAttributeValue::builder()
                .data_type("String")
                .string_value("myValue")
                .build()
                .unwrap(),
        )
        .message_attributes(
            "raw",
            MessageAttributeValue::builder()
                .data_type("Binary")
                .binary_value(Blob::new(vec![1, 2, 3]))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let handler = Handler::start(Arc::new(|_, _| Reply::ok(""))).await;
    let _consumers = start(&server, vec![spec("ev-worker", "ev", &handler.url)]).await;
    assert!(
        until(Duration::from_secs(5), async || !handler
            .events()
            .is_empty())
        .await
    );
    let event = &handler.events()[0];
    let records = event["Records"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r["messageId"], sent.message_id().unwrap());
    assert!(r["receiptHandle"].as_str().is_some_and(|h| !h.is_empty()));
    assert_eq!(r["body"], "Test message.");
    assert_eq!(r["md5OfBody"], "e4e68fb7bd0e697a0ae8f1bb342846b3");
    assert_eq!(r["md5OfBody"], sent.md5_of_message_body().unwrap());
    assert_eq!(
        r["md5OfMessageAttributes"],
        sent.md5_of_message_attributes().unwrap()
    );
    assert_eq!(r["eventSource"], "aws:sqs");
    assert_eq!(r["eventSourceARN"], "arn:aws:sqs:us-east-1:000000000000:ev");
    assert_eq!(r["awsRegion"], "us-east-1");
    let attrs = r["attributes"].as_object().unwrap();
    let names: Vec<&str> = attrs.keys().map(String::as_str).collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert_eq!(attrs["ApproximateReceiveCount"], "1");
    assert_eq!(attrs["SenderId"], "000000000000");
    for n in ["SentTimestamp", "ApproximateFirstReceiveTimestamp"] {
        assert!(
            attrs[n].as_str().unwrap().parse::<u64>().is_ok(),
            "{n}: a string of ms"
        );
    }
    assert_eq!(
        r["messageAttributes"]["myAttribute"],
        serde_json::json!({"stringValue": "myValue", "stringListValues": [], "binaryListValues": [], "dataType": "String"})
    );
    assert_eq!(r["messageAttributes"]["raw"]["binaryValue"], "AQID");
    assert!(
        until(Duration::from_secs(3), async || remaining(&server, &url)
            .await
            == 0)
        .await,
        "deleted"
    );
}

/// C2: only the items named in batchItemFailures come back; the others are
/// deleted.
#[tokio::test]
async fn c2_partial_failure_retries_only_the_failed_items() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "part", 1, None).await;
    for b in ["a", "b", "c"] {
        send(&server, &url, b).await;
    }
    let handler = Handler::start(Arc::new(|event, n| {
        if n > 0 {
            return Reply::ok(r#"{"batchItemFailures":[]}"#);
        }
        let failed: Vec<&str> = event["Records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["body"] == "b")
            .map(|r| r["messageId"].as_str().unwrap())
            .collect();
        Reply::ok(&format!(
            r#"{{"batchItemFailures":[{{"itemIdentifier":"{}"}}]}}"#,
            failed[0]
        ))
    }))
    .await;
    let mut s = spec("part-worker", "part", &handler.url);
    s.max_concurrency = 2;
    let _consumers = start(&server, vec![s]).await;
    assert!(until(Duration::from_secs(6), async || handler.events().len() >= 2).await);
    let events = handler.events();
    assert_eq!(bodies(&events[0]), ["a", "b", "c"], "one batch first");
    assert_eq!(bodies(&events[1]), ["b"], "only the failed item again");
    assert_eq!(
        events[1]["Records"][0]["attributes"]["ApproximateReceiveCount"],
        "2"
    );
    assert!(
        until(Duration::from_secs(3), async || remaining(&server, &url)
            .await
            == 0)
        .await
    );
    assert_eq!(handler.events().len(), 2);
}

/// C2: an itemIdentifier that is not in the batch, or the
/// X-Amz-Function-Error header, fails the whole batch: nothing is deleted.
#[tokio::test]
async fn c2_unknown_item_or_function_error_fails_the_whole_batch() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "whole", 1, None).await;
    for b in ["a", "b"] {
        send(&server, &url, b).await;
    }
    let handler = Handler::start(Arc::new(|_, n| match n {
        0 => Reply::ok(r#"{"batchItemFailures":[{"itemIdentifier":"not-a-message-id"}]}"#),
        1 => Reply {
            function_error: true,
            ..Reply::ok(r#"{"errorMessage":"boom"}"#)
        },
        _ => Reply::ok(""),
    }))
    .await;
    let mut s = spec("whole-worker", "whole", &handler.url);
    s.max_concurrency = 2;
    // A failed batch's messages come back one after the other (each is
    // given its visibility timeout as its failure is recorded): a batching
    // window gathers them into one batch again, so that each delivery is
    // the whole batch whatever the machine's load.
    s.batching_window = Duration::from_secs(1);
    let _consumers = start(&server, vec![s]).await;
    assert!(
        until(Duration::from_secs(15), async || handler.events().len()
            >= 3)
        .await
    );
    let events = handler.events();
    for (i, e) in events.iter().take(3).enumerate() {
        assert_eq!(bodies(e), ["a", "b"], "delivery {i}: the whole batch");
        assert_eq!(
            e["Records"][0]["attributes"]["ApproximateReceiveCount"],
            (i + 1).to_string()
        );
    }
    assert!(
        until(Duration::from_secs(3), async || remaining(&server, &url)
            .await
            == 0)
        .await
    );
    let metrics = server
        .service
        .metrics
        .render(&server.service.broker, &server.service.alarms, None)
        .await;
    for line in [
        r#"sluice_consumer_failures_total{consumer="whole-worker",kind="bad_response"} 1"#,
        r#"sluice_consumer_failures_total{consumer="whole-worker",kind="function_error"} 1"#,
        r#"sluice_consumer_deliveries_total{consumer="whole-worker"} 3"#,
        r#"sluice_consumer_deleted_messages_total{consumer="whole-worker"} 2"#,
        // Three batches of two: the histogram counts each in the bucket
        // `le="2.0"` and every larger one, none in `le="1.0"`.
        r#"sluice_consumer_batch_size_count{consumer="whole-worker"} 3"#,
        r#"sluice_consumer_batch_size_sum{consumer="whole-worker"} 6.0"#,
        r#"sluice_consumer_batch_size_bucket{le="1.0",consumer="whole-worker"} 0"#,
        r#"sluice_consumer_batch_size_bucket{le="2.0",consumer="whole-worker"} 3"#,
        r#"sluice_consumer_handler_duration_seconds_count{consumer="whole-worker"} 3"#,
        // The queue is empty: nothing in flight, and after two whole-batch
        // failures and one success the limit is back at one (rule C7).
        r#"sluice_consumer_in_flight_batches{consumer="whole-worker"} 0"#,
        r#"sluice_consumer_concurrency_limit{consumer="whole-worker"} 1"#,
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
    // Every series shows from the consumer's start (failures by kind, above,
    // once one happens).
    for name in sluice_consumers::metrics::consumer_metric_names() {
        assert!(
            metrics.contains(&format!("\n{name}")),
            "{name} missing from\n{metrics}"
        );
    }
}

/// C2, C11: a non-2xx fails the whole batch; a poison message is received
/// maxReceiveCount times and then reaches the dead-letter queue (R-rules
/// unchanged: the consumer is one more receiver) with the last failure's
/// reason.
#[tokio::test]
async fn c2_non_2xx_fails_the_batch_and_poison_reaches_the_dlq() {
    let server = TestServer::start_real_time().await;
    let dlq = create_queue(&server.sdk(), "poison-dlq").await;
    let redrive = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:poison-dlq","maxReceiveCount":2}"#;
    let url = queue(&server, "poison", 1, Some(redrive)).await;
    let id = send(&server, &url, "poison").await;
    let handler = Handler::start(Arc::new(|_, _| Reply {
        status: 500,
        ..Reply::ok(r#"{"errorMessage":"db down"}"#)
    }))
    .await;
    let _consumers = start(&server, vec![spec("poison-worker", "poison", &handler.url)]).await;
    assert!(
        until(Duration::from_secs(8), async || remaining(&server, &dlq)
            .await
            == 1)
        .await,
        "dead-lettered"
    );
    let events = handler.events();
    assert_eq!(events.len(), 2, "delivered maxReceiveCount times");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["Records"][0]["messageId"], id.as_str());
        assert_eq!(
            e["Records"][0]["attributes"]["ApproximateReceiveCount"],
            (i + 1).to_string()
        );
    }
    assert_eq!(remaining(&server, &url).await, 0);
    // C11: the last failure's reason is its provenance in the DLQ.
    let raw = server.raw();
    let peek = tokio::task::spawn_blocking(move || {
        raw.json_target(
            "Sluice.PeekMessages",
            &serde_json::json!({ "QueueUrl": dlq }).to_string(),
        )
    })
    .await
    .unwrap();
    let body: Value = serde_json::from_str(&peek.body).unwrap();
    assert_eq!(
        body["Messages"][0]["FailureReason"], "consumer poison-worker: HTTP 500: db down",
        "{}",
        peek.body
    );
    let metrics = server
        .service
        .metrics
        .render(&server.service.broker, &server.service.alarms, None)
        .await;
    let line = r#"sluice_consumer_failures_total{consumer="poison-worker",kind="status"} 2"#;
    assert!(metrics.contains(line), "{line} in\n{metrics}");
}

/// C4: a handler slower than the visibility timeout gets its batch once:
/// the delivery keeps extending the messages' visibility while it runs.
/// The queue's timeout is lowered to 1 s after the consumer's start check
/// (which requires it to cover the handler's 4 s limit), and the handler
/// takes 3 s; a second poller is free to receive the message if it shows.
#[tokio::test]
async fn c4_slow_handler_is_delivered_once() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "slow", 4, None).await;
    let handler = Handler::start(Arc::new(|_, _| Reply {
        delay: Duration::from_secs(3),
        ..Reply::ok("")
    }))
    .await;
    let mut s = spec("slow-worker", "slow", &handler.url);
    s.timeout = Duration::from_secs(4);
    let svc = &server.service;
    consumers::check_consumers(&svc.broker, std::slice::from_ref(&s))
        .await
        .unwrap();
    server
        .sdk()
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::VisibilityTimeout, "1")
        .send()
        .await
        .unwrap();
    let _consumers = consumers::spawn_consumers(svc.consumer_host(), vec![s]);
    send(&server, &url, "slow").await;
    // While the handler works, the batch is in flight (the gauge of
    // docs/metrics.md); the handler's 3 s show in its answer time.
    assert!(
        until(Duration::from_secs(2), async || !handler
            .events()
            .is_empty())
        .await
    );
    let during = render_metrics(&server).await;
    let line = r#"sluice_consumer_in_flight_batches{consumer="slow-worker"} 1"#;
    assert!(during.contains(line), "{line} in\n{during}");
    assert!(
        until(Duration::from_secs(7), async || remaining(&server, &url)
            .await
            == 0
            && !handler.events().is_empty())
        .await
    );
    assert_eq!(handler.events().len(), 1, "delivered once");
    let after = render_metrics(&server).await;
    let line = r#"sluice_consumer_in_flight_batches{consumer="slow-worker"} 0"#;
    assert!(after.contains(line), "{line} in\n{after}");
    let took = sample_value(
        &after,
        r#"sluice_consumer_handler_duration_seconds_sum{consumer="slow-worker"}"#,
    );
    assert!((3.0..4.0).contains(&took), "{took} s in\n{after}");
}

/// The server's /metrics exposition.
pub(crate) async fn render_metrics(server: &TestServer) -> String {
    server
        .service
        .metrics
        .render(&server.service.broker, &server.service.alarms, None)
        .await
}

/// The value of the sample line that starts with `series`.
pub(crate) fn sample_value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{series} in\n{text}"))
}

/// A handler slower than `timeout_seconds` fails its batch (counted as a
/// timeout); the start refuses a timeout above the queue's visibility
/// timeout, naming both.
#[tokio::test]
async fn c4_timeouts_fail_and_long_limits_are_refused() {
    let server = TestServer::start_real_time().await;
    queue(&server, "short", 2, None).await;
    let mut s = spec("too-long", "short", "http://127.0.0.1:9/");
    s.timeout = Duration::from_secs(3);
    let err = consumers::check_consumers(&server.service.broker, &[s])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("too-long") && err.contains("visibility timeout of queue short (2 s)"),
        "{err}"
    );
    let missing = spec("lost", "nope", "http://127.0.0.1:9/");
    let err = consumers::check_consumers(&server.service.broker, &[missing])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("lost") && err.contains("nope"), "{err}");

    let url = queue(&server, "late", 2, None).await;
    send(&server, &url, "late").await;
    let handler = Handler::start(Arc::new(|_, _| Reply {
        delay: Duration::from_secs(2),
        ..Reply::ok("")
    }))
    .await;
    let _consumers = start(&server, vec![spec("late-worker", "late", &handler.url)]).await;
    let line = r#"sluice_consumer_failures_total{consumer="late-worker",kind="timeout"} 1"#;
    assert!(
        until(Duration::from_secs(4), async || {
            server
                .service
                .metrics
                .render(&server.service.broker, &server.service.alarms, None)
                .await
                .contains(line)
        })
        .await
    );
    assert_eq!(remaining(&server, &url).await, 1, "not deleted");
}

/// Batches hold at most `batch_size` messages and at most
/// `max_concurrency` are in flight at once.
#[tokio::test]
async fn batch_size_and_concurrency_hold() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "many", 10, None).await;
    for i in 0..9 {
        send(&server, &url, &format!("m{i}")).await;
    }
    let handler = Handler::start(Arc::new(|_, _| Reply {
        delay: Duration::from_millis(300),
        ..Reply::ok("")
    }))
    .await;
    let mut s = spec("many-worker", "many", &handler.url);
    s.batch_size = 2;
    s.max_concurrency = 2;
    let _consumers = start(&server, vec![s]).await;
    assert!(
        until(Duration::from_secs(6), async || remaining(&server, &url)
            .await
            == 0)
        .await
    );
    let events = handler.events();
    let mut all: Vec<String> = events.iter().flat_map(bodies).collect();
    all.sort();
    assert_eq!(all.len(), 9, "each message once: {all:?}");
    all.dedup();
    assert_eq!(all.len(), 9);
    assert!(events.iter().all(|e| bodies(e).len() <= 2), "batch_size");
    assert_eq!(
        handler.most_in_flight.load(Ordering::SeqCst),
        2,
        "max_concurrency"
    );
}

/// C5: an item marked `"permanent": true` goes to the dead-letter queue
/// after its first delivery, with its `reason` as the failure reason that
/// PeekMessages shows; the rest of the batch is deleted. maxReceiveCount
/// is 5: without the mark it would come back four more times.
#[tokio::test]
async fn c5_permanent_item_goes_to_the_dlq_at_once_with_its_reason() {
    let server = TestServer::start_real_time().await;
    let dlq = create_queue(&server.sdk(), "perm-dlq").await;
    let redrive = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:perm-dlq","maxReceiveCount":5}"#;
    let url = queue(&server, "perm", 1, Some(redrive)).await;
    let bad = send(&server, &url, "not json").await;
    send(&server, &url, "fine").await;
    let handler = Handler::start(Arc::new(|event, _| {
        let items: Vec<Value> = event["Records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["body"] == "not json")
            .map(|r| serde_json::json!({"itemIdentifier": r["messageId"], "permanent": true, "reason": "invalid JSON in body"}))
            .collect();
        Reply::ok(&serde_json::json!({ "batchItemFailures": items }).to_string())
    }))
    .await;
    let mut s = spec("perm-worker", "perm", &handler.url);
    s.max_concurrency = 2;
    let _consumers = start(&server, vec![s]).await;
    assert!(
        until(Duration::from_secs(5), async || remaining(&server, &dlq)
            .await
            == 1
            && remaining(&server, &url).await == 0)
        .await,
        "dead-lettered, the rest deleted"
    );
    // Long enough for a retry after the 1 s visibility timeout to show.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(handler.events().len(), 1, "delivered once");
    let raw = server.raw();
    let peek = tokio::task::spawn_blocking(move || {
        raw.json_target(
            "Sluice.PeekMessages",
            &serde_json::json!({ "QueueUrl": dlq }).to_string(),
        )
    })
    .await
    .unwrap();
    assert_eq!(peek.status, 200, "{}", peek.body);
    let body: Value = serde_json::from_str(&peek.body).unwrap();
    let m = &body["Messages"][0];
    assert_eq!(m["MessageId"], bad.as_str());
    assert_eq!(m["FailureReason"], "invalid JSON in body");
    assert_eq!(m["ReceiveCount"], 1);
    assert_eq!(
        m["Attributes"]["DeadLetterQueueSourceArn"],
        "arn:aws:sqs:us-east-1:000000000000:perm"
    );
    let metrics = server
        .service
        .metrics
        .render(&server.service.broker, &server.service.alarms, None)
        .await;
    let line = r#"sluice_consumer_dead_lettered_messages_total{consumer="perm-worker"} 1"#;
    assert!(metrics.contains(line), "{line} in\n{metrics}");
}

/// Queue `name` (visibility 1 s) with a RedrivePolicy to `NAME-main-dlq`
/// (maxReceiveCount 5) and `route`, one SluiceDeadLetterRoutes entry whose
/// DLQ, named in it, is created too: the URLs of the main DLQ, the route's
/// DLQ and the queue.
async fn routed_queue(server: &TestServer, name: &str, route: &str) -> (String, String, String) {
    let main_dlq = create_queue(&server.sdk(), &format!("{name}-main-dlq")).await;
    let route_dlq: Value = serde_json::from_str(route).unwrap();
    let route_dlq = route_dlq["deadLetterTargetArn"]
        .as_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap();
    let route_dlq = create_queue(&server.sdk(), route_dlq).await;
    let redrive = format!(
        r#"{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:{name}-main-dlq","maxReceiveCount":5}}"#
    );
    let url = queue(server, name, 1, Some(&redrive)).await;
    server
        .sdk()
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(
            QueueAttributeName::from("SluiceDeadLetterRoutes"),
            format!("[{route}]"),
        )
        .send()
        .await
        .unwrap();
    (main_dlq, route_dlq, url)
}

/// C5, X7: an item with a `"class"` the queue routes goes to that class's
/// dead-letter queue when its count is reached (1 here), without being
/// permanent, with the class kept; RedrivePolicy's DLQ gets nothing.
#[tokio::test]
async fn c5_x7_a_classed_item_takes_its_class_route() {
    let server = TestServer::start_real_time().await;
    let route = r#"{"class":"validation","deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:class-invalid-dlq","maxReceiveCount":1}"#;
    let (main_dlq, invalid, url) = routed_queue(&server, "classed", route).await;
    let bad = send(&server, &url, "not json").await;
    send(&server, &url, "fine").await;
    let handler = Handler::start(Arc::new(|event, _| {
        let items: Vec<Value> = event["Records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["body"] == "not json")
            .map(|r| serde_json::json!({"itemIdentifier": r["messageId"], "class": "validation", "reason": "invalid JSON in body"}))
            .collect();
        Reply::ok(&serde_json::json!({ "batchItemFailures": items }).to_string())
    }))
    .await;
    let _consumers = start(
        &server,
        vec![spec("classed-worker", "classed", &handler.url)],
    )
    .await;
    assert!(
        until(Duration::from_secs(5), async || remaining(
            &server, &invalid
        )
        .await
            == 1
            && remaining(&server, &url).await == 0)
        .await,
        "routed by its class, the rest deleted"
    );
    assert_eq!(remaining(&server, &main_dlq).await, 0);
    assert_eq!(handler.events().len(), 1, "delivered once");
    let raw = server.raw();
    let peek = tokio::task::spawn_blocking(move || {
        let body = serde_json::json!({ "QueueUrl": invalid, "FailureClass": "validation" });
        raw.json_target("Sluice.PeekMessages", &body.to_string())
    })
    .await
    .unwrap();
    assert_eq!(peek.status, 200, "{}", peek.body);
    let body: Value = serde_json::from_str(&peek.body).unwrap();
    let m = &body["Messages"][0];
    assert_eq!(m["MessageId"], bad.as_str());
    assert_eq!(m["FailureClass"], "validation");
    assert_eq!(m["Attributes"]["Sluice.FailureClass"], "validation");
    assert_eq!(
        m["FailureReason"],
        "consumer classed-worker: invalid JSON in body"
    );
}

/// C11, X7: a handler that cannot set a class still gets its failures
/// routed: a route's `reasonContains` classifies the reason the consumer
/// records (`HTTP 500`), so the message reaches that class's DLQ at its
/// second failure, before RedrivePolicy's five receives.
#[tokio::test]
async fn c11_x7_a_failure_reason_rule_routes_whole_batch_failures() {
    let server = TestServer::start_real_time().await;
    let route = r#"{"class":"server-error","deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:ruled-dlq","maxReceiveCount":2,"reasonContains":"HTTP 500"}"#;
    let (main_dlq, server_dlq, url) = routed_queue(&server, "ruled", route).await;
    send(&server, &url, "needs the database").await;
    let handler = Handler::start(Arc::new(|_, _| Reply {
        status: 500,
        ..Reply::ok(r#"{"errorMessage":"db down"}"#)
    }))
    .await;
    let _consumers = start(&server, vec![spec("ruled-worker", "ruled", &handler.url)]).await;
    assert!(
        until(Duration::from_secs(8), async || remaining(
            &server,
            &server_dlq
        )
        .await
            == 1)
        .await,
        "routed by its reason's class"
    );
    assert_eq!(handler.events().len(), 2, "two failures, then moved");
    assert_eq!(remaining(&server, &main_dlq).await, 0);
    let raw = server.raw();
    let peek = tokio::task::spawn_blocking(move || {
        let body = serde_json::json!({ "QueueUrl": server_dlq });
        raw.json_target("Sluice.PeekMessages", &body.to_string())
    })
    .await
    .unwrap();
    let body: Value = serde_json::from_str(&peek.body).unwrap();
    assert_eq!(
        body["Messages"][0]["FailureClass"], "server-error",
        "{body}"
    );
}
