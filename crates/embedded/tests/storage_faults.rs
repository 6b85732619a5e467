//! Storage faults injected under the durable engine (rules D1, D3): the
//! engine runs on [`FaultStorage`], a file system in memory that fails
//! chosen writes and syncs and, on a crash, keeps only what was synced.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, ReceiveOptions};
use sluice_core::ManualClock;
mod faults;

use faults::{
    DIR, assert_unavailable, create, runtime, send, send_until_accepted, settled, stored,
};
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions, FaultStorage, Storage};

/// The engine on `storage`, with no checkpoint during a test: only the
/// log's own syncs run after the open (and the thread that zero-fills the
/// next segment, which syncs files named `.preparing`). Nor does it reopen
/// its storage after a failed write (rule D5) within a test.
fn open(storage: &FaultStorage) -> EmbeddedBroker {
    open_checkpointing(storage, Duration::from_secs(3600))
}

/// The engine on `storage`, checkpointing every `interval`.
fn open_checkpointing(storage: &FaultStorage, interval: Duration) -> EmbeddedBroker {
    open_with(storage, interval, Duration::from_secs(3600))
}

/// The engine on `storage` that reopens its storage after a failed write
/// at most every 10 ms (rule D5), and never checkpoints during a test.
fn open_reopening(storage: &FaultStorage) -> EmbeddedBroker {
    open_with(
        storage,
        Duration::from_secs(3600),
        Duration::from_millis(10),
    )
}

fn open_with(storage: &FaultStorage, checkpoint: Duration, reopen: Duration) -> EmbeddedBroker {
    let options = EmbeddedOptions {
        checkpoint_interval: checkpoint,
        reopen_interval: reopen,
        ..Default::default()
    };
    let clock = Arc::new(ManualClock::default());
    EmbeddedBroker::open_on(Arc::new(storage.clone()), Path::new(DIR), clock, options)
        .expect("open")
        .0
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
        settled(&storage).await;
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

/// Fills the disk of `storage` (its budget set to what it holds) and
/// sends 60 KiB bodies until one is refused; returns the acknowledged
/// bodies and the refused one's name.
async fn fill_the_disk(b: &EmbeddedBroker, storage: &FaultStorage) -> (Vec<String>, String) {
    settled(storage).await;
    storage.set_space(Some(storage.used()));
    let body = "x".repeat(60 << 10);
    let mut acked = Vec::new();
    loop {
        let name = format!("{:02}-{body}", acked.len());
        match send(b, &name).await {
            Ok(()) => acked.push(name),
            Err(e) => {
                assert_unavailable(&e, "no space left on device");
                return (acked, name);
            }
        }
        assert!(acked.len() < 40, "a full disk took 2 MiB");
    }
}

/// D5: on a full disk, sends keep getting the retryable refusal (each
/// refused write may start an attempt to reopen, which fails while no
/// space is free) and reads that need no write go on; once space
/// returns, the engine reopens its storage by itself and accepts sends
/// again, without a restart. Every acknowledged message is there, the
/// refused one (its record torn: what fitted was written) is not, though
/// the index showed it before the reopen; a crash after that keeps the
/// same.
#[test]
fn d5_after_a_full_disk_the_engine_recovers_by_itself_once_space_returns() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_reopening(&storage);
        create(&b).await;
        let (acked, refused) = fill_the_disk(&b, &storage).await;
        assert!(!acked.is_empty());
        // The refused send is in the index until the reopen rebuilds it.
        assert!(stored(&b).await.contains(&refused));
        for _ in 0..20 {
            let e = send(&b, "while-full").await.unwrap_err();
            assert_unavailable(&e, "no space left on device");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let counts = b.queue_counts("q").await.unwrap();
        assert!(counts.visible >= acked.len() as u64, "{counts:?}");
        storage.set_space(None);
        send_until_accepted(&b, "after").await;
        let mut expected = acked.clone();
        expected.push("after".into());
        assert_eq!(stored(&b).await, expected, "only what was acknowledged");
        let b = open(&storage.after_crash());
        assert_eq!(stored(&b).await, expected, "after a crash");
    });
}

/// D5 after a failed `fdatasync` of the log: the engine reopens its
/// storage by itself and accepts sends again. The failed batch, whose
/// bytes the kernel still serves though they never became durable, is
/// read back whole or not at all, and what the reopen read back stays
/// after a crash (the replayed records are written again and synced
/// before redb is made durable pointing into them).
#[test]
fn d5_after_a_failed_log_sync_the_engine_recovers_by_itself() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_reopening(&storage);
        create(&b).await;
        send(&b, "acked").await.unwrap();
        storage.fail_sync_of(".wal");
        assert_unavailable(&send(&b, "failed").await.unwrap_err(), "injected");
        send_until_accepted(&b, "after").await;
        let found = stored(&b).await;
        assert!(
            found == ["acked", "after"] || found == ["acked", "after", "failed"],
            "{found:?}"
        );
        let b = open(&storage.after_crash());
        assert_eq!(stored(&b).await, found, "after a crash");
    });
}

