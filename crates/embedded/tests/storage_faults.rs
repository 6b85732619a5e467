//! Storage faults injected under the durable engine (rules D1, D3): the
//! engine runs on [`FaultStorage`], a file system in memory that fails
//! chosen writes and syncs and, on a crash, keeps only what was synced.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, CreateQueue, EngineError, MessageFilter, NewMessage};
use sluice_core::ErrorCode;
use sluice_core::ManualClock;
use sluice_core::attributes::QueueConfig;
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions, FaultStorage};

const DIR: &str = "/data";

/// The engine on `storage`, with no checkpoint during a test: only the
/// log's own syncs run after the open (and the thread that zero-fills the
/// next segment, which syncs files named `.preparing`).
fn open(storage: &FaultStorage) -> EmbeddedBroker {
    open_checkpointing(storage, Duration::from_secs(3600))
}

/// The engine on `storage`, checkpointing every `interval`.
fn open_checkpointing(storage: &FaultStorage, interval: Duration) -> EmbeddedBroker {
    let options = EmbeddedOptions {
        checkpoint_interval: interval,
        ..Default::default()
    };
    let clock = Arc::new(ManualClock::default());
    EmbeddedBroker::open_on(Arc::new(storage.clone()), Path::new(DIR), clock, options)
        .expect("open")
        .0
}

async fn create(b: &EmbeddedBroker) {
    let requested = BTreeMap::new();
    b.create_queue(CreateQueue {
        name: "q".into(),
        config: QueueConfig::for_create("q", &requested).unwrap(),
        requested,
        tags: BTreeMap::new(),
    })
    .await
    .unwrap();
}

async fn send(b: &EmbeddedBroker, body: &str) -> Result<(), EngineError> {
    let message = NewMessage {
        body: body.into(),
        ..Default::default()
    };
    b.send_messages("q", vec![message]).await.map(drop)
}

/// Every body in queue `q`.
async fn stored(b: &EmbeddedBroker) -> Vec<String> {
    let page = b
        .peek_messages("q", &MessageFilter::default(), None, 1000)
        .await
        .unwrap();
    assert!(page.next.is_none());
    let mut bodies: Vec<String> = page.messages.into_iter().map(|m| m.body).collect();
    bodies.sort();
    bodies
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// D1 on the injected storage: what was acknowledged is in the synced
/// bytes alone, so a crash that drops every unsynced write keeps it.
#[test]
fn d1_acknowledged_sends_survive_a_crash_of_the_injected_storage() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open(&storage);
        create(&b).await;
        for body in ["a", "b", "c"] {
            send(&b, body).await.unwrap();
        }
        let crashed = storage.after_crash();
        drop(b);
        let b = open(&crashed);
        assert_eq!(stored(&b).await, ["a", "b", "c"]);
    });
}

/// Whether `e` is the retryable answer of a refused write: 503
/// ServiceUnavailable, saying why.
fn assert_unavailable(e: &EngineError, why: &str) {
    let sqs = e.to_sqs();
    assert_eq!(sqs.code, ErrorCode::ServiceUnavailable, "{e:?}");
    assert!(sqs.message.contains(why), "{}", sqs.message);
}

/// D3: a failed `fdatasync` of the log fails its batch (never
/// acknowledged), and the log is never synced again to carry on: the
/// storage would now sync, but a record after the one whose pages the
/// failed sync dropped would be acknowledged after a hole and lost by the
/// next crash. Later writes are refused with ServiceUnavailable naming
/// the cause; reopened from the synced bytes, every acknowledged message
/// is there and nothing torn or unacknowledged is read back.
#[test]
fn d3_after_a_failed_log_sync_nothing_more_is_acknowledged_and_a_reopen_recovers() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open(&storage);
        create(&b).await;
        send(&b, "acked").await.unwrap();
        storage.fail_sync_of(".wal");
        let failed = send(&b, "failed").await.unwrap_err();
        assert_unavailable(&failed, "injected I/O error");
        for later in ["later-1", "later-2"] {
            let refused = send(&b, later).await.unwrap_err();
            assert_unavailable(&refused, "injected I/O error");
        }
        let crashed = storage.after_crash();
        drop(b);
        let b = open(&crashed);
        assert_eq!(stored(&b).await, ["acked"]);
        // The reopened engine writes again.
        send(&b, "after").await.unwrap();
        assert_eq!(stored(&b).await, ["acked", "after"]);
    });
}

