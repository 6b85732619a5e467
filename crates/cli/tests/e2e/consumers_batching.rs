//! Push consumers' batching window and batches above 10 (rule C6), through
//! a real HTTP handler.

use std::time::Duration;

use sluice_consumers as consumers;

use crate::common::{TestServer, send_bodies};
use crate::consumers::{Handler, Reply, bodies, queue, remaining, send, spec, start, until};

/// C6: with a 2 s window, three messages sent 300 ms apart, after the
/// consumer's long poll has started, arrive as one batch; without a window
/// the first would have gone alone.
#[tokio::test]
async fn c6_a_window_gathers_several_sends_into_one_batch() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "win", 10, None).await;
    let handler = Handler::start(std::sync::Arc::new(|_, _| Reply::ok(""))).await;
    let mut s = spec("win-worker", "win", &handler.url);
    s.batching_window = Duration::from_secs(2);
    s.max_concurrency = 2;
    let _consumers = start(&server, vec![s]).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    for b in ["w1", "w2", "w3"] {
        send(&server, &url, b).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(
        until(Duration::from_secs(6), async || remaining(&server, &url)
            .await
            == 0)
        .await
    );
    let events = handler.events();
    assert_eq!(events.len(), 1, "one delivery: {events:?}");
    assert_eq!(bodies(&events[0]), ["w1", "w2", "w3"]);
}

/// C6: batch_size 25 with a window: 30 waiting messages go as a batch of
/// 25 (several receives gathered, delivered as soon as it is full), then
/// the last 5 when the window ends; each message once. A batch size above
/// 10 without a window, or a window over 300 s, is refused at start.
#[tokio::test]
async fn c6_batches_above_ten_gather_several_receives() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "large", 10, None).await;
    let sqs = server.sdk();
    let backlog: Vec<String> = (0..30).map(|i| format!("m{i:02}")).collect();
    send_bodies(&sqs, &url, &backlog).await;
    let mut s = spec("large-worker", "large", "http://127.0.0.1:9/");
    s.batch_size = 25;
    let err = consumers::check_consumers(&server.service.broker, std::slice::from_ref(&s))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("large-worker") && err.contains("needs batching_window_seconds"),
        "{err}"
    );
    s.batching_window = Duration::from_secs(301);
    let err = consumers::check_consumers(&server.service.broker, std::slice::from_ref(&s))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("batching_window_seconds must be 0 to 300"),
        "{err}"
    );

    let handler = Handler::start(std::sync::Arc::new(|_, _| Reply::ok(""))).await;
    s.url = handler.url.clone();
    s.batching_window = Duration::from_secs(1);
    s.max_concurrency = 2;
    let _consumers = start(&server, vec![s]).await;
    assert!(
        until(Duration::from_secs(6), async || remaining(&server, &url)
            .await
            == 0)
        .await
    );
    let events = handler.events();
    let sizes: Vec<usize> = events.iter().map(|e| bodies(e).len()).collect();
    assert_eq!(sizes, [25, 5], "{sizes:?}");
    let mut all: Vec<String> = events.iter().flat_map(bodies).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 30, "each message once");
}
