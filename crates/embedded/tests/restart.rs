//! Durable engine restarts (rule D1) around dead-letter moves (rule R2).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, Coordination, CreateQueue, NewMessage, ReceiveOptions};
use sluice_core::ManualClock;
use sluice_core::attributes::QueueConfig;
use sluice_embedded::EmbeddedBroker;

async fn create(b: &EmbeddedBroker, name: &str, attrs: &[(&str, &str)]) {
    let requested: BTreeMap<String, String> = attrs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    b.create_queue(CreateQueue {
        name: name.into(),
        config: QueueConfig::for_create(name, &requested).unwrap(),
        requested,
        tags: BTreeMap::new(),
    })
    .await
    .unwrap();
}

fn receive_opts() -> ReceiveOptions {
    ReceiveOptions {
        max_messages: 10,
        visibility_timeout: Some(0),
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

/// D1, R2: a message moved to the DLQ is in the DLQ after a restart, with
/// its receive count, and not in its source.
#[tokio::test]
async fn d1_dead_letter_move_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    {
        let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
        create(&b, "dlq", &[]).await;
        let policy = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
        create(&b, "src", &[("RedrivePolicy", policy)]).await;
        b.send_messages(
            "src",
            vec![NewMessage {
                body: "poison".into(),
                ..Default::default()
            }],
        )
        .await
        .unwrap();
        assert_eq!(
            b.receive_messages("src", receive_opts())
                .await
                .unwrap()
                .len(),
            1
        );
        assert!(
            b.receive_messages("src", receive_opts())
                .await
                .unwrap()
                .is_empty(),
            "moved"
        );
    }
    let (b, stats) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
    assert_eq!((stats.queues, stats.messages), (2, 1));
    assert_eq!(b.queue_counts("src").await.unwrap().visible, 0);
    let got = b.receive_messages("dlq", receive_opts()).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body, "poison");
    assert_eq!(got[0].receive_count, 2);
    assert!(
        got[0]
            .system_attributes
            .contains_key("DeadLetterQueueSourceArn")
    );
}

/// D1: queue and message ids are never reused after a restart, so a receipt
/// handle from before it never names another message.
#[tokio::test]
async fn d1_old_handles_never_name_new_messages() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let old_handle = {
        let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
        create(&b, "q", &[]).await;
        b.send_messages(
            "q",
            vec![NewMessage {
                body: "first".into(),
                ..Default::default()
            }],
        )
        .await
        .unwrap();
        let got = b.receive_messages("q", receive_opts()).await.unwrap();
        b.delete_messages("q", vec![got[0].receipt_handle.clone()])
            .await
            .unwrap();
        b.delete_queue("q").await.unwrap();
        got[0].receipt_handle.clone()
    };
    let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
    create(&b, "q", &[]).await;
    b.send_messages(
        "q",
        vec![NewMessage {
            body: "second".into(),
            ..Default::default()
        }],
    )
    .await
    .unwrap();
    b.receive_messages("q", receive_opts()).await.unwrap();
    let r = b.delete_messages("q", vec![old_handle]).await.unwrap();
    assert!(
        r[0].is_err(),
        "the old queue's handle is foreign to the new queue"
    );
    assert_eq!(
        b.queue_counts("q").await.unwrap().visible,
        1,
        "the new message is untouched"
    );
}

