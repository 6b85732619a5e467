//! Online backups of the durable engine (rule D7): taken while sends go
//! on, opened as a data directory of their own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, CreateQueue, NewMessage, ReceiveOptions, Subscription, Topic, Topics};
use sluice_core::ErrorCode;
use sluice_core::SystemClock;
use sluice_core::attributes::QueueConfig;
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions, TOPICS_FILE};

fn open(dir: &Path) -> EmbeddedBroker {
    let options = EmbeddedOptions {
        // Checkpoints often, so that the data spans many segments and some
        // are deleted while the backup runs.
        checkpoint_interval: Duration::from_millis(5),
        ..Default::default()
    };
    EmbeddedBroker::open_with(dir, Arc::new(SystemClock), options)
        .expect("open")
        .0
}

async fn create(b: &EmbeddedBroker, name: &str) {
    b.create_queue(CreateQueue {
        name: name.into(),
        config: QueueConfig::for_create(name, &BTreeMap::new()).expect("config"),
        requested: BTreeMap::new(),
        tags: BTreeMap::new(),
    })
    .await
    .expect("create");
}

fn body(n: usize) -> String {
    format!("message {n} {}", "x".repeat(500))
}

async fn send(b: &EmbeddedBroker, from: usize, to: usize) {
    for start in (from..to).step_by(10) {
        let batch = (start..(start + 10).min(to))
            .map(|n| NewMessage {
                body: body(n),
                ..Default::default()
            })
            .collect();
        b.send_messages("q", batch).await.expect("send");
    }
}

fn receive(max: u32, visibility: u32) -> ReceiveOptions {
    ReceiveOptions {
        max_messages: max,
        visibility_timeout: Some(visibility),
        wait: Duration::ZERO,
        attempt_id: None,
    }
}

/// D7: a backup taken while a sender goes on holds every message sent
/// before it began, with bodies, receive counts and deletes as they were;
/// a receipt handle from before the backup works on the copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d7_a_backup_taken_under_load_holds_everything_acknowledged_before_it() {
    let dir = tempfile::tempdir().expect("dir");
    let b = open(&dir.path().join("data"));
    create(&b, "q").await;
    send(&b, 0, 3000).await;
    // The oldest 100 are deleted, the next 50 in flight.
    let mut deleted = BTreeSet::new();
    while deleted.len() < 100 {
        let got = b
            .receive_messages("q", receive(10, 0))
            .await
            .expect("receive");
        let handles = got.iter().map(|m| m.receipt_handle.clone()).collect();
        for m in &got {
            deleted.insert(m.body.clone());
        }
        b.delete_messages("q", handles).await.expect("delete");
    }
    let inflight = b
        .receive_messages("q", receive(10, 600))
        .await
        .expect("receive");
    assert_eq!(inflight.len(), 10);

    let sender = {
        let b = b.clone();
        tokio::spawn(async move { send(&b, 3000, 6000).await })
    };
    let dest = dir.path().join("backup");
    let report = b.backup(&dest).await.expect("backup");
    sender.await.expect("sender");
    assert_eq!(report.directory, dest.display().to_string());
    assert!(
        report.files >= 3,
        "the store, a segment, the empty newest: {report:?}"
    );
    assert!(!dir.path().join(".backup.partial").exists());
    assert!(!dest.join("BACKUP-INCOMPLETE").exists());
    drop(b);

    let copy = open(&dest);
    // The in-flight delivery's handle is the copy's too.
    let handles = inflight.iter().map(|m| m.receipt_handle.clone()).collect();
    let done = copy.delete_messages("q", handles).await.expect("delete");
    assert!(done.iter().all(Result::is_ok), "{done:?}");
    let mut bodies = BTreeSet::new();
    loop {
        let got = copy
            .receive_messages("q", receive(10, 600))
            .await
            .expect("receive");
        if got.is_empty() {
            break;
        }
        for m in got {
            assert_eq!(m.receive_count, 1, "never received before the backup");
            assert!(bodies.insert(m.body), "delivered once");
        }
    }
    let inflight: BTreeSet<String> = inflight.into_iter().map(|m| m.body).collect();
    for n in 0..3000 {
        let b = body(n);
        if deleted.contains(&b) || inflight.contains(&b) {
            assert!(!bodies.contains(&b), "message {n} was deleted or in flight");
        } else {
            assert!(
                bodies.contains(&b),
                "message {n} is missing from the backup"
            );
        }
    }
    // Some of the sends that ran beside the backup may be in it: never
    // one out of order, never one twice.
    let later: Vec<usize> = (3000..6000)
        .filter(|n| bodies.contains(&body(*n)))
        .collect();
    assert_eq!(later, (3000..3000 + later.len()).collect::<Vec<_>>());
}

