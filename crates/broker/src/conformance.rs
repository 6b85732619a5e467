//! The behaviour every engine must show, written once against [`Broker`].
//!
//! Each function is one test and names the rule of SEMANTICS.md it proves.
//! Engines instantiate the suite with [`conformance_tests!`](crate::conformance_tests),
//! giving an expression that builds a fresh [`Harness`] per test. Time-based
//! rules use the harness's manual clock; no test sleeps to prove a timeout
//! except the long-poll ones, which say so in their names and stay short.

use std::collections::BTreeMap;
use std::time::Duration;

use sluice_core::attributes::QueueConfig;
use sluice_core::message::{AttributeValue, MessageAttributeValue, MessageAttributes};
use sluice_core::{Clock, ErrorCode, ManualClock};

use crate::{
    Broker, CreateQueue, NewMessage, QueueCounts, ReceiveOptions, ReceivedMessage, VisibilityChange,
};

/// A fresh engine and the manual clock it reads.
pub trait Harness: Send + Sync + 'static {
    /// The engine under test.
    type B: Broker;
    /// The engine.
    fn broker(&self) -> &Self::B;
    /// Its clock.
    fn clock(&self) -> &ManualClock;
}

/// Generates one `#[tokio::test]` per conformance test for an engine.
///
/// `$make` is an expression that evaluates to a new [`Harness`].
#[macro_export]
macro_rules! conformance_tests {
    ($make:expr) => {
        $crate::conformance_tests!(@each $make;
            v1_send_then_receive_returns_what_was_sent,
            v1_delay_hides_a_message_until_due,
            v2_receive_hides_for_the_visibility_timeout_and_counts,
            v3_a_message_not_deleted_comes_back,
            v4_delete_with_any_handle_and_twice,
            v4_bad_handles_are_invalid,
            v5_change_visibility_extends_and_zero_releases,
            v5_change_visibility_needs_an_in_flight_message,
            v6_long_poll_wakes_on_send_real_time,
            v6_long_poll_ends_empty_at_deadline_real_time,
            v7_retention_deletes_old_messages,
            v8_purge_deletes_all_and_limits_rate,
            v9_create_is_idempotent_and_delete_frees_the_name,
            v11_counts_follow_the_lifecycle,
            v11_set_attributes_and_tags,
            l2_batch_results_are_per_entry,
            r2_r4_message_moves_to_dlq_past_max_receive_count,
            r2_max_receive_count_one,
            r2_without_its_dlq_a_message_stays,
            r3_standard_dlq_keeps_the_original_enqueue_time,
            f1_order_within_a_group_and_blocking,
            f1_redelivery_keeps_group_order,
            f1_fifo_stale_handle_cannot_delete,
            f2_deduplication_window_outlives_delete,
            f2_deduplication_scope_message_group,
            f3_sequence_numbers_increase,
            f4_receive_attempt_id_replays,
            r3_fifo_dlq_resets_enqueue_time,
            v10_fair_queue_flooding_group_does_not_starve_others,
            r7_redrive_returns_messages_to_their_sources,
            r7_redrive_to_a_destination_in_steps,
            r7_unmovable_messages_stay,
            r7_move_tasks_are_kept,
            x1_peek_changes_nothing_and_filters,
            x2_nack_reason_retry_and_permanent_failure,
        );
    };
    // The in-flight limit needs 120,000 sequential receives: engines whose
    // every receive is a durable commit run it through this arm separately.
    (heavy $make:expr) => {
        $crate::conformance_tests!(@each $make; l4_in_flight_limit_is_over_limit);
    };
    (@each $make:expr; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let harness = $make;
                $crate::conformance::$name(&harness).await;
            }
        )*
    };
}

fn attrs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

async fn create<H: Harness>(h: &H, name: &str, pairs: &[(&str, &str)]) {
    let requested = attrs(pairs);
    let config = QueueConfig::for_create(name, &requested).expect("valid attributes");
    h.broker()
        .create_queue(CreateQueue {
            name: name.into(),
            config,
            requested,
            tags: BTreeMap::new(),
        })
        .await
        .expect("create queue");
}

fn msg(body: &str) -> NewMessage {
    NewMessage {
        body: body.into(),
        ..Default::default()
    }
}

async fn send<H: Harness>(h: &H, q: &str, bodies: &[&str]) -> Vec<String> {
    h.broker()
        .send_messages(q, bodies.iter().map(|b| msg(b)).collect())
        .await
        .expect("send")
        .into_iter()
        .map(|s| s.message_id)
        .collect()
}

fn opts(max: u32) -> ReceiveOptions {
    ReceiveOptions {
        max_messages: max,
        visibility_timeout: None,
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

async fn receive<H: Harness>(h: &H, q: &str, max: u32) -> Vec<ReceivedMessage> {
    h.broker()
        .receive_messages(q, opts(max))
        .await
        .expect("receive")
}

async fn receive_vt<H: Harness>(h: &H, q: &str, max: u32, vt: u32) -> Vec<ReceivedMessage> {
    let mut o = opts(max);
    o.visibility_timeout = Some(vt);
    h.broker().receive_messages(q, o).await.expect("receive")
}

async fn counts<H: Harness>(h: &H, q: &str) -> QueueCounts {
    h.broker().queue_counts(q).await.expect("counts")
}

fn bodies(msgs: &[ReceivedMessage]) -> Vec<String> {
    let mut b: Vec<String> = msgs.iter().map(|m| m.body.clone()).collect();
    b.sort();
    b
}

/// V1, V2: what is sent comes back whole, with a new id, timestamps and count.
pub async fn v1_send_then_receive_returns_what_was_sent<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    let mut attributes = MessageAttributes::new();
    attributes.insert(
        "bin".into(),
        MessageAttributeValue {
            data_type: "Binary".into(),
            value: AttributeValue::Binary(vec![0, 1, 255]),
        },
    );
    let sent = h
        .broker()
        .send_messages(
            "q",
            vec![NewMessage {
                body: "hello ü".into(),
                attributes: attributes.clone(),
                ..Default::default()
            }],
        )
        .await
        .unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].message_id.len(), 36, "a UUID");
    let now = h.clock().now();
    let got = receive(h, "q", 10).await;
    assert_eq!(got.len(), 1);
    let m = &got[0];
    assert_eq!(m.message_id, sent[0].message_id);
    assert_eq!(m.body, "hello ü");
    assert_eq!(m.attributes, attributes);
    assert_eq!(m.receive_count, 1);
    assert_eq!(m.sent_at, now);
    assert_eq!(m.first_receive_at, now);
    assert!(!m.receipt_handle.is_empty());
}

