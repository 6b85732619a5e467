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