fn receive_options(wait: u64) -> ReceiveOptions {
    ReceiveOptions {
        max_messages: 10,
        visibility_timeout: Some(600),
        wait: Duration::from_secs(wait),
        attempt_id: None,
    }
}

/// D5: while writes are refused, a receive that would deliver is refused
/// before it takes anything (its receive count could not be recorded):
/// the messages stay visible, none goes in flight, and once the storage
/// is reopened each is received once, with its first receive count.
#[test]
fn d5_a_receive_while_writes_are_refused_takes_nothing() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_reopening(&storage);
        create(&b).await;
        let (acked, _) = fill_the_disk(&b, &storage).await;
        let visible = b.queue_counts("q").await.unwrap().visible;
        for _ in 0..5 {
            let refused = b.receive_messages("q", receive_options(0)).await;
            assert_unavailable(&refused.map(|got| got.len()).unwrap_err(), "no space left");
        }
        let counts = b.queue_counts("q").await.unwrap();
        assert_eq!((counts.visible, counts.in_flight), (visible, 0));
        storage.set_space(None);
        send_until_accepted(&b, "after").await;
        let mut received = Vec::new();
        loop {
            let got = b.receive_messages("q", receive_options(0)).await.unwrap();
            if got.is_empty() {
                break;
            }
            assert!(got.iter().all(|m| m.receive_count == 1));
            received.extend(got.into_iter().map(|m| m.body));
        }
        received.sort();
        let mut expected = acked;
        expected.push("after".into());
        assert_eq!(received, expected);
    });
}

/// D5: while writes are refused, a delete is refused before it takes
/// anything out of the index (it could not be recorded): the message
/// stays in flight and peekable, and once the storage is reopened the
/// same receipt handle deletes it.
#[test]
fn d5_a_delete_while_writes_are_refused_deletes_nothing() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_reopening(&storage);
        create(&b).await;
        send(&b, "a").await.unwrap();
        let handle = b.receive_messages("q", receive_options(0)).await.unwrap()[0]
            .receipt_handle
            .clone();
        let (acked, _) = fill_the_disk(&b, &storage).await;
        let before = b.queue_counts("q").await.unwrap();
        assert_eq!(before.in_flight, 1);
        for _ in 0..5 {
            let refused = b.delete_messages("q", vec![handle.clone()]).await;
            let refused = refused.and_then(|mut r| r.pop().expect("one result"));
            assert_unavailable(&refused.unwrap_err(), "no space left");
            let counts = b.queue_counts("q").await.unwrap();
            assert_eq!((counts.visible, counts.in_flight), (before.visible, 1));
        }
        assert!(stored(&b).await.contains(&"a".to_string()));
        storage.set_space(None);
        send_until_accepted(&b, "after").await;
        let deleted = b.delete_messages("q", vec![handle]).await.unwrap();
        assert!(deleted[0].is_ok(), "{deleted:?}");
        let mut expected = acked;
        expected.push("after".into());
        assert_eq!(stored(&b).await, expected);
    });
}

/// D5 and D3: a queue's creation refused while writes are refused is
/// refused again when retried, never answered as created from an index
/// the refused change reached; once the storage is reopened the retry
/// creates it, durably.
#[test]
fn d5_a_refused_queue_creation_is_not_answered_as_created_when_retried() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_reopening(&storage);
        create(&b).await;
        fill_the_disk(&b, &storage).await;
        let spec = || faults::spec("other");
        for _ in 0..5 {
            let refused = b.create_queue(spec()).await.unwrap_err();
            assert_unavailable(&refused, "no space left");
        }
        storage.set_space(None);
        send_until_accepted(&b, "after").await;
        b.create_queue(spec()).await.unwrap();
        let b = open(&storage.after_crash());
        assert_eq!(b.list_queues().await.unwrap(), ["other", "q"]);
    });
}

/// D5: a receive whose own record's write fails took its messages in the
/// index (never acknowledged, and its record is not on disk); a long poll waiting on the queue then is
/// woken by the reopen, started by the sweeper's round with no write
/// coming, and finds them receivable again.
#[test]
fn d5_a_long_poll_waiting_across_a_reopen_is_woken() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open_reopening(&storage);
        create(&b).await;
        for body in ["a", "b", "c"] {
            send(&b, body).await.unwrap();
        }
        storage.set_space(Some(storage.used()));
        storage.fail_write_of(".wal");
        let failed = b.receive_messages("q", receive_options(0)).await;
        assert_unavailable(&failed.map(|got| got.len()).unwrap_err(), "injected");
        assert_eq!(b.queue_counts("q").await.unwrap().visible, 0);
        let poller = b.clone();
        let poll =
            tokio::spawn(async move { poller.receive_messages("q", receive_options(20)).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!poll.is_finished(), "the long poll did not wait");
        storage.set_space(None);
        for _ in 0..500 {
            if poll.is_finished() {
                break;
            }
            b.sweep();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let got = tokio::time::timeout(Duration::from_secs(1), poll)
            .await
            .expect("the long poll was not woken by the reopen")
            .unwrap()
            .unwrap();
        let mut bodies: Vec<String> = got.into_iter().map(|m| m.body).collect();
        bodies.sort();
        assert_eq!(bodies, ["a", "b", "c"]);
    });
}