/// V1: queue DelaySeconds and per-message DelaySeconds hide a message until due.
pub async fn v1_delay_hides_a_message_until_due<H: Harness>(h: &H) {
    create(h, "q", &[("DelaySeconds", "10")]).await;
    send(h, "q", &["queue-delay"]).await;
    let mut m = msg("own-delay");
    m.delay_seconds = Some(3);
    h.broker().send_messages("q", vec![m]).await.unwrap();
    assert!(receive(h, "q", 10).await.is_empty());
    assert_eq!(
        counts(h, "q").await,
        QueueCounts {
            visible: 0,
            in_flight: 0,
            delayed: 2
        }
    );
    h.clock().advance_secs(3);
    assert_eq!(bodies(&receive(h, "q", 10).await), ["own-delay"]);
    h.clock().advance_secs(7);
    assert_eq!(bodies(&receive(h, "q", 10).await), ["queue-delay"]);
}

/// V2: a received message is hidden for the visibility timeout (request
/// value, else the queue's), and each receive counts.
pub async fn v2_receive_hides_for_the_visibility_timeout_and_counts<H: Harness>(h: &H) {
    create(h, "q", &[("VisibilityTimeout", "20")]).await;
    send(h, "q", &["a"]).await;
    let first = receive(h, "q", 1).await;
    assert_eq!(first.len(), 1);
    h.clock().advance_secs(19);
    assert!(
        receive(h, "q", 1).await.is_empty(),
        "hidden for the queue's 20 s"
    );
    h.clock().advance_secs(1);
    let second = receive_vt(h, "q", 1, 5).await;
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].receive_count, 2);
    assert_eq!(second[0].first_receive_at, first[0].first_receive_at);
    assert_ne!(second[0].receipt_handle, first[0].receipt_handle);
    h.clock().advance_secs(4);
    assert!(
        receive(h, "q", 1).await.is_empty(),
        "hidden for the request's 5 s"
    );
    h.clock().advance_secs(1);
    assert_eq!(receive(h, "q", 1).await[0].receive_count, 3);
}

/// V3: at-least-once: a message not deleted in time is delivered again.
pub async fn v3_a_message_not_deleted_comes_back<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    let ids = send(h, "q", &["a", "b", "c"]).await;
    assert_eq!(receive(h, "q", 10).await.len(), 3);
    assert!(receive(h, "q", 10).await.is_empty());
    h.clock().advance_secs(30);
    let again = receive(h, "q", 10).await;
    let mut again_ids: Vec<String> = again.iter().map(|m| m.message_id.clone()).collect();
    let mut ids = ids;
    again_ids.sort();
    ids.sort();
    assert_eq!(again_ids, ids);
}

/// V4: delete works with any handle of the message; deleting twice succeeds.
pub async fn v4_delete_with_any_handle_and_twice<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    send(h, "q", &["a"]).await;
    let old = receive_vt(h, "q", 1, 1).await.remove(0);
    h.clock().advance_secs(1);
    let new = receive(h, "q", 1).await.remove(0);
    assert_ne!(old.receipt_handle, new.receipt_handle);
    let r = h
        .broker()
        .delete_messages("q", vec![old.receipt_handle.clone()])
        .await
        .unwrap();
    assert_eq!(r, vec![Ok(())]);
    h.clock().advance_secs(60);
    assert!(
        receive(h, "q", 1).await.is_empty(),
        "deleted by the older handle"
    );
    let r = h
        .broker()
        .delete_messages("q", vec![new.receipt_handle, old.receipt_handle])
        .await
        .unwrap();
    assert_eq!(r, vec![Ok(()), Ok(())]);
    assert_eq!(counts(h, "q").await, QueueCounts::default());
}

/// V4: a malformed handle, or one of another queue, is ReceiptHandleIsInvalid.
pub async fn v4_bad_handles_are_invalid<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    create(h, "other", &[]).await;
    send(h, "other", &["x"]).await;
    let foreign = receive(h, "other", 1).await.remove(0).receipt_handle;
    let r = h
        .broker()
        .delete_messages("q", vec!["garbage".into(), foreign.clone()])
        .await
        .unwrap();
    for res in r {
        assert_eq!(res.unwrap_err().code, ErrorCode::ReceiptHandleIsInvalid);
    }
    let r = h
        .broker()
        .change_visibility(
            "q",
            vec![VisibilityChange {
                receipt_handle: foreign,
                visibility_timeout: 5,
            }],
        )
        .await
        .unwrap();
    assert_eq!(
        r[0].as_ref().unwrap_err().code,
        ErrorCode::ReceiptHandleIsInvalid
    );
    assert_eq!(
        counts(h, "other").await.in_flight,
        1,
        "nothing changed in the other queue"
    );
}

