//! FIFO queues (rules F1–F5, and R3 for FIFO dead-letter queues).

use sluice_core::ErrorCode;

use super::*;
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

/// F1: a group with a message in flight delivers nothing, even when an
/// earlier message of it is visible again (its visibility was released).
pub async fn f1_a_group_with_a_message_in_flight_delivers_nothing<H: Harness>(h: &H) {
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
    let next = receive(h, "q.fifo", 10).await;
    assert_eq!(
        in_order(&next),
        ["other group"],
        "group g waits for its message in flight"
    );
}
