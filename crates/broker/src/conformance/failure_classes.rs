//! Failure classes routed to their own dead-letter queues (rule X7).
//!
//! No recording covers these (they are sluice's own): the expected answers
//! come from the rule as docs/rules.md states it.

use sluice_core::message::AttributeValue;

use super::{Harness, counts, create, receive_vt, redrive, send};
use crate::{Broker, MessageFilter, Nack, PeekedMessage, Redrive};

fn routes(pairs: &[(&str, &str, u32)]) -> String {
    let items: Vec<String> = pairs
        .iter()
        .map(|(class, dlq, max)| {
            format!(
                r#"{{"class":"{class}","deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:{dlq}","maxReceiveCount":{max}}}"#
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// `src` fails over to `main-dlq` after 3 receives; `validation` goes to
/// `invalid-dlq` at its first failure, `infra` to `infra-dlq` at its second.
async fn routed_source<H: Harness>(h: &H) {
    for dlq in ["main-dlq", "invalid-dlq", "infra-dlq"] {
        create(h, dlq, &[]).await;
    }
    let routes = routes(&[("validation", "invalid-dlq", 1), ("infra", "infra-dlq", 2)]);
    create(
        h,
        "src",
        &[
            ("RedrivePolicy", &redrive("main-dlq", 3)),
            ("SluiceDeadLetterRoutes", &routes),
        ],
    )
    .await;
}

fn failed(reason: &str, class: Option<&str>) -> Nack {
    Nack {
        reason: Some(reason.into()),
        class: class.map(str::to_string),
        ..Nack::default()
    }
}

/// Receives `src`'s one message and nacks it.
async fn receive_and_nack<H: Harness>(h: &H, nack: Nack) {
    let got = receive_vt(h, "src", 1, 30).await;
    assert_eq!(got.len(), 1, "one message waits in src");
    h.broker()
        .nack_message("src", &got[0].receipt_handle, nack)
        .await
        .expect("nack");
}

async fn peek_all<H: Harness>(h: &H, queue: &str, filter: &MessageFilter) -> Vec<PeekedMessage> {
    h.broker()
        .peek_messages(queue, filter, None, 100)
        .await
        .expect("peek")
        .messages
}

fn class_attribute(m: &PeekedMessage) -> Option<&str> {
    match m
        .system_attributes
        .get("Sluice.FailureClass")
        .map(|a| &a.value)
    {
        Some(AttributeValue::String(s)) => Some(s),
        _ => None,
    }
}

/// X7: each routed class reaches its own DLQ after its own count; a
/// timeout and an unrouted class follow RedrivePolicy and keep their last
/// class.
pub async fn x7_each_failure_class_reaches_its_own_dlq_after_its_own_count<H: Harness>(h: &H) {
    routed_source(h).await;
    let all = MessageFilter::default();

    send(h, "src", &["bad payload"]).await;
    receive_and_nack(h, failed("field total missing", Some("validation"))).await;
    assert_eq!(
        counts(h, "src").await.visible + counts(h, "src").await.in_flight,
        0
    );
    let invalid = peek_all(h, "invalid-dlq", &all).await;
    assert_eq!(invalid.len(), 1, "a count of 1 moves at the first failure");
    assert_eq!(invalid[0].body, "bad payload");
    assert_eq!(class_attribute(&invalid[0]), Some("validation"));
    assert_eq!(invalid[0].failure_class.as_deref(), Some("validation"));
    assert_eq!(
        invalid[0].failure_reason.as_deref(),
        Some("field total missing")
    );

    send(h, "src", &["billing call"]).await;
    receive_and_nack(h, failed("billing 503", Some("infra"))).await;
    assert_eq!(
        counts(h, "src").await.visible,
        1,
        "one infra failure retries"
    );
    let peeked = peek_all(h, "src", &all).await;
    assert_eq!(peeked[0].failure_class.as_deref(), Some("infra"));
    receive_and_nack(h, failed("billing 503 again", Some("infra"))).await;
    let infra = peek_all(h, "infra-dlq", &all).await;
    assert_eq!(infra.len(), 1, "the second infra failure moves it");
    assert_eq!(class_attribute(&infra[0]), Some("infra"));
    assert_eq!(infra[0].receive_count, 2);

    // Timeouts count only toward RedrivePolicy, and a class without a
    // route only marks the message.
    send(h, "src", &["slow"]).await;
    receive_and_nack(h, failed("odd", Some("unrouted"))).await;
    for _ in 0..2 {
        assert_eq!(receive_vt(h, "src", 1, 0).await.len(), 1);
    }
    assert!(
        receive_vt(h, "src", 1, 0).await.is_empty(),
        "past maxReceiveCount"
    );
    let main = peek_all(h, "main-dlq", &all).await;
    assert_eq!(main.len(), 1);
    assert_eq!(main[0].body, "slow");
    assert_eq!(class_attribute(&main[0]), Some("unrouted"));
    assert_eq!(peek_all(h, "invalid-dlq", &all).await.len(), 1);
    assert_eq!(peek_all(h, "infra-dlq", &all).await.len(), 1);
    // Every move is counted under its last class (M1's counters by class).
    let stats = h.broker().queue_stats("src").await.expect("stats");
    let by_class: Vec<(&str, u64)> = (stats.dead_lettered_by_class.iter())
        .map(|(c, n)| (c.as_str(), *n))
        .collect();
    assert_eq!(by_class, [("infra", 1), ("unrouted", 1), ("validation", 1)]);
}

/// X7: a permanent failure of a routed class takes its route at once; an
/// unrouted one goes where RedrivePolicy says; a route whose DLQ is gone
/// refuses the nack and changes nothing.
pub async fn x7_permanent_failures_and_a_missing_route_dlq<H: Harness>(h: &H) {
    routed_source(h).await;
    let all = MessageFilter::default();
    send(h, "src", &["one"]).await;
    let permanent = |class: &str| Nack {
        class: Some(class.into()),
        permanent: true,
        ..Nack::default()
    };
    receive_and_nack(h, permanent("infra")).await;
    assert_eq!(peek_all(h, "infra-dlq", &all).await.len(), 1);
    send(h, "src", &["two"]).await;
    receive_and_nack(h, permanent("other")).await;
    let main = peek_all(h, "main-dlq", &all).await;
    assert_eq!((main.len(), class_attribute(&main[0])), (1, Some("other")));
    assert_eq!(main[0].failure_reason, None, "no reason was given");

    h.broker()
        .delete_queue("invalid-dlq")
        .await
        .expect("delete");
    send(h, "src", &["three"]).await;
    let got = receive_vt(h, "src", 1, 30).await;
    let e = h
        .broker()
        .nack_message(
            "src",
            &got[0].receipt_handle,
            failed("x", Some("validation")),
        )
        .await
        .unwrap_err();
    assert_eq!(e, crate::EngineError::DeadLetterQueueMissing);
    assert_eq!(counts(h, "src").await.in_flight, 1, "the message stays");
}

/// X7: peeks and selective redrives take a class, so a fix for one kind
/// of failure replays exactly that kind.
pub async fn x7_a_fix_replays_only_its_class<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 5))]).await;
    for (body, class) in [("a", "validation"), ("b", "infra"), ("c", "validation")] {
        send(h, "src", &[body]).await;
        receive_and_nack(
            h,
            Nack {
                reason: Some(format!("{class} failure")),
                class: Some(class.into()),
                permanent: true,
                retry_after_seconds: None,
            },
        )
        .await;
    }
    let validation = MessageFilter {
        failure_class: Some("validation".into()),
        ..MessageFilter::default()
    };
    let bodies = |ms: Vec<PeekedMessage>| ms.into_iter().map(|m| m.body).collect::<Vec<_>>();
    assert_eq!(bodies(peek_all(h, "dlq", &validation).await), ["a", "c"]);
    let redrive = Redrive {
        destination: None,
        max: 100,
        filter: validation,
        mark_replay: true,
        max_replays: None,
        dry_run: false,
    };
    let done = h
        .broker()
        .redrive_messages("dlq", &redrive)
        .await
        .expect("redrive");
    assert_eq!(done.moved, 2);
    assert_eq!(
        bodies(peek_all(h, "dlq", &MessageFilter::default()).await),
        ["b"]
    );
    let back = peek_all(h, "src", &MessageFilter::default()).await;
    assert_eq!(bodies(back.clone()), ["a", "c"]);
    assert!(
        back.iter().all(|m| m.failure_class.is_none()),
        "a replayed message starts without a class"
    );
}