/// D6: a start on a full disk (no byte free before the open) after a
/// clean stop writes nothing it cannot: it serves reads (counts, peeks
/// with bodies from disk) and refuses writes with the retryable error
/// naming the cause; once space returns, the engine reopens its storage
/// by itself (rule D5) and takes writes again.
#[test]
fn d6_a_start_on_a_full_disk_serves_reads_and_takes_writes_once_space_returns() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open(&storage);
        create(&b).await;
        for body in ["a", "b"] {
            send(&b, body).await.unwrap();
        }
        drop(b);
        storage.set_space(Some(0));
        let (b, _) = faults::open_reopening_uncached(&storage).expect("a start on a full disk");
        assert_eq!(stored(&b).await, ["a", "b"]);
        assert_eq!(b.queue_counts("q").await.unwrap().visible, 2);
        for _ in 0..5 {
            let refused = send(&b, "refused").await.unwrap_err();
            assert_unavailable(&refused, "no space left on device");
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
        assert_eq!(stored(&b).await, ["a", "b"]);
        storage.set_space(None);
        send_until_accepted(&b, "after").await;
        assert_eq!(stored(&b).await, ["a", "after", "b"]);
        let b = open(&storage.after_crash());
        assert_eq!(stored(&b).await, ["a", "after", "b"]);
    });
}

/// D6: a start writes nothing it does not need. On a disk with a little
/// room (1.5 MiB, then 64 KiB) after a clean stop, the open takes none
/// of it: the log's new segment is its 8-byte magic until the first
/// record, which brings its zeros (1 MiB, the appends after it need no
/// new room) or, where they do not fit, is appended without them; the
/// next segment is made ready only after that record too. Either way
/// sends are taken, and what was sent reads back.
#[test]
fn d6_a_start_on_a_nearly_full_disk_takes_none_of_its_room() {
    runtime().block_on(async {
        for room in [3 << 19, 64 << 10] {
            let storage = FaultStorage::new();
            let b = open(&storage);
            create(&b).await;
            for body in ["a", "b"] {
                send(&b, body).await.unwrap();
            }
            drop(b);
            let before = storage.used();
            storage.set_space(Some(before + room));
            let b = open(&storage);
            // Time for a segment made ready ahead, were one asked for.
            tokio::time::sleep(Duration::from_millis(100)).await;
            let taken = storage.used().saturating_sub(before);
            assert!(taken <= 64, "the open took {taken} of {room} bytes");
            assert_eq!(stored(&b).await, ["a", "b"]);
            send(&b, "c").await.unwrap();
            send(&b, "d").await.unwrap();
            assert_eq!(stored(&b).await, ["a", "b", "c", "d"]);
            let b = open(&storage.after_crash());
            assert_eq!(stored(&b).await, ["a", "b", "c", "d"], "room {room}");
        }
    });
}

/// D6: when nothing needs recovering (a clean stop left nothing to
/// replay), the open commits nothing to the store and makes it no
/// longer: the one write and sync of redb's file are redb's own mark
/// that the file is open (its header's flag, rewritten in place, which
/// needs no room). A start after a crash, with records to replay, is
/// what commits, and the counts see it.
#[test]
fn d6_an_open_with_nothing_to_recover_commits_nothing_to_the_store() {
    const STORE: &str = "/data/sluice.redb";
    runtime().block_on(async {
        let storage = FaultStorage::new();
        let b = open(&storage);
        create(&b).await;
        send(&b, "a").await.unwrap();
        let crashed = storage.after_crash();
        drop(b);
        let (writes, syncs) = storage.counts_of("sluice.redb");
        let len = storage.len(Path::new(STORE)).unwrap();
        let b = open(&storage);
        assert_eq!(stored(&b).await, ["a"]);
        assert_eq!(
            storage.counts_of("sluice.redb"),
            (writes + 1, syncs + 1),
            "(writes, syncs) of the store during the open"
        );
        assert_eq!(storage.len(Path::new(STORE)).unwrap(), len);
        drop(b);
        // The same run crashed before its checkpoint: its log replays.
        let (writes, syncs) = crashed.counts_of("sluice.redb");
        let b = open(&crashed);
        assert_eq!(stored(&b).await, ["a"]);
        let (after_writes, after_syncs) = crashed.counts_of("sluice.redb");
        assert!(
            after_writes > writes + 1 && after_syncs > syncs + 1,
            "a replay that committed nothing"
        );
    });
}
