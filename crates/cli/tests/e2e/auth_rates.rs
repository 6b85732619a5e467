//! Per-credential request rates end to end (rule A8, docs/security.md):
//! a key over its `rate_limit` gets SQS's throttling answer, another key
//! is not affected, and an SDK with retries on rides it out.
//!
//! The answer is SQS's `RequestThrottled` (the SQS API reference lists it
//! among every action's errors, "The request was denied due to request
//! throttling", HTTP 400; in the JSON protocol `__type`
//! `com.amazonaws.sqs#RequestThrottled` and `x-amzn-query-error:
//! RequestThrottled;Sender`, the Query code `RequestThrottled` in the
//! Query protocol). `RequestThrottled` is in the AWS SDKs' throttling
//! error lists, so they retry it with backoff.

use std::time::Duration;

use aws_sdk_sqs::config::retry::RetryConfig;
use sluice_server::auth::RateLimit;

use crate::auth::{KEY, SECRET, aws_sign, sdk_signing, status};
use crate::auth_access::{ACCOUNT_A, Server, credential};
use crate::common::code;

const LIMITED: &str = "AKIDSLUICELIMITED";
const FREE: &str = "AKIDSLUICEFREE";

fn limited(key: &str, per_second: u32, burst: u32) -> sluice_server::auth::Credential {
    let mut c = credential(key, ACCOUNT_A, None, None);
    c.rate_limit = Some(RateLimit { per_second, burst });
    c
}

/// A8: with retries off, the request after the burst is RequestThrottled
/// (400, `RequestThrottled;Sender`, `com.amazonaws.sqs#RequestThrottled`)
/// while a key without a limit is served at the same moment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a8_over_the_rate_is_request_throttled() {
    let server = Server::start(vec![
        limited(LIMITED, 1, 3),
        credential(FREE, ACCOUNT_A, None, None),
    ])
    .await;
    let sqs = server.sdk(LIMITED);
    for _ in 0..3 {
        sqs.list_queues().send().await.expect("within the burst");
    }
    // A token comes back each second: on a slow machine one more may pass.
    let mut refused = None;
    for _ in 0..5 {
        if let Err(e) = sqs.list_queues().send().await {
            refused = Some(e);
            break;
        }
    }
    let e = refused.expect("over the rate");
    assert_eq!(code(&e), "RequestThrottled", "{e:?}");
    assert_eq!(status(&e), 400);
    let raw = e.raw_response().expect("a response");
    assert_eq!(
        raw.headers().get("x-amzn-query-error"),
        Some("RequestThrottled;Sender")
    );
    let body: serde_json::Value =
        serde_json::from_slice(raw.body().bytes().expect("body")).expect("json");
    assert_eq!(body["__type"], "com.amazonaws.sqs#RequestThrottled");
    assert_eq!(body["message"], "Rate exceeded");
    // Another key has its own rate.
    let free = server.sdk(FREE);
    for _ in 0..10 {
        free.list_queues().send().await.expect("unlimited key");
    }
}

/// A8: the Query protocol's answer: 400, `<Code>RequestThrottled</Code>`,
/// a Sender fault.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a8_query_protocol_throttled() {
    let mut key = credential(KEY, ACCOUNT_A, None, None);
    key.secret_access_key = SECRET.into();
    key.rate_limit = Some(RateLimit {
        per_second: 1,
        burst: 1,
    });
    let server = Server::start(vec![key]).await;
    let addr = server.addr();
    let send = || {
        let (target, _) = aws_sign(
            addr,
            "GET",
            "/?Action=ListQueues&Version=2012-11-05",
            &[],
            b"",
            SECRET,
            Some(Duration::from_secs(600)),
        );
        server.raw().request("GET", &target, &[], b"")
    };
    let first = send();
    assert_eq!(first.status, 200, "{}", first.body);
    // A token comes back each second: on a slow machine one more may pass.
    let refused = (0..5)
        .map(|_| send())
        .find(|r| r.status != 200)
        .expect("over the rate");
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.xml("Code").as_deref(), Some("RequestThrottled"));
    assert_eq!(refused.xml("Type").as_deref(), Some("Sender"));
    assert_eq!(refused.xml("Message").as_deref(), Some("Rate exceeded"));
}