/// V5: ChangeMessageVisibility sets the remaining invisibility from now;
/// 0 makes the message receivable at once.
pub async fn v5_change_visibility_extends_and_zero_releases<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    send(h, "q", &["a"]).await;
    let m = receive(h, "q", 1).await.remove(0);
    h.clock().advance_secs(25);
    let change = |t| VisibilityChange {
        receipt_handle: m.receipt_handle.clone(),
        visibility_timeout: t,
    };
    assert_eq!(
        h.broker()
            .change_visibility("q", vec![change(60)])
            .await
            .unwrap(),
        vec![Ok(())]
    );
    h.clock().advance_secs(59);
    assert!(
        receive(h, "q", 1).await.is_empty(),
        "extended to 60 s from the change"
    );
    assert_eq!(
        h.broker()
            .change_visibility("q", vec![change(0)])
            .await
            .unwrap(),
        vec![Ok(())]
    );
    let again = receive(h, "q", 1).await;
    assert_eq!(again.len(), 1, "released at once");
    assert_eq!(again[0].receive_count, 2);
}

/// V5: only a message in flight under that handle can change visibility.
pub async fn v5_change_visibility_needs_an_in_flight_message<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    send(h, "q", &["a"]).await;
    let m = receive(h, "q", 1).await.remove(0);
    let change = |t| VisibilityChange {
        receipt_handle: m.receipt_handle.clone(),
        visibility_timeout: t,
    };
    h.clock().advance_secs(30);
    let r = h
        .broker()
        .change_visibility("q", vec![change(10)])
        .await
        .unwrap();
    assert_eq!(
        r[0].as_ref().unwrap_err().code,
        ErrorCode::MessageNotInflight,
        "visible again"
    );
    h.broker()
        .delete_messages("q", vec![m.receipt_handle.clone()])
        .await
        .unwrap();
    let r = h
        .broker()
        .change_visibility("q", vec![change(10)])
        .await
        .unwrap();
    assert_eq!(
        r[0].as_ref().unwrap_err().code,
        ErrorCode::InvalidParameterValue,
        "deleted"
    );
}

/// V6: a long poll returns as soon as a message arrives (real time, short).
pub async fn v6_long_poll_wakes_on_send_real_time<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    let started = std::time::Instant::now();
    let mut o = opts(1);
    o.wait = Duration::from_secs(10);
    let poll = h.broker().receive_messages("q", o);
    let sender = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        send(h, "q", &["wake"]).await;
    };
    let (got, ()) = tokio::join!(poll, sender);
    assert_eq!(bodies(&got.unwrap()), ["wake"]);
    // Not a latency check: only that it did not wait for the 10 s deadline.
    assert!(started.elapsed() < Duration::from_secs(9));
}

/// V6: a long poll with nothing to receive ends empty at its deadline.
pub async fn v6_long_poll_ends_empty_at_deadline_real_time<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    let started = std::time::Instant::now();
    let mut o = opts(1);
    o.wait = Duration::from_millis(300);
    let got = h.broker().receive_messages("q", o).await.unwrap();
    assert!(got.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(300));
}

/// V7: a message older than the retention period is deleted, received or not.
pub async fn v7_retention_deletes_old_messages<H: Harness>(h: &H) {
    create(h, "q", &[("MessageRetentionPeriod", "60")]).await;
    send(h, "q", &["old"]).await;
    receive(h, "q", 1).await;
    h.clock().advance_secs(30);
    send(h, "q", &["young"]).await;
    h.clock().advance_secs(30);
    assert_eq!(
        counts(h, "q").await,
        QueueCounts {
            visible: 1,
            in_flight: 0,
            delayed: 0
        }
    );
    assert_eq!(bodies(&receive(h, "q", 10).await), ["young"]);
    h.clock().advance_secs(30);
    assert_eq!(counts(h, "q").await, QueueCounts::default());
}

/// V8: purge deletes every message; a second purge within 60 s is refused.
pub async fn v8_purge_deletes_all_and_limits_rate<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    send(h, "q", &["a", "b"]).await;
    receive(h, "q", 1).await;
    h.broker().purge_queue("q").await.unwrap();
    assert_eq!(counts(h, "q").await, QueueCounts::default());
    h.clock().advance_secs(59);
    let e = h.broker().purge_queue("q").await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PurgeQueueInProgress);
    send(h, "q", &["after"]).await;
    assert_eq!(
        bodies(&receive(h, "q", 10).await),
        ["after"],
        "a failed purge changes nothing"
    );
    h.clock().advance_secs(1);
    h.broker().purge_queue("q").await.unwrap();
    assert_eq!(counts(h, "q").await, QueueCounts::default());
}

/// V9: CreateQueue of an existing name: same attributes return it, other
/// values are QueueNameExists; after DeleteQueue the name is free.
pub async fn v9_create_is_idempotent_and_delete_frees_the_name<H: Harness>(h: &H) {
    create(h, "q", &[("VisibilityTimeout", "40")]).await;
    send(h, "q", &["kept"]).await;
    create(h, "q", &[("VisibilityTimeout", "40")]).await;
    create(h, "q", &[]).await;
    let requested = attrs(&[("VisibilityTimeout", "41")]);
    let e = h
        .broker()
        .create_queue(CreateQueue {
            name: "q".into(),
            config: QueueConfig::for_create("q", &requested).unwrap(),
            requested,
            tags: BTreeMap::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::QueueNameExists);
    assert_eq!(
        counts(h, "q").await.visible,
        1,
        "the existing queue is untouched"
    );
    h.broker().delete_queue("q").await.unwrap();
    assert_eq!(
        h.broker().get_queue("q").await.unwrap_err().code,
        ErrorCode::QueueDoesNotExist
    );
    assert_eq!(
        h.broker()
            .send_messages("q", vec![msg("x")])
            .await
            .unwrap_err()
            .code,
        ErrorCode::QueueDoesNotExist
    );
    assert_eq!(
        h.broker().delete_queue("q").await.unwrap_err().code,
        ErrorCode::QueueDoesNotExist
    );
    create(h, "q", &[]).await;
    assert_eq!(
        counts(h, "q").await,
        QueueCounts::default(),
        "a new, empty queue"
    );
    assert_eq!(h.broker().list_queues().await.unwrap(), ["q"]);
}

/// V11: visible, not visible and delayed counts follow each message.
pub async fn v11_counts_follow_the_lifecycle<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    send(h, "q", &["a", "b", "c"]).await;
    let mut delayed = msg("d");
    delayed.delay_seconds = Some(5);
    h.broker().send_messages("q", vec![delayed]).await.unwrap();
    assert_eq!(
        counts(h, "q").await,
        QueueCounts {
            visible: 3,
            in_flight: 0,
            delayed: 1
        }
    );
    let got = receive(h, "q", 2).await;
    assert_eq!(
        counts(h, "q").await,
        QueueCounts {
            visible: 1,
            in_flight: 2,
            delayed: 1
        }
    );
    h.broker()
        .delete_messages("q", vec![got[0].receipt_handle.clone()])
        .await
        .unwrap();
    assert_eq!(
        counts(h, "q").await,
        QueueCounts {
            visible: 1,
            in_flight: 1,
            delayed: 1
        }
    );
    h.clock().advance_secs(30);
    assert_eq!(
        counts(h, "q").await,
        QueueCounts {
            visible: 3,
            in_flight: 0,
            delayed: 0
        }
    );
}

