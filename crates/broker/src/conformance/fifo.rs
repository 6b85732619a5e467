//! FIFO queues (rules F1–F5, F11–F16, and R3 for FIFO dead-letter queues).

use sluice_core::ErrorCode;

use super::*;
use crate::MetaChange;
use crate::QueueCounts;

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

/// F2, F3: within one SendMessageBatch, an entry repeating an earlier
/// entry's deduplication id is answered with that entry's id and sequence
/// number, and one repeating a stored message's with the stored one's;
/// the others are stored in the request's order, numbers increasing.
pub async fn f2_duplicates_within_one_batch_answer_as_the_first<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    let b = h.broker();
    let first = b
        .send_messages(
            "q.fifo",
            vec![fifo_msg("g", "d1", "a"), fifo_msg("g", "d2", "b")],
        )
        .await
        .unwrap();
    let sent = b
        .send_messages(
            "q.fifo",
            vec![
                fifo_msg("g", "d3", "c"),
                fifo_msg("g", "d1", "again a"),
                fifo_msg("g", "d3", "again c"),
                fifo_msg("g", "d4", "d"),
            ],
        )
        .await
        .unwrap();
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[1], first[0], "a stored message's duplicate");
    assert_eq!(sent[2], sent[0], "an earlier entry's duplicate");
    assert_ne!(sent[3].message_id, sent[0].message_id);
    let numbers: Vec<&str> = [&first[0], &first[1], &sent[0], &sent[3]]
        .iter()
        .map(|m| m.sequence_number.as_deref().unwrap())
        .collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    let got = receive(h, "q.fifo", 10).await;
    assert_eq!(in_order(&got), ["a", "b", "c", "d"]);
    assert_eq!(b.queue_stats("q.fifo").await.unwrap().deduplicated, 2);
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
    // A peek (rule X1) shows the same numbers and the dedup ids, so an
    // export keeps them.
    let peeked = h
        .broker()
        .peek_messages("q.fifo", &crate::MessageFilter::default(), None, 10)
        .await
        .unwrap();
    for (i, m) in peeked.messages.iter().enumerate() {
        let s = sent.iter().find(|s| s.message_id == m.message_id).unwrap();
        assert_eq!(m.sequence_number, s.sequence_number);
        assert_eq!(m.dedup_id.as_deref(), Some(i.to_string().as_str()));
    }
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

/// F1, F15: in a FIFO queue only the latest delivery's handle deletes; an
/// older one has expired, as SQS answers (AWS recorded answer, LocalStack
/// snapshot test_sqs.py::test_fifo_delete_after_visibility_timeout).
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
        .delete_messages("q.fifo", vec![old.receipt_handle.clone()])
        .await
        .unwrap();
    let e = r[0].as_ref().unwrap_err();
    assert_eq!(e.to_sqs().code, ErrorCode::InvalidParameterValue);
    assert_eq!(
        e.to_sqs().message,
        format!(
            "Value {} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.",
            old.receipt_handle
        )
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

/// F13, F14: a group opens as soon as its head is visible again, and a
/// receive takes from it up to the first message still in flight; the
/// reopened group comes after the groups already waiting (AWS recorded
/// answer, LocalStack snapshot
/// test_sqs.py::test_fifo_message_group_visibility_after_terminate_visibility_timeout).
pub async fn f13_a_visible_head_reopens_its_group<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    h.broker()
        .send_messages(
            "q.fifo",
            vec![
                fifo_msg("g", "1", "first"),
                fifo_msg("g", "2", "second"),
                fifo_msg("h", "3", "other group"),
            ],
        )
        .await
        .unwrap();
    let got = receive(h, "q.fifo", 2).await;
    assert_eq!(in_order(&got), ["first", "second"]);
    h.clock().advance_secs(1);
    // "first" is visible again, "second" is still in flight.
    let released = h
        .broker()
        .change_visibility(
            "q.fifo",
            vec![crate::VisibilityChange {
                receipt_handle: got[0].receipt_handle.clone(),
                visibility_timeout: 0,
            }],
        )
        .await
        .unwrap();
    assert!(released[0].is_ok());
    assert_eq!(
        in_order(&receive(h, "q.fifo", 10).await),
        ["other group", "first"],
        "group g up to its message in flight, after the group that waited"
    );
}

