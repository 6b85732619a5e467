//! Alarms on queue metrics (rule M2): PutAlarm/DescribeAlarms/DeleteAlarms
//! in both protocols, evaluation on the manual clock, webhook and queue
//! notifications (one per state change), the `dlq_alarms` setting, and a
//! webhook receiver that is down and comes up later.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::{Value, json};
use sluice_alarms::notify::WebhookPolicy;
use sluice_alarms::{AlarmSettings, DlqAlarmSettings};
use sluice_core::clock::Clock;
use sluice_server::ServiceConfig;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::{Mutex, mpsc};
use tokio_rustls::TlsAcceptor;

use crate::common::{RawClient, RawResponse, SluiceProcess, TestServer, create_queue, xml_values};

/// A webhook receiver on 127.0.0.1: every POST body it gets, parsed.
pub(crate) struct Receiver {
    /// `http://127.0.0.1:PORT/hook`, or `https://` for a TLS receiver.
    pub(crate) url: String,
    bodies: Arc<Mutex<mpsc::UnboundedReceiver<Value>>>,
    /// TLS handshakes that failed (a TLS receiver only).
    pub(crate) handshake_failures: Arc<AtomicUsize>,
}

impl Receiver {
    pub(crate) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::on(listener)
    }

    fn on(listener: TcpListener) -> Self {
        Self::serving(listener, None)
    }

    /// An HTTPS receiver presenting the certificate of `tls`.
    pub(crate) async fn start_tls(tls: TlsAcceptor) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serving(listener, Some(tls))
    }

    fn serving(listener: TcpListener, tls: Option<TlsAcceptor>) -> Self {
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{}/hook", listener.local_addr().unwrap());
        let (tx, rx) = mpsc::unbounded_channel();
        let handshake_failures = Arc::new(AtomicUsize::new(0));
        let failures = handshake_failures.clone();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let tx = tx.clone();
                match &tls {
                    None => tokio::spawn(serve_connection(conn, tx)),
                    Some(tls) => {
                        let (tls, failures) = (tls.clone(), failures.clone());
                        tokio::spawn(async move {
                            match tls.accept(conn).await {
                                Ok(conn) => serve_connection(conn, tx).await,
                                Err(_) => {
                                    failures.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        })
                    }
                };
            }
        });
        Self {
            url,
            bodies: Arc::new(Mutex::new(rx)),
            handshake_failures,
        }
    }

    /// The next notification, waiting up to `within`.
    pub(crate) async fn next(&self, within: Duration) -> Option<Value> {
        let mut rx = self.bodies.lock().await;
        tokio::time::timeout(within, rx.recv()).await.ok().flatten()
    }
}

/// Reads HTTP/1.1 requests off one connection (keep-alive), answering 200.
async fn serve_connection(
    mut conn: impl AsyncRead + AsyncWrite + Unpin,
    tx: mpsc::UnboundedSender<Value>,
) {
    let mut buf = Vec::new();
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        assert!(head.starts_with("post /hook "), "{head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let mut chunk = [0u8; 4096];
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Value = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap();
        buf.drain(..head_end + len);
        let _ = tx.send(body);
        if conn
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .await
            .is_err()
        {
            return;
        }
    }
}

/// A `Sluice.<action>` JSON request, off the async runtime.
pub(crate) async fn sluice(raw: RawClient, action: &str, body: Value) -> (u16, Value, RawResponse) {
    let target = format!("Sluice.{action}");
    let r = tokio::task::spawn_blocking(move || raw.json_target(&target, &body.to_string()))
        .await
        .unwrap();
    let v = serde_json::from_str(&r.body).unwrap_or(Value::Null);
    (r.status, v, r)
}