/// V11: attributes set all-or-nothing, tags added and removed.
pub async fn v11_set_attributes_and_tags<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    let before = h.broker().get_queue("q").await.unwrap();
    h.clock().advance_secs(1);
    let meta = h
        .broker()
        .set_queue_attributes(
            "q",
            attrs(&[("VisibilityTimeout", "5"), ("DelaySeconds", "2")]),
        )
        .await
        .unwrap();
    assert_eq!(meta.config.visibility_timeout, 5);
    assert_eq!(meta.config.delay_seconds, 2);
    assert!(meta.modified_at > before.modified_at);
    let e = h
        .broker()
        .set_queue_attributes(
            "q",
            attrs(&[("DelaySeconds", "3"), ("VisibilityTimeout", "-1")]),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidAttributeValue);
    assert_eq!(
        h.broker()
            .get_queue("q")
            .await
            .unwrap()
            .config
            .delay_seconds,
        2
    );

    h.broker()
        .tag_queue("q", attrs(&[("team", "a"), ("env", "dev")]))
        .await
        .unwrap();
    h.broker()
        .tag_queue("q", attrs(&[("team", "b")]))
        .await
        .unwrap();
    h.broker()
        .untag_queue("q", vec!["env".into(), "missing".into()])
        .await
        .unwrap();
    assert_eq!(
        h.broker().get_queue("q").await.unwrap().tags,
        attrs(&[("team", "b")])
    );
}

/// L2: in a batch each entry succeeds or fails on its own.
pub async fn l2_batch_results_are_per_entry<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    send(h, "q", &["a", "b"]).await;
    let got = receive(h, "q", 10).await;
    let r = h
        .broker()
        .delete_messages(
            "q",
            vec![
                got[0].receipt_handle.clone(),
                "bad".into(),
                got[1].receipt_handle.clone(),
            ],
        )
        .await
        .unwrap();
    assert!(r[0].is_ok() && r[2].is_ok());
    assert_eq!(
        r[1].as_ref().unwrap_err().code,
        ErrorCode::ReceiptHandleIsInvalid
    );
    assert_eq!(counts(h, "q").await, QueueCounts::default());
}

/// L4: past 120,000 messages in flight, ReceiveMessage answers OverLimit.
pub async fn l4_in_flight_limit_is_over_limit<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    let limit = sluice_core::limits::MAX_INFLIGHT;
    for _ in 0..(limit / 10_000 + 1) {
        let batch = (0..10_000).map(|_| msg("x")).collect();
        h.broker().send_messages("q", batch).await.unwrap();
    }
    let mut received = 0;
    let o = opts(10);
    while received < limit {
        let got = h.broker().receive_messages("q", o.clone()).await.unwrap();
        assert!(!got.is_empty());
        received += got.len();
    }
    let e = h
        .broker()
        .receive_messages("q", o.clone())
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::OverLimit);
    h.clock().advance_secs(30);
    assert_eq!(
        h.broker().receive_messages("q", o).await.unwrap().len(),
        10,
        "limit lifts as messages return"
    );
}

fn redrive(dlq: &str, max: u32) -> String {
    format!(
        r#"{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:{dlq}","maxReceiveCount":{max}}}"#
    )
}

/// R2, R4: the receive that would go past maxReceiveCount moves the message
/// to the DLQ instead; it keeps its id, body, attributes and receive count
/// and names its source.
pub async fn r2_r4_message_moves_to_dlq_past_max_receive_count<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 2))]).await;
    let mut attributes = MessageAttributes::new();
    attributes.insert(
        "k".into(),
        MessageAttributeValue {
            data_type: "String".into(),
            value: AttributeValue::String("v".into()),
        },
    );
    let sent = h
        .broker()
        .send_messages(
            "src",
            vec![
                NewMessage {
                    body: "poison".into(),
                    attributes: attributes.clone(),
                    ..Default::default()
                },
                msg("healthy"),
            ],
        )
        .await
        .unwrap();
    for round in 1..=2 {
        let got = receive_vt(h, "src", 10, 0).await;
        assert_eq!(got.len(), 2, "round {round}");
    }
    // Third receive: both messages have been received twice already.
    let got = receive(h, "src", 10).await;
    assert!(got.is_empty(), "both messages were over the limit: {got:?}");
    assert_eq!(counts(h, "src").await, QueueCounts::default());
    assert_eq!(counts(h, "dlq").await.visible, 2);
    let dead = receive(h, "dlq", 10).await;
    let poison = dead
        .iter()
        .find(|m| m.body == "poison")
        .expect("poison in the DLQ");
    assert_eq!(poison.message_id, sent[0].message_id);
    assert_eq!(poison.attributes, attributes);
    assert_eq!(
        poison.receive_count, 3,
        "two receives in the source, one here"
    );
    let source = poison
        .system_attributes
        .get("DeadLetterQueueSourceArn")
        .expect("source ARN");
    assert_eq!(
        source.value,
        AttributeValue::String("arn:aws:sqs:us-east-1:000000000000:src".into())
    );
}

