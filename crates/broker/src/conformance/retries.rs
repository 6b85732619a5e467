//! What happens to a message that keeps failing before it reaches a DLQ:
//! sluice's retry backoff queue policy, and the back-of-queue rule (V12).

use sluice_core::Clock;

use super::*;
use crate::MetaChange;
use crate::Nack;

const BACKOFF: &str = r#"{"initialDelaySeconds":10,"maxDelaySeconds":40,"jitter":false}"#;

/// Advances the clock to just before `ms` from `start`, checks nothing is
/// visible, then to `ms` and checks the message is back.
async fn hidden_until<H: Harness>(h: &H, q: &str, start_ms: u64, ms: u64) -> ReceivedMessage {
    let now = h.clock().now();
    h.clock().advance_ms(start_ms + ms - 1 - now);
    assert!(
        receive(h, q, 1).await.is_empty(),
        "{q}: still hidden 1 ms before {ms} ms"
    );
    h.clock().advance_ms(1);
    let got = receive_vt(h, q, 1, 0).await;
    assert_eq!(got.len(), 1, "{q}: visible again after {ms} ms");
    got.into_iter().next().expect("one message")
}

/// X (retry backoff): each failed attempt stays hidden for the visibility
/// timeout plus a delay that doubles per receive up to the cap; a
/// consumer's explicit ChangeMessageVisibility still wins; counts show the
/// waiting message as not visible.
pub async fn x_retry_backoff_doubles_each_attempt_up_to_the_cap<H: Harness>(h: &H) {
    create(
        h,
        "backoff",
        &[("SluiceRetryBackoff", BACKOFF), ("VisibilityTimeout", "5")],
    )
    .await;
    send(h, "backoff", &["flaky"]).await;
    // First receive with the queue's 5 s: hidden 5 + 10 s.
    let start = h.clock().now();
    assert_eq!(receive(h, "backoff", 1).await.len(), 1);
    let second = hidden_until(h, "backoff", start, 15_000).await;
    assert_eq!(second.receive_count, 2);
    // Received with a 0 s visibility timeout: only the backoff, 20 s.
    let start = h.clock().now();
    let third = hidden_until(h, "backoff", start, 20_000).await;
    assert_eq!(third.receive_count, 3);
    assert_eq!(counts(h, "backoff").await.in_flight, 1);
    // 40 s, then capped at 40 s.
    let start = h.clock().now();
    hidden_until(h, "backoff", start, 40_000).await;
    let start = h.clock().now();
    let capped = hidden_until(h, "backoff", start, 40_000).await;
    assert_eq!(capped.receive_count, 5);
    // An explicit visibility change replaces the backoff.
    let results = h
        .broker()
        .change_visibility(
            "backoff",
            vec![crate::VisibilityChange {
                receipt_handle: capped.receipt_handle.clone(),
                visibility_timeout: 0,
            }],
        )
        .await
        .expect("change visibility");
    assert!(results[0].is_ok());
    assert_eq!(receive_vt(h, "backoff", 1, 0).await.len(), 1);
}

