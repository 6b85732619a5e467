//! `sluice stats` run as the real binary: depths from the server's metrics
//! and rates from the counters between two samples (rule M1).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::cli_run::sluice;
use crate::common::{TestServer, create_queue};

fn queue<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["Queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["Name"] == name)
        .unwrap_or_else(|| panic!("{name} in {doc}"))
}

/// M1: visible, in flight, delayed and the oldest age per queue; rates
/// over the interval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_stats_shows_depths_and_rates() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let q = create_queue(&sqs, "orders").await;
    create_queue(&sqs, "idle").await;
    for i in 0..3 {
        sqs.send_message()
            .queue_url(&q)
            .message_body(format!("m{i}"))
            .send()
            .await
            .unwrap();
    }
    sqs.send_message()
        .queue_url(&q)
        .message_body("later")
        .delay_seconds(60)
        .send()
        .await
        .unwrap();
    sqs.receive_message().queue_url(&q).send().await.unwrap();
    server.clock.advance_secs(5);
    let doc = sluice(&server.endpoint, &["stats", "--json", "--interval", "1"])
        .await
        .expect_code(0)
        .json();
    let o = queue(&doc, "orders");
    assert_eq!(o["Visible"], 2);
    assert_eq!(o["InFlight"], 1);
    assert_eq!(o["Delayed"], 1);
    assert!(o["OldestMessageAgeSeconds"].as_f64().unwrap() >= 5.0, "{o}");
    assert_eq!(o["Sent"], 0, "nothing was sent between the two samples");
    assert_eq!(o["SentPerSecond"], 0.0);
    assert!(doc["IntervalSeconds"].as_f64().unwrap() >= 1.0);
    assert_eq!(queue(&doc, "idle")["Visible"], 0);
    let text = sluice(&server.endpoint, &["stats", "--interval", "1"])
        .await
        .expect_code(0);
    assert!(text.stdout.starts_with("QUEUE"), "{}", text.stdout);
    assert!(text.stdout.contains("orders"), "{}", text.stdout);
    let r = sluice("http://127.0.0.1:1", &["stats"])
        .await
        .expect_code(1);
    assert!(
        r.stderr.starts_with("error: cannot reach the server"),
        "{r:?}"
    );
}

/// M1: `--watch --json` prints a document per refresh; the messages sent
/// between two refreshes are that refresh's delta, and its rate is the
/// delta over the interval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_stats_watch_rates_follow_the_counters() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let q = create_queue(&sqs, "orders").await;
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args([
                "stats",
                "--watch",
                "1",
                "--json",
                "--endpoint",
                &server.endpoint,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let stdout = child.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                break;
            }
        }
    });
    let first = rx.recv().await.unwrap();
    assert!(
        queue(&first, "orders")["SentPerSecond"].is_null(),
        "no rate before a second sample"
    );
    for i in 0..5 {
        sqs.send_message()
            .queue_url(&q)
            .message_body(format!("m{i}"))
            .send()
            .await
            .unwrap();
    }
    // The sends may straddle a refresh: count until all five are seen.
    let mut seen = 0;
    for _ in 0..5 {
        let doc = rx.recv().await.unwrap();
        let o = queue(&doc, "orders");
        let sent = o["Sent"].as_u64().unwrap();
        let interval = doc["IntervalSeconds"].as_f64().unwrap();
        let rate = o["SentPerSecond"].as_f64().unwrap();
        assert!((rate - sent as f64 / interval).abs() < 1e-9, "{doc}");
        seen += sent;
        if seen >= 5 {
            break;
        }
    }
    assert_eq!(seen, 5);
}

/// A child process killed when the test ends, passed or failed.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// M6: with a push consumer running, `sluice stats` lists it below the
/// queues: its state from ListConsumers, batches in flight over its limit,
/// messages delivered, failures by kind and the handler's mean answer time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m6_stats_shows_each_consumer() {
    use std::sync::Arc;
    use std::time::Duration;

    use crate::consumers::{Handler, Reply, queue, send, spec, start, until};

    let server = TestServer::start_real_time().await;
    let url = queue(&server, "jobs", 1, None).await;
    // The first batch takes 200 ms and fails with a 500; the next succeeds.
    let handler = Handler::start(Arc::new(|_, n| Reply {
        delay: Duration::from_millis(200),
        ..if n == 0 {
            Reply {
                status: 500,
                ..Reply::ok("")
            }
        } else {
            Reply::ok("")
        }
    }))
    .await;
    let _consumers = start(&server, vec![spec("jobs-worker", "jobs", &handler.url)]).await;
    send(&server, &url, "one").await;
    assert!(
        until(Duration::from_secs(10), async || handler.events().len()
            >= 2)
        .await
    );
    // The answers of the second POST are applied after it returns.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let doc = sluice(&server.endpoint, &["stats", "--json", "--interval", "1"])
        .await
        .expect_code(0)
        .json();
    let c = doc["Consumers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["Name"] == "jobs-worker")
        .unwrap_or_else(|| panic!("jobs-worker in {doc}"));
    assert_eq!(c["Queue"], "jobs", "{c}");
    assert_eq!(c["State"], "running", "{c}");
    assert_eq!(c["InFlightBatches"], 0, "{c}");
    assert_eq!(c["ConcurrencyLimit"], 1, "{c}");
    assert_eq!(c["Deliveries"], 2, "{c}");
    assert_eq!(c["Messages"], 2, "{c}");
    assert_eq!(c["Deleted"], 1, "{c}");
    assert_eq!(c["Failures"]["status"], 1, "{c}");
    assert_eq!(
        c["DeliveriesPerSecond"], 0.0,
        "nothing between the samples: {c}"
    );
    assert_eq!(
        c["MeanHandlerSeconds"],
        Value::Null,
        "no answer between the samples: {c}"
    );
    let text = sluice(&server.endpoint, &["stats", "--interval", "1"])
        .await
        .expect_code(0);
    let line = text
        .stdout
        .lines()
        .find(|l| l.starts_with("jobs-worker"))
        .unwrap_or_else(|| panic!("{}", text.stdout));
    for cell in ["jobs", "running", "0/1", "status 1"] {
        assert!(line.contains(cell), "{cell} in {line}");
    }
    assert!(text.stdout.contains("\nCONSUMER"), "{}", text.stdout);
}