/// R2: with maxReceiveCount 1 the second receive moves the message.
pub async fn r2_max_receive_count_one<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    send(h, "src", &["once"]).await;
    assert_eq!(receive_vt(h, "src", 1, 5).await.len(), 1);
    h.clock().advance_secs(5);
    assert!(receive(h, "src", 1).await.is_empty());
    assert_eq!(bodies(&receive(h, "dlq", 1).await), ["once"]);
}

/// R2: when the DLQ does not exist, nothing is moved and nothing is lost.
pub async fn r2_without_its_dlq_a_message_stays<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    h.broker().delete_queue("dlq").await.unwrap();
    send(h, "src", &["kept"]).await;
    for expected_count in 1..=3 {
        let got = receive_vt(h, "src", 1, 0).await;
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].receive_count, expected_count);
    }
}

/// R3: a standard DLQ keeps the original enqueue time: a message 1 day old
/// entering a 4-day DLQ expires 3 days later (the seeds' example).
pub async fn r3_standard_dlq_keeps_the_original_enqueue_time<H: Harness>(h: &H) {
    const DAY: u64 = 86_400;
    create(h, "dlq", &[("MessageRetentionPeriod", "345600")]).await;
    create(
        h,
        "src",
        &[
            ("MessageRetentionPeriod", "1209600"),
            ("RedrivePolicy", &redrive("dlq", 1)),
        ],
    )
    .await;
    send(h, "src", &["aging"]).await;
    h.clock().advance_secs(DAY);
    receive_vt(h, "src", 1, 0).await;
    assert!(receive(h, "src", 1).await.is_empty(), "moved");
    assert_eq!(counts(h, "dlq").await.visible, 1);
    h.clock().advance_secs(3 * DAY - 1);
    assert_eq!(
        counts(h, "dlq").await.visible,
        1,
        "still there just before 4 days of age"
    );
    h.clock().advance_secs(1);
    assert_eq!(
        counts(h, "dlq").await,
        QueueCounts::default(),
        "gone at 4 days of age, 3 days after the move"
    );
}

fn fifo_msg(group: &str, dedup: &str, body: &str) -> NewMessage {
    NewMessage {
        body: body.into(),
        group_id: Some(group.into()),
        dedup_id: Some(dedup.into()),
        ..Default::default()
    }
}

async fn create_fifo<H: Harness>(h: &H, name: &str, extra: &[(&str, &str)]) {
    let mut pairs = vec![("FifoQueue", "true")];
    pairs.extend_from_slice(extra);
    create(h, name, &pairs).await;
}

fn in_order(msgs: &[ReceivedMessage]) -> Vec<&str> {
    msgs.iter().map(|m| m.body.as_str()).collect()
}

/// F1: within a group, send order; while a message of a group is in flight
/// no later one is delivered; other groups keep flowing; one receive may
/// take several consecutive messages of a group.
pub async fn f1_order_within_a_group_and_blocking<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    let msgs = vec![
        fifo_msg("a", "1", "a1"),
        fifo_msg("a", "2", "a2"),
        fifo_msg("b", "3", "b1"),
        fifo_msg("a", "4", "a3"),
    ];
    h.broker().send_messages("q.fifo", msgs).await.unwrap();
    let first = receive(h, "q.fifo", 1).await;
    assert_eq!(in_order(&first), ["a1"]);
    let next = receive(h, "q.fifo", 10).await;
    assert_eq!(
        in_order(&next),
        ["b1"],
        "group a is blocked while a1 is in flight"
    );
    h.broker()
        .delete_messages("q.fifo", vec![first[0].receipt_handle.clone()])
        .await
        .unwrap();
    let rest = receive_vt(h, "q.fifo", 10, 10).await;
    assert_eq!(
        in_order(&rest),
        ["a2", "a3"],
        "consecutive messages of a group in one receive"
    );
    h.clock().advance_secs(10);
    let again = receive(h, "q.fifo", 1).await;
    assert_eq!(
        in_order(&again),
        ["a2"],
        "after a visibility timeout the group starts again from its head"
    );
    assert_eq!(again[0].receive_count, 2);
}

/// F1: a message whose visibility expires is delivered again before any
/// later message of its group.
pub async fn f1_redelivery_keeps_group_order<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    h.broker()
        .send_messages(
            "q.fifo",
            vec![fifo_msg("g", "1", "first"), fifo_msg("g", "2", "second")],
        )
        .await
        .unwrap();
    assert_eq!(in_order(&receive_vt(h, "q.fifo", 1, 5).await), ["first"]);
    assert!(receive(h, "q.fifo", 10).await.is_empty());
    h.clock().advance_secs(5);
    assert_eq!(
        in_order(&receive(h, "q.fifo", 10).await),
        ["first", "second"]
    );
}

/// F2, F3: a duplicate within 5 minutes is acknowledged with the first id
/// and sequence number and not enqueued, even after the first is deleted;
/// at 5 minutes it is new again.
pub async fn f2_deduplication_window_outlives_delete<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    let first = h
        .broker()
        .send_messages("q.fifo", vec![fifo_msg("g", "d", "x")])
        .await
        .unwrap();
    let again = h
        .broker()
        .send_messages("q.fifo", vec![fifo_msg("g", "d", "other body")])
        .await
        .unwrap();
    assert_eq!(again, first, "same id and sequence number");
    assert!(first[0].sequence_number.is_some());
    assert_eq!(counts(h, "q.fifo").await.visible, 1);
    let got = receive(h, "q.fifo", 10).await;
    h.broker()
        .delete_messages("q.fifo", vec![got[0].receipt_handle.clone()])
        .await
        .unwrap();
    h.clock().advance_secs(299);
    let late = h
        .broker()
        .send_messages("q.fifo", vec![fifo_msg("g", "d", "x")])
        .await
        .unwrap();
    assert_eq!(late, first, "still deduplicated after the delete");
    assert_eq!(counts(h, "q.fifo").await, QueueCounts::default());
    h.clock().advance_secs(1);
    let fresh = h
        .broker()
        .send_messages("q.fifo", vec![fifo_msg("g", "d", "x")])
        .await
        .unwrap();
    assert_ne!(fresh[0].message_id, first[0].message_id);
    assert_eq!(counts(h, "q.fifo").await.visible, 1);
}

