//! Standard queues: the message lifecycle, limits and queue management
//! (rules V1–V11, L2, L4).

use std::collections::BTreeMap;
use std::time::Duration;

use sluice_core::attributes::QueueConfig;
use sluice_core::message::{AttributeValue, MessageAttributeValue, MessageAttributes};
use sluice_core::{Clock, ErrorCode};

use super::*;
use crate::{Coordination, MetaChange};
use crate::{CreateQueue, NewMessage, QueueCounts, VisibilityChange};

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
        assert_eq!(
            res.unwrap_err().to_sqs().code,
            ErrorCode::ReceiptHandleIsInvalid
        );
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
        r[0].as_ref().unwrap_err().to_sqs().code,
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

/// V26: a message stays invisible at most 12 hours after the receive that
/// gave the handle: a change reaching past that is refused with SQS's
/// words (recorded by a user of SQS, localstack/localstack#3956: "Value
/// 43200 for parameter VisibilityTimeout is invalid. Reason: Total
/// VisibilityTimeout for the message is beyond the limit [43200
/// seconds]"), per entry in a batch; the next receive starts a new 12 hours.
pub async fn v26_visibility_ends_twelve_hours_after_the_receive<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    send(h, "q", &["a"]).await;
    let m = receive(h, "q", 1).await.remove(0);
    let change = |m: &ReceivedMessage, t| VisibilityChange {
        receipt_handle: m.receipt_handle.clone(),
        visibility_timeout: t,
    };
    let changed = async |changes| h.broker().change_visibility("q", changes).await.unwrap();
    assert_eq!(changed(vec![change(&m, 3_600)]).await, vec![Ok(())]);
    h.clock().advance_secs(3_000);
    assert_eq!(
        changed(vec![change(&m, 40_200)]).await,
        vec![Ok(())],
        "to the limit exactly"
    );
    let refused = changed(vec![change(&m, 40_201)]).await;
    let e = refused[0].as_ref().unwrap_err().to_sqs();
    assert_eq!(e.code, ErrorCode::InvalidParameterValue);
    assert_eq!(
        e.message,
        "Value 40201 for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]"
    );
    h.clock().advance_secs(40_140);
    let batch = changed(vec![change(&m, 60), change(&m, 61)]).await;
    assert_eq!(batch[0], Ok(()));
    assert!(batch[1].is_err(), "{batch:?}");
    assert!(receive(h, "q", 1).await.is_empty(), "still invisible");
    h.clock().advance_secs(60);
    let again = receive(h, "q", 1).await.remove(0);
    assert_eq!(again.receive_count, 2, "visible at 12 hours");
    assert_eq!(
        changed(vec![change(&again, 43_200)]).await,
        vec![Ok(())],
        "a new receive, a new 12 hours"
    );
}

/// V5, V20: a deleted message cannot change visibility; once a delivery's
/// visibility ended, only that latest handle can (AWS answers the latest
/// handle with success, LocalStack snapshot
/// test_change_message_visibility_after_visibility_timeout_expiration).
pub async fn v5_change_visibility_needs_an_in_flight_message<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    send(h, "q", &["a"]).await;
    let first = receive(h, "q", 1).await.remove(0);
    let change = |m: &ReceivedMessage, t| VisibilityChange {
        receipt_handle: m.receipt_handle.clone(),
        visibility_timeout: t,
    };
    h.clock().advance_secs(30);
    let second = receive(h, "q", 1).await.remove(0);
    h.clock().advance_secs(30);
    let r = h
        .broker()
        .change_visibility("q", vec![change(&first, 10)])
        .await
        .unwrap();
    assert_eq!(
        r[0].as_ref().unwrap_err().to_sqs().code,
        ErrorCode::MessageNotInflight,
        "visible again, and received since that handle"
    );
    h.broker()
        .delete_messages("q", vec![second.receipt_handle.clone()])
        .await
        .unwrap();
    let r = h
        .broker()
        .change_visibility("q", vec![change(&second, 10)])
        .await
        .unwrap();
    assert_eq!(
        r[0].as_ref().unwrap_err().to_sqs().code,
        ErrorCode::InvalidParameterValue,
        "deleted"
    );
}