/// D3 without a crash: reopened in place, where the failed batch's bytes
/// are still readable (the kernel keeps pages it could not write), the
/// failed batch may be read back whole, and nothing after it.
#[test]
fn d3_a_reopen_in_place_after_a_failed_sync_reads_the_failed_batch_whole_or_not_at_all() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open(&storage);
        create(&b).await;
        send(&b, "acked").await.unwrap();
        storage.fail_sync_of(".wal");
        send(&b, "failed").await.unwrap_err();
        send(&b, "refused").await.unwrap_err();
        drop(b);
        let b = open(&storage);
        let found = stored(&b).await;
        assert!(
            found == ["acked"] || found == ["acked", "failed"],
            "{found:?}"
        );
    });
}

/// D3: a failed write of the log fails its batch and every later write
/// with ServiceUnavailable; a reopen reads back what was acknowledged.
#[test]
fn d3_a_failed_log_write_is_never_acknowledged() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open(&storage);
        create(&b).await;
        send(&b, "acked").await.unwrap();
        storage.fail_write_of(".wal");
        assert_unavailable(&send(&b, "failed").await.unwrap_err(), "injected");
        assert_unavailable(&send(&b, "refused").await.unwrap_err(), "injected");
        let crashed = storage.after_crash();
        drop(b);
        assert_eq!(stored(&open(&crashed)).await, ["acked"]);
    });
}

/// D3 on a full disk: appends within the zeros a segment was made ready
/// with need no space and are acknowledged; the first that must grow the
/// file fails with ENOSPC and gets ServiceUnavailable, never an ack (its
/// record is torn: what fitted was written). Later writes are refused,
/// while what needs no write keeps answering: counts, attributes and a
/// peek. Once space returns, a reopen holds every acknowledged message
/// and never the torn one, and takes writes again.
#[test]
fn d3_a_full_disk_fails_the_send_that_needs_space_and_reads_go_on() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open(&storage);
        create(&b).await;
        storage.set_space(Some(storage.used()));
        let body = "x".repeat(60 << 10);
        let mut acked = Vec::new();
        let refused = loop {
            let name = format!("{:02}-{body}", acked.len());
            match send(&b, &name).await {
                Ok(()) => acked.push(name),
                Err(e) => break e,
            }
            assert!(acked.len() < 40, "a full disk took 2 MiB");
        };
        assert!(
            !acked.is_empty(),
            "the zeros made ready hold the first sends"
        );
        assert_unavailable(&refused, "no space left on device");
        assert_unavailable(&send(&b, "later").await.unwrap_err(), "no space left");
        // Reads that need no write.
        let counts = b.queue_counts("q").await.unwrap();
        assert!(counts.visible >= acked.len() as u64, "{counts:?}");
        b.get_queue("q").await.unwrap();
        assert!(stored(&b).await.len() >= acked.len());
        drop(b);
        storage.set_space(None);
        for survived in [storage.after_crash(), storage] {
            let b = open(&survived);
            assert_eq!(stored(&b).await, acked, "only what was acknowledged");
            send(&b, "after").await.unwrap();
        }
    });
}

/// D3 for the store: a checkpoint whose redb sync fails (through the
/// storage backend redb runs on) is not retried either: later writes are
/// refused, and the log, which the failed checkpoint did not move past,
/// brings every acknowledged message back at the reopen.
#[test]
fn d3_a_failed_store_sync_at_a_checkpoint_refuses_writes_and_the_log_recovers() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_checkpointing(&storage, Duration::from_millis(10));
        create(&b).await;
        storage.fail_sync_of("sluice.redb");
        let mut acked = Vec::new();
        // The next checkpoint fails; sends are acknowledged until then.
        let refused = loop {
            let name = format!("m{:04}", acked.len());
            match send(&b, &name).await {
                Ok(()) => acked.push(name),
                Err(e) => break e,
            }
            assert!(acked.len() < 5000, "no checkpoint ran");
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        assert_unavailable(&refused, "injected I/O error");
        assert_unavailable(&send(&b, "later").await.unwrap_err(), "injected");
        let crashed = storage.after_crash();
        drop(b);
        let b = open(&crashed);
        let mut found = stored(&b).await;
        // The refused send's record was written and may be whole.
        found.retain(|body| !body.starts_with(&format!("m{:04}", acked.len())));
        assert_eq!(found, acked);
    });
}
