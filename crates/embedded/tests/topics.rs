//! SNS topics and subscriptions on disk (rule N1's storage, rules D1, D3,
//! D6): what was answered survives a restart and a crash of the injected
//! storage, a crash in the middle of a change leaves the old file, a full
//! disk or an engine refusing writes refuses topic changes and changes
//! nothing, and a file that cannot be read stops the start.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{EngineError, Subscription, Topic, Topics};
use sluice_core::ManualClock;
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions, FaultStorage, StoreError, TOPICS_FILE};

mod faults;

use faults::{DIR, assert_unavailable, create, runtime, send, settled};

fn topic(key: &str) -> Topic {
    Topic {
        key: key.into(),
        attributes: BTreeMap::from([("DisplayName".into(), key.into())]),
        tags: BTreeMap::new(),
        created_at: 1,
    }
}

fn sub(id: &str, topic: &str, endpoint: &str) -> Subscription {
    Subscription {
        id: id.into(),
        topic: topic.into(),
        protocol: "sqs".into(),
        endpoint: endpoint.into(),
        owner: "000000000000".into(),
        attributes: BTreeMap::new(),
        pending_token: Some("token".into()),
        created_at: 2,
    }
}

/// The engine on the injected storage, never checkpointing nor reopening
/// its storage during a test: after the open only the topics' writes (and
/// the log's, when a test sends) sync anything.
fn open_injected(storage: &FaultStorage) -> EmbeddedBroker {
    let options = EmbeddedOptions {
        checkpoint_interval: Duration::from_secs(3600),
        reopen_interval: Duration::from_secs(3600),
        ..Default::default()
    };
    let clock = Arc::new(ManualClock::default());
    EmbeddedBroker::open_on(Arc::new(storage.clone()), Path::new(DIR), clock, options)
        .expect("open")
        .0
}

fn open_dir(dir: &Path) -> Result<EmbeddedBroker, StoreError> {
    EmbeddedBroker::open(dir, Arc::new(ManualClock::default())).map(|(b, _)| b)
}

/// Topic `t` with subscription `s1`, its token taken away by an update.
async fn stored_pair(b: &EmbeddedBroker) -> (Topic, Subscription) {
    let (t, _) = b.create_topic(topic("t")).await.unwrap();
    b.subscribe(sub("s1", "t", "q1")).await.unwrap();
    let s = b
        .update_subscription("s1", |s: &mut Subscription| -> Result<(), ()> {
            s.pending_token = None;
            Ok(())
        })
        .await
        .unwrap()
        .unwrap();
    (t, s)
}

/// N1, D1: topics and subscriptions, as last changed, are read back by
/// the next start on the same directory; deletions too.
#[tokio::test]
async fn n1_topics_and_subscriptions_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let b = open_dir(dir.path()).unwrap();
    let (t, s) = stored_pair(&b).await;
    b.create_topic(topic("gone")).await.unwrap();
    b.subscribe(sub("s2", "gone", "q1")).await.unwrap();
    b.subscribe(sub("s3", "t", "q3")).await.unwrap();
    b.delete_topic("gone").await.unwrap();
    b.delete_subscription("s3").await.unwrap();
    drop(b);
    assert!(dir.path().join(TOPICS_FILE).is_file());

    let b = open_dir(dir.path()).unwrap();
    assert_eq!(b.list_topics().await.unwrap(), ["t"]);
    assert_eq!(b.get_topic("t").await.unwrap(), t);
    assert_eq!(b.get_subscription("s1").await.unwrap(), s);
    assert_eq!(
        b.subscriptions(None).await.unwrap(),
        std::slice::from_ref(&s)
    );
    // Still idempotent after the restart.
    let (again, created) = b.subscribe(sub("s9", "t", "q1")).await.unwrap();
    assert!(!created);
    assert_eq!(again, s);
}

/// N1: a topics file that cannot be read stops the start, naming the
/// file; a leftover temporary file from a crash does not.
#[tokio::test]
async fn n1_a_topics_file_that_cannot_be_read_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    drop(open_dir(dir.path()).unwrap());
    std::fs::write(dir.path().join("topics.json.tmp"), b"half a wri").unwrap();
    let b = open_dir(dir.path()).unwrap();
    stored_pair(&b).await;
    drop(b);

    let path = dir.path().join(TOPICS_FILE);
    std::fs::write(&path, b"{\"format\": 1, \"topics\": [").unwrap();
    let Err(e) = open_dir(dir.path()) else {
        panic!("a start on an unreadable topics file");
    };
    assert!(matches!(e, StoreError::Topics { .. }), "{e:?}");
    let said = e.to_string();
    assert!(said.contains(&path.display().to_string()), "{said}");
    assert!(said.contains("topics and subscriptions"), "{said}");
}

/// D1 on the injected storage: every answered topic change is in the
/// synced bytes alone (the file and its name, the directory synced), so a
/// crash that drops everything unsynced keeps them.
#[test]
fn d1_answered_topic_changes_survive_a_crash() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_injected(&storage);
        let (t, s) = stored_pair(&b).await;
        let crashed = storage.after_crash();
        drop(b);
        let b = open_injected(&crashed);
        assert_eq!(b.get_topic("t").await.unwrap(), t);
        assert_eq!(b.subscriptions(Some("t")).await.unwrap(), [s]);
    });
}

