//! HTTP/S subscriptions (rules N5, N6): a real HTTP receiver in the test
//! gets the signed `SubscriptionConfirmation`, whose `SubscribeURL`
//! confirms the subscription, then notifications with SNS's headers
//! (raw or in the signed envelope), then an `UnsubscribeConfirmation`; a
//! failing endpoint is retried as the delivery policy says, then
//! dead-lettered; a 4xx answer counts as delivered; a publish answered
//! while the endpoint is down survives kill -9; an https:// endpoint is
//! reached when its certificate is trusted, never when it is not. Header
//! names and the confirmation's fields: the SNS developer guide and
//! LocalStack's recorded `test_subscribe_external_http_endpoint`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use sluice_broker::{Broker, ReceiveOptions};
use sluice_sns::envelope::{Confirmation, ConfirmationKind, Notification};
use sluice_sns::signing::SignatureVersion;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::common::{RawClient, RawResponse, SluiceProcess, TestServer};
use crate::test_ca::TestCa;
use sluice_outbound::{OutboundTls, Roots};
use sluice_server::ServiceConfig;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Got {
    pub(crate) path: String,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) body: String,
}

impl Got {
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// Decides the status answering a request of this SNS message type.
pub(crate) type Answer = Arc<dyn Fn(&str) -> u16 + Send + Sync>;

/// A tiny HTTP/1.1 endpoint: records every request, answers by `answer`.
pub(crate) struct Receiver {
    pub(crate) url: String,
    got: Arc<Mutex<Vec<Got>>>,
    /// TLS handshakes that failed (the client did not trust the
    /// certificate).
    refused: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub(crate) async fn start(answer: Answer) -> Self {
        Self::start_at("127.0.0.1:0", answer).await
    }

    async fn start_at(addr: &str, answer: Answer) -> Self {
        Self::serving(addr, None, answer).await
    }

    /// An `https://` endpoint presenting `tls`'s certificate; a client
    /// that does not trust it gets no request through.
    pub(crate) async fn start_tls(tls: TlsAcceptor, answer: Answer) -> Self {
        Self::serving("127.0.0.1:0", Some(tls), answer).await
    }

    async fn serving(addr: &str, tls: Option<TlsAcceptor>, answer: Answer) -> Self {
        let listener = TcpListener::bind(addr).await.unwrap();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{}/sns/in", listener.local_addr().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let refused = Arc::new(AtomicUsize::new(0));
        let (into, failures) = (got.clone(), refused.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (into, answer, tls) = (into.clone(), answer.clone(), tls.clone());
                let failures = failures.clone();
                tokio::spawn(async move {
                    match tls {
                        None => record(stream, &into, &answer).await,
                        Some(tls) => match tls.accept(stream).await {
                            Ok(stream) => record(stream, &into, &answer).await,
                            Err(_) => {
                                failures.fetch_add(1, Ordering::SeqCst);
                            }
                        },
                    }
                });
            }
        });
        Receiver {
            url,
            got,
            refused,
            task,
        }
    }

    pub(crate) fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    /// Waits (bounded) until `n` requests of SNS message type `kind` came.
    pub(crate) async fn wait_for(&self, kind: &str, n: usize) -> Vec<Got> {
        // Up to two minutes: a delivery a killed node held waits for its
        // 60 s lease to end.
        for _ in 0..1200 {
            let of_kind: Vec<Got> = (self.got().into_iter())
                .filter(|g| g.header("x-amz-sns-message-type") == kind)
                .collect();
            if of_kind.len() >= n {
                return of_kind;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{n} {kind} never came; got {:?}", self.got());
    }

    /// Stops listening (the port refuses connections from now on).
    pub(crate) async fn stop(self) {
        self.task.abort();
        // Its listener is closed once the task is.
        let _ = self.task.await;
    }
}

/// Reads one request from `stream`, records it and answers as `answer` says.
async fn record<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    into: &Mutex<Vec<Got>>,
    answer: &Answer,
) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let status = answer(request.header("x-amz-sns-message-type"));
    into.lock().unwrap().push(request);
    let reply = format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn read_request<S: AsyncRead + Unpin>(stream: &mut S) -> Option<Got> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        let text = String::from_utf8_lossy(&buf).to_string();
        let Some(end) = text.find("\r\n\r\n") else {
            continue;
        };
        let mut lines = text[..end].lines();
        let path = lines.next()?.split(' ').nth(1)?.to_string();
        let headers: BTreeMap<String, String> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let length: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if buf.len() >= end + 4 + length {
            let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).to_string();
            return Some(Got {
                path,
                headers,
                body,
            });
        }
    }
}