/// V20: in a standard queue, the latest handle of a message whose
/// visibility ended (expired, or received with a visibility timeout of 0)
/// still changes its visibility, and an older handle changes it while a
/// later delivery is in flight (AWS recorded answers, LocalStack
/// test_sqs.py::test_change_message_visibility_after_visibility_timeout_expiration
/// and test_terminate_visibility_timeout_after_receive).
pub async fn v20_change_visibility_after_the_visibility_ended<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    send(h, "q", &["a"]).await;
    let change = |m: &ReceivedMessage, t| VisibilityChange {
        receipt_handle: m.receipt_handle.clone(),
        visibility_timeout: t,
    };
    let m = receive(h, "q", 1).await.remove(0);
    h.clock().advance_secs(31);
    let r = h
        .broker()
        .change_visibility("q", vec![change(&m, 20)])
        .await
        .unwrap();
    assert_eq!(r, vec![Ok(())], "expired, nobody received it since");
    assert!(receive(h, "q", 1).await.is_empty(), "hidden again");
    h.clock().advance_secs(20);
    let mut o = opts(1);
    o.visibility_timeout = Some(0);
    let zero = h.broker().receive_messages("q", o).await.unwrap().remove(0);
    assert_eq!(zero.receive_count, 2);
    let r = h
        .broker()
        .change_visibility("q", vec![change(&zero, 20)])
        .await
        .unwrap();
    assert_eq!(r, vec![Ok(())], "received with a visibility timeout of 0");
    assert!(receive(h, "q", 1).await.is_empty(), "hidden again");
    h.clock().advance_secs(20);
    let later = receive(h, "q", 1).await.remove(0);
    assert_eq!(later.receive_count, 3);
    let r = h
        .broker()
        .change_visibility("q", vec![change(&zero, 0)])
        .await
        .unwrap();
    assert_eq!(
        r,
        vec![Ok(())],
        "an older handle, a later delivery in flight"
    );
    let again = receive(h, "q", 1).await;
    assert_eq!(again.len(), 1, "released by the older handle");
    assert_eq!(again[0].receive_count, 4);
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
    assert_eq!(e.to_sqs().code, ErrorCode::PurgeQueueInProgress);
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

/// V9, V19: CreateQueue of an existing name: same attributes return it,
/// other values are QueueNameExists; a minute after DeleteQueue the name is
/// free.
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
    assert_eq!(e.to_sqs().code, ErrorCode::QueueNameExists);
    assert_eq!(
        counts(h, "q").await.visible,
        1,
        "the existing queue is untouched"
    );
    h.broker().delete_queue("q").await.unwrap();
    assert_eq!(
        h.broker().get_queue("q").await.unwrap_err().to_sqs().code,
        ErrorCode::QueueDoesNotExist
    );
    assert_eq!(
        h.broker()
            .send_messages("q", vec![msg("x")])
            .await
            .unwrap_err()
            .to_sqs()
            .code,
        ErrorCode::QueueDoesNotExist
    );
    assert_eq!(
        h.broker()
            .delete_queue("q")
            .await
            .unwrap_err()
            .to_sqs()
            .code,
        ErrorCode::QueueDoesNotExist
    );
    // V19: the name is free again a minute after the delete, not before
    // (AWS-validated assertion, LocalStack
    // test_sqs.py::test_create_queue_recently_deleted).
    h.clock().advance_secs(59);
    let e = h
        .broker()
        .create_queue(CreateQueue {
            name: "q".into(),
            config: QueueConfig::default(),
            requested: BTreeMap::new(),
            tags: BTreeMap::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.to_sqs().code, ErrorCode::QueueDeletedRecently);
    assert_eq!(
        e.to_sqs().message,
        "You must wait 60 seconds after deleting a queue before you can create another with the same name."
    );
    h.clock().advance_secs(1);
    create(h, "q", &[]).await;
    assert_eq!(
        counts(h, "q").await,
        QueueCounts::default(),
        "a new, empty queue"
    );
    assert_eq!(h.broker().list_queues().await.unwrap(), ["q"]);
}