/// F2: with DeduplicationScope=messageGroup the same id in two groups is two messages.
pub async fn f2_deduplication_scope_message_group<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[("DeduplicationScope", "messageGroup")]).await;
    create_fifo(h, "whole.fifo", &[]).await;
    for q in ["q.fifo", "whole.fifo"] {
        h.broker()
            .send_messages(
                q,
                vec![fifo_msg("a", "same", "1"), fifo_msg("b", "same", "2")],
            )
            .await
            .unwrap();
    }
    assert_eq!(counts(h, "q.fifo").await.visible, 2);
    assert_eq!(counts(h, "whole.fifo").await.visible, 1);
}

/// F3: sequence numbers increase strictly and come back on receive.
pub async fn f3_sequence_numbers_increase<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    let sent = h
        .broker()
        .send_messages(
            "q.fifo",
            (0..5)
                .map(|i| fifo_msg(&format!("g{i}"), &i.to_string(), "x"))
                .collect(),
        )
        .await
        .unwrap();
    let seqs: Vec<u128> = sent
        .iter()
        .map(|s| s.sequence_number.as_ref().unwrap().parse().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    let got = receive(h, "q.fifo", 10).await;
    for m in &got {
        let s = sent.iter().find(|s| s.message_id == m.message_id).unwrap();
        assert_eq!(m.sequence_number, s.sequence_number);
    }
}

/// F4: a receive retried with the same ReceiveRequestAttemptId returns the
/// same messages and handles.
pub async fn f4_receive_attempt_id_replays<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    h.broker()
        .send_messages(
            "q.fifo",
            vec![fifo_msg("a", "1", "a1"), fifo_msg("b", "2", "b1")],
        )
        .await
        .unwrap();
    let mut o = opts(1);
    o.attempt_id = Some("attempt-1".into());
    let first = h
        .broker()
        .receive_messages("q.fifo", o.clone())
        .await
        .unwrap();
    let retry = h
        .broker()
        .receive_messages("q.fifo", o.clone())
        .await
        .unwrap();
    assert_eq!(retry, first, "same messages, same handles");
    assert_eq!(
        counts(h, "q.fifo").await.in_flight,
        1,
        "the retry delivered nothing new"
    );
    h.broker()
        .delete_messages("q.fifo", vec![first[0].receipt_handle.clone()])
        .await
        .unwrap();
    let after_delete = h.broker().receive_messages("q.fifo", o).await.unwrap();
    assert_ne!(after_delete, first, "a deleted message is not replayed");
}

/// F1: in a FIFO queue only the latest delivery's handle deletes.
pub async fn f1_fifo_stale_handle_cannot_delete<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    h.broker()
        .send_messages("q.fifo", vec![fifo_msg("g", "1", "x")])
        .await
        .unwrap();
    let old = receive_vt(h, "q.fifo", 1, 1).await.remove(0);
    h.clock().advance_secs(1);
    let new = receive(h, "q.fifo", 1).await.remove(0);
    let r = h
        .broker()
        .delete_messages("q.fifo", vec![old.receipt_handle])
        .await
        .unwrap();
    assert_eq!(
        r[0].as_ref().unwrap_err().code,
        ErrorCode::ReceiptHandleIsInvalid
    );
    let r = h
        .broker()
        .delete_messages("q.fifo", vec![new.receipt_handle])
        .await
        .unwrap();
    assert!(r[0].is_ok());
    assert_eq!(counts(h, "q.fifo").await, QueueCounts::default());
}

/// R3, F5: moving into a FIFO DLQ restarts the retention clock and replaces
/// the dedup id by the message id; the poison message unblocks its group.
pub async fn r3_fifo_dlq_resets_enqueue_time<H: Harness>(h: &H) {
    const DAY: u64 = 86_400;
    create_fifo(h, "dlq.fifo", &[("MessageRetentionPeriod", "345600")]).await;
    create_fifo(h, "src.fifo", &[("RedrivePolicy", &redrive("dlq.fifo", 1))]).await;
    h.broker()
        .send_messages(
            "src.fifo",
            vec![fifo_msg("g", "p", "poison"), fifo_msg("g", "n", "next")],
        )
        .await
        .unwrap();
    h.clock().advance_secs(DAY);
    assert_eq!(in_order(&receive_vt(h, "src.fifo", 1, 0).await), ["poison"]);
    assert_eq!(
        in_order(&receive(h, "src.fifo", 1).await),
        ["next"],
        "the group moves on"
    );
    let dead = receive_vt(h, "dlq.fifo", 1, 0).await;
    assert_eq!(
        dead[0].dedup_id.as_deref(),
        Some(dead[0].message_id.as_str())
    );
    h.clock().advance_secs(4 * DAY - 1);
    assert_eq!(
        counts(h, "dlq.fifo").await.visible,
        1,
        "4 days from the move, not from the send"
    );
    h.clock().advance_secs(1);
    assert_eq!(counts(h, "dlq.fifo").await, QueueCounts::default());
}