/// A Query request, off the async runtime.
async fn query(raw: RawClient, params: Vec<(&'static str, String)>) -> RawResponse {
    tokio::task::spawn_blocking(move || {
        let p: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        raw.query("/", &p)
    })
    .await
    .unwrap()
}

async fn describe(raw: RawClient, name: &str) -> Value {
    let (status, v, r) = sluice(raw, "DescribeAlarms", json!({"AlarmNames": [name]})).await;
    assert_eq!(status, 200, "{}", r.body);
    v["Alarms"][0].clone()
}

/// Puts the alarm `dlq-not-empty` (a depth ≥ 1 over 10 s, notifying
/// `action`) on a new queue `dlq`, sends it a message and lets one period
/// pass on the manual clock: the next `alarm_tick` turns it to ALARM.
pub(crate) async fn arm_dlq_alarm(server: &TestServer, action: &str) {
    let sqs = server.sdk();
    let q = create_queue(&sqs, "dlq").await;
    let (status, _, r) = sluice(
        server.raw(),
        "PutAlarm",
        json!({"AlarmName": "dlq-not-empty", "QueueUrl": q,
               "MetricName": "ApproximateNumberOfMessagesVisible", "Period": 10,
               "Threshold": 1, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
               "Actions": [action]}),
    )
    .await;
    assert_eq!(status, 200, "the action is accepted: {}", r.body);
    sqs.send_message()
        .queue_url(&q)
        .message_body("dead")
        .send()
        .await
        .unwrap();
    server.service.alarm_tick().await;
    server.clock.advance_secs(10);
}

/// No notification arrives within a short real-time wait.
pub(crate) async fn assert_quiet(rx: &Receiver) {
    if let Some(extra) = rx.next(Duration::from_millis(300)).await {
        panic!("one notification per state change, got an extra one: {extra}");
    }
}

/// M2: an alarm on visible depth, 2 of 2 periods of 60 s, moves
/// INSUFFICIENT_DATA → OK → ALARM → OK on the manual clock exactly when its
/// complete periods say so; each change into or out of ALARM reaches the
/// webhook and the notification queue exactly once; DescribeAlarms shows
/// the state and the history in both protocols.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_alarm_transitions_notify_once_each() {
    let hook = Receiver::start().await;
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let raw = server.raw();
    let url = create_queue(&sqs, "orders").await;
    let alerts = create_queue(&sqs, "alerts").await;
    let (status, _, r) = sluice(
        raw,
        "PutAlarm",
        json!({
            "AlarmName": "orders-backlog",
            "QueueUrl": url,
            "MetricName": "ApproximateNumberOfMessagesVisible",
            "Statistic": "Maximum",
            "Period": 60,
            "EvaluationPeriods": 2,
            "Threshold": 1,
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            "Actions": [hook.url, "arn:aws:sqs:us-east-1:000000000000:alerts"],
            "AlarmDescription": "orders pile up",
        }),
    )
    .await;
    assert_eq!(status, 200, "{}", r.body);
    let alarm = describe(raw, "orders-backlog").await;
    assert_eq!(alarm["StateValue"], "INSUFFICIENT_DATA");
    assert_eq!(alarm["DatapointsToAlarm"], 2);
    assert_eq!(alarm["TreatMissingData"], "missing");
    assert_eq!(alarm["Source"], "api");

    let t0 = server.clock.now();
    // The manual clock starts on a period boundary: nothing complete yet.
    assert!(server.service.alarm_tick().await.is_empty());
    server.clock.advance_secs(30);
    assert!(server.service.alarm_tick().await.is_empty());
    server.clock.advance_secs(30);
    let changes = server.service.alarm_tick().await;
    assert_eq!(changes.len(), 1);
    assert_eq!(
        changes[0].1.new.as_str(),
        "OK",
        "first complete period: 0 visible"
    );
    for i in 0..3 {
        sqs.send_message()
            .queue_url(&url)
            .message_body(format!("m{i}"))
            .send()
            .await
            .unwrap();
    }
    server.clock.advance_secs(60); // samples 3 in a period not yet complete
    assert!(server.service.alarm_tick().await.is_empty());
    server.clock.advance_secs(60); // [0, 3]: 1 of 2 breaching
    assert!(server.service.alarm_tick().await.is_empty());
    assert_eq!(describe(raw, "orders-backlog").await["StateValue"], "OK");
    server.clock.advance_secs(60); // [3, 3]
    let changes = server.service.alarm_tick().await;
    assert_eq!(changes.len(), 1);
    let alarm_at = server.clock.now();
    assert_eq!(alarm_at, t0 + 240_000);

    let n = hook
        .next(Duration::from_secs(10))
        .await
        .expect("ALARM notified");
    assert_eq!(n["alarm_name"], "orders-backlog");
    assert_eq!(n["queue"], "orders");
    assert_eq!(n["old_state"], "OK");
    assert_eq!(n["new_state"], "ALARM");
    assert_eq!(n["timestamp_ms"], alarm_at);
    assert_eq!(n["timestamp"], "2026-01-01T00:04:00.000Z");
    assert_eq!(n["description"], "orders pile up");
    let text = n["text"].as_str().unwrap();
    assert!(text.starts_with("[ALARM] orders-backlog on queue orders (Maximum ApproximateNumberOfMessagesVisible >= 1): Threshold Crossed: 2 out of the last 2 datapoints [3, 3]"), "{text}");
    assert_quiet(&hook).await;

    // Drain the queue: the next complete period is below the threshold.
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap();
    for m in got.messages() {
        sqs.delete_message()
            .queue_url(&url)
            .receipt_handle(m.receipt_handle().unwrap())
            .send()
            .await
            .unwrap();
    }
    server.clock.advance_secs(60); // [3, 3]: still ALARM, sampled 0
    assert!(server.service.alarm_tick().await.is_empty());
    server.clock.advance_secs(60); // [3, 0]
    let changes = server.service.alarm_tick().await;
    assert_eq!(changes.len(), 1);
    let n = hook
        .next(Duration::from_secs(10))
        .await
        .expect("OK notified");
    assert_eq!(
        (&n["old_state"], &n["new_state"]),
        (&json!("ALARM"), &json!("OK"))
    );
    server.clock.advance_secs(60);
    assert!(server.service.alarm_tick().await.is_empty());
    assert_quiet(&hook).await;

    // The same two notifications went to the queue, as JSON messages.
    let got = sqs
        .receive_message()
        .queue_url(&alerts)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap();
    let states: Vec<(String, String)> = got
        .messages()
        .iter()
        .map(|m| {
            let v: Value = serde_json::from_str(m.body().unwrap()).unwrap();
            (
                v["old_state"].as_str().unwrap().to_string(),
                v["new_state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        states,
        vec![("OK".into(), "ALARM".into()), ("ALARM".into(), "OK".into())]
    );

    let alarm = describe(raw, "orders-backlog").await;
    assert_eq!(alarm["StateValue"], "OK");
    assert_eq!(alarm["StateUpdatedTimestamp"], t0 + 360_000);
    let history: Vec<(String, String, u64)> = alarm["History"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["OldState"].as_str().unwrap().to_string(),
                h["NewState"].as_str().unwrap().to_string(),
                h["Timestamp"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        history,
        vec![
            ("ALARM".into(), "OK".into(), t0 + 360_000),
            ("OK".into(), "ALARM".into(), t0 + 240_000),
            ("INSUFFICIENT_DATA".into(), "OK".into(), t0 + 60_000),
        ]
    );
    // The Query protocol shows the same.
    let x = query(
        raw,
        vec![
            ("Action", "DescribeAlarms".into()),
            ("AlarmName.1", "orders-backlog".into()),
        ],
    )
    .await;
    assert_eq!(x.status, 200, "{}", x.body);
    assert_eq!(x.xml("StateValue").as_deref(), Some("OK"));
    assert_eq!(xml_values(&x.body, "NewState"), vec!["OK", "ALARM", "OK"]);
    assert_eq!(x.xml_all("AlarmAction").len(), 2);
    // Two changes, two actions each: four deliveries, nothing else.
    let m = metrics(raw).await;
    for (outcome, n) in [
        ("delivered", 4),
        ("retried", 0),
        ("failed", 0),
        ("dropped", 0),
    ] {
        assert!(
            m.contains(&format!(
                "sluice_alarm_notifications_total{{outcome=\"{outcome}\"}} {n}\n"
            )),
            "{outcome} {n}\n{m}"
        );
    }
}

/// The `/metrics` text.
pub(crate) async fn metrics(raw: RawClient) -> String {
    tokio::task::spawn_blocking(move || raw.request("GET", "/metrics", &[], b"").body)
        .await
        .unwrap()
}

/// M2, W2: PutAlarm/DescribeAlarms/DeleteAlarms in Query, and bad input
/// answered with the SQS error codes in both protocols.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_alarm_actions_and_errors_in_both_protocols() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let raw = server.raw();
    let url = create_queue(&sqs, "jobs").await;
    let r = query(
        raw,
        vec![
            ("Action", "PutAlarm".into()),
            ("AlarmName", "jobs-old".into()),
            ("QueueUrl", url.clone()),
            ("MetricName", "ApproximateAgeOfOldestMessage".into()),
            ("Statistic", "Average".into()),
            ("Period", "300".into()),
            ("Threshold", "600.5".into()),
            ("ComparisonOperator", "GreaterThanThreshold".into()),
            ("TreatMissingData", "notBreaching".into()),
        ],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("<PutAlarmResponse"));
    let a = describe(raw, "jobs-old").await;
    assert_eq!(a["Threshold"], 600.5);
    assert_eq!(a["Statistic"], "Average");
    assert_eq!(a["Period"], 300);
    assert_eq!(a["QueueName"], "jobs");

    let put = |extra: Value| {
        let mut body = json!({
            "AlarmName": "x", "QueueUrl": url, "MetricName": "NumberOfMessagesSent",
            "Threshold": 1, "ComparisonOperator": "LessThanThreshold",
        });
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                body.as_object_mut().unwrap().remove(k);
            } else {
                body[k] = v.clone();
            }
        }
        body
    };
    for (body, code) in [
        (
            put(json!({"QueueUrl": "http://h/000000000000/nope"})),
            "AWS.SimpleQueueService.NonExistentQueue",
        ),
        (put(json!({"MetricName": null})), "MissingParameter"),
        (put(json!({"QueueUrl": null})), "MissingParameter"),
        (
            put(json!({"MetricName": "CPUUtilization"})),
            "InvalidParameterValue",
        ),
        (put(json!({"Period": 45})), "InvalidParameterValue"),
        (
            put(json!({"ComparisonOperator": "Equal"})),
            "InvalidParameterValue",
        ),
        (
            put(json!({"TreatMissingData": "zero"})),
            "InvalidParameterValue",
        ),
        (
            put(json!({"Actions": ["arn:aws:sqs:us-east-1:000000000000:nope"]})),
            "InvalidParameterValue",
        ),
        (
            put(json!({"Actions": ["ftp://h/"]})),
            "InvalidParameterValue",
        ),
    ] {
        let (status, _, r) = sluice(raw, "PutAlarm", body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            r.header("x-amzn-query-error").unwrap().split(';').next(),
            Some(code),
            "{body}: {}",
            r.body
        );
    }
    let (status, _, r) = sluice(raw, "DescribeAlarms", json!({"StateValue": "RED"})).await;
    assert_eq!(status, 400);
    assert!(
        r.header("x-amzn-query-error")
            .unwrap()
            .starts_with("InvalidParameterValue")
    );
    let (status, _, r) = sluice(raw, "DeleteAlarms", json!({})).await;
    assert_eq!(
        (status, r.header("x-amzn-query-error")),
        (400, Some("MissingParameter;Sender"))
    );
    let (status, _, r) = sluice(
        raw,
        "DeleteAlarms",
        json!({"AlarmNames": ["jobs-old", "ghost"]}),
    )
    .await;
    assert_eq!(status, 404, "as SQS answers ResourceNotFoundException");
    assert_eq!(
        r.header("x-amzn-query-error"),
        Some("ResourceNotFoundException;Sender")
    );
    assert_eq!(
        describe(raw, "jobs-old").await["AlarmName"],
        "jobs-old",
        "all or nothing"
    );
    let r = query(
        raw,
        vec![("Action", "PutAlarm".into()), ("AlarmName", "y".into())],
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.xml("Code").as_deref(), Some("MissingParameter"));
    let r = query(
        raw,
        vec![
            ("Action", "DeleteAlarms".into()),
            ("AlarmName.1", "jobs-old".into()),
        ],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let (_, v, _) = sluice(raw, "DescribeAlarms", json!({})).await;
    assert_eq!(v["Alarms"], json!([]));
}

/// M2 (seeds 000, 001): with `dlq_alarms` on, every queue a RedrivePolicy
/// targets gets an alarm on visible ≥ 1, also a DLQ named after the server
/// started; a poison message reaching the DLQ notifies the webhook; the
/// alarm goes when no policy targets the queue any more, and the API cannot
/// delete it; a failure class's DLQ (rule X7) gets one as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_dlq_alarms_setting_covers_every_dlq() {
    let hook = Receiver::start().await;
    let server = TestServer::start_with(ServiceConfig {
        alarms: AlarmSettings {
            dlq_alarms: Some(DlqAlarmSettings {
                actions: vec![hook.url.clone()],
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let sqs = server.sdk();
    let raw = server.raw();
    create_queue(&sqs, "orders-dlq").await;
    let policy = |dlq: &str| {
        format!(
            r#"{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:{dlq}","maxReceiveCount":1}}"#
        )
    };
    let orders = sqs
        .create_queue()
        .queue_name("orders")
        .attributes(Attr::RedrivePolicy, policy("orders-dlq"))
        .attributes(Attr::VisibilityTimeout, "5")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    server.service.alarm_tick().await;
    let a = describe(raw, "dlq-depth:orders-dlq").await;
    assert_eq!(a["Source"], "dlq_alarms");
    assert_eq!(a["QueueName"], "orders-dlq");
    assert_eq!(a["ComparisonOperator"], "GreaterThanOrEqualToThreshold");
    assert_eq!(a["Threshold"], 1.0);
    assert_eq!(a["MetricName"], "ApproximateNumberOfMessagesVisible");
    let (_, all, _) = sluice(raw, "DescribeAlarms", json!({})).await;
    assert_eq!(
        all["Alarms"].as_array().unwrap().len(),
        1,
        "only DLQs get one"
    );

    // A poison message: received once, not deleted, received again → DLQ.
    sqs.send_message()
        .queue_url(&orders)
        .message_body("poison")
        .send()
        .await
        .unwrap();
    sqs.receive_message()
        .queue_url(&orders)
        .send()
        .await
        .unwrap();
    server.clock.advance_secs(6);
    let again = sqs
        .receive_message()
        .queue_url(&orders)
        .send()
        .await
        .unwrap();
    assert!(again.messages().is_empty(), "moved to the DLQ instead");
    server.service.alarm_tick().await; // samples 1 in the DLQ
    server.clock.advance_secs(60);
    let changes = server.service.alarm_tick().await;
    assert_eq!(changes.len(), 1, "{changes:?}");
    let n = hook.next(Duration::from_secs(10)).await.expect("notified");
    assert_eq!(n["alarm_name"], "dlq-depth:orders-dlq");
    assert_eq!(n["new_state"], "ALARM");
    assert_eq!(n["queue"], "orders-dlq");

    let (status, _, r) = sluice(
        raw,
        "DeleteAlarms",
        json!({"AlarmNames": ["dlq-depth:orders-dlq"]}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(r.body.contains("dlq_alarms setting"), "{}", r.body);

    // A DLQ that appears later is covered at the next tick; one that stops
    // being a DLQ loses its alarm.
    create_queue(&sqs, "late-dlq").await;
    sqs.set_queue_attributes()
        .queue_url(&orders)
        .attributes(Attr::RedrivePolicy, policy("late-dlq"))
        .send()
        .await
        .unwrap();
    server.service.alarm_tick().await;
    let names = |all: Value| -> Vec<String> {
        all["Alarms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["AlarmName"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, all, _) = sluice(raw, "DescribeAlarms", json!({})).await;
    assert_eq!(names(all), vec!["dlq-depth:late-dlq"]);

    // X7: a failure class's DLQ is a DLQ, and gets its alarm too.
    create_queue(&sqs, "invalid-dlq").await;
    sqs.set_queue_attributes()
        .queue_url(&orders)
        .attributes(
            Attr::from("SluiceDeadLetterRoutes"),
            r#"[{"class":"validation","deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:invalid-dlq","maxReceiveCount":1}]"#,
        )
        .send()
        .await
        .unwrap();
    server.service.alarm_tick().await;
    let (_, all, _) = sluice(raw, "DescribeAlarms", json!({})).await;
    assert_eq!(
        names(all),
        vec!["dlq-depth:invalid-dlq", "dlq-depth:late-dlq"]
    );
}

/// M2: a webhook receiver that is down when the alarm fires gets the
/// notification once it comes up (retries with backoff, in the
/// background: the tick returned at once), and gets it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_webhook_retried_until_the_receiver_is_up_real_time() {
    // A port nobody listens on, for now.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/hook");
    let server = TestServer::start_with(ServiceConfig {
        alarms: AlarmSettings {
            webhook: WebhookPolicy {
                first_backoff: Duration::from_millis(50),
                max_backoff: Duration::from_millis(200),
                max_attempts: 100,
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    arm_dlq_alarm(&server, &url).await;
    let started = std::time::Instant::now();
    let changes = server.service.alarm_tick().await;
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "the tick does not wait for the receiver"
    );
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].1.new.as_str(), "ALARM");
    // Let a few tries fail.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    let hook = Receiver::on(listener);
    let n = hook
        .next(Duration::from_secs(10))
        .await
        .expect("delivered once the receiver is up");
    assert_eq!(n["alarm_name"], "dlq-not-empty");
    assert_eq!(n["new_state"], "ALARM");
    assert_quiet(&hook).await;
    let m = metrics(server.raw()).await;
    assert!(
        m.contains("sluice_alarm_notifications_total{outcome=\"delivered\"} 1\n"),
        "{m}"
    );
    assert!(
        !m.contains("sluice_alarm_notifications_total{outcome=\"retried\"} 0\n"),
        "the first tries failed: {m}"
    );
    assert!(
        m.contains("sluice_alarm_notifications_total{outcome=\"failed\"} 0\n"),
        "{m}"
    );
}

/// M2: alarms from the config file and the `[dlq_alarms]` setting in the
/// real binary; an API alarm survives a restart (saved in the data
/// directory), a config alarm cannot be changed through the API;
/// `sluice alarms` shows them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_config_alarms_and_saved_api_alarms_across_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("sluice.toml");
    std::fs::write(
        &config,
        format!(
            r#"
data_dir = "{}"
alarm_sample_seconds = 1

[dlq_alarms]
actions = ["http://127.0.0.1:9/hook"]

[[queues]]
name = "orders-dlq"

[[queues]]
name = "orders"
attributes = {{ RedrivePolicy = '{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":3}}' }}

[[alarms]]
name = "orders-backlog"
queue = "orders"
metric = "ApproximateNumberOfMessagesVisible"
period = 60
evaluation_periods = 5
datapoints_to_alarm = 3
threshold = 1000
comparison = "GreaterThanOrEqualToThreshold"
treat_missing_data = "notBreaching"
"#,
            data.display()
        ),
    )
    .unwrap();
    let cfg = config.to_str().unwrap();
    let server = SluiceProcess::start(&["--config", cfg]);
    let raw = server.raw();
    let a = describe(raw, "orders-backlog").await;
    assert_eq!(a["Source"], "config");
    assert_eq!(
        (
            a["EvaluationPeriods"].as_u64(),
            a["DatapointsToAlarm"].as_u64()
        ),
        (Some(5), Some(3))
    );
    let url = format!("{}/000000000000/orders", server.endpoint);
    let (status, _, r) = sluice(
        raw,
        "PutAlarm",
        json!({"AlarmName": "orders-backlog", "QueueUrl": url, "MetricName": "NumberOfMessagesSent",
               "Threshold": 1, "ComparisonOperator": "LessThanThreshold"}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(r.body.contains("config file"), "{}", r.body);
    let (status, _, r) = sluice(
        raw,
        "PutAlarm",
        json!({"AlarmName": "orders-idle", "QueueUrl": url, "MetricName": "NumberOfMessagesSent",
               "Statistic": "Sum", "Period": 3600, "Threshold": 1, "ComparisonOperator": "LessThanThreshold"}),
    )
    .await;
    assert_eq!(status, 200, "{}", r.body);
    // The monitor ticks at once, then every second: the DLQ gets its alarm.
    let mut dlq_alarm = Value::Null;
    for _ in 0..50 {
        dlq_alarm = describe(raw, "dlq-depth:orders-dlq").await;
        if !dlq_alarm.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(dlq_alarm["Source"], "dlq_alarms");
    assert_eq!(dlq_alarm["Actions"], json!(["http://127.0.0.1:9/hook"]));
    assert!(server.terminate().success());

    let server = SluiceProcess::start(&["--config", cfg]);
    let raw = server.raw();
    let a = describe(raw, "orders-idle").await;
    assert_eq!(a["Source"], "api", "saved across the restart");
    assert_eq!(a["Period"], 3600);
    assert_eq!(a["StateValue"], "INSUFFICIENT_DATA");
    assert_eq!(describe(raw, "orders-backlog").await["Source"], "config");
    // `sluice alarms` lists them with their state, and shows one with its history.
    let cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
            .arg("alarms")
            .args(args)
            .args(["--endpoint", &server.endpoint])
            .output()
            .unwrap()
    };
    let list = cli(&[]);
    assert!(list.status.success());
    let list = String::from_utf8(list.stdout).unwrap();
    assert!(list.starts_with("ALARM "), "{list}");
    let rows: Vec<&str> = list.lines().skip(1).collect();
    assert!(
        rows.iter().any(|r| r.starts_with("orders-backlog ")
            && r.contains(" orders ")
            && r.ends_with(
                "Maximum ApproximateNumberOfMessagesVisible >= 1000 in 3 of 5 periods of 60 s"
            )),
        "{list}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("orders-idle ") && r.contains(" INSUFFICIENT_DATA ")),
        "{list}"
    );
    let one = cli(&["show", "orders-idle"]);
    assert!(one.status.success());
    let one = String::from_utf8(one.stdout).unwrap();
    assert!(one.contains("defined by        api\n"), "{one}");
    assert!(
        one.contains("Sum NumberOfMessagesSent < 1 in 1 of 1 periods of 3600 s"),
        "{one}"
    );
    assert!(
        one.ends_with("history (newest first):\n  no state changes yet\n"),
        "{one}"
    );
    let missing = cli(&["show", "ghost"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no alarm named \"ghost\""));
    let bad = cli(&["--state", "RED"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("InvalidParameterValue"));
    // `sluice alarms put` and `delete` define and remove alarms.
    let put = cli(&[
        "put",
        "orders-stale",
        "--queue",
        "orders",
        "--metric",
        "ApproximateAgeOfOldestMessage",
        "--threshold",
        "600",
        "--statistic",
        "Maximum",
        "--period",
        "60",
        "--evaluation-periods",
        "3",
        "--datapoints-to-alarm",
        "2",
        "--missing-data",
        "notBreaching",
        "--action",
        "http://127.0.0.1:9/hook",
        "--description",
        "orders wait too long",
    ]);
    assert!(
        put.status.success(),
        "{}",
        String::from_utf8_lossy(&put.stderr)
    );
    let made = describe(raw, "orders-stale").await;
    assert_eq!(
        (
            &made["Source"],
            &made["MetricName"],
            &made["Threshold"],
            &made["DatapointsToAlarm"]
        ),
        (
            &json!("api"),
            &json!("ApproximateAgeOfOldestMessage"),
            &json!(600.0),
            &json!(2)
        )
    );
    assert_eq!(made["Actions"], json!(["http://127.0.0.1:9/hook"]));
    let refused = cli(&[
        "put",
        "orders-backlog",
        "--queue",
        "orders",
        "--metric",
        "NumberOfMessagesSent",
        "--threshold",
        "1",
    ]);
    assert!(
        !refused.status.success(),
        "a config alarm cannot be replaced"
    );
    assert!(String::from_utf8_lossy(&refused.stderr).contains("InvalidParameterValue"));
    let gone = cli(&["delete", "orders-stale", "orders-idle"]);
    assert!(
        gone.status.success(),
        "{}",
        String::from_utf8_lossy(&gone.stderr)
    );
    assert!(describe(raw, "orders-stale").await.is_null());
    let unknown = cli(&["delete", "orders-stale"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("ResourceNotFoundException"));
    assert!(server.terminate().success());
    let server = SluiceProcess::start(&["--config", cfg]);
    assert!(
        describe(server.raw(), "orders-idle").await.is_null(),
        "deletion saved too"
    );
}
