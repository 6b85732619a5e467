//! `GET /metrics` (rule M1): Prometheus exposition that agrees with
//! GetQueueAttributes after a scripted workload.

use aws_sdk_sqs::types::QueueAttributeName as Attr;

use crate::common::{TestServer, create_queue};

/// The value of a sample line `name{labels} value`.
fn sample(text: &str, name: &str, labels: &str) -> f64 {
    value_after(text, &format!("{name}{{{labels}}} "))
}

/// The value of the sample line that starts with `prefix`.
fn value_after(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no sample {prefix}in\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

/// M1, M2: queue gauges equal the approximate counts SQS clients read (a
/// DLQ's too), counters follow the workload (dead-letter moves and a
/// redrive included), request metrics count by action and outcome, alarm
/// states are exported, and every advertised metric name is present.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_metrics_agree_with_queue_attributes() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let dlq = create_queue(&sqs, "src-dlq").await;
    let src = sqs
        .create_queue()
        .queue_name("src")
        .attributes(
            Attr::RedrivePolicy,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:src-dlq","maxReceiveCount":1}"#,
        )
        .attributes(Attr::VisibilityTimeout, "5")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    for i in 0..3 {
        sqs.send_message()
            .queue_url(&src)
            .message_body(format!("poison-{i}"))
            .send()
            .await
            .unwrap();
    }
    let first = sqs
        .receive_message()
        .queue_url(&src)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap();
    assert_eq!(first.messages().len(), 3);
    // One failure with a class (no route: it only marks the message), so
    // its move counts under that class too (rule X7).
    let raw = server.raw();
    let nack = serde_json::json!({"QueueUrl": src, "FailureClass": "validation",
        "ReceiptHandle": first.messages()[0].receipt_handle().unwrap()});
    let nacked = tokio::task::spawn_blocking(move || {
        raw.json_target("Sluice.NackMessage", &nack.to_string())
    })
    .await
    .unwrap();
    assert_eq!(nacked.status, 200, "{}", nacked.body);
    server.clock.advance_secs(6);
    let again = sqs
        .receive_message()
        .queue_url(&src)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap();
    assert!(again.messages().is_empty(), "all three went to the DLQ");
    let raw = server.raw();
    let dlq2 = dlq.clone();
    let redrive = tokio::task::spawn_blocking(move || {
        raw.json_target(
            "Sluice.RedriveMessages",
            &serde_json::json!({"QueueUrl": dlq2, "MaxMessages": 1}).to_string(),
        )
    })
    .await
    .unwrap();
    assert_eq!(redrive.status, 200, "{}", redrive.body);
    let raw = server.raw();
    let dlq2 = dlq.clone();
    let put = tokio::task::spawn_blocking(move || {
        raw.json_target(
            "Sluice.PutAlarm",
            &serde_json::json!({"AlarmName": "src-dlq-depth", "QueueUrl": dlq2,
                "MetricName": "ApproximateNumberOfMessagesVisible", "Threshold": 1,
                "ComparisonOperator": "GreaterThanOrEqualToThreshold"})
            .to_string(),
        )
    })
    .await
    .unwrap();
    assert_eq!(put.status, 200, "{}", put.body);
    server.service.alarm_tick().await;
    server.clock.advance_secs(60);
    assert_eq!(server.service.alarm_tick().await.len(), 1);

    let url = create_queue(&sqs, "work").await;
    for i in 0..5 {
        sqs.send_message()
            .queue_url(&url)
            .message_body(format!("body-{i}"))
            .send()
            .await
            .unwrap();
    }
    sqs.send_message()
        .queue_url(&url)
        .message_body("later")
        .delay_seconds(60)
        .send()
        .await
        .unwrap();
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(3)
        .send()
        .await
        .unwrap();
    for m in &got.messages()[..2] {
        sqs.delete_message()
            .queue_url(&url)
            .receipt_handle(m.receipt_handle().unwrap())
            .send()
            .await
            .unwrap();
    }
    let idle = create_queue(&sqs, "idle").await;
    sqs.receive_message().queue_url(&idle).send().await.unwrap();
    let _ = sqs.get_queue_url().queue_name("missing").send().await;
    server.clock.advance_secs(10);

    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::All)
        .send()
        .await
        .unwrap();
    let attrs = attrs.attributes().unwrap();
    let raw = server.raw();
    let metrics = tokio::task::spawn_blocking(move || raw.request("GET", "/metrics", &[], b""))
        .await
        .unwrap();
    assert_eq!(metrics.status, 200);
    assert!(
        metrics
            .header("content-type")
            .unwrap()
            .starts_with("application/openmetrics-text")
    );
    let text = &metrics.body;
    let q = r#"queue="work""#;
    let attr = |a: Attr| attrs[&a].parse::<f64>().unwrap();
    assert_eq!(
        sample(text, "sluice_queue_messages_visible", q),
        attr(Attr::ApproximateNumberOfMessages)
    );
    assert_eq!(
        sample(text, "sluice_queue_messages_not_visible", q),
        attr(Attr::ApproximateNumberOfMessagesNotVisible)
    );
    assert_eq!(
        sample(text, "sluice_queue_messages_delayed", q),
        attr(Attr::ApproximateNumberOfMessagesDelayed)
    );
    assert_eq!(
        (
            attr(Attr::ApproximateNumberOfMessages),
            attr(Attr::ApproximateNumberOfMessagesNotVisible),
            attr(Attr::ApproximateNumberOfMessagesDelayed)
        ),
        (2.0, 1.0, 1.0)
    );
    assert_eq!(sample(text, "sluice_queue_messages_sent_total", q), 6.0);
    assert_eq!(
        sample(text, "sluice_queue_sent_message_bytes_total", q),
        (5 * 6 + 5) as f64
    );
    assert_eq!(sample(text, "sluice_queue_messages_received_total", q), 3.0);
    assert_eq!(sample(text, "sluice_queue_messages_deleted_total", q), 2.0);
    assert_eq!(
        sample(text, "sluice_queue_empty_receives_total", r#"queue="idle""#),
        1.0
    );
    assert_eq!(
        sample(text, "sluice_queue_oldest_message_age_seconds", q),
        10.0
    );
    assert_eq!(
        sample(
            text,
            "sluice_requests_total",
            r#"action="SendMessage",protocol="json",code="ok""#
        ),
        9.0,
        "6 to work, 3 to src"
    );
    assert_eq!(
        sample(
            text,
            "sluice_requests_total",
            r#"action="GetQueueUrl",protocol="json",code="AWS.SimpleQueueService.NonExistentQueue""#
        ),
        1.0
    );
    for (queue, url) in [("src", &src), ("src-dlq", &dlq)] {
        let attrs = sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(Attr::All)
            .send()
            .await
            .unwrap();
        let attrs = attrs.attributes().unwrap();
        let q = format!(r#"queue="{queue}""#);
        for (metric, attr) in [
            (
                "sluice_queue_messages_visible",
                Attr::ApproximateNumberOfMessages,
            ),
            (
                "sluice_queue_messages_not_visible",
                Attr::ApproximateNumberOfMessagesNotVisible,
            ),
            (
                "sluice_queue_messages_delayed",
                Attr::ApproximateNumberOfMessagesDelayed,
            ),
        ] {
            assert_eq!(
                sample(text, metric, &q),
                attrs[&attr].parse::<f64>().unwrap(),
                "{metric} of {queue}"
            );
        }
    }
    assert_eq!(
        sample(text, "sluice_queue_messages_visible", r#"queue="src-dlq""#),
        2.0
    );
    assert_eq!(
        sample(text, "sluice_queue_messages_visible", r#"queue="src""#),
        1.0
    );
    assert_eq!(
        sample(
            text,
            "sluice_queue_messages_dead_lettered_total",
            r#"queue="src""#
        ),
        3.0
    );
    assert_eq!(
        sample(
            text,
            "sluice_queue_messages_dead_lettered_by_class_total",
            r#"queue="src",class="validation""#
        ),
        1.0
    );
    assert_eq!(
        sample(
            text,
            "sluice_queue_messages_redriven_total",
            r#"queue="src-dlq""#
        ),
        1.0
    );
    assert_eq!(
        sample(
            text,
            "sluice_queue_dead_letter_sources",
            r#"queue="src-dlq""#
        ),
        1.0
    );
    assert_eq!(sample(text, "sluice_queue_dead_letter_sources", q), 0.0);
    for (state, value) in [("ALARM", 1.0), ("OK", 0.0), ("INSUFFICIENT_DATA", 0.0)] {
        assert_eq!(
            sample(
                text,
                "sluice_alarm_state",
                &format!(r#"alarm="src-dlq-depth",queue="src-dlq",state="{state}""#)
            ),
            value
        );
    }
    // This server runs no push consumer: theirs are checked in consumers.rs;
    // nor does it seal: the queues' keys are checked in encryption_metrics.rs;
    // nor does it keep an archive: its metrics are checked in archive.rs.
    let consumers = sluice_consumers::metrics::consumer_metric_names();
    let sealing = sluice_server::metrics::encryption::QUEUE_METRICS;
    let archive = sluice_server::metrics::archive::metric_names();
    for name in sluice_server::metrics::metric_names() {
        if consumers.contains(&name) || sealing.contains(&name.as_str()) || archive.contains(&name)
        {
            continue;
        }
        assert!(
            text.contains(&format!("\n{name}")),
            "{name} missing from\n{text}"
        );
    }
}

/// The value of an unlabelled sample line `name value`.
pub fn plain(text: &str, name: &str) -> f64 {
    value_after(text, &format!("{name} "))
}

/// The server's `/metrics` page.
pub async fn scrape(server: &TestServer) -> String {
    let raw = server.raw();
    let metrics = tokio::task::spawn_blocking(move || raw.request("GET", "/metrics", &[], b""))
        .await
        .unwrap();
    assert_eq!(metrics.status, 200);
    metrics.body
}

/// The embedded engine's storage gauges: a durable server reports the
/// write-ahead log's segment files and bytes on disk and the bodies it
/// keeps in memory, and those follow what is stored; one in memory has no
/// log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_gauges_show_the_log_on_disk_and_the_cached_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_durable(dir.path()).await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "stored").await;
    let before = scrape(&server).await;
    let log_before = plain(&before, "sluice_storage_log_bytes");
    assert!(plain(&before, "sluice_storage_log_segments") >= 1.0);
    assert_eq!(plain(&before, "sluice_storage_cached_body_bytes"), 0.0);
    // More than the 1 MiB of zeros a start writes into its first segment,
    // so the files must grow to hold it.
    for _ in 0..5 {
        sqs.send_message()
            .queue_url(&url)
            .message_body("b".repeat(250_000))
            .send()
            .await
            .unwrap();
    }
    let after = scrape(&server).await;
    let log_after = plain(&after, "sluice_storage_log_bytes");
    assert!(log_after >= 1_250_000.0, "{after}");
    assert!(log_after > log_before, "{log_before} then {log_after}");
    assert!(plain(&after, "sluice_storage_cached_body_bytes") >= 1_250_000.0);

    assert_eq!(plain(&after, "sluice_storage_writes_refused"), 0.0);

    let memory = TestServer::start().await;
    let text = scrape(&memory).await;
    assert_eq!(plain(&text, "sluice_storage_log_segments"), 0.0);
    assert_eq!(plain(&text, "sluice_storage_log_bytes"), 0.0);
    assert_eq!(plain(&text, "sluice_storage_writes_refused"), 0.0);
}

/// `sluice serve` with `args`, until dropped; the addresses of its
/// stdout lines, in order.
struct Listeners {
    child: std::process::Child,
    addrs: Vec<String>,
}

impl Listeners {
    fn start(args: &[&str], lines: usize) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args(["serve", "--bind", "127.0.0.1:0", "--in-memory"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start sluice");
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        let addrs = (0..lines)
            .map(|_| {
                let line = out.next().expect("a line").expect("stdout");
                let rest = line
                    .strip_prefix("sluice listening on http://")
                    .unwrap_or_else(|| panic!("unexpected line {line:?}"));
                rest.split(' ').next().unwrap_or_default().to_string()
            })
            .collect();
        Self { child, addrs }
    }
}

impl Drop for Listeners {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// M4: with a metrics listener (`metrics_bind` in the config file, or
/// `--metrics-bind`), `/metrics` is served there and only there, `/health`
/// everywhere, and the metrics listener serves no SQS request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_metrics_can_have_a_listener_of_their_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("sluice.toml");
    std::fs::write(&config, "metrics_bind = \"127.0.0.1:0\"\n").expect("config");
    let from_file = Listeners::start(&["--config", config.to_str().expect("path")], 2);
    let from_flag = Listeners::start(&["--metrics-bind", "127.0.0.1:0"], 2);
    for server in [&from_file, &from_flag] {
        let api = crate::common::RawClient::at(&format!("http://{}", server.addrs[0]));
        let metrics = crate::common::RawClient::at(&format!("http://{}", server.addrs[1]));
        let created = api.json("CreateQueue", r#"{"QueueName":"named-in-metrics"}"#);
        assert_eq!(created.status, 200, "{}", created.body);
        assert_eq!(api.request("GET", "/metrics", &[], b"").status, 404);
        assert_eq!(api.request("GET", "/health", &[], b"").status, 200);
        let scraped = metrics.request("GET", "/metrics", &[], b"");
        assert_eq!(scraped.status, 200);
        assert!(
            scraped.body.contains("queue=\"named-in-metrics\""),
            "{}",
            scraped.body
        );
        assert_eq!(metrics.request("GET", "/health", &[], b"").status, 200);
        let sqs = metrics.json("ListQueues", "{}");
        assert_eq!(sqs.status, 404, "{}", sqs.body);
        assert_eq!(metrics.request("GET", "/console/", &[], b"").status, 404);
    }
    // Without one, /metrics is served on the main listener, as before.
    let default = Listeners::start(&[], 1);
    let api = crate::common::RawClient::at(&format!("http://{}", default.addrs[0]));
    assert_eq!(api.request("GET", "/metrics", &[], b"").status, 200);
}