/// An SNS Query request (unsigned: authentication is off).
async fn sns(raw: RawClient, params: &[(&str, &str)]) -> RawResponse {
    let mut p: Vec<(String, String)> = vec![("Version".into(), "2010-03-31".into())];
    p.extend(params.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    tokio::task::spawn_blocking(move || {
        let p: Vec<(&str, &str)> = p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        raw.query("/", &p)
    })
    .await
    .unwrap()
}

/// An SNS action that must succeed; its answer.
async fn ok(raw: RawClient, params: &[(&str, &str)]) -> RawResponse {
    let r = sns(raw, params).await;
    assert_eq!(r.status, 200, "{params:?}: {}", r.body);
    r
}

async fn create_topic(raw: RawClient, name: &str) -> String {
    ok(raw, &[("Action", "CreateTopic"), ("Name", name)])
        .await
        .xml("TopicArn")
        .unwrap()
}

/// Subscribes `endpoint` with these attributes; the subscription's ARN.
async fn subscribe(raw: RawClient, topic: &str, endpoint: &str, attrs: &[(&str, &str)]) -> String {
    let protocol = if endpoint.starts_with("https://") {
        "https"
    } else {
        "http"
    };
    let mut params = vec![
        ("Action".to_string(), "Subscribe".to_string()),
        ("TopicArn".into(), topic.into()),
        ("Protocol".into(), protocol.into()),
        ("Endpoint".into(), endpoint.into()),
        ("ReturnSubscriptionArn".into(), "true".into()),
    ];
    for (i, (k, v)) in attrs.iter().enumerate() {
        params.push((format!("Attributes.entry.{}.key", i + 1), k.to_string()));
        params.push((format!("Attributes.entry.{}.value", i + 1), v.to_string()));
    }
    let p: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    ok(raw, &p).await.xml("SubscriptionArn").unwrap()
}

async fn pending(raw: RawClient, subscription: &str) -> String {
    let r = ok(
        raw,
        &[
            ("Action", "GetSubscriptionAttributes"),
            ("SubscriptionArn", subscription),
        ],
    )
    .await;
    let at = r.body.find("<key>PendingConfirmation</key>").unwrap();
    crate::common::xml_values(&r.body[at..], "value")[0].clone()
}

/// Confirms by the token a confirmation carried.
async fn confirm(raw: RawClient, confirmation: &Got) {
    let doc = confirmation.json();
    ok(
        raw,
        &[
            ("Action", "ConfirmSubscription"),
            ("TopicArn", doc["TopicArn"].as_str().unwrap()),
            ("Token", doc["Token"].as_str().unwrap()),
        ],
    )
    .await;
}

/// The signature version and text of a delivered document.
fn version_of(doc: &Value) -> SignatureVersion {
    match doc["SignatureVersion"].as_str() {
        Some("2") => SignatureVersion::V2,
        _ => SignatureVersion::V1,
    }
}

/// N6: the confirmation arrives signed with SNS's headers and fields, a
/// GET of its SubscribeURL confirms, then a notification arrives signed
/// in the envelope, raw delivery sends the bare message, and the
/// unsubscribe is told; the outbox is in no queue list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_http_endpoints_are_confirmed_then_notified_with_sns_headers() {
    let server = TestServer::start_real_time().await;
    let raw = server.raw();
    let receiver = Receiver::start(Arc::new(|_| 200)).await;
    let topic = create_topic(raw, "web").await;
    let subscription = subscribe(raw, &topic, &receiver.url, &[]).await;
    assert_eq!(pending(raw, &subscription).await, "true");

    let got = receiver.wait_for("SubscriptionConfirmation", 1).await;
    let c = &got[0];
    assert_eq!(c.path, "/sns/in");
    let doc = c.json();
    assert_eq!(c.header("x-amz-sns-message-id"), doc["MessageId"]);
    assert_eq!(c.header("x-amz-sns-topic-arn"), topic);
    assert_eq!(c.header("content-type"), "text/plain; charset=UTF-8");
    assert_eq!(
        c.header("user-agent"),
        "Amazon Simple Notification Service Agent"
    );
    assert_eq!(doc["Type"], "SubscriptionConfirmation");
    assert_eq!(doc["TopicArn"], topic.as_str());
    let token = doc["Token"].as_str().unwrap();
    assert_eq!(
        doc["Message"],
        format!(
            "You have chosen to subscribe to the topic {topic}.\nTo confirm the subscription, visit the SubscribeURL included in this message."
        )
    );
    let subscribe_url = doc["SubscribeURL"].as_str().unwrap();
    assert_eq!(
        subscribe_url,
        format!(
            "{}/?Action=ConfirmSubscription&TopicArn={topic}&Token={token}",
            server.endpoint
        )
    );
    let key = server.service.sns_signing_key().await.unwrap();
    let text = Confirmation {
        kind: ConfirmationKind::Subscription,
        message_id: doc["MessageId"].as_str().unwrap(),
        token,
        topic_arn: &topic,
        subscription_arn: &subscription,
        subscribe_url,
        timestamp: doc["Timestamp"].as_str().unwrap(),
    }
    .string_to_sign();
    assert!(
        key.verifies(version_of(&doc), &text, doc["Signature"].as_str().unwrap()),
        "the confirmation's signature verifies"
    );
    assert!(
        doc["SigningCertURL"]
            .as_str()
            .unwrap()
            .starts_with(&server.endpoint)
    );
    assert_eq!(
        receiver.got().len(),
        1,
        "nothing but the confirmation before it is confirmed"
    );

    // A plain GET of the SubscribeURL, unsigned, confirms.
    let path = subscribe_url
        .strip_prefix(&server.endpoint)
        .unwrap()
        .to_string();
    let answer = tokio::task::spawn_blocking(move || raw.request("GET", &path, &[], b""))
        .await
        .unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(pending(raw, &subscription).await, "false");

    ok(
        raw,
        &[
            ("Action", "Publish"),
            ("TopicArn", &topic),
            ("Message", "hello web"),
            ("Subject", "greeting"),
            ("MessageAttributes.entry.1.Name", "colour"),
            ("MessageAttributes.entry.1.Value.DataType", "String"),
            ("MessageAttributes.entry.1.Value.StringValue", "blue"),
        ],
    )
    .await;
    let got = receiver.wait_for("Notification", 1).await;
    let n = &got[0];
    let doc = n.json();
    assert_eq!(n.header("x-amz-sns-subscription-arn"), subscription);
    assert_eq!(n.header("x-amz-sns-topic-arn"), topic);
    assert_eq!(n.header("x-amz-sns-message-id"), doc["MessageId"]);
    assert_eq!(n.header("x-amz-sns-rawdelivery"), "");
    assert_eq!(doc["Type"], "Notification");
    assert_eq!(doc["Message"], "hello web");
    assert_eq!(doc["MessageAttributes"]["colour"]["Value"], "blue");
    let text = Notification {
        message_id: doc["MessageId"].as_str().unwrap(),
        sequence_number: None,
        topic_arn: &topic,
        subject: doc["Subject"].as_str(),
        message: "hello web",
        timestamp: doc["Timestamp"].as_str().unwrap(),
        unsubscribe_url: "",
        attributes: &[],
    }
    .string_to_sign();
    assert!(
        key.verifies(version_of(&doc), &text, doc["Signature"].as_str().unwrap()),
        "the notification's signature verifies"
    );

    ok(
        raw,
        &[
            ("Action", "SetSubscriptionAttributes"),
            ("SubscriptionArn", &subscription),
            ("AttributeName", "RawMessageDelivery"),
            ("AttributeValue", "true"),
        ],
    )
    .await;
    ok(
        raw,
        &[
            ("Action", "Publish"),
            ("TopicArn", &topic),
            ("Message", "bare"),
        ],
    )
    .await;
    let got = receiver.wait_for("Notification", 2).await;
    assert_eq!(got[1].body, "bare");
    assert_eq!(got[1].header("x-amz-sns-rawdelivery"), "true");

    ok(
        raw,
        &[
            ("Action", "Unsubscribe"),
            ("SubscriptionArn", &subscription),
        ],
    )
    .await;
    let got = receiver.wait_for("UnsubscribeConfirmation", 1).await;
    assert_eq!(got[0].json()["Type"], "UnsubscribeConfirmation");
    assert_eq!(got[0].header("x-amz-sns-subscription-arn"), subscription);

    let listed = server.sdk().list_queues().send().await.unwrap();
    assert!(
        listed.queue_urls().is_empty(),
        "the outbox is nobody's queue"
    );
    let metrics = crate::alarms::metrics(raw).await;
    assert!(!metrics.contains("sns-http-outbox"), "{metrics}");
}