/// V9, V13, V17: QueueAlreadyExists names the attribute that differs, and
/// CreateQueue compares with the queue's current values, so a change made
/// by SetQueueAttributes moves what an equal CreateQueue is; the queue type
/// cannot be changed (AWS recorded answers, LocalStack snapshot
/// test_sqs.py::test_create_queue_with_different_attributes_raises_exception
/// and ::test_set_unsupported_attribute_fifo).
pub async fn v13_create_names_the_differing_attribute<H: Harness>(h: &H) {
    let first = [
        ("ReceiveMessageWaitTimeSeconds", "1"),
        ("DelaySeconds", "1"),
    ];
    let second = [
        ("ReceiveMessageWaitTimeSeconds", "1"),
        ("DelaySeconds", "2"),
    ];
    let try_create = |pairs: &[(&str, &str)]| {
        let requested = attrs(pairs);
        CreateQueue {
            name: "q".into(),
            config: QueueConfig::for_create("q", &requested).unwrap(),
            requested,
            tags: BTreeMap::new(),
        }
    };
    create(h, "q", &first).await;
    h.broker()
        .create_queue(try_create(&[("DelaySeconds", "1")]))
        .await
        .unwrap();
    let e = h
        .broker()
        .create_queue(try_create(&second))
        .await
        .unwrap_err();
    assert_eq!(e.to_sqs().code, ErrorCode::QueueNameExists);
    assert_eq!(
        e.to_sqs().message,
        "A queue already exists with the same name and a different value for attribute DelaySeconds"
    );
    h.broker()
        .update_queue(
            "q",
            MetaChange::SetAttributes(attrs(&[("DelaySeconds", "2")])),
        )
        .await
        .unwrap();
    h.broker().create_queue(try_create(&second)).await.unwrap();
    let e = h
        .broker()
        .create_queue(try_create(&first))
        .await
        .unwrap_err();
    assert_eq!(e.to_sqs().code, ErrorCode::QueueNameExists);
    let e = h
        .broker()
        .update_queue(
            "q",
            MetaChange::SetAttributes(attrs(&[("FifoQueue", "true")])),
        )
        .await
        .unwrap_err();
    assert_eq!(e.to_sqs().code, ErrorCode::InvalidAttributeName);
    create(h, "f.fifo", &[("FifoQueue", "true")]).await;
    h.broker()
        .update_queue(
            "f.fifo",
            MetaChange::SetAttributes(attrs(&[("FifoQueue", "true")])),
        )
        .await
        .unwrap();
    let e = h
        .broker()
        .update_queue(
            "f.fifo",
            MetaChange::SetAttributes(attrs(&[("FifoQueue", "false")])),
        )
        .await
        .unwrap_err();
    assert_eq!(e.to_sqs().code, ErrorCode::InvalidAttributeValue);
    assert!(h.broker().get_queue("f.fifo").await.unwrap().config.fifo);
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

/// A6: the policy the access check reads is the queue's `Policy` as set,
/// none before and after it is removed; a queue that does not exist, or
/// no longer does, is `QueueDoesNotExist`, as for its description.
pub async fn a6_queue_policy_is_the_policy_set<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    assert_eq!(h.broker().queue_policy("q").await.unwrap(), None);
    let policy = r#"{"Version":"2012-10-17","Statement":[]}"#;
    let set = |value: &str| MetaChange::SetAttributes(attrs(&[("Policy", value)]));
    h.broker().update_queue("q", set(policy)).await.unwrap();
    assert_eq!(
        h.broker().queue_policy("q").await.unwrap().as_deref(),
        Some(policy)
    );
    assert_eq!(
        h.broker().queue_policy("q").await.unwrap(),
        h.broker().get_queue("q").await.unwrap().config.policy
    );
    h.broker().update_queue("q", set("")).await.unwrap();
    assert_eq!(h.broker().queue_policy("q").await.unwrap(), None);
    for name in ["missing", "q"] {
        if name == "q" {
            h.broker().delete_queue("q").await.unwrap();
        }
        assert_eq!(
            h.broker()
                .queue_policy(name)
                .await
                .unwrap_err()
                .to_sqs()
                .code,
            ErrorCode::QueueDoesNotExist,
            "{name}"
        );
    }
}

