//! A dead handler backs off and loses nothing (rule C12), through a
//! handler whose port refuses connections for several visibility
//! timeouts and then answers.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{TestServer, send_bodies};
use crate::consumers::{Handler, Reply, bodies, queue, remaining, spec, start, until};

/// The count of one metric line, 0 when it is absent.
async fn metric(server: &TestServer, line_start: &str) -> u64 {
    let text = server
        .service
        .metrics
        .render(&server.service.broker, &server.service.alarms, None)
        .await;
    text.lines()
        .find_map(|l| l.strip_prefix(line_start)?.trim().parse().ok())
        .unwrap_or(0)
}

/// C12: 30 messages wait on a queue with a 1 s visibility timeout and a
/// maxReceiveCount of 2; the handler's port refuses connections for 6 s
/// (six visibility timeouts, enough to dead-letter every message three
/// times over if each refused attempt spent a receive). The consumer
/// backs off (a handful of attempts, not one per visibility timeout or
/// faster) and keeps the batches it could not post; once the handler
/// listens, every message reaches it exactly once, on its first receive,
/// and the dead-letter queue stays empty.
#[tokio::test]
async fn c12_dead_handler_backs_off_and_loses_nothing() {
    let server = TestServer::start_real_time().await;
    let dlq = queue(&server, "down-dlq", 30, None).await;
    let redrive = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:down-dlq","maxReceiveCount":2}"#;
    let url = queue(&server, "down", 1, Some(redrive)).await;
    let sqs = server.sdk();
    let backlog: Vec<String> = (0..30).map(|i| format!("m{i:02}")).collect();
    send_bodies(&sqs, &url, &backlog).await;
    // A port nobody listens on: connections to it are refused.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let handler_url = format!("http://{addr}/2015-03-31/functions/function/invocations");
    let _consumers = start(&server, vec![spec("down-worker", "down", &handler_url)]).await;
    tokio::time::sleep(Duration::from_secs(6)).await;

    let refused = metric(
        &server,
        r#"sluice_consumer_failures_total{consumer="down-worker",kind="connection"}"#,
    )
    .await;
    // Pauses of 1, 2 and 4 s: three rounds in 6 s, of at most the two
    // batches max_concurrency allows.
    assert!(
        (1..=8).contains(&refused),
        "{refused} refused attempts in 6 s: no back-off"
    );
    assert_eq!(remaining(&server, &dlq).await, 0, "nothing dead-lettered");

    let handler = Handler::start_at(addr, Arc::new(|_, _| Reply::ok(""))).await;
    assert!(
        until(Duration::from_secs(20), async || remaining(&server, &url)
            .await
            == 0)
        .await,
        "the backlog is delivered once the handler is up"
    );
    let events = handler.events();
    let mut all: Vec<String> = events.iter().flat_map(bodies).collect();
    all.sort();
    let expected: Vec<String> = (0..30).map(|i| format!("m{i:02}")).collect();
    assert_eq!(all, expected, "every message exactly once");
    for record in events.iter().flat_map(|e| e["Records"].as_array().unwrap()) {
        assert_eq!(
            record["attributes"]["ApproximateReceiveCount"], "1",
            "a refused connection spends no receive: {record}"
        );
    }
    assert_eq!(remaining(&server, &dlq).await, 0, "nothing dead-lettered");
}

/// C15: on a queue with a `SluiceRetryBackoff` (5 s doubling, no jitter)
/// and a 1 s visibility timeout, a message the handler fails twice (by
/// `batchItemFailures`, so the handler is not down and C12's pause does
/// not apply) comes back 5 s, then 10 s after each failure: the queue's
/// delays for its first and second receive, not the visibility timeout
/// (which would bring it back within about a second each time). The third
/// delivery succeeds and the message is gone.
#[tokio::test]
async fn c15_a_failed_message_waits_the_queues_retry_backoff() {
    let server = TestServer::start_real_time().await;
    let url = queue(&server, "flaky-push", 1, None).await;
    server
        .sdk()
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(
            aws_sdk_sqs::types::QueueAttributeName::from("SluiceRetryBackoff"),
            r#"{"initialDelaySeconds":5,"maxDelaySeconds":20,"jitter":false}"#,
        )
        .send()
        .await
        .unwrap();
    crate::consumers::send(&server, &url, "flaky").await;
    let handler = Handler::start(Arc::new(|event, n| {
        if n < 2 {
            let id = event["Records"][0]["messageId"].as_str().unwrap_or("");
            Reply::ok(&format!(
                r#"{{"batchItemFailures":[{{"itemIdentifier":"{id}"}}]}}"#
            ))
        } else {
            Reply::ok("")
        }
    }))
    .await;
    let _consumers = start(
        &server,
        vec![spec("flaky-worker", "flaky-push", &handler.url)],
    )
    .await;
    assert!(
        until(Duration::from_secs(40), async || remaining(&server, &url)
            .await
            == 0)
        .await,
        "the third delivery succeeds"
    );
    let events = handler.events();
    assert_eq!(events.len(), 3, "delivered three times: {events:?}");
    for (n, event) in events.iter().enumerate() {
        assert_eq!(bodies(event), ["flaky"]);
        assert_eq!(
            event["Records"][0]["attributes"]["ApproximateReceiveCount"],
            (n + 1).to_string()
        );
    }
    let at = |n| handler.answered_at(n).unwrap();
    let (first, second) = (at(1) - at(0), at(2) - at(1));
    // Lower bounds only: a loaded machine makes the gaps longer, never
    // shorter; without the backoff each would be about a second.
    assert!(
        first >= Duration::from_millis(4_500),
        "back after {first:?}, not the first delay of 5 s"
    );
    assert!(
        second >= Duration::from_millis(9_500),
        "back after {second:?}, not the doubled delay of 10 s"
    );
}