/// X (retry backoff): jitter keeps each delay in the upper half of its
/// ceiling; a nack without RetryAfterSeconds waits the backoff, with it the
/// given time; a queue without the policy is unaffected; the attribute is
/// shown normalised and removed by an empty value.
pub async fn x_retry_backoff_jitter_nack_and_removal<H: Harness>(h: &H) {
    create(
        h,
        "jittery",
        &[(
            "SluiceRetryBackoff",
            r#"{"initialDelaySeconds":100,"maxDelaySeconds":100}"#,
        )],
    )
    .await;
    let meta = h.broker().get_queue("jittery").await.unwrap();
    assert_eq!(
        meta.config.retry_backoff.as_deref(),
        Some(r#"{"initialDelaySeconds":100,"maxDelaySeconds":100,"jitter":true}"#)
    );
    let names: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    send(h, "jittery", &refs).await;
    assert_eq!(receive_vt(h, "jittery", 10, 0).await.len(), 10);
    assert_eq!(receive_vt(h, "jittery", 10, 0).await.len(), 10);
    h.clock().advance_ms(49_999);
    assert!(
        receive(h, "jittery", 10).await.is_empty(),
        "no delay is below half of its 100 s ceiling"
    );
    h.clock().advance_ms(30_001);
    let early = receive_vt(h, "jittery", 10, 0).await.len();
    assert!(
        (1..20).contains(&early),
        "jitter spreads the returns: {early} of 20 back after 80 s"
    );
    h.clock().advance_secs(20);
    let mut back = early + receive_vt(h, "jittery", 10, 30).await.len();
    back += receive_vt(h, "jittery", 10, 30).await.len();
    assert_eq!(back, 20, "every message is back by its ceiling");

    // Removing the policy: the next attempts wait only their visibility
    // timeout.
    h.broker()
        .update_queue(
            "jittery",
            MetaChange::SetAttributes(attrs(&[("SluiceRetryBackoff", "")])),
        )
        .await
        .expect("remove the policy");
    assert_eq!(
        h.broker()
            .get_queue("jittery")
            .await
            .unwrap()
            .config
            .retry_backoff,
        None
    );
    h.clock().advance_secs(200);
    let all: usize = [
        receive_vt(h, "jittery", 10, 30).await.len(),
        receive_vt(h, "jittery", 10, 30).await.len(),
    ]
    .iter()
    .sum();
    assert_eq!(all, 20);
    h.clock().advance_secs(30);
    assert_eq!(receive_vt(h, "jittery", 10, 30).await.len(), 10);
    assert_eq!(receive_vt(h, "jittery", 10, 30).await.len(), 10);

    // A nack without a time waits the backoff; with a time, that time.
    create(h, "nacked", &[("SluiceRetryBackoff", BACKOFF)]).await;
    send(h, "nacked", &["plain", "timed"]).await;
    let got = receive_vt(h, "nacked", 2, 0).await;
    assert_eq!(got.len(), 2);
    for m in &got {
        let timed = m.body == "timed";
        h.broker()
            .nack_message(
                "nacked",
                &m.receipt_handle,
                Nack {
                    reason: Some("flaky".into()),
                    class: None,
                    permanent: false,
                    retry_after_seconds: timed.then_some(3),
                },
            )
            .await
            .expect("nack");
    }
    h.clock().advance_secs(3);
    assert_eq!(in_order(&receive_vt(h, "nacked", 10, 60).await), ["timed"]);
    h.clock().advance_secs(7);
    assert_eq!(
        in_order(&receive_vt(h, "nacked", 10, 60).await),
        ["plain"],
        "a plain nack waits the first attempt's 10 s backoff"
    );
}

/// Makes an in-flight message visible again at once.
async fn release<H: Harness>(h: &H, q: &str, receipt_handle: &str) {
    let results = h
        .broker()
        .change_visibility(
            q,
            vec![crate::VisibilityChange {
                receipt_handle: receipt_handle.into(),
                visibility_timeout: 0,
            }],
        )
        .await
        .expect("change visibility");
    assert!(results[0].is_ok(), "{q}: {:?}", results[0]);
}

/// V12, M3: in a standard queue whose maxReceiveCount is above 3, a message
/// received 3 times without being deleted goes to the back of the queue
/// when it is visible again, and ApproximateAgeOfOldestMessage then shows
/// the next message; with maxReceiveCount 3 or less it keeps its place.
pub async fn v12_thrice_received_message_goes_to_the_back<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "patient", &[("RedrivePolicy", &redrive("dlq", 10))]).await;
    create(h, "strict", &[("RedrivePolicy", &redrive("dlq", 3))]).await;
    for q in ["patient", "strict"] {
        send(h, q, &["poison"]).await;
    }
    h.clock().advance_secs(60);
    for q in ["patient", "strict"] {
        send(h, q, &["second", "third"]).await;
    }
    h.clock().advance_secs(60);
    for q in ["patient", "strict"] {
        // All three in flight, then the poison one alone released and
        // received twice more (so no test relies on redelivery order, which
        // is best effort: rule V10), then the other two released with it.
        let all = receive_vt(h, q, 10, 1000).await;
        assert_eq!(all.len(), 3, "{q}");
        let handle = |body: &str| {
            all.iter()
                .find(|m| m.body == body)
                .map(|m| m.receipt_handle.clone())
                .expect("received")
        };
        release(h, q, &handle("poison")).await;
        for round in 2..=3 {
            let got = receive_vt(h, q, 10, 0).await;
            assert_eq!(in_order(&got), ["poison"], "{q}: round {round}");
        }
        release(h, q, &handle("second")).await;
        release(h, q, &handle("third")).await;
    }
    let stats = h.broker().queue_stats("patient").await.unwrap();
    assert_eq!(
        stats.oldest_age_ms, 60_000,
        "the age shows the next message, not the poison one"
    );
    let strict = h.broker().queue_stats("strict").await.unwrap();
    assert_eq!(strict.oldest_age_ms, 120_000);

    let got = receive_vt(h, "patient", 10, 30).await;
    assert_eq!(in_order(&got), ["second", "third", "poison"]);
    // It goes to the back again each time it is visible again. (Whether it
    // goes behind a message sent while it was in flight is left open: the
    // moment it "goes back" is not observable.)
    h.clock().advance_secs(30);
    send(h, "patient", &["fourth"]).await;
    let got = receive_vt(h, "patient", 10, 30).await;
    let order = in_order(&got);
    assert_eq!(order.len(), 4);
    assert_eq!(order[..2], ["second", "third"], "{order:?}");
    assert!(order[2..].contains(&"poison"), "{order:?}");

    // maxReceiveCount 3: the fourth receive moves it to the DLQ instead.
    let got = receive(h, "strict", 10).await;
    assert_eq!(bodies(&got), ["second", "third"]);
    assert_eq!(counts(h, "dlq").await.visible, 1);
}
