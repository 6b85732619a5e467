//! Dead-letter queues and redrive (rules R2–R7) and sluice's own DLQ
//! tools: peek and nack (rules X1, X2).

use sluice_core::message::{AttributeValue, MessageAttributeValue, MessageAttributes};
use sluice_core::{Clock, ErrorCode};

use super::*;
use crate::{Coordination, MessageFilter, REPLAY_COUNT_ATTRIBUTE, Redrive};

/// A redrive of up to `max` messages back to their sources.
fn to_sources(max: usize) -> Redrive {
    Redrive {
        max,
        ..Default::default()
    }
}

/// A redrive of up to `max` messages into `queue`.
fn to_queue(queue: &str, max: usize) -> Redrive {
    Redrive {
        destination: Some(queue.into()),
        max,
        ..Default::default()
    }
}
use crate::{NewMessage, QueueCounts};

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

/// R14 (AWS recorded answer, LocalStack snapshot test_sqs.py::
/// test_dead_letter_queue_message_attributes): a dead-lettered message keeps
/// its AWSTraceHeader next to the DeadLetterQueueSourceArn it gains.
pub async fn r14_dead_letter_keeps_the_trace_header<H: Harness>(h: &H) {
    const TRACE: &str =
        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    let mut system = MessageAttributes::new();
    system.insert(
        "AWSTraceHeader".into(),
        MessageAttributeValue {
            data_type: "String".into(),
            value: AttributeValue::String(TRACE.into()),
        },
    );
    h.broker()
        .send_messages(
            "src",
            vec![NewMessage {
                body: "traced".into(),
                system_attributes: system,
                ..Default::default()
            }],
        )
        .await
        .unwrap();
    assert_eq!(receive_vt(h, "src", 1, 0).await.len(), 1);
    assert!(
        receive_vt(h, "src", 1, 0).await.is_empty(),
        "moved, not returned"
    );
    let dead = receive(h, "dlq", 1).await;
    assert_eq!(dead.len(), 1);
    let trace = dead[0]
        .system_attributes
        .get("AWSTraceHeader")
        .expect("trace header kept");
    assert_eq!(trace.value, AttributeValue::String(TRACE.into()));
    assert!(
        dead[0]
            .system_attributes
            .contains_key("DeadLetterQueueSourceArn")
    );
    assert_eq!(dead[0].receive_count, 2);
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

/// R12: a queue that names itself as its dead-letter queue (AWS accepts
/// the policy) keeps delivering its messages past maxReceiveCount, rather
/// than holding them counted but never delivered.
pub async fn r12_a_queue_that_is_its_own_dlq_keeps_delivering<H: Harness>(h: &H) {
    create(h, "loop", &[("RedrivePolicy", &redrive("loop", 1))]).await;
    send(h, "loop", &["again"]).await;
    for expected_count in 1..=3 {
        let got = receive_vt(h, "loop", 1, 0).await;
        assert_eq!(got.len(), 1, "receive {expected_count}");
        assert_eq!(got[0].receive_count, expected_count);
    }
    assert_eq!(counts(h, "loop").await.in_flight, 0);
}

/// R10: a redrive into a destination queue that does not exist moves
/// nothing and says why with AWS's FailureReason, the bare error code
/// (AWS recorded answer, LocalStack snapshot test_sqs_move_task.py::
/// test_move_task_delete_destination_queue_while_running).
pub async fn r10_missing_destination_is_named_by_its_code<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    dead_letter(h, "src", "stuck").await;
    let outcome = h
        .broker()
        .redrive_messages("dlq", &to_queue("gone", 10))
        .await
        .unwrap();
    assert_eq!((outcome.moved, outcome.unmovable), (0, 1));
    assert_eq!(
        outcome.reason.as_deref(),
        Some("AWS.SimpleQueueService.NonExistentQueue")
    );
    assert_eq!(counts(h, "dlq").await.visible, 1, "nothing lost");
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
    let outcome = h
        .broker()
        .redrive_messages("dlq", &to_sources(10))
        .await
        .unwrap();
    assert_eq!((outcome.moved, outcome.unmovable), (2, 0));
    assert_eq!(counts(h, "dlq").await, QueueCounts::default());
    for (q, body) in [("s1", "one"), ("s2", "two")] {
        let got = receive(h, q, 10).await;
        assert_eq!(bodies(&got), [body]);
        assert_eq!(got[0].receive_count, 1, "a fresh message");
        assert!(!before.contains(&got[0].message_id), "a new message id");
        assert!(
            got[0]
                .system_attributes
                .keys()
                .all(|k| k != "DeadLetterQueueSourceArn" && !k.starts_with("Sluice.")),
            "the DLQ's provenance stays behind: {:?}",
            got[0].system_attributes
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
        .redrive_messages("dlq", &to_queue("elsewhere", 1))
        .await
        .unwrap();
    assert_eq!(step.moved, 1);
    assert_eq!(counts(h, "dlq").await.visible, 1);
    let step = h
        .broker()
        .redrive_messages("dlq", &to_queue("elsewhere", 1))
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
    let outcome = h
        .broker()
        .redrive_messages("dlq", &to_sources(10))
        .await
        .unwrap();
    assert_eq!((outcome.moved, outcome.unmovable), (0, 1));
    assert!(outcome.reason.is_some());
    dead_letter(h, "src", "orphan").await;
    h.broker().delete_queue("src").await.unwrap();
    let outcome = h
        .broker()
        .redrive_messages("dlq", &to_sources(10))
        .await
        .unwrap();
    assert_eq!((outcome.moved, outcome.unmovable), (0, 2));
    assert_eq!(counts(h, "dlq").await.visible, 2, "nothing lost");
    // A movable message behind the unmovable ones still moves, within
    // `max`, and a dry run reports exactly what the real run does.
    create(h, "src2", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    dead_letter(h, "src2", "movable").await;
    let mut dry = to_sources(1);
    dry.dry_run = true;
    let preview = h.broker().redrive_messages("dlq", &dry).await.unwrap();
    let real = h
        .broker()
        .redrive_messages("dlq", &to_sources(1))
        .await
        .unwrap();
    assert_eq!(
        (preview.moved, preview.unmovable, preview.reason.is_some()),
        (1, 2, true)
    );
    assert_eq!(
        (real.moved, real.unmovable),
        (preview.moved, preview.unmovable)
    );
    assert_eq!(counts(h, "src2").await.visible, 1);
    assert_eq!(counts(h, "dlq").await.visible, 2);
}

/// R7: move task records are kept and listed newest first. (A source has
/// one active task at a time: the first one ends before the next starts.)
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
    let mut done = task("old", 1);
    done.status = crate::MoveTaskStatus::Completed;
    done.moved = 5;
    h.broker().save_move_task(done.clone()).await.unwrap();
    h.broker().save_move_task(task("new", 2)).await.unwrap();
    let tasks = h.broker().move_tasks().await.unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0].handle, "new");
    assert_eq!(tasks[1], done);
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
        class: None,
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
        e.to_sqs().code,
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
    assert_eq!(e.to_sqs().code, ErrorCode::InvalidParameterValue);
    assert_eq!(
        counts(h, "plain").await.in_flight,
        1,
        "a refused nack changes nothing"
    );
}