/// The delivery policy of a quick test: two immediate retries.
const QUICK_RETRIES: &str = r#"{"healthyRetryPolicy":{"numRetries":2,"numNoDelayRetries":2,"minDelayTarget":1,"maxDelayTarget":1}}"#;

/// N5, N6: an endpoint answering 500 gets the first attempt and the
/// policy's two retries, then the notification goes to the
/// subscription's dead-letter queue with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n5_a_failing_endpoint_is_retried_then_dead_lettered() {
    let server = TestServer::start_real_time().await;
    let raw = server.raw();
    let sqs = server.sdk();
    let dlq = crate::common::create_queue(&sqs, "web-dlq").await;
    let receiver = Receiver::start(Arc::new(
        |kind| {
            if kind == "Notification" { 500 } else { 200 }
        },
    ))
    .await;
    let topic = create_topic(raw, "failing").await;
    let redrive = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:web-dlq"}"#;
    let subscription = subscribe(
        raw,
        &topic,
        &receiver.url,
        &[
            ("DeliveryPolicy", QUICK_RETRIES),
            ("RedrivePolicy", redrive),
        ],
    )
    .await;
    let c = receiver.wait_for("SubscriptionConfirmation", 1).await;
    confirm(raw, &c[0]).await;
    assert_eq!(pending(raw, &subscription).await, "false");
    ok(
        raw,
        &[
            ("Action", "Publish"),
            ("TopicArn", &topic),
            ("Message", "doomed"),
        ],
    )
    .await;

    let mut dead = Vec::new();
    for _ in 0..300 {
        let options = ReceiveOptions {
            max_messages: 10,
            visibility_timeout: None,
            wait: Duration::from_millis(100),
            attempt_id: None,
        };
        dead = server
            .service
            .broker
            .receive_messages("web-dlq", options)
            .await
            .unwrap();
        if !dead.is_empty() {
            break;
        }
    }
    assert_eq!(dead.len(), 1, "dead-lettered into {dlq}");
    let envelope: Value = serde_json::from_str(&dead[0].body).unwrap();
    assert_eq!(envelope["Message"], "doomed");
    let reason = format!(
        "{:?}",
        dead[0].system_attributes["Sluice.LastFailureReason"]
    );
    assert!(reason.contains("answered 500"), "{reason}");
    let attempts = receiver.wait_for("Notification", 3).await;
    assert_eq!(attempts.len(), 3, "the first attempt and two retries");
    metrics_showing(raw, "protocol=\"http\",outcome=\"dead_lettered\"} 1").await;
}

