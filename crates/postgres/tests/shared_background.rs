//! What nodes share besides queues, with two engines on one database as
//! two nodes: alarm records and their compare-and-set (one node saves a
//! state change, so one notifies it), activity totals summed over nodes
//! (rule M1), one active move task per source (rule R7). Without
//! PostgreSQL's binaries every test says SKIPPED and passes.

use sluice_broker::{
    Broker, Coordination, CreateQueue, MoveTask, MoveTaskStatus, NewMessage, StoredAlarm,
};
use sluice_core::ErrorCode;
use sluice_core::attributes::QueueConfig;
use sluice_postgres::{PostgresBroker, testing};

/// Two nodes on a fresh database, or `None` without PostgreSQL.
async fn two_nodes() -> Option<(PostgresBroker, PostgresBroker)> {
    let (_, a, b) = testing::two_nodes().await?;
    Some((a, b))
}

fn alarm(name: &str, source: &str) -> StoredAlarm {
    StoredAlarm {
        name: name.into(),
        source: source.into(),
        definition: r#"{"threshold": 1}"#.into(),
        state: "INSUFFICIENT_DATA".into(),
        reason: "new".into(),
        updated_at: 100,
        history: "[]".into(),
    }
}

/// M2: an alarm put through one node is read through the other; a put
/// replaces only the sources it may (keeping state); a state change is
/// saved once: the second node, evaluating from the same state, is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_alarm_records_shared_and_state_saved_once() {
    let Some((a, b)) = two_nodes().await else {
        return;
    };
    let api = || vec!["api".to_string()];
    assert_eq!(
        a.put_stored_alarm(alarm("x", "api"), api()).await.unwrap(),
        None
    );
    assert_eq!(
        a.put_stored_alarm(alarm("c", "config"), api())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        b.stored_alarms().await.unwrap(),
        vec![alarm("c", "config"), alarm("x", "api")]
    );
    // The API may not replace a config alarm.
    let mut changed = alarm("c", "api");
    changed.definition = r#"{"threshold": 2}"#.into();
    assert_eq!(
        b.put_stored_alarm(changed.clone(), api()).await.unwrap(),
        Some("config".to_string())
    );
    assert_eq!(a.stored_alarms().await.unwrap()[0], alarm("c", "config"));

    let mut ok = alarm("x", "api");
    ok.state = "OK".into();
    ok.updated_at = 200;
    ok.history = r#"[{"at": 200}]"#.into();
    let from = || "INSUFFICIENT_DATA".to_string();
    assert!(a.save_alarm_state(ok.clone(), from(), 100).await.unwrap());
    assert!(
        !b.save_alarm_state(ok.clone(), from(), 100).await.unwrap(),
        "the same change from the same state is saved once"
    );
    let stored = b.stored_alarms().await.unwrap();
    assert_eq!(stored[1], ok);
    // Replacing the definition keeps the state and history.
    let mut redefined = alarm("x", "api");
    redefined.definition = r#"{"threshold": 3}"#.into();
    assert_eq!(b.put_stored_alarm(redefined, api()).await.unwrap(), None);
    let x = &a.stored_alarms().await.unwrap()[1];
    assert_eq!(
        (x.definition.as_str(), x.state.as_str()),
        (r#"{"threshold": 3}"#, "OK")
    );
    a.delete_stored_alarms(vec!["x".into(), "nope".into()])
        .await
        .unwrap();
    assert_eq!(b.stored_alarms().await.unwrap(), vec![alarm("c", "config")]);
}

/// M1: sends through two nodes add up in the totals alarms read; each
/// node's own counters (what /metrics shows) keep only its own; flushing
/// twice adds nothing twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_activity_totals_sum_every_node() {
    let Some((a, b)) = two_nodes().await else {
        return;
    };
    a.create_queue(CreateQueue {
        name: "q".into(),
        config: QueueConfig::default(),
        requested: Default::default(),
        tags: Default::default(),
    })
    .await
    .unwrap();
    let send = |n: usize| {
        (0..n)
            .map(|i| NewMessage {
                body: format!("m{i}"),
                ..Default::default()
            })
            .collect::<Vec<_>>()
    };
    a.send_messages("q", send(2)).await.unwrap();
    b.send_messages("q", send(3)).await.unwrap();
    assert_eq!(
        a.cluster_queue_stats("q").await.unwrap().sent,
        0,
        "nothing flushed yet"
    );
    assert_eq!(a.flush_activity().await.unwrap(), 1);
    assert_eq!(b.flush_activity().await.unwrap(), 1);
    assert_eq!(b.flush_activity().await.unwrap(), 0, "nothing new to add");
    for node in [&a, &b] {
        let cluster = node.cluster_queue_stats("q").await.unwrap();
        assert_eq!((cluster.sent, cluster.counts.visible), (5, 5));
    }
    assert_eq!(a.queue_stats("q").await.unwrap().sent, 2);
    assert_eq!(b.queue_stats("q").await.unwrap().sent, 3);
    a.send_messages("q", send(1)).await.unwrap();
    a.flush_activity().await.unwrap();
    assert_eq!(b.cluster_queue_stats("q").await.unwrap().sent, 6);
}

fn task(handle: &str, started_at: u64) -> MoveTask {
    MoveTask {
        handle: handle.into(),
        source_arn: "arn:aws:sqs:us-east-1:000000000000:dlq".into(),
        destination_arn: None,
        max_per_second: None,
        status: MoveTaskStatus::Running,
        moved: 0,
        to_move: 1,
        failure_reason: None,
        started_at,
    }
}

/// R7: a second active task on a source is refused by the database with
/// the error one node gives, whichever node saves it; once the first one
/// ended, a new one may start; progress of the active one still saves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_one_active_move_task_per_source() {
    let Some((a, b)) = two_nodes().await else {
        return;
    };
    a.save_move_task(task("t1", 1)).await.unwrap();
    let e = b.save_move_task(task("t2", 2)).await.unwrap_err();
    assert_eq!(e.to_sqs().code, ErrorCode::InvalidParameterValue, "{e:?}");
    assert!(e.to_sqs().message.contains("Only one active task"), "{e:?}");
    let mut progress = task("t1", 1);
    progress.moved = 1;
    a.save_move_task(progress.clone()).await.unwrap();
    progress.status = MoveTaskStatus::Completed;
    a.save_move_task(progress).await.unwrap();
    b.save_move_task(task("t2", 2)).await.unwrap();
    let statuses: Vec<_> = a
        .move_tasks()
        .await
        .unwrap()
        .iter()
        .map(|t| t.status)
        .collect();
    assert_eq!(
        statuses,
        [MoveTaskStatus::Running, MoveTaskStatus::Completed]
    );
}

/// A3: two nodes asking for the receipt handles' secret at once get the
/// same one (the first insert wins), and keep getting it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_nodes_share_one_handle_secret() {
    let Some((a, b)) = two_nodes().await else {
        return;
    };
    let (from_a, from_b) = tokio::join!(a.handle_secret(), b.handle_secret());
    let secret = from_a.unwrap();
    assert_eq!(from_b.unwrap(), secret);
    assert_ne!(secret.0, [0u8; 32]);
    assert_eq!(a.handle_secret().await.unwrap(), secret);
}
