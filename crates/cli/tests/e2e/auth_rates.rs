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
    let e = sqs.list_queues().send().await.expect_err("over the rate");
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
    let refused = send();
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