/// A8: an SDK with its standard retries on gets every request of a burst
/// through a key limited well below it: it retries the throttled ones
/// with backoff. The server's metrics show it did throttle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a8_sdk_retries_ride_out_throttling() {
    let server = Server::start(vec![limited(LIMITED, 5, 2)]).await;
    let sqs = sdk_signing(&server.endpoint(), LIMITED, &secret(LIMITED), None);
    let config = sqs
        .config()
        .to_builder()
        .retry_config(RetryConfig::standard().with_max_attempts(10))
        .build();
    let sqs = aws_sdk_sqs::Client::from_conf(config);
    for _ in 0..8 {
        sqs.list_queues()
            .send()
            .await
            .expect("retried until within the rate");
    }
    let metrics = server.raw().request("GET", "/metrics", &[], b"");
    let throttled = metrics
        .body
        .lines()
        .filter(|l| l.contains("RequestThrottled") && !l.starts_with('#'))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>();
    assert!(throttled >= 1.0, "{}", metrics.body);
}

fn secret(key: &str) -> String {
    format!("{key}-secret")
}

/// `sluice serve` with a config file, its log in a file.
pub(crate) struct Binary {
    child: std::process::Child,
    pub(crate) endpoint: String,
    config: std::path::PathBuf,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Binary {
    pub(crate) fn start(config: &str) -> Self {
        use std::io::BufRead;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sluice.toml");
        std::fs::write(&path, config).expect("write config");
        let log = dir.path().join("sluice.log");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args(["serve", "--bind", "127.0.0.1:0", "--in-memory", "--config"])
            .arg(&path)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start sluice");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("line");
        let endpoint = line
            .trim()
            .strip_prefix("sluice listening on ")
            .expect("listening line")
            .to_string();
        Self {
            child,
            endpoint,
            config: path,
            log,
            _dir: dir,
        }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Rewrites the config file, sends SIGHUP, waits for the reload.
    fn reload(&self, config: &str) {
        let expect = "reloaded the [auth] credentials";
        let before = self.log().matches(expect).count();
        std::fs::write(&self.config, config).expect("rewrite config");
        let sent = std::process::Command::new("kill")
            .args(["-HUP", &self.child.id().to_string()])
            .status()
            .expect("kill -HUP");
        assert!(sent.success());
        let started = std::time::Instant::now();
        while self.log().matches(expect).count() == before {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no reload in the log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rate_config(rate: u32, burst: u32) -> String {
    format!(
        "[auth]\nmode = \"sigv4\"\n[[auth.credentials]]\naccess_key_id = \"{LIMITED}\"\n\
         secret_access_key = \"{}\"\nrate_limit = {rate}\nburst = {burst}\n",
        secret(LIMITED)
    )
}

/// A8, A5, A11: the binary reads `rate_limit`/`burst` from its config
/// file, logs a throttled request once with the key, action, queue and
/// reason (never the secret), and a SIGHUP with a higher rate lets the
/// key through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a8_the_binary_throttles_logs_and_reloads_rates() {
    let server = Binary::start(&rate_config(1, 2));
    let sqs = sdk_signing(&server.endpoint, LIMITED, &secret(LIMITED), None);
    let url = sqs
        .create_queue()
        .queue_name("orders")
        .send()
        .await
        .expect("create")
        .queue_url
        .expect("url");
    sqs.send_message()
        .queue_url(&url)
        .message_body("one")
        .send()
        .await
        .expect("within the burst");
    // A token comes back each second: on a slow machine one more may pass.
    let mut refused = None;
    for _ in 0..5 {
        if let Err(e) = sqs
            .send_message()
            .queue_url(&url)
            .message_body("more")
            .send()
            .await
        {
            refused = Some(e);
            break;
        }
    }
    let e = refused.expect("over the rate");
    assert_eq!(code(&e), "RequestThrottled", "{e:?}");
    let log = server.log();
    let refusals: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("request refused"))
        .collect();
    assert_eq!(refusals.len(), 1, "{log}");
    let refusal = refusals[0];
    for part in [LIMITED, "SendMessage", "orders", "rate limit", "throttled"] {
        assert!(refusal.contains(part), "{part} missing: {refusal}");
    }
    assert!(!log.contains(&secret(LIMITED)), "{log}");

    server.reload(&rate_config(1000, 1000));
    for _ in 0..20 {
        sqs.send_message()
            .queue_url(&url)
            .message_body("after the reload")
            .send()
            .await
            .expect("the new rate");
    }
}