/// V10, fair queues: on a standard queue, a message group that floods the
/// queue does not starve the others. A noisy tenant sends 1,000 messages,
/// then ten quiet tenants one each; a consumer takes 10 per second. Every
/// quiet message waits at most two receives, not a hundred.
pub async fn v10_fair_queue_flooding_group_does_not_starve_others<H: Harness>(h: &H) {
    create(h, "shared", &[]).await;
    let grouped = |group: &str, body: String| NewMessage {
        body,
        group_id: Some(group.into()),
        ..Default::default()
    };
    for chunk in 0..10 {
        let batch = (0..100)
            .map(|i| grouped("noisy", format!("n{}", chunk * 100 + i)))
            .collect();
        h.broker().send_messages("shared", batch).await.unwrap();
    }
    let sent_at = h.clock().now();
    let quiet = (0..10)
        .map(|i| grouped(&format!("quiet{i}"), format!("q{i}")))
        .collect();
    h.broker().send_messages("shared", quiet).await.unwrap();
    let mut dwell_ms: BTreeMap<String, u64> = BTreeMap::new();
    for _ in 0..5 {
        let got = receive(h, "shared", 10).await;
        let now = h.clock().now();
        for m in &got {
            let group = m.group_id.clone().unwrap();
            if group.starts_with("quiet") {
                dwell_ms.insert(group, now - sent_at);
            }
        }
        let handles = got.into_iter().map(|m| m.receipt_handle).collect();
        h.broker().delete_messages("shared", handles).await.unwrap();
        h.clock().advance_secs(1);
    }
    assert_eq!(
        dwell_ms.len(),
        10,
        "every quiet tenant was served: {dwell_ms:?}"
    );
    assert!(
        dwell_ms.values().all(|&d| d <= 1_000),
        "quiet tenants waited at most one extra receive: {dwell_ms:?}"
    );
}

async fn dead_letter<H: Harness>(h: &H, source: &str, body: &str) {
    send(h, source, &[body]).await;
    assert_eq!(receive_vt(h, source, 1, 0).await.len(), 1);
    assert!(
        receive(h, source, 1).await.is_empty(),
        "{body} moved to the DLQ"
    );
}

/// R7: a redrive without destination returns each message to its own
/// source, as a new message (new id, no receives, no source ARN).
pub async fn r7_redrive_returns_messages_to_their_sources<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "s1", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    create(h, "s2", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    dead_letter(h, "s1", "one").await;
    dead_letter(h, "s2", "two").await;
    let before: Vec<String> = receive_vt(h, "dlq", 10, 0)
        .await
        .into_iter()
        .map(|m| m.message_id)
        .collect();
    let outcome = h.broker().redrive_messages("dlq", None, 10).await.unwrap();
    assert_eq!((outcome.moved, outcome.unmovable), (2, 0));
    assert_eq!(counts(h, "dlq").await, QueueCounts::default());
    for (q, body) in [("s1", "one"), ("s2", "two")] {
        let got = receive(h, q, 10).await;
        assert_eq!(bodies(&got), [body]);
        assert_eq!(got[0].receive_count, 1, "a fresh message");
        assert!(!before.contains(&got[0].message_id), "a new message id");
        assert!(
            !got[0]
                .system_attributes
                .contains_key("DeadLetterQueueSourceArn")
        );
    }
}

/// R7: with a destination every message goes there; `max` bounds a step.
pub async fn r7_redrive_to_a_destination_in_steps<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    create(h, "elsewhere", &[]).await;
    dead_letter(h, "src", "a").await;
    dead_letter(h, "src", "b").await;
    let step = h
        .broker()
        .redrive_messages("dlq", Some("elsewhere"), 1)
        .await
        .unwrap();
    assert_eq!(step.moved, 1);
    assert_eq!(counts(h, "dlq").await.visible, 1);
    let step = h
        .broker()
        .redrive_messages("dlq", Some("elsewhere"), 1)
        .await
        .unwrap();
    assert_eq!(step.moved, 1);
    assert_eq!(bodies(&receive(h, "elsewhere", 10).await), ["a", "b"]);
    assert_eq!(counts(h, "src").await, QueueCounts::default());
}

/// R7: a message with nowhere to go stays in the DLQ, and says why.
pub async fn r7_unmovable_messages_stay<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    send(h, "dlq", &["sent straight to the DLQ"]).await;
    let outcome = h.broker().redrive_messages("dlq", None, 10).await.unwrap();
    assert_eq!((outcome.moved, outcome.unmovable), (0, 1));
    assert!(outcome.reason.is_some());
    dead_letter(h, "src", "orphan").await;
    h.broker().delete_queue("src").await.unwrap();
    let outcome = h.broker().redrive_messages("dlq", None, 10).await.unwrap();
    assert_eq!((outcome.moved, outcome.unmovable), (0, 2));
    assert_eq!(counts(h, "dlq").await.visible, 2, "nothing lost");
}

/// R7: move task records are kept and listed newest first.
pub async fn r7_move_tasks_are_kept<H: Harness>(h: &H) {
    let task = |handle: &str, started_at| crate::MoveTask {
        handle: handle.into(),
        source_arn: "arn:aws:sqs:us-east-1:000000000000:dlq".into(),
        destination_arn: None,
        max_per_second: Some(10),
        status: crate::MoveTaskStatus::Running,
        moved: 0,
        to_move: 5,
        failure_reason: None,
        started_at,
    };
    h.broker().save_move_task(task("old", 1)).await.unwrap();
    h.broker().save_move_task(task("new", 2)).await.unwrap();
    let mut done = task("old", 1);
    done.status = crate::MoveTaskStatus::Completed;
    done.moved = 5;
    h.broker().save_move_task(done.clone()).await.unwrap();
    let tasks = h.broker().move_tasks().await.unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0].handle, "new");
    assert_eq!(tasks[1], done);
}

fn with_attr(body: &str, name: &str, value: &str) -> NewMessage {
    let mut m = msg(body);
    m.attributes.insert(
        name.into(),
        MessageAttributeValue {
            data_type: "String".into(),
            value: AttributeValue::String(value.into()),
        },
    );
    m
}