/// D1: a crash in the middle of a change, before the new file is synced
/// or before its rename is, leaves the file as it was: the change, never
/// answered as done, is not read back, nor is half of it.
#[test]
fn d1_a_crash_in_the_middle_of_a_topic_change_keeps_the_old_file() {
    // The change's syncs: 1 the temporary file, 2 the directory after
    // the rename.
    for crash_at in [1, 2] {
        runtime().block_on(async {
            let storage = FaultStorage::new();
            let b = open_injected(&storage);
            let (t, s) = stored_pair(&b).await;
            settled(&storage).await;
            storage.crash_at_sync(crash_at);
            let e = b.create_topic(topic("u")).await.unwrap_err();
            assert_unavailable(&e, "injected crash");
            assert!(storage.crashed());
            let crashed = storage.after_crash();
            drop(b);
            let b = open_injected(&crashed);
            assert_eq!(b.list_topics().await.unwrap(), ["t"], "crash at {crash_at}");
            assert_eq!(b.get_topic("t").await.unwrap(), t);
            assert_eq!(b.subscriptions(None).await.unwrap(), [s]);
        });
    }
}

/// D3: a change whose file cannot be synced is refused with the
/// retryable answer and changes nothing, neither what is served nor what
/// a restart reads; the next change goes through.
#[test]
fn d3_a_topic_change_that_cannot_be_synced_is_refused_and_changes_nothing() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_injected(&storage);
        let (t, _) = stored_pair(&b).await;
        storage.fail_sync_of("topics.json.tmp");
        let e = b
            .update_topic("t", |t: &mut Topic| -> Result<(), ()> {
                t.tags.insert("k".into(), "v".into());
                Ok(())
            })
            .await
            .unwrap_err();
        assert_unavailable(&e, "injected I/O error");
        assert_eq!(b.get_topic("t").await.unwrap(), t);
        assert_eq!(
            open_injected(&storage.after_crash())
                .get_topic("t")
                .await
                .unwrap(),
            t
        );
        b.create_topic(topic("u")).await.unwrap();
        assert_eq!(b.list_topics().await.unwrap(), ["t", "u"]);
    });
}

/// D6: on a full disk every topic change is refused with the retryable
/// answer and leaves the topics as they were (reads still served); once
/// there is room again, changes go through.
#[test]
fn d6_topic_changes_on_a_full_disk_are_refused_and_change_nothing() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_injected(&storage);
        let (t, s) = stored_pair(&b).await;
        settled(&storage).await;
        storage.set_space(Some(storage.used()));
        let full = "no space left on device";
        assert_unavailable(&b.create_topic(topic("u")).await.unwrap_err(), full);
        assert_unavailable(&b.subscribe(sub("s2", "t", "q2")).await.unwrap_err(), full);
        assert_unavailable(&b.delete_topic("t").await.unwrap_err(), full);
        assert_unavailable(&b.delete_subscription("s1").await.unwrap_err(), full);
        let e = b
            .update_subscription("s1", |s: &mut Subscription| -> Result<(), ()> {
                s.attributes
                    .insert("RawMessageDelivery".into(), "true".into());
                Ok(())
            })
            .await
            .unwrap_err();
        assert_unavailable(&e, full);
        // What needs no write is answered.
        assert_eq!(
            b.create_topic(topic("t")).await.unwrap(),
            (t.clone(), false)
        );
        assert_eq!(b.list_topics().await.unwrap(), ["t"]);
        assert_eq!(
            b.subscriptions(None).await.unwrap(),
            std::slice::from_ref(&s)
        );

        storage.set_space(None);
        b.create_topic(topic("u")).await.unwrap();
        assert_eq!(b.list_topics().await.unwrap(), ["t", "u"]);
        let crashed = storage.after_crash();
        drop(b);
        let b = open_injected(&crashed);
        assert_eq!(b.list_topics().await.unwrap(), ["t", "u"]);
        assert_eq!(b.subscriptions(None).await.unwrap(), [s]);
    });
}

/// D3: while the engine refuses writes after a failed write of its log,
/// topic changes are refused too, with the same answer naming the cause;
/// topics are still read.
#[test]
fn d3_topic_changes_are_refused_while_the_engine_refuses_writes() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_injected(&storage);
        let (t, _) = stored_pair(&b).await;
        create(&b).await;
        storage.fail_sync_of(".wal");
        assert_unavailable(&send(&b, "lost").await.unwrap_err(), "injected I/O error");
        let e = b.create_topic(topic("u")).await.unwrap_err();
        assert_unavailable(&e, "injected I/O error");
        assert!(matches!(e, EngineError::Unavailable(_)));
        assert_eq!(b.list_topics().await.unwrap(), ["t"]);
        assert_eq!(b.get_topic("t").await.unwrap(), t);
    });
}