/// V11: attributes set all-or-nothing, tags added and removed.
pub async fn v11_set_attributes_and_tags<H: Harness>(h: &H) {
    create(h, "q", &[]).await;
    let before = h.broker().get_queue("q").await.unwrap();
    h.clock().advance_secs(1);
    let meta = h
        .broker()
        .update_queue(
            "q",
            MetaChange::SetAttributes(attrs(&[("VisibilityTimeout", "5"), ("DelaySeconds", "2")])),
        )
        .await
        .unwrap();
    assert_eq!(meta.config.visibility_timeout, 5);
    assert_eq!(meta.config.delay_seconds, 2);
    assert!(meta.modified_at > before.modified_at);
    let e = h
        .broker()
        .update_queue(
            "q",
            MetaChange::SetAttributes(attrs(&[("DelaySeconds", "3"), ("VisibilityTimeout", "-1")])),
        )
        .await
        .unwrap_err();
    assert_eq!(e.to_sqs().code, ErrorCode::InvalidAttributeValue);
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
        .update_queue(
            "q",
            MetaChange::Tag(attrs(&[("team", "a"), ("env", "dev")])),
        )
        .await
        .unwrap();
    h.broker()
        .update_queue("q", MetaChange::Tag(attrs(&[("team", "b")])))
        .await
        .unwrap();
    h.broker()
        .update_queue("q", MetaChange::Untag(vec!["env".into(), "missing".into()]))
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
        r[1].as_ref().unwrap_err().to_sqs().code,
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
    assert_eq!(e.to_sqs().code, ErrorCode::OverLimit);
    h.clock().advance_secs(30);
    assert_eq!(
        h.broker().receive_messages("q", o).await.unwrap().len(),
        10,
        "limit lifts as messages return"
    );
}

/// L4: a FIFO queue with 120,000 messages in flight answers a receive with
/// no messages and no error, although other groups have messages ready;
/// `OverLimit` is a standard queue's answer (SQS Developer Guide, "Amazon
/// SQS message quotas": "If you reach this quota for a FIFO queue, Amazon
/// SQS returns no error messages").
pub async fn l4_fifo_in_flight_limit_is_an_empty_receive<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    let limit = sluice_core::limits::MAX_INFLIGHT;
    // Ten messages per group, so that each receive takes one whole group.
    let total = limit + 10;
    for start in (0..total).step_by(10_000) {
        let batch = (start..(start + 10_000).min(total))
            .map(|i| fifo_msg(&format!("g{}", i / 10), &i.to_string(), "x"))
            .collect();
        h.broker().send_messages("q.fifo", batch).await.unwrap();
    }
    let o = opts(10);
    let mut received = 0;
    while received < limit {
        let got = h
            .broker()
            .receive_messages("q.fifo", o.clone())
            .await
            .unwrap();
        assert!(!got.is_empty());
        received += got.len();
    }
    let empty = h.broker().receive_messages("q.fifo", o.clone()).await;
    assert_eq!(empty.unwrap().len(), 0, "no messages, and no OverLimit");
    h.clock().advance_secs(30);
    assert_eq!(
        h.broker()
            .receive_messages("q.fifo", o)
            .await
            .unwrap()
            .len(),
        10,
        "limit lifts as messages return"
    );
}

/// A3: the secret receipt handles are sealed with is random (not zero)
/// and the same at every call, from every clone of the engine.
pub async fn a3_handle_secret_is_stable<H: Harness>(h: &H) {
    let first = h.broker().handle_secret().await.expect("handle secret");
    let again = h.broker().clone().handle_secret().await.expect("again");
    assert_eq!(first, again);
    assert_ne!(first.0, [0u8; 32]);
}