/// N6 over TLS: an `https://` endpoint whose certificate chains to the
/// `consumer_ca_file` gets its confirmation (again when it is subscribed
/// again while pending) and, once confirmed, the notification; one whose
/// certificate no trusted CA issued is refused at the handshake and never
/// sees a request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_https_endpoints_are_trusted_through_the_consumer_ca_file() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, stranger) = (TestCa::new(), TestCa::new());
    let ca_file = ca.write_pem(dir.path());
    let server = TestServer::start_real_time_with(ServiceConfig {
        consumer_tls: OutboundTls::with_ca_file(Roots::Mozilla, &ca_file, "the consumer CA file")
            .unwrap(),
        ..Default::default()
    })
    .await;
    let raw = server.raw();
    let trusted = Receiver::start_tls(ca.acceptor(), Arc::new(|_| 200)).await;
    let untrusted = Receiver::start_tls(stranger.acceptor(), Arc::new(|_| 200)).await;
    assert!(
        trusted.url.starts_with("https://127.0.0.1:"),
        "{}",
        trusted.url
    );
    let topic = create_topic(raw, "sealed").await;
    let subscription = subscribe(raw, &topic, &trusted.url, &[]).await;
    subscribe(raw, &topic, &untrusted.url, &[]).await;
    let confirmation = trusted.wait_for("SubscriptionConfirmation", 1).await;
    assert_eq!(confirmation[0].json()["TopicArn"], topic.as_str());
    // Subscribing the pending endpoint again asks for confirmation again,
    // for the same subscription.
    assert_eq!(
        subscribe(raw, &topic, &trusted.url, &[]).await,
        subscription
    );
    let confirmation = trusted.wait_for("SubscriptionConfirmation", 2).await;
    confirm(raw, &confirmation[1]).await;
    assert_eq!(pending(raw, &subscription).await, "false");
    ok(
        raw,
        &[
            ("Action", "Publish"),
            ("TopicArn", &topic),
            ("Message", "over tls"),
        ],
    )
    .await;
    let notified = trusted.wait_for("Notification", 1).await;
    assert_eq!(notified[0].json()["Message"], "over tls");
    assert_eq!(
        notified[0].header("x-amz-sns-subscription-arn"),
        subscription
    );
    let tried = crate::consumers::until(Duration::from_secs(10), async || {
        untrusted.refused.load(Ordering::SeqCst) > 0
    })
    .await;
    assert!(tried, "never tried");
    assert!(untrusted.got().is_empty(), "{:?}", untrusted.got());
}

