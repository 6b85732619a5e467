//! Expired messages kept for the archive (rule X8).
//!
//! sluice's own rule, no recording covers it: the expected answers come
//! from the rule as docs/rules.md states it.

use super::{Harness, bodies, counts, create, receive, send};
use crate::{Broker, ExpiredMessage, ExpiredMessages, QueueCounts};

async fn held<H: Harness>(h: &H) -> Vec<ExpiredMessage> {
    h.broker()
        .expired_messages(100, &[])
        .await
        .expect("expired messages")
}

/// X8: a message of a queue that keeps what expires leaves the queue and
/// its counts at its retention, is held (body, id, receive count) until
/// the archive has it, and only then is gone; a queue that does not keep
/// what expires deletes at retention as before.
pub async fn x8_expired_messages_wait_for_the_archive<H: Harness>(h: &H) {
    create(
        h,
        "kept",
        &[
            ("MessageRetentionPeriod", "60"),
            ("SluiceArchiveExpired", "true"),
        ],
    )
    .await;
    create(h, "plain", &[("MessageRetentionPeriod", "60")]).await;
    send(h, "kept", &["old"]).await;
    send(h, "plain", &["gone"]).await;
    assert_eq!(bodies(&receive(h, "kept", 1).await), ["old"]);
    h.clock().advance_secs(30);
    send(h, "kept", &["young"]).await;
    h.clock().advance_secs(30);

    assert_eq!(
        counts(h, "kept").await,
        QueueCounts {
            visible: 1,
            in_flight: 0,
            delayed: 0
        },
        "the expired message left the queue's counts"
    );
    assert_eq!(counts(h, "plain").await, QueueCounts::default());
    assert_eq!(bodies(&receive(h, "kept", 10).await), ["young"]);

    let first = held(h).await;
    assert_eq!(first.len(), 1, "only the kept queue's message: {first:?}");
    assert_eq!(first[0].queue, "kept");
    assert_eq!(first[0].message.body, "old");
    assert_eq!(first[0].message.receive_count, 1);
    assert_eq!(first[0].message.state, "expired");
    assert_eq!(held(h).await, first, "reading changes nothing");
    let stats = h.broker().queue_stats("kept").await.expect("stats");
    assert_eq!(
        stats.awaiting_archive, 1,
        "counted as waiting for the archive"
    );
    assert_eq!(stats.expired, 1, "and as expired");

    h.broker()
        .forget_archived("kept", &[first[0].message.position])
        .await
        .expect("forget");
    assert!(held(h).await.is_empty(), "forgotten once archived");
    h.broker()
        .forget_archived("kept", &[first[0].message.position])
        .await
        .expect("forgetting twice is no error");
    let stats = h.broker().queue_stats("kept").await.expect("stats");
    assert_eq!(stats.awaiting_archive, 0);
    assert_eq!(
        counts(h, "kept").await,
        QueueCounts {
            visible: 0,
            in_flight: 1,
            delayed: 0
        },
        "the queue's own messages are untouched"
    );
}

/// X8: a purge and a queue's deletion take the messages waiting for the
/// archive with them: the client asked for every message to go.
pub async fn x8_purge_and_delete_take_what_waits_for_the_archive<H: Harness>(h: &H) {
    for q in ["a", "b"] {
        create(
            h,
            q,
            &[
                ("MessageRetentionPeriod", "60"),
                ("SluiceArchiveExpired", "true"),
            ],
        )
        .await;
        send(h, q, &["x"]).await;
    }
    h.clock().advance_secs(61);
    assert_eq!(counts(h, "a").await, QueueCounts::default());
    assert_eq!(counts(h, "b").await, QueueCounts::default());
    let queues: Vec<String> = held(h).await.into_iter().map(|m| m.queue).collect();
    assert_eq!(queues, ["a", "b"]);
    let others = h
        .broker()
        .expired_messages(100, &["a".to_string()])
        .await
        .expect("expired messages");
    let queues: Vec<&str> = others.iter().map(|m| m.queue.as_str()).collect();
    assert_eq!(queues, ["b"], "a skipped queue's messages are left out");
    h.broker().purge_queue("a").await.expect("purge");
    h.broker().delete_queue("b").await.expect("delete");
    assert!(held(h).await.is_empty());
}
