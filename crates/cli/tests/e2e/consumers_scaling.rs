//! Push consumers' scaling and back-pressure (rule C7), through a real
//! HTTP handler that counts its concurrent calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::{TestServer, send_bodies};
use crate::consumers::{
    Handler, Reply, bodies, queue, remaining, render_metrics, sample_value, send, spec, start,
    until,
};

/// C7: with a backlog of 60 messages in batches of 2, the batches in
/// flight grow from one to max_concurrency (3) and never beyond it.
#[tokio::test]
async fn c7_concurrency_grows_with_the_backlog_up_to_the_maximum() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "busy", 10, None).await;
    let sqs = server.sdk();
    let backlog: Vec<String> = (0..60).map(|i| format!("m{i}")).collect();
    send_bodies(&sqs, &url, &backlog).await;
    let handler = Handler::start(Arc::new(|_, _| Reply {
        delay: Duration::from_millis(150),
        ..Reply::ok("")
    }))
    .await;
    let mut s = spec("busy-worker", "busy", &handler.url);
    s.batch_size = 2;
    s.max_concurrency = 3;
    let _consumers = start(&server, vec![s]).await;
    assert!(
        until(Duration::from_secs(15), async || remaining(&server, &url)
            .await
            == 0)
        .await
    );
    let events = handler.events();
    let mut all: Vec<String> = events.iter().flat_map(bodies).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 60, "each message once");
    assert_eq!(
        handler.most_in_flight.load(Ordering::SeqCst),
        3,
        "grew to max_concurrency and no further"
    );
}

/// C7: a 503 with `Retry-After: 3` fails the batch and pauses delivery:
/// although the failed message is visible again after 1 s, and another
/// message is sent meanwhile, the handler gets nothing more during the
/// pause; then both arrive.
#[tokio::test]
async fn c7_retry_after_pauses_delivery() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "busy503", 1, None).await;
    send(&server, &url, "first").await;
    let handler = Handler::start(Arc::new(|_, n| {
        if n == 0 {
            Reply {
                status: 503,
                retry_after: Some("3".into()),
                ..Reply::ok("")
            }
        } else {
            Reply::ok("")
        }
    }))
    .await;
    let _consumers = start(
        &server,
        vec![spec("busy503-worker", "busy503", &handler.url)],
    )
    .await;
    assert!(
        until(Duration::from_secs(5), async || handler
            .answered_at(0)
            .is_some())
        .await
    );
    let answered = handler.answered_at(0).unwrap();
    send(&server, &url, "second").await;
    tokio::time::sleep_until((answered + Duration::from_millis(2500)).into()).await;
    assert_eq!(
        handler.events().len(),
        1,
        "nothing delivered during the pause"
    );
    assert!(
        until(Duration::from_secs(6), async || remaining(&server, &url)
            .await
            == 0)
        .await
    );
    let mut all: Vec<String> = handler.events()[1..].iter().flat_map(bodies).collect();
    all.sort();
    assert_eq!(all, ["first", "second"]);
    let metrics = server
        .service
        .metrics
        .render(&server.service.broker, &server.service.alarms, None)
        .await;
    let line = r#"sluice_consumer_failures_total{consumer="busy503-worker",kind="throttled"} 1"#;
    assert!(metrics.contains(line), "{line} in\n{metrics}");
}

/// C7: `Retry-After` as an HTTP-date (RFC 9110) pauses delivery until
/// then: a 429 asking for a date 4 s ahead (whole seconds: 3 to 4 s) gets
/// no new batch for 2.5 s, though its message is visible again after 1 s.
#[tokio::test]
async fn c7_retry_after_as_an_http_date_pauses_delivery() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "busydate", 1, None).await;
    send(&server, &url, "first").await;
    let handler = Handler::start(Arc::new(|_, n| {
        if n == 0 {
            let until = std::time::SystemTime::now() + Duration::from_secs(4);
            Reply {
                status: 429,
                retry_after: Some(httpdate::fmt_http_date(until)),
                ..Reply::ok("")
            }
        } else {
            Reply::ok("")
        }
    }))
    .await;
    let _consumers = start(&server, vec![spec("date-worker", "busydate", &handler.url)]).await;
    assert!(
        until(Duration::from_secs(5), async || handler
            .answered_at(0)
            .is_some())
        .await
    );
    let answered = handler.answered_at(0).unwrap();
    tokio::time::sleep_until((answered + Duration::from_millis(2500)).into()).await;
    assert_eq!(
        handler.events().len(),
        1,
        "nothing delivered during the pause"
    );
    assert!(
        until(Duration::from_secs(6), async || remaining(&server, &url)
            .await
            == 0)
        .await
    );
    assert_eq!(bodies(&handler.events()[1]), ["first"]);
    let metrics = render_metrics(&server).await;
    let line = r#"sluice_consumer_failures_total{consumer="date-worker",kind="throttled"} 1"#;
    assert!(metrics.contains(line), "{line} in\n{metrics}");
}

/// C7: whole-batch failures shrink the batches in flight. A backlog grows
/// them to max_concurrency (4); once the handler answers 400 to every
/// batch the limit halves down to one and stays there, the backlog
/// notwithstanding, and the handler gets one batch at a time; when it
/// succeeds again the limit grows back and the backlog drains.
#[tokio::test]
async fn c7_concurrency_shrinks_while_the_handler_fails() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "shrink", 2, None).await;
    let sqs = server.sdk();
    let backlog: Vec<String> = (0..100).map(|i| format!("m{i}")).collect();
    send_bodies(&sqs, &url, &backlog).await;
    let failing = Arc::new(AtomicBool::new(false));
    let fails = failing.clone();
    let handler = Handler::start(Arc::new(move |_, _| Reply {
        delay: Duration::from_millis(150),
        status: if fails.load(Ordering::SeqCst) {
            400
        } else {
            200
        },
        ..Reply::ok("")
    }))
    .await;
    let mut s = spec("shrink-worker", "shrink", &handler.url);
    s.batch_size = 2;
    s.max_concurrency = 4;
    let _consumers = start(&server, vec![s]).await;
    let limit_series = r#"sluice_consumer_concurrency_limit{consumer="shrink-worker"}"#;
    let limit = async || sample_value(&render_metrics(&server).await, limit_series);
    assert!(until(Duration::from_secs(5), async || limit().await == 4.0).await);
    failing.store(true, Ordering::SeqCst);
    assert!(until(Duration::from_secs(5), async || limit().await == 1.0).await);
    // The batches posted before the limit reached one have been answered.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let settled = handler.events().len();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(limit().await, 1.0, "no growth while every batch fails");
    let later = handler.events().len();
    assert!(
        later > settled + 3,
        "still delivering: {settled} then {later}"
    );
    let overlapping: Vec<_> = handler
        .overlapping()
        .into_iter()
        .filter(|&(a, _)| a >= settled)
        .collect();
    assert!(
        overlapping.is_empty(),
        "one batch at a time: {overlapping:?}"
    );
    failing.store(false, Ordering::SeqCst);
    assert!(
        until(Duration::from_secs(15), async || remaining(&server, &url)
            .await
            == 0)
        .await
    );
    assert!(limit().await > 1.0, "grown again");
}