/// X3: a selective redrive moves only matching messages, at most N, can
/// dry-run, marks replays with a count and keeps their message ids, and
/// refuses a message replayed too often so an unfixed bug cannot loop
/// forever.
pub async fn x3_selective_redrive_filters_marks_and_bounds_replays<H: Harness>(h: &H) {
    create(h, "dlq", &[]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("dlq", 1))]).await;
    for body in ["bug A one", "bug B", "bug A two", "bug A three"] {
        dead_letter(h, "src", body).await;
    }
    let only_a = |max, dry_run| Redrive {
        max,
        dry_run,
        mark_replay: true,
        max_replays: Some(2),
        filter: MessageFilter {
            body_contains: Some("bug A".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let dry = h
        .broker()
        .redrive_messages("dlq", &only_a(2, true))
        .await
        .unwrap();
    assert_eq!(
        (dry.moved, dry.message_ids.len()),
        (2, 2),
        "a dry run reports what would move"
    );
    assert_eq!(counts(h, "dlq").await.visible, 4, "and moves nothing");
    let done = h
        .broker()
        .redrive_messages("dlq", &only_a(2, false))
        .await
        .unwrap();
    assert_eq!(
        done.message_ids, dry.message_ids,
        "the same messages as the dry run"
    );
    let replayed = receive_vt(h, "src", 10, 0).await;
    assert_eq!(bodies(&replayed), ["bug A one", "bug A two"]);
    let mut ids: Vec<String> = replayed.into_iter().map(|m| m.message_id).collect();
    let mut moved = done.message_ids.clone();
    ids.sort();
    moved.sort();
    assert_eq!(
        ids, moved,
        "a replay keeps its message id (rule I1's keys match)"
    );
    assert_eq!(counts(h, "dlq").await.visible, 2);

    // "bug A one" keeps failing: back to the DLQ and replayed until refused.
    for replay in 1..=2u32 {
        let m = receive_vt(h, "src", 10, 0).await;
        assert!(
            m.is_empty(),
            "both were over maxReceiveCount and went back to the DLQ"
        );
        let marks: Vec<String> = h
            .broker()
            .peek_messages(
                "dlq",
                &MessageFilter {
                    body_contains: Some("bug A o".into()),
                    ..Default::default()
                },
                None,
                10,
            )
            .await
            .unwrap()
            .messages
            .iter()
            .map(|m| match &m.attributes[REPLAY_COUNT_ATTRIBUTE].value {
                AttributeValue::String(n) => n.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(marks, [replay.to_string()]);
        let again = h
            .broker()
            .redrive_messages("dlq", &only_a(10, false))
            .await
            .unwrap();
        if replay == 1 {
            assert_eq!(again.moved, 3, "bug A one, two and three");
        } else {
            assert_eq!(again.refused, 2, "one and two were replayed twice already");
            assert_eq!(again.moved, 1, "three had been replayed once");
            assert!(again.reason.unwrap().contains("replayed 2 times"));
        }
        receive_vt(h, "src", 10, 0).await;
    }
}

/// R2, R4, R7: a chain of DLQs. A message that fails in its source and then
/// in the first DLQ (which has its own RedrivePolicy) reaches the second,
/// naming the first as its source; a redrive to sources sends it back one
/// step, to the first DLQ.
pub async fn r2_r7_dead_letter_queue_chain<H: Harness>(h: &H) {
    create(h, "last", &[]).await;
    create(h, "first", &[("RedrivePolicy", &redrive("last", 3))]).await;
    create(h, "src", &[("RedrivePolicy", &redrive("first", 1))]).await;
    dead_letter(h, "src", "doomed").await;
    assert_eq!(counts(h, "first").await.visible, 1);
    let id = receive_vt(h, "first", 1, 0).await.remove(0).message_id;
    // Its receive count came along (rule R4): 2 now, so one more receive
    // in the first DLQ and the next moves it on.
    assert_eq!(receive_vt(h, "first", 1, 0).await.len(), 1);
    assert!(receive(h, "first", 1).await.is_empty());
    assert_eq!(counts(h, "first").await, QueueCounts::default());
    let peeked = h
        .broker()
        .peek_messages("last", &MessageFilter::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(peeked.messages.len(), 1);
    let m = &peeked.messages[0];
    assert_eq!(m.message_id, id, "the id survives both moves");
    assert_eq!(
        m.system_attributes
            .get("DeadLetterQueueSourceArn")
            .map(|v| &v.value),
        Some(&AttributeValue::String(
            "arn:aws:sqs:us-east-1:000000000000:first".into()
        )),
        "the source is the queue it last failed in"
    );
    let outcome = h
        .broker()
        .redrive_messages("last", &to_sources(10))
        .await
        .unwrap();
    assert_eq!(outcome.moved, 1);
    assert_eq!(counts(h, "first").await.visible, 1);
    assert_eq!(counts(h, "src").await, QueueCounts::default());
}

/// X1: peeks racing receives and deletes never change what consumers see:
/// every message is received exactly once, receive counts count receives
/// only, and a peek shows each message at most once per page.
pub async fn x1_peek_racing_receives_changes_nothing<H: Harness>(h: &H) {
    create(h, "busy", &[]).await;
    let names: Vec<String> = (0..200).map(|i| format!("m{i:03}")).collect();
    for chunk in names.chunks(10) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        send(h, "busy", &refs).await;
    }
    let peeker = {
        let broker = h.broker().clone();
        tokio::spawn(async move {
            let mut pages = 0;
            loop {
                let page = broker
                    .peek_messages("busy", &MessageFilter::default(), None, 1000)
                    .await
                    .expect("peek");
                let mut ids: Vec<&str> = page
                    .messages
                    .iter()
                    .map(|m| m.message_id.as_str())
                    .collect();
                let n = ids.len();
                ids.sort_unstable();
                ids.dedup();
                assert_eq!(ids.len(), n, "a page shows a message once");
                assert!(
                    page.messages.iter().all(|m| m.receive_count <= 1),
                    "peeks add no receives"
                );
                pages += 1;
                if page.messages.is_empty() {
                    return pages;
                }
                tokio::task::yield_now().await;
            }
        })
    };
    let mut received = Vec::new();
    loop {
        let got = receive_vt(h, "busy", 10, 300).await;
        if got.is_empty() {
            break;
        }
        for m in &got {
            assert_eq!(m.receive_count, 1, "{} received once", m.body);
        }
        let handles = got.iter().map(|m| m.receipt_handle.clone()).collect();
        let deleted = h.broker().delete_messages("busy", handles).await.unwrap();
        assert!(deleted.iter().all(Result::is_ok));
        received.extend(got.into_iter().map(|m| m.body));
        tokio::task::yield_now().await;
    }
    let pages = peeker.await.expect("peeker");
    assert!(pages >= 1);
    received.sort();
    assert_eq!(received, names, "each message received exactly once");
}