/// F13: whichever message of a group is kept in flight longer stops the
/// group there: the messages before it are delivered again, not those after
/// (AWS recorded answer, LocalStack snapshot
/// test_sqs.py::test_fifo_group_visibility_extends_with_change_message_visibility).
pub async fn f13_a_message_kept_in_flight_stops_its_group<H: Harness>(h: &H) {
    for (position, want) in [(0, vec![]), (1, vec!["foo"]), (2, vec!["foo", "bar"])] {
        let q = format!("q{position}.fifo");
        create_fifo(h, &q, &[("VisibilityTimeout", "1")]).await;
        h.broker()
            .send_messages(
                &q,
                ["foo", "bar", "baz"]
                    .iter()
                    .map(|b| fifo_msg("1", b, b))
                    .collect(),
            )
            .await
            .unwrap();
        let got = receive(h, &q, 5).await;
        assert_eq!(in_order(&got), ["foo", "bar", "baz"]);
        let changed = h
            .broker()
            .change_visibility(
                &q,
                vec![crate::VisibilityChange {
                    receipt_handle: got[position].receipt_handle.clone(),
                    visibility_timeout: 4,
                }],
            )
            .await
            .unwrap();
        assert!(changed[0].is_ok());
        h.clock().advance_secs(2);
        assert_eq!(
            in_order(&receive(h, &q, 5).await),
            want,
            "kept at {position}"
        );
    }
}

/// F13: deleting a group's head opens it only if its next message is not in
/// flight (AWS recorded answer, LocalStack snapshot
/// test_sqs.py::test_fifo_message_group_visibility_after_partial_delete).
pub async fn f13_deleting_the_head_opens_the_group_only_when_the_next_is_visible<H: Harness>(
    h: &H,
) {
    create_fifo(h, "q.fifo", &[]).await;
    h.broker()
        .send_messages(
            "q.fifo",
            vec![
                fifo_msg("g1", "1", "g1-m1"),
                fifo_msg("g2", "2", "g2-m1"),
                fifo_msg("g1", "3", "g1-m2"),
                fifo_msg("g1", "4", "g1-m3"),
                fifo_msg("g3", "5", "g3-m1"),
            ],
        )
        .await
        .unwrap();
    let got = receive(h, "q.fifo", 2).await;
    assert_eq!(in_order(&got), ["g1-m1", "g1-m2"]);
    let delete = |handle: &str| {
        h.broker()
            .delete_messages("q.fifo", vec![handle.to_string()])
    };
    assert!(delete(&got[0].receipt_handle).await.unwrap()[0].is_ok());
    assert_eq!(
        in_order(&receive_vt(h, "q.fifo", 10, 0).await),
        ["g2-m1", "g3-m1"],
        "g1-m2 is still in flight"
    );
    assert!(delete(&got[1].receipt_handle).await.unwrap()[0].is_ok());
    h.clock().advance_secs(1);
    let all = receive(h, "q.fifo", 10).await;
    assert!(in_order(&all).contains(&"g1-m3"), "{:?}", in_order(&all));
}

/// F14: groups take turns by when their head became receivable: a group
/// released by a visibility timeout (or a receive with a zero timeout) goes
/// behind the groups already waiting (AWS recorded answer, LocalStack
/// snapshot test_sqs.py::test_fifo_receive_message_visibility_timeout_shared_in_group
/// and test_fifo_receive_message_with_zero_visibility_timeout).
pub async fn f14_released_groups_go_behind_waiting_ones<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[("VisibilityTimeout", "1")]).await;
    let mut msgs: Vec<NewMessage> = (1..=4)
        .map(|i| fifo_msg("g1", &format!("1-{i}"), &format!("g1-m{i}")))
        .collect();
    msgs.push(fifo_msg("g2", "2-1", "g2-m1"));
    msgs.push(fifo_msg("g3", "3-1", "g3-m1"));
    h.broker().send_messages("q.fifo", msgs).await.unwrap();
    h.clock().advance_secs(1);
    assert_eq!(in_order(&receive(h, "q.fifo", 2).await), ["g1-m1", "g1-m2"]);
    h.clock().advance_ms(10);
    assert_eq!(in_order(&receive(h, "q.fifo", 1).await), ["g2-m1"]);
    h.clock().advance_secs(2);
    assert_eq!(
        in_order(&receive_vt(h, "q.fifo", 10, 0).await),
        ["g3-m1", "g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1"]
    );
    // Released by that zero-timeout receive: ahead of a group sent since.
    h.clock().advance_ms(10);
    h.broker()
        .send_messages("q.fifo", vec![fifo_msg("g4", "4-1", "g4-m1")])
        .await
        .unwrap();
    h.clock().advance_ms(10);
    let again = receive(h, "q.fifo", 10).await;
    assert_eq!(again.len(), 7);
    assert_eq!(again[6].body, "g4-m1");
}

/// F11: a purge also ends the deduplication window (AWS recorded answer,
/// LocalStack test_sqs.py::test_purge_queue_clears_fifo_deduplication_cache).
pub async fn f11_purge_ends_the_deduplication_window<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    let first = h
        .broker()
        .send_messages("q.fifo", vec![fifo_msg("g", "d", "message-1")])
        .await
        .unwrap();
    h.broker().purge_queue("q.fifo").await.unwrap();
    let second = h
        .broker()
        .send_messages("q.fifo", vec![fifo_msg("g", "d", "message-2")])
        .await
        .unwrap();
    assert_ne!(second[0].message_id, first[0].message_id);
    assert_eq!(in_order(&receive(h, "q.fifo", 10).await), ["message-2"]);
}