/// D7: a backup goes into a new absolute directory; an in-memory engine
/// has nothing to back up.
#[tokio::test]
async fn d7_a_backup_refuses_what_it_cannot_do() {
    let dir = tempfile::tempdir().expect("dir");
    let b = open(&dir.path().join("data"));
    let code = |e: sluice_broker::EngineError| e.to_sqs().code;
    let exists = b.backup(dir.path()).await.expect_err("exists");
    assert_eq!(code(exists), ErrorCode::InvalidParameterValue);
    let relative = b.backup(Path::new("backup")).await.expect_err("relative");
    assert_eq!(code(relative), ErrorCode::InvalidParameterValue);
    let no_parent = b
        .backup(&dir.path().join("none/backup"))
        .await
        .expect_err("no parent");
    assert_eq!(code(no_parent), ErrorCode::InvalidParameterValue);
    let memory = EmbeddedBroker::in_memory(Arc::new(SystemClock));
    let e = memory
        .backup(&dir.path().join("m"))
        .await
        .expect_err("memory");
    assert_eq!(code(e.clone()), ErrorCode::UnsupportedOperation);
    assert!(e.to_sqs().message.contains("in memory"), "{e}");
}

/// D7: a directory an interrupted backup left (it still holds the marker)
/// is refused by name, not opened as an empty or partial store.
#[test]
fn d7_an_unfinished_backup_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("BACKUP-INCOMPLETE"), b"").expect("marker");
    let e = EmbeddedBroker::open(dir.path(), Arc::new(SystemClock))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("unfinished backup"), "{e}");
    assert!(!dir.path().join("sluice.redb").exists(), "nothing created");
}

/// D7, N1: a backup holds the topics and subscriptions answered before
/// it began, and no change made after it ended.
#[tokio::test]
async fn d7_a_backup_holds_the_topics_and_subscriptions() {
    let dir = tempfile::tempdir().expect("dir");
    let b = open(&dir.path().join("data"));
    let topic = Topic {
        key: "t".into(),
        attributes: BTreeMap::from([("DisplayName".into(), "T".into())]),
        tags: BTreeMap::new(),
        created_at: 1,
    };
    b.create_topic(topic.clone()).await.expect("create topic");
    let sub = Subscription {
        id: "s1".into(),
        topic: "t".into(),
        protocol: "sqs".into(),
        endpoint: "arn:aws:sqs:us-east-1:000000000000:q".into(),
        owner: "000000000000".into(),
        attributes: BTreeMap::new(),
        pending_token: None,
        created_at: 2,
    };
    b.subscribe(sub.clone()).await.expect("subscribe");
    let dest = dir.path().join("backup");
    b.backup(&dest).await.expect("backup");
    b.delete_topic("t").await.expect("delete topic");
    drop(b);
    assert!(dest.join(TOPICS_FILE).is_file());
    assert!(!dest.join("topics.json.tmp").exists());

    let copy = open(&dest);
    assert_eq!(copy.get_topic("t").await.expect("topic"), topic);
    assert_eq!(
        copy.subscriptions(None).await.expect("subscriptions"),
        [sub]
    );
}

/// D7, I1: a backup holds the idempotency records completed before it
/// began: a store restored from it answers their results.
#[tokio::test]
async fn d7_a_backup_holds_the_idempotency_records() {
    use sluice_broker::IdempotencyKeys;
    use sluice_broker::idempotency::{Claim, ClaimStatus};
    let dir = tempfile::tempdir().expect("dir");
    let b = open(&dir.path().join("data"));
    let claim = Claim {
        ttl_ms: 3_600_000,
        in_progress_ms: 60_000,
    };
    let first = b.claim_idempotency_key("a/k", claim).await.expect("claim");
    assert_eq!(first.name(), "CLAIMED");
    let done = b.complete_idempotency_key("a/k", "r".into());
    assert!(done.await.expect("complete"));
    let dest = dir.path().join("backup");
    b.backup(&dest).await.expect("backup");
    drop(b);
    let copy = open(&dest);
    assert_eq!(
        copy.claim_idempotency_key("a/k", claim)
            .await
            .expect("claim"),
        ClaimStatus::Completed { result: "r".into() }
    );
}
