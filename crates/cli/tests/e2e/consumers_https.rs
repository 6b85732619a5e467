//! Push consumers to `https://` handlers (rules C1, C12): a handler whose
//! certificate chains to the `consumer_ca_file` gets the batch, and the
//! handled message is deleted; one whose certificate is not trusted is
//! never sent the batch, which stays on the queue like any batch of a
//! handler that cannot be reached; a bad CA file stops `sluice serve` at
//! start.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use sluice_outbound::{OutboundTls, Roots};
use sluice_server::ServiceConfig;

use crate::common::{SluiceProcess, TestServer};
use crate::consumers::{Handler, Reply, bodies, queue, remaining, send, spec, start, until};
use crate::test_ca::TestCa;

/// A server on the system clock whose consumers trust `ca` for https://.
async fn trusting(ca: &TestCa, dir: &std::path::Path) -> TestServer {
    let ca_file = ca.write_pem(dir);
    TestServer::start_real_time_with(ServiceConfig {
        consumer_tls: OutboundTls::with_ca_file(Roots::Mozilla, &ca_file, "the consumer CA file")
            .unwrap(),
        ..Default::default()
    })
    .await
}

/// C1: an https:// handler whose certificate chains to the consumer CA
/// file is posted Lambda's event over TLS; its success deletes the message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1_https_handler_trusted_through_the_consumer_ca_file() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new();
    let handler = Handler::start_tls(ca.acceptor(), Arc::new(|_, _| Reply::ok("{}"))).await;
    assert!(
        handler.url.starts_with("https://127.0.0.1:"),
        "{}",
        handler.url
    );
    let server = trusting(&ca, dir.path()).await;
    let url = queue(&server, "secure", 5, None).await;
    let _consumers = start(&server, vec![spec("tls", "secure", &handler.url)]).await;

    send(&server, &url, "over tls").await;
    assert!(
        until(Duration::from_secs(10), async || remaining(&server, &url)
            .await
            == 0)
        .await,
        "the handled message is deleted"
    );
    let events = handler.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(bodies(&events[0]), ["over tls"]);
    assert_eq!(events[0]["Records"][0]["eventSource"], "aws:sqs");
    assert_eq!(handler.handshake_failures.load(Ordering::SeqCst), 0);
}

/// C12: a handler whose certificate no trusted CA issued is refused at the
/// handshake: it never sees the batch, which stays on the queue (posted
/// again after each back-off pause) until a handler can be reached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c12_https_handler_with_an_untrusted_certificate_gets_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let trusted = TestCa::new();
    let stranger = TestCa::new();
    let handler = Handler::start_tls(stranger.acceptor(), Arc::new(|_, _| Reply::ok("{}"))).await;
    let server = trusting(&trusted, dir.path()).await;
    let url = queue(&server, "guarded", 5, None).await;
    let _consumers = start(&server, vec![spec("tls", "guarded", &handler.url)]).await;

    send(&server, &url, "kept").await;
    assert!(
        until(Duration::from_secs(10), async || handler
            .handshake_failures
            .load(Ordering::SeqCst)
            >= 2)
        .await,
        "each try reaches the handler and fails at the handshake"
    );
    assert!(handler.events().is_empty(), "{:?}", handler.events());
    assert_eq!(remaining(&server, &url).await, 1, "the message stays");
}

/// `consumer_ca_file` is read at start: a file without a certificate stops
/// `sluice serve` with an error naming it.
#[test]
fn bad_consumer_ca_file_stops_serve_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sluice.toml");
    let bad = dir.path().join("bad-ca.pem");
    std::fs::write(&bad, "not a certificate\n").unwrap();
    std::fs::write(
        &config,
        format!(
            "in_memory = true\nconsumer_ca_file = {:?}\n",
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
            "the consumer CA file {} holds no PEM CERTIFICATE",
            bad.display()
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "never listened");

    let good = TestCa::new().write_pem(dir.path());
    std::fs::write(
        &config,
        format!(
            "in_memory = true\nconsumer_ca_file = {:?}\n",
            good.display().to_string()
        ),
    )
    .unwrap();
    let server = SluiceProcess::start(&["--config", config.to_str().unwrap()]);
    assert_eq!(server.raw().request("GET", "/health", &[], b"").status, 200);
    drop(server);
}