/// The metrics once they show `needle` (waited for, bounded: a count
/// follows the act it counts).
async fn metrics_showing(raw: RawClient, needle: &str) -> String {
    let mut metrics = String::new();
    for _ in 0..100 {
        metrics = crate::alarms::metrics(raw).await;
        if metrics.contains(needle) {
            return metrics;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no {needle} in {metrics}");
}

/// N6: a 404 answer counts as delivered: counted so, never retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_a_4xx_answer_counts_as_delivered() {
    let server = TestServer::start_real_time().await;
    let raw = server.raw();
    let receiver = Receiver::start(Arc::new(
        |kind| {
            if kind == "Notification" { 404 } else { 200 }
        },
    ))
    .await;
    let topic = create_topic(raw, "gone-page").await;
    let subscription = subscribe(
        raw,
        &topic,
        &receiver.url,
        &[("DeliveryPolicy", QUICK_RETRIES)],
    )
    .await;
    let c = receiver.wait_for("SubscriptionConfirmation", 1).await;
    confirm(raw, &c[0]).await;
    assert_eq!(pending(raw, &subscription).await, "false");
    ok(
        raw,
        &[
            ("Action", "Publish"),
            ("TopicArn", &topic),
            ("Message", "once"),
        ],
    )
    .await;
    receiver.wait_for("Notification", 1).await;
    let metrics = metrics_showing(raw, "protocol=\"http\",outcome=\"delivered\"} 1").await;
    assert!(
        !metrics.contains("protocol=\"http\",outcome=\"failed\""),
        "{metrics}"
    );
    assert_eq!(receiver.wait_for("Notification", 1).await.len(), 1);
}

/// N2, N6: a publish answered while its endpoint is down survives kill -9
/// of sluice: after a restart on the same data directory, the endpoint,
/// up again, gets it. The outbox gauge counts it waiting, before and after
/// the kill, and none once it is made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_an_answered_publish_survives_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = SluiceProcess::start(&["--data-dir", data]);
    let raw = server.raw();
    let receiver = Receiver::start(Arc::new(|_| 200)).await;
    let addr = receiver
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let topic = create_topic(raw, "durable").await;
    // Retried every second for long: still waiting when sluice dies.
    let patient =
        r#"{"healthyRetryPolicy":{"numRetries":100,"minDelayTarget":1,"maxDelayTarget":1}}"#;
    let subscription = subscribe(raw, &topic, &receiver.url, &[("DeliveryPolicy", patient)]).await;
    let c = receiver.wait_for("SubscriptionConfirmation", 1).await;
    confirm(raw, &c[0]).await;
    receiver.stop().await;
    ok(
        raw,
        &[
            ("Action", "Publish"),
            ("TopicArn", &topic),
            ("Message", "kept"),
        ],
    )
    .await;
    metrics_showing(raw, "\nsluice_sns_http_deliveries_pending 1\n").await;
    server.kill_9();

    let server = SluiceProcess::start(&["--data-dir", data]);
    // Still waiting after the restart, and counted so.
    metrics_showing(server.raw(), "\nsluice_sns_http_deliveries_pending 1\n").await;
    let receiver = Receiver::start_at(&addr, Arc::new(|_| 200)).await;
    let got = receiver.wait_for("Notification", 1).await;
    assert_eq!(got[0].json()["Message"], "kept");
    assert_eq!(got[0].header("x-amz-sns-subscription-arn"), subscription);
    metrics_showing(server.raw(), "\nsluice_sns_http_deliveries_pending 0\n").await;
    drop(server);
}

