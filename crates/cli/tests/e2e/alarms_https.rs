//! `https://` alarm webhooks (rule M2): a receiver whose certificate
//! chains to the `webhook_ca_file` gets each notification once; one whose
//! certificate is not trusted gets nothing, and the failed tries are
//! counted; a bad CA file stops `sluice serve` at start.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use sluice_alarms::AlarmSettings;
use sluice_alarms::notify::WebhookPolicy;
use sluice_outbound::{OutboundTls, Roots};
use sluice_server::ServiceConfig;

use crate::alarms::{Receiver, arm_dlq_alarm, assert_quiet, metrics};
use crate::common::{SluiceProcess, TestServer};
use crate::test_ca::TestCa;

/// The count of `sluice_alarm_notifications_total{outcome}` in `/metrics`.
fn notifications(metrics: &str, outcome: &str) -> u64 {
    let prefix = format!("sluice_alarm_notifications_total{{outcome=\"{outcome}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {outcome} count in\n{metrics}"))
        .parse()
        .unwrap()
}

/// A server whose https:// webhooks trust `ca_file`, with a DLQ-style alarm
/// on `dlq` notifying `url`; the alarm fires (ALARM) before this returns.
async fn fire_alarm(ca_file: &std::path::Path, policy: WebhookPolicy, url: &str) -> TestServer {
    let server = TestServer::start_with(ServiceConfig {
        alarms: AlarmSettings {
            webhook: policy,
            webhook_tls: OutboundTls::with_ca_file(Roots::Mozilla, ca_file, "the webhook CA file")
                .unwrap(),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    arm_dlq_alarm(&server, url).await;
    let changes = server.service.alarm_tick().await;
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].1.new.as_str(), "ALARM");
    server
}

/// M2: an https:// receiver whose certificate chains to the CA file gets
/// the state change exactly once, as the JSON body with its `text`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_https_webhook_trusted_through_the_ca_file() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new();
    let hook = Receiver::start_tls(ca.acceptor()).await;
    assert!(hook.url.starts_with("https://127.0.0.1:"), "{}", hook.url);
    let server = fire_alarm(
        &ca.write_pem(dir.path()),
        WebhookPolicy::default(),
        &hook.url,
    )
    .await;

    let n = hook
        .next(Duration::from_secs(10))
        .await
        .expect("ALARM delivered over TLS");
    assert_eq!(n["alarm_name"], "dlq-not-empty");
    assert_eq!(n["queue"], "dlq");
    assert_eq!(
        (&n["old_state"], &n["new_state"]),
        (&json!("INSUFFICIENT_DATA"), &json!("ALARM"))
    );
    let text = n["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "[ALARM] dlq-not-empty on queue dlq (Maximum ApproximateNumberOfMessagesVisible >= 1)"
        ),
        "{text}"
    );
    assert_quiet(&hook).await;
    assert_eq!(hook.handshake_failures.load(Ordering::Relaxed), 0);
    let m = metrics(server.raw()).await;
    assert_eq!(notifications(&m, "delivered"), 1, "{m}");
    assert_eq!(notifications(&m, "retried"), 0, "{m}");
}

/// M2: a receiver whose certificate no trusted CA issued gets nothing: each
/// try is refused at the TLS handshake, retried with backoff like a
/// receiver that is down, then given up and counted as failed; the server
/// goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_https_webhook_untrusted_certificate_is_not_delivered_real_time() {
    let dir = tempfile::tempdir().unwrap();
    let trusted = TestCa::new();
    let stranger = TestCa::new();
    let hook = Receiver::start_tls(stranger.acceptor()).await;
    let policy = WebhookPolicy {
        first_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(100),
        max_attempts: 3,
        ..Default::default()
    };
    let server = fire_alarm(&trusted.write_pem(dir.path()), policy, &hook.url).await;

    let mut m = String::new();
    for _ in 0..100 {
        m = metrics(server.raw()).await;
        // The receiver counts a refused handshake a moment after sluice does.
        if notifications(&m, "failed") == 1 && hook.handshake_failures.load(Ordering::Relaxed) >= 3
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        notifications(&m, "failed"),
        1,
        "given up after 3 tries: {m}"
    );
    assert_eq!(notifications(&m, "retried"), 2, "{m}");
    assert_eq!(notifications(&m, "delivered"), 0, "{m}");
    assert_quiet(&hook).await;
    assert_eq!(
        hook.handshake_failures.load(Ordering::Relaxed),
        3,
        "each try reached the receiver and failed at the handshake"
    );
    assert_eq!(notifications(&metrics(server.raw()).await, "failed"), 1);
}

/// M2: `webhook_ca_file` is read at start: a file without a certificate
/// stops `sluice serve` with an error naming it; a good one starts.
#[test]
fn m2_bad_webhook_ca_file_stops_serve_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sluice.toml");
    let bad = dir.path().join("bad-ca.pem");
    std::fs::write(&bad, "not a certificate\n").unwrap();
    std::fs::write(
        &config,
        format!(
            "in_memory = true\nwebhook_ca_file = {:?}\n",
            bad.display().to_string()
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "the webhook CA file {} holds no PEM CERTIFICATE",
            bad.display()
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "never listened");

    let good = TestCa::new().write_pem(dir.path());
    std::fs::write(
        &config,
        format!(
            "in_memory = true\nwebhook_ca_file = {:?}\n",
            good.display().to_string()
        ),
    )
    .unwrap();
    let server = SluiceProcess::start(&["--config", config.to_str().unwrap()]);
    assert_eq!(server.raw().request("GET", "/health", &[], b"").status, 200);
    // Killed on drop, not `terminate()`d: a SIGTERM this soon after start
    // can arrive before `serve` has set up its signal handler.
    drop(server);
}