/// F12: the deduplication scope given at creation keeps governing after
/// SetQueueAttributes changes it, either way (AWS recorded answer,
/// LocalStack snapshot test_sqs.py::test_fifo_change_to_high_throughput_after_creation
/// and test_fifo_change_to_regular_throughput_after_creation).
pub async fn f12_deduplication_scope_is_the_one_given_at_creation<H: Harness>(h: &H) {
    let high = [
        ("DeduplicationScope", "messageGroup"),
        ("FifoThroughputLimit", "perMessageGroupId"),
    ];
    let regular = [
        ("DeduplicationScope", "queue"),
        ("FifoThroughputLimit", "perQueue"),
    ];
    create_fifo(h, "queue.fifo", &[]).await;
    create_fifo(h, "group.fifo", &high).await;
    for (q, now) in [("queue.fifo", &high), ("group.fifo", &regular)] {
        let meta = h
            .broker()
            .update_queue(q, MetaChange::SetAttributes(attrs(now)))
            .await
            .unwrap();
        assert_eq!(
            meta.config.to_attributes()["DeduplicationScope"],
            now[0].1,
            "the attribute changes"
        );
        h.broker()
            .send_messages(
                q,
                vec![fifo_msg("a", "same", "1"), fifo_msg("b", "same", "2")],
            )
            .await
            .unwrap();
    }
    assert_eq!(counts(h, "queue.fifo").await.visible, 1, "still one scope");
    assert_eq!(counts(h, "group.fifo").await.visible, 2, "still per group");
}

/// F16: sequence numbers are 20-digit decimals as SQS writes them, not a
/// zero-padded counter (AWS recorded answer shape, LocalStack
/// test_sqs.py::test_fifo_sequence_number_increases).
pub async fn f16_sequence_numbers_look_like_sqs<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    let sent = h
        .broker()
        .send_messages(
            "q.fifo",
            vec![fifo_msg("g", "1", "a"), fifo_msg("g", "2", "b")],
        )
        .await
        .unwrap();
    for s in &sent {
        let n = s.sequence_number.as_deref().unwrap();
        assert_eq!(n.len(), 20, "{n}");
        assert!(
            n.bytes().all(|b| b.is_ascii_digit()) && !n.starts_with('0'),
            "{n}"
        );
    }
}

/// M1 (SQS Developer Guide, "Available CloudWatch metrics for Amazon SQS":
/// ApproximateNumberOfGroupsWithInflightMessages and
/// NumberOfDeduplicatedSentMessages, FIFO queues): the groups with a
/// message in flight, counted once however many of theirs are, and the
/// sends answered as duplicates; a standard queue has no groups in flight.
pub async fn m1_fifo_groups_in_flight_and_deduplicated_sends<H: Harness>(h: &H) {
    create_fifo(h, "q.fifo", &[]).await;
    let b = h.broker();
    let sent = vec![
        fifo_msg("g1", "a", "a"),
        fifo_msg("g1", "b", "b"),
        fifo_msg("g2", "c", "c"),
        fifo_msg("g3", "d", "d"),
    ];
    b.send_messages("q.fifo", sent).await.unwrap();
    let again = vec![fifo_msg("g1", "a", "a"), fifo_msg("g2", "c", "c")];
    b.send_messages("q.fifo", again).await.unwrap();
    let stats = b.queue_stats("q.fifo").await.unwrap();
    assert_eq!((stats.sent, stats.deduplicated), (4, 2));
    assert_eq!(stats.groups_in_flight, 0);

    let first = b.receive_messages("q.fifo", opts(2)).await.unwrap();
    assert_eq!(in_order(&first), ["a", "b"], "one group's two messages");
    assert_eq!(b.queue_stats("q.fifo").await.unwrap().groups_in_flight, 1);
    let second = b.receive_messages("q.fifo", opts(1)).await.unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(b.queue_stats("q.fifo").await.unwrap().groups_in_flight, 2);
    let handles = first.into_iter().map(|m| m.receipt_handle).collect();
    b.delete_messages("q.fifo", handles).await.unwrap();
    assert_eq!(b.queue_stats("q.fifo").await.unwrap().groups_in_flight, 1);
    h.clock().advance_secs(30);
    assert_eq!(
        b.queue_stats("q.fifo").await.unwrap().groups_in_flight,
        0,
        "visible again"
    );

    create(h, "std", &[]).await;
    b.send_messages("std", vec![msg("x")]).await.unwrap();
    b.receive_messages("std", opts(1)).await.unwrap();
    assert_eq!(b.queue_stats("std").await.unwrap().groups_in_flight, 0);
}