/// N6 on shared storage: a publish answered by node A while the endpoint
/// is down is made by node B after A is killed with kill -9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_another_node_delivers_what_a_killed_node_stored() {
    let cluster = sluice_postgres::testing::cluster().expect("PostgreSQL for this test");
    let url = cluster.fresh_database().await;
    let args = ["--postgres", url.as_str(), "--postgres-pool-size", "4"];
    let a = SluiceProcess::start(&args);
    let b = SluiceProcess::start(&args);
    let receiver = Receiver::start(Arc::new(|_| 200)).await;
    let addr = receiver
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let topic = create_topic(a.raw(), "shared").await;
    let patient =
        r#"{"healthyRetryPolicy":{"numRetries":100,"minDelayTarget":1,"maxDelayTarget":1}}"#;
    let subscription = subscribe(
        a.raw(),
        &topic,
        &receiver.url,
        &[("DeliveryPolicy", patient)],
    )
    .await;
    let c = receiver.wait_for("SubscriptionConfirmation", 1).await;
    confirm(b.raw(), &c[0]).await;
    assert_eq!(pending(a.raw(), &subscription).await, "false");
    receiver.stop().await;
    ok(
        a.raw(),
        &[
            ("Action", "Publish"),
            ("TopicArn", &topic),
            ("Message", "for any node"),
        ],
    )
    .await;
    a.kill_9();

    let receiver = Receiver::start_at(&addr, Arc::new(|_| 200)).await;
    let got = receiver.wait_for("Notification", 1).await;
    assert_eq!(got[0].json()["Message"], "for any node");
    drop(b);
}