/// D1, F2: the deduplication window survives a restart, also for a deleted
/// message, and FIFO order continues across it.
#[tokio::test]
async fn d1_fifo_dedup_window_and_order_survive_restart() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let fifo = |group: &str, dedup: &str, body: &str| NewMessage {
        body: body.into(),
        group_id: Some(group.into()),
        dedup_id: Some(dedup.into()),
        ..Default::default()
    };
    let first = {
        let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
        create(&b, "q.fifo", &[("FifoQueue", "true")]).await;
        let sent = b
            .send_messages(
                "q.fifo",
                vec![
                    fifo("g", "d1", "one"),
                    fifo("g", "d2", "two"),
                    fifo("g", "d3", "three"),
                ],
            )
            .await
            .unwrap();
        let got = b
            .receive_messages(
                "q.fifo",
                ReceiveOptions {
                    max_messages: 1,
                    visibility_timeout: Some(30),
                    wait: Duration::ZERO,
                    attempt_id: None,
                },
            )
            .await
            .unwrap();
        b.delete_messages("q.fifo", vec![got[0].receipt_handle.clone()])
            .await
            .unwrap();
        sent
    };
    clock.advance_secs(60);
    let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
    let again = b
        .send_messages("q.fifo", vec![fifo("g", "d1", "one")])
        .await
        .unwrap();
    assert_eq!(
        again[0], first[0],
        "deduplicated against a deleted message from before the restart"
    );
    let got = b.receive_messages("q.fifo", receive_opts()).await.unwrap();
    let bodies: Vec<&str> = got.iter().map(|m| m.body.as_str()).collect();
    assert_eq!(bodies, ["two", "three"]);
    assert_eq!(got[0].sequence_number, first[1].sequence_number);
    clock.advance_secs(240);
    let fresh = b
        .send_messages("q.fifo", vec![fifo("g", "d1", "one")])
        .await
        .unwrap();
    assert_ne!(
        fresh[0].message_id, first[0].message_id,
        "the window ended five minutes after the first send"
    );
}

/// D1, R7: move task records survive a restart.
#[tokio::test]
async fn d1_move_tasks_survive_restart() {
    use sluice_broker::{Coordination, MoveTask, MoveTaskStatus};
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let task = MoveTask {
        handle: "h1".into(),
        source_arn: "arn:aws:sqs:us-east-1:000000000000:dlq".into(),
        destination_arn: Some("arn:aws:sqs:us-east-1:000000000000:q".into()),
        max_per_second: None,
        status: MoveTaskStatus::Running,
        moved: 3,
        to_move: 10,
        failure_reason: None,
        started_at: 42,
    };
    {
        let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
        b.save_move_task(task.clone()).await.unwrap();
    }
    let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock)).unwrap();
    assert_eq!(b.move_tasks().await.unwrap(), vec![task]);
}

