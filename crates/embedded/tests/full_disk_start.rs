//! Starts on a full disk that must write to recover (rule D6): after a
//! crash, with log records the store does not hold yet, and the first
//! start of a new data directory. The engine runs on [`FaultStorage`],
//! whose budget of 0 bytes fails every write that needs room.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{
    Broker, EngineError, MessageFilter, NewMessage, PeekedMessage, ReceiveOptions, ReceivedMessage,
};
use sluice_core::{ErrorCode, ManualClock};
mod faults;

use faults::{DIR, assert_unavailable, runtime, send, send_until_accepted, spec, stored};
use sluice_embedded::{EmbeddedBroker, FaultStorage, RecoveryStats, Storage};

/// The store's file.
const STORE: &str = "/data/sluice.redb";

/// The engine on `storage` (see [`faults::open_reopening_uncached`]).
fn try_open(storage: &FaultStorage) -> Result<(EmbeddedBroker, RecoveryStats), String> {
    faults::open_reopening_uncached(storage).map_err(|e| e.to_string())
}

fn open(storage: &FaultStorage) -> EmbeddedBroker {
    try_open(storage).expect("open").0
}

/// Messages sent to queue `bulk` in the log alone, enough that their
/// replay must grow the store's file.
const BULK: usize = 5000;

async fn receive(b: &EmbeddedBroker, max: u32) -> Result<Vec<ReceivedMessage>, EngineError> {
    let options = ReceiveOptions {
        max_messages: max,
        visibility_timeout: Some(600),
        wait: Duration::ZERO,
        attempt_id: None,
    };
    b.receive_messages("q", options).await
}

/// Deletes the message `handle` names: the refusal of the call or of
/// its one entry.
async fn delete(b: &EmbeddedBroker, handle: &str) -> Result<(), EngineError> {
    let mut results = b.delete_messages("q", vec![handle.to_string()]).await?;
    results.pop().expect("one result")
}

/// Every message in queue `q`, by body.
async fn peeked(b: &EmbeddedBroker) -> Vec<PeekedMessage> {
    let page = b
        .peek_messages("q", &MessageFilter::default(), None, 1000)
        .await
        .unwrap();
    assert!(page.next.is_none());
    let mut messages = page.messages;
    messages.sort_by(|a, b| a.body.cmp(&b.body));
    messages
}

/// (visible, in flight) of queue `q`.
async fn counts(b: &EmbeddedBroker) -> (u64, u64) {
    let counts = b.queue_counts("q").await.unwrap();
    (counts.visible, counts.in_flight)
}

/// Visible messages in queue `bulk`.
async fn bulk(b: &EmbeddedBroker) -> u64 {
    b.queue_counts("bulk").await.unwrap().visible
}

/// Asserts that `e` is the retryable answer of a refused write, naming
/// a full disk.
fn assert_full(e: &EngineError) {
    assert_unavailable(e, "no space left on device");
}

/// A run that crashed, leaving in queue `q` "stored" in the store (a
/// clean stop made it durable there) and "logged-1", "logged-2"
/// acknowledged in the log alone, with one message received (in flight,
/// its receipt handle returned), and [`BULK`] messages in queue `bulk`
/// in the log alone: what a start on `crashed` must bring back.
///
/// The store's file is put back as synced when the run began, as if redb
/// had synced nothing since: redb syncs its file when it grows it, and a
/// file the run grew may leave the replay the room it needs or not, as
/// the applier's batches fell. Without those syncs the replay needs room
/// every time.
async fn crashed_run() -> (FaultStorage, ReceivedMessage) {
    let storage = FaultStorage::new();
    let b = open(&storage);
    b.create_queue(spec("q")).await.unwrap();
    b.create_queue(spec("bulk")).await.unwrap();
    send(&b, "stored").await.unwrap();
    drop(b);
    let b = open(&storage);
    let at_start = storage.after_crash();
    for body in ["logged-1", "logged-2"] {
        send(&b, body).await.unwrap();
    }
    for batch in 0..BULK / 10 {
        let messages = (0..10)
            .map(|i| NewMessage {
                body: format!("bulk-{batch}-{i}"),
                ..Default::default()
            })
            .collect();
        b.send_messages("bulk", messages).await.unwrap();
    }
    let mut got = receive(&b, 1).await.unwrap();
    let received = got.pop().expect("a message");
    let crashed = storage.after_crash();
    drop(b);
    let store = Path::new(STORE);
    let bytes = at_start.open(store, false).unwrap().read_all().unwrap();
    let file = crashed.create(store).unwrap();
    file.write_all_at(&bytes, 0).unwrap();
    file.sync_data().unwrap();
    crashed.sync_dir(Path::new(DIR)).unwrap();
    (crashed, received)
}