/// X1: peeking shows messages in every state without changing their
/// receive count or visibility, filters them, and pages.
pub async fn x1_peek_changes_nothing_and_filters<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    h.broker()
        .send_messages(
            "q",
            vec![
                with_attr("order 1 failed", "tenant", "a"),
                with_attr("order 2", "tenant", "b"),
            ],
        )
        .await
        .unwrap();
    h.clock().advance_secs(10);
    let later = h.clock().now();
    let mut delayed = msg("order 3 later");
    delayed.delay_seconds = Some(60);
    h.broker().send_messages("q", vec![delayed]).await.unwrap();
    let taken = receive(h, "q", 1).await;
    let before = counts(h, "q").await;
    let all = h
        .broker()
        .peek_messages("q", &crate::MessageFilter::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(all.messages.len(), 3);
    assert_eq!(all.next, None);
    let states: Vec<&str> = all.messages.iter().map(|m| m.state).collect();
    assert_eq!(states, ["in_flight", "visible", "delayed"]);
    assert_eq!(all.messages[0].receive_count, 1);
    assert_eq!(all.messages[0].message_id, taken[0].message_id);
    assert_eq!(counts(h, "q").await, before, "a peek changes nothing");
    let again = h
        .broker()
        .peek_messages("q", &crate::MessageFilter::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(
        again.messages[0].receive_count, 1,
        "a peek is not a receive"
    );

    let by = |f: crate::MessageFilter| async move {
        let page = h.broker().peek_messages("q", &f, None, 10).await.unwrap();
        page.messages
            .into_iter()
            .map(|m| m.body)
            .collect::<Vec<_>>()
    };
    let f = crate::MessageFilter {
        body_contains: Some("failed".into()),
        ..Default::default()
    };
    assert_eq!(by(f).await, ["order 1 failed"]);
    let f = crate::MessageFilter {
        attribute: Some(("tenant".into(), "b".into())),
        ..Default::default()
    };
    assert_eq!(by(f).await, ["order 2"]);
    let f = crate::MessageFilter {
        sent_after: Some(later),
        ..Default::default()
    };
    assert_eq!(by(f).await, ["order 3 later"]);
    let f = crate::MessageFilter {
        sent_before: Some(later),
        ..Default::default()
    };
    assert_eq!(by(f).await.len(), 2);

    let first = h
        .broker()
        .peek_messages("q", &crate::MessageFilter::default(), None, 2)
        .await
        .unwrap();
    assert_eq!(first.messages.len(), 2);
    let rest = h
        .broker()
        .peek_messages("q", &crate::MessageFilter::default(), first.next, 2)
        .await
        .unwrap();
    assert_eq!(rest.messages.len(), 1);
    assert_eq!(rest.messages[0].body, "order 3 later");
}

/// X2: a nack keeps the consumer's reason, retries after the asked delay,
/// and a permanent one moves the message to the DLQ at once with its
/// provenance.
pub async fn x2_nack_reason_retry_and_permanent_failure<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 5))]).await;
    create(h, "plain", &[]).await;
    send(h, "src", &["payload"]).await;
    let first = receive(h, "src", 1).await.remove(0);
    let nack = |reason: &str, permanent, retry| crate::Nack {
        reason: Some(reason.into()),
        permanent,
        retry_after_seconds: retry,
    };
    h.broker()
        .nack_message(
            "src",
            &first.receipt_handle,
            nack("timeout calling billing", false, Some(10)),
        )
        .await
        .unwrap();
    h.clock().advance_secs(9);
    assert!(
        receive(h, "src", 1).await.is_empty(),
        "retry after 10 s, not before"
    );
    h.clock().advance_secs(1);
    let second = receive(h, "src", 1).await.remove(0);
    assert_eq!(second.receive_count, 2);
    let e = h
        .broker()
        .nack_message("src", &first.receipt_handle, nack("stale", false, None))
        .await
        .unwrap_err();
    assert_eq!(
        e.code,
        ErrorCode::MessageNotInflight,
        "only the current delivery can nack"
    );
    let peeked = h
        .broker()
        .peek_messages("src", &crate::MessageFilter::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(
        peeked.messages[0].failure_reason.as_deref(),
        Some("timeout calling billing")
    );

    h.broker()
        .nack_message(
            "src",
            &second.receipt_handle,
            nack("invalid JSON", true, None),
        )
        .await
        .unwrap();
    assert_eq!(
        counts(h, "src").await,
        QueueCounts::default(),
        "moved at once, no retry"
    );
    let dead = h
        .broker()
        .peek_messages("dlq", &crate::MessageFilter::default(), None, 10)
        .await
        .unwrap();
    let m = &dead.messages[0];
    assert_eq!(m.body, "payload");
    assert_eq!(m.message_id, first.message_id);
    assert_eq!(m.receive_count, 2);
    assert_eq!(m.failure_reason.as_deref(), Some("invalid JSON"));
    assert_eq!(m.first_receive_at, first.first_receive_at);
    let attr = |name: &str| match m.system_attributes.get(name).map(|a| &a.value) {
        Some(AttributeValue::String(s)) => s.clone(),
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(
        attr("DeadLetterQueueSourceArn"),
        "arn:aws:sqs:us-east-1:000000000000:src"
    );
    assert_eq!(attr("Sluice.MovedAt"), h.clock().now().to_string());
    assert_eq!(
        attr("Sluice.LastReceiveAt"),
        second.first_receive_at.max(h.clock().now()).to_string()
    );
    let f = crate::MessageFilter {
        reason_contains: Some("JSON".into()),
        ..Default::default()
    };
    assert_eq!(
        h.broker()
            .peek_messages("dlq", &f, None, 10)
            .await
            .unwrap()
            .messages
            .len(),
        1
    );

    send(h, "plain", &["no dlq"]).await;
    let m = receive(h, "plain", 1).await.remove(0);
    let e = h
        .broker()
        .nack_message("plain", &m.receipt_handle, nack("x", true, None))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParameterValue);
    assert_eq!(
        counts(h, "plain").await.in_flight,
        1,
        "a refused nack changes nothing"
    );
}