/// D1, X2, X7: a consumer's failure reason and its failures per class
/// survive a restart: the second failure of a class routed at two moves the
/// message, though the first was counted before the restart.
#[tokio::test]
async fn d1_failure_reasons_and_class_counts_survive_restart() {
    use sluice_broker::{MessageFilter, Nack};
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let infra = |reason: &str| Nack {
        reason: Some(reason.into()),
        class: Some("infra".into()),
        permanent: false,
        retry_after_seconds: Some(60),
    };
    let opts = ReceiveOptions {
        visibility_timeout: Some(30),
        ..receive_opts()
    };
    {
        let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
        create(&b, "dlq", &[]).await;
        let routes = r#"[{"class":"infra","deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":2}]"#;
        create(&b, "q", &[("SluiceDeadLetterRoutes", routes)]).await;
        b.send_messages(
            "q",
            vec![NewMessage {
                body: "x".into(),
                ..Default::default()
            }],
        )
        .await
        .unwrap();
        let got = b.receive_messages("q", opts.clone()).await.unwrap();
        b.nack_message("q", &got[0].receipt_handle, infra("downstream 503"))
            .await
            .unwrap();
    }
    let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
    let page = b
        .peek_messages("q", &MessageFilter::default(), None, 10)
        .await
        .unwrap();
    let m = &page.messages[0];
    assert_eq!(m.failure_reason.as_deref(), Some("downstream 503"));
    assert_eq!(m.failure_class.as_deref(), Some("infra"));
    assert_eq!(m.state, "in_flight", "the retry delay survived too");
    clock.advance_secs(60);
    let got = b.receive_messages("q", opts).await.unwrap();
    b.nack_message("q", &got[0].receipt_handle, infra("downstream 503 again"))
        .await
        .unwrap();
    let dead = b
        .peek_messages("dlq", &MessageFilter::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(
        dead.messages.len(),
        1,
        "two infra failures, one before the restart"
    );
    assert_eq!(dead.messages[0].failure_class.as_deref(), Some("infra"));
}

/// D1, X8: an expired message held for the archive and not yet forgotten
/// (a crash between writing the archive and the delete) is held again
/// after a restart, with its data; once forgotten it stays gone.
#[tokio::test]
async fn d1_x8_expired_messages_held_for_the_archive_survive_restart() {
    use sluice_broker::ExpiredMessages;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let held_before = {
        let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
        let keep = [
            ("MessageRetentionPeriod", "60"),
            ("SluiceArchiveExpired", "true"),
        ];
        create(&b, "q", &keep).await;
        let messages = ["a", "b"].map(|body| NewMessage {
            body: body.into(),
            ..Default::default()
        });
        b.send_messages("q", messages.to_vec()).await.unwrap();
        clock.advance_secs(61);
        b.sweep();
        let held = b.expired_messages(10, &[]).await.unwrap();
        assert_eq!(held.len(), 2);
        b.forget_archived("q", &[held[0].message.position])
            .await
            .unwrap();
        held
    };
    let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
    let counts = b.queue_counts("q").await.unwrap();
    assert_eq!(counts.visible, 0, "still out of the queue");
    let again = b.expired_messages(10, &[]).await.unwrap();
    assert_eq!(again.len(), 1, "the forgotten one stays gone: {again:?}");
    assert_eq!(
        again[0].message.message_id,
        held_before[1].message.message_id
    );
    assert_eq!(again[0].message.body, "b");
}

/// A3: the receipt handles' secret is kept in the store: the same after a
/// restart, another in another data directory, and one per in-memory engine.
#[tokio::test]
async fn a3_handle_secret_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let first = {
        let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
        b.handle_secret().await.unwrap()
    };
    let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
    assert_eq!(b.handle_secret().await.unwrap(), first);
    let other = tempfile::tempdir().unwrap();
    let (b, _) = EmbeddedBroker::open(other.path(), Arc::new(clock.clone())).unwrap();
    assert_ne!(b.handle_secret().await.unwrap(), first);
    let m1 = EmbeddedBroker::in_memory(Arc::new(clock.clone()));
    let m2 = EmbeddedBroker::in_memory(Arc::new(clock));
    assert_ne!(
        m1.handle_secret().await.unwrap(),
        m2.handle_secret().await.unwrap()
    );
}

/// A6, D1: the policy the access check reads (kept beside the queue's
/// lock, not under it) is the one set, on creation and by
/// SetQueueAttributes, after a restart too.
#[tokio::test]
async fn a6_queue_policy_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let created = r#"{"Version":"2012-10-17","Statement":[]}"#;
    let changed = r#"{"Version":"2012-10-17","Id":"changed","Statement":[]}"#;
    {
        let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
        create(&b, "made-with", &[("Policy", created)]).await;
        create(&b, "changed", &[("Policy", created)]).await;
        let set = [("Policy".to_string(), changed.to_string())];
        b.update_queue(
            "changed",
            sluice_broker::MetaChange::SetAttributes(set.into()),
        )
        .await
        .unwrap();
        assert_policies(&b, created, changed).await;
    }
    let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock)).unwrap();
    assert_policies(&b, created, changed).await;
}

/// The queue `made-with` has `created` for its policy, `changed` has
/// `changed`.
async fn assert_policies(b: &EmbeddedBroker, created: &str, changed: &str) {
    for (queue, policy) in [("made-with", created), ("changed", changed)] {
        assert_eq!(
            b.queue_policy(queue).await.unwrap().as_deref(),
            Some(policy),
            "{queue}"
        );
    }
}