/// D6 after a crash: a start on a full disk (no byte free) that must
/// replay log records the store does not hold succeeds, holding all the
/// log and the store do: every acknowledged message counted and peeked
/// with its body, those known to the log alone included, and the one in
/// flight still in flight. Writes are refused with the retryable error
/// naming the cause, and nothing is written: a crash then reads back the
/// same. Once space returns the engine reopens its storage by itself
/// (rule D5), replaying the log into the store then, and takes writes
/// again; a crash after that reads back the same.
#[test]
fn d6_a_start_on_a_full_disk_after_a_crash_serves_what_the_log_holds() {
    runtime().block_on(async {
        let (storage, received) = crashed_run().await;
        storage.set_space(Some(0));
        let (b, stats) = try_open(&storage).expect("a start on a full disk after a crash");
        assert!(stats.log_records > 0, "nothing to replay: {stats:?}");
        let cause = b.storage_failure().expect("writes refused");
        assert!(cause.contains("no space left on device"), "{cause}");
        assert_eq!(counts(&b).await, (2, 1));
        assert_eq!(bulk(&b).await, BULK as u64);
        let all = ["logged-1", "logged-2", "stored"];
        assert_eq!(stored(&b).await, all);
        let in_flight: Vec<_> = peeked(&b)
            .await
            .into_iter()
            .filter(|m| m.receive_count == 1)
            .map(|m| m.body)
            .collect();
        assert_eq!(in_flight, [received.body.as_str()]);
        for _ in 0..3 {
            assert_full(&send(&b, "refused").await.unwrap_err());
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
        assert_eq!(stored(&b).await, all);
        // It wrote nothing: a crash now finds what the start found.
        let again = open(&storage.after_crash());
        assert_eq!(stored(&again).await, all, "after a crash on the full disk");
        assert_eq!(
            (counts(&again).await, bulk(&again).await),
            ((2, 1), BULK as u64)
        );
        drop(again);

        storage.set_space(None);
        send_until_accepted(&b, "after").await;
        assert!(b.storage_failure().is_none());
        let with_after = ["after", "logged-1", "logged-2", "stored"];
        assert_eq!(stored(&b).await, with_after);
        assert_eq!(counts(&b).await, (3, 1));
        drop(b);
        let b = open(&storage.after_crash());
        assert_eq!(stored(&b).await, with_after, "after a crash");
        assert_eq!(counts(&b).await, (3, 1));
        assert_eq!(bulk(&b).await, BULK as u64);
    });
}

/// D6 after a crash, with rule D5's refusals: on the full disk a receive
/// is refused before it takes anything and a delete before it deletes
/// anything (neither could be recorded), so counts stay as they were.
/// Once space returns, the receipt handle from before the crash deletes
/// its message, and each other message is received once, with its first
/// receive count; a crash after that keeps the delete.
#[test]
fn d6_on_a_full_disk_after_a_crash_receives_and_deletes_change_nothing() {
    runtime().block_on(async {
        let (storage, received) = crashed_run().await;
        storage.set_space(Some(0));
        let b = open(&storage);
        for _ in 0..3 {
            assert_full(&receive(&b, 10).await.unwrap_err());
            assert_full(&delete(&b, &received.receipt_handle).await.unwrap_err());
            assert_eq!(counts(&b).await, (2, 1));
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
        storage.set_space(None);
        send_until_accepted(&b, "after").await;
        delete(&b, &received.receipt_handle).await.unwrap();
        let mut bodies = Vec::new();
        for got in receive(&b, 10).await.unwrap() {
            assert_eq!(got.receive_count, 1, "{}", got.body);
            bodies.push(got.body);
        }
        bodies.sort();
        let mut expected: Vec<String> = ["after", "logged-1", "logged-2", "stored"]
            .into_iter()
            .filter(|body| *body != received.body)
            .map(str::to_string)
            .collect();
        expected.sort();
        assert_eq!(bodies, expected);
        drop(b);
        let b = open(&storage.after_crash());
        assert_eq!(stored(&b).await, expected, "after a crash");
        assert_eq!(counts(&b).await, (0, 3));
    });
}

/// D6 for a new data directory: the first start on a full disk succeeds
/// with no queue, and refuses writes (a queue's creation) with the
/// retryable error naming the cause; once space returns the engine
/// reopens its storage by itself (rule D5), creates the store then, and
/// takes writes; a crash after that keeps them.
#[test]
fn d6_the_first_start_of_a_new_data_directory_on_a_full_disk_waits_for_space() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        storage.set_space(Some(0));
        let b = try_open(&storage).expect("a first start on a full disk").0;
        assert!(b.list_queues().await.unwrap().is_empty());
        for _ in 0..3 {
            assert_full(&b.create_queue(spec("q")).await.unwrap_err());
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
        assert!(b.list_queues().await.unwrap().is_empty());
        storage.set_space(None);
        let mut created = false;
        for _ in 0..1000 {
            match b.create_queue(spec("q")).await {
                Ok(_) => {
                    created = true;
                    break;
                }
                Err(e) => assert_eq!(e.to_sqs().code, ErrorCode::ServiceUnavailable, "{e:?}"),
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(created, "the engine did not reopen its storage within 10 s");
        send(&b, "first").await.unwrap();
        drop(b);
        let b = open(&storage.after_crash());
        assert_eq!(b.list_queues().await.unwrap(), ["q"]);
        assert_eq!(stored(&b).await, ["first"]);
    });
}

/// D6 for a new data directory on a file system with sparse files: there
/// redb's first step, growing the new file, takes no room and succeeds on
/// a full disk, and the header it writes next does not fit, which leaves
/// a file of zeros (as on tmpfs or ext4) that redb refuses as not a
/// database. Such a file never held one: the start creates the store in
/// its place, in memory while the disk is full, and once space returns
/// for real, and every start after opens it.
#[test]
fn d6_a_store_file_of_zeros_left_by_a_creation_on_a_full_disk_is_created_again() {
    runtime().block_on(async {
        let storage = FaultStorage::new();
        storage.create_dir_all(Path::new(DIR)).unwrap();
        let zeros = storage.create(Path::new(STORE)).unwrap();
        zeros.set_len(73_728).unwrap();
        zeros.sync_all().unwrap();
        storage.sync_dir(Path::new(DIR)).unwrap();
        storage.set_space(Some(0));
        let b = try_open(&storage)
            .expect("a start on a full disk over a file of zeros")
            .0;
        assert!(b.list_queues().await.unwrap().is_empty());
        assert_full(&b.create_queue(spec("q")).await.unwrap_err());
        storage.set_space(None);
        let mut created = false;
        for _ in 0..1000 {
            if b.create_queue(spec("q")).await.is_ok() {
                created = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(created, "the engine did not reopen its storage within 10 s");
        send(&b, "first").await.unwrap();
        drop(b);
        let b = open(&storage.after_crash());
        assert_eq!(stored(&b).await, ["first"]);
    });
}

/// D6: the start from memory is for a full disk only, never beside another
/// server: a data directory a running engine holds is refused as already
/// open (the one failure the full-disk start never serves from memory,
/// since its overlay takes no lock on the store's file).
#[test]
fn d6_a_data_directory_another_engine_holds_is_refused_as_already_open() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::default());
    let (_running, _) = EmbeddedBroker::open(dir.path(), clock.clone()).unwrap();
    let Err(refused) = EmbeddedBroker::open(dir.path(), clock) else {
        panic!("a second engine opened a data directory another holds");
    };
    assert!(
        matches!(refused, sluice_embedded::StoreError::AlreadyOpen(_)),
        "{refused:?}"
    );
}
