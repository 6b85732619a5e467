//! Group commit: requests' changes become one log record and one redb
//! transaction at a time, and many requests share one `fdatasync`.
//!
//! Requests hand their changes to [`Journal::submit`] while they still hold
//! their queue's lock, so the journal sees each queue's changes in the order
//! the index made them. Two threads do the rest ([`crate::group_commit`]):
//! the writer encodes everything pending as one record of the write-ahead
//! log ([`crate::wal`]), writes and syncs it, and wakes every request whose
//! record is durable; the applier applies the same changes to redb without
//! durability, beside the sync and after it. A request answers its client
//! only after its [`Ticket`] resolves: no response before its changes are
//! durable. What reads redb and misses a message waits for
//! [`Journal::readable`] and looks again, so it finds every change
//! acknowledged before it.
//!
//! Every so often (a time or a log size, whichever comes first) a checkpoint
//! makes redb durable and the log starts a new segment; older segments stay
//! while a stored message's data lies in them. Start-up replays the log's
//! records that redb does not hold yet ([`recover`]).
//!
//! The store and its threads are one [`Core`], which the engine replaces
//! whole when it reopens its storage after a failed write (see
//! `crate::reopen`): requests load the current one at each call, a load
//! that writes no shared memory, so the swap costs the steady state nothing.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::ArcSwap;
use sluice_broker::EngineError;
use tokio::sync::oneshot;

use parking_lot::Mutex;

use crate::change::Change;
use crate::group_commit::{self, Failure, Gate, MAX_CHANGES_PER_COMMIT, Outcome, Pending};
use crate::log_record;
use crate::store::{Store, StoreError};
use crate::wal::{self, Log, LogError};

/// Where changes go: nowhere (in-memory mode) or the group-commit writer.
pub enum Journal {
    /// Not durable: changes are dropped, tickets resolve at once.
    Memory,
    /// Durable: changes are committed by the current core's writer.
    Durable(ArcSwap<Core>),
}

/// One opening of the storage: the store and the group-commit threads
/// over it, or, while closed, the reason writes are refused.
pub struct Core {
    writer: Writer,
    /// Where bodies not in memory are read from; `None` while the storage
    /// is closed for a reopen.
    store: Option<Store>,
}

/// The handle to the group-commit threads.
pub struct Writer {
    tx: Option<mpsc::Sender<Pending>>,
    failed: Arc<Failure>,
    /// Where readers wait for the applier.
    gate: Arc<Mutex<Gate>>,
    /// The log writer, which joins the applier before it ends.
    thread: Option<JoinHandle<()>>,
}

/// A promise that submitted changes are durable.
pub struct Ticket(Option<Result<oneshot::Receiver<Outcome>, String>>);

impl Ticket {
    /// Waits until the changes are on disk.
    pub async fn wait(self) -> Result<(), EngineError> {
        match self.0 {
            None => Ok(()),
            Some(Err(why)) => Err(unavailable(why)),
            Some(Ok(rx)) => match rx.await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(why)) => Err(unavailable(why)),
                Err(_) => Err(unavailable("the writer stopped".into())),
            },
        }
    }

    /// Whether the journal refused the changes outright (an earlier write
    /// failed).
    pub fn refused(&self) -> bool {
        matches!(self.0, Some(Err(_)))
    }

    /// The answer to a change refused at once (an earlier write failed).
    pub fn refusal(&self) -> Option<EngineError> {
        match &self.0 {
            Some(Err(why)) => Some(unavailable(why.clone())),
            _ => None,
        }
    }
}

/// The retryable answer to a change the storage could not record.
fn unavailable(why: String) -> EngineError {
    EngineError::Unavailable(format!("The storage could not record this change: {why}"))
}

impl Core {
    /// The store and its group-commit threads over its recovered log,
    /// checkpointing at least every `checkpoint_interval`.
    pub fn open(recovered: Recovered, checkpoint_interval: Duration) -> Self {
        Core {
            store: Some(recovered.store.clone()),
            writer: Writer::start(recovered, checkpoint_interval),
        }
    }

    /// A core that refuses every write with `why`, and reads `store`
    /// if there is one (a start that could not begin its log).
    pub fn closed(why: &str, store: Option<Store>) -> Self {
        let failed = Arc::new(Failure::default());
        failed.fail(why);
        Core {
            writer: Writer {
                tx: None,
                failed,
                gate: Arc::new(Mutex::new(Gate::new(0))),
                thread: None,
            },
            store,
        }
    }
}

impl Journal {
    /// Starts the group-commit threads over an open store and its
    /// recovered log; they checkpoint at least every `checkpoint_interval`.
    #[cfg(test)]
    pub fn durable(recovered: Recovered, checkpoint_interval: Duration) -> Self {
        Self::over(Core::open(recovered, checkpoint_interval))
    }

    /// A durable journal over `core`.
    pub fn over(core: Core) -> Self {
        Journal::Durable(ArcSwap::from_pointee(core))
    }

    /// True when changes are recorded; engines skip encoding them otherwise.
    pub fn is_durable(&self) -> bool {
        matches!(self, Journal::Durable(_))
    }

    /// Queues changes for the next commit. Call while holding the lock
    /// under which the changes were made, so commits keep their order.
    pub fn submit(&self, changes: Vec<Change>) -> Ticket {
        match self {
            Journal::Memory => Ticket(None),
            Journal::Durable(core) => core.load().writer.send(changes),
        }
    }

    /// A ticket that resolves once redb holds every change acknowledged so
    /// far: wait on it before reading redb. Acknowledged means durable in
    /// the log; redb's apply may still be running. Resolves at once when
    /// the applier is caught up, which it mostly is.
    pub fn readable(&self) -> Ticket {
        match self {
            Journal::Memory => Ticket(None),
            Journal::Durable(core) => match Gate::readable(&core.load().writer.gate) {
                Ok(None) => Ticket(None),
                Ok(Some(rx)) => Ticket(Some(Ok(rx))),
                Err(why) => Ticket(Some(Err(why))),
            },
        }
    }

    /// The store bodies are read from: `None` in memory, an error while
    /// the storage is closed for a reopen.
    pub fn store(&self) -> Result<Option<Store>, EngineError> {
        match self {
            Journal::Memory => Ok(None),
            Journal::Durable(core) => {
                let core = core.load();
                match &core.store {
                    Some(store) => Ok(Some(store.clone())),
                    None => Err(unavailable(core.writer.failed.refusal())),
                }
            }
        }
    }

    /// The first failed write's cause, once a write to storage failed.
    pub fn failure(&self) -> Option<String> {
        match self {
            Journal::Memory => None,
            Journal::Durable(core) => core.load().writer.failed.cause(),
        }
    }

    /// Puts `core` in place of the current one, which is returned: it
    /// closes (its threads stop, its store shuts) once the last request
    /// using it lets go.
    pub fn replace(&self, core: Core) -> Option<Arc<Core>> {
        match self {
            Journal::Memory => None,
            Journal::Durable(current) => Some(current.swap(Arc::new(core))),
        }
    }

    /// Puts back a core taken out by [`Journal::replace`].
    pub fn restore(&self, core: Arc<Core>) {
        if let Journal::Durable(current) = self {
            current.store(core);
        }
    }
}

impl Writer {
    fn start(recovered: Recovered, checkpoint_interval: Duration) -> Self {
        let (tx, rx) = mpsc::channel::<Pending>();
        let failed = Arc::new(Failure::default());
        // Records before `next_lsn` are in redb already (recovery applied them).
        let gate = Arc::new(Mutex::new(Gate::new(recovered.next_lsn.saturating_sub(1))));
        let thread = group_commit::spawn(
            recovered.store,
            recovered.log,
            recovered.on_disk,
            recovered.next_lsn,
            checkpoint_interval,
            rx,
            failed.clone(),
            gate.clone(),
        );
        Writer {
            tx: Some(tx),
            failed,
            gate,
            thread,
        }
    }

    fn send(&self, changes: Vec<Change>) -> Ticket {
        if self.failed.is_set() {
            return Ticket(Some(Err(self.failed.refusal())));
        }
        let (done, rx) = oneshot::channel();
        match &self.tx {
            Some(tx) if tx.send(Pending { changes, done }).is_ok() => Ticket(Some(Ok(rx))),
            _ => Ticket(Some(Err("the writer stopped".into()))),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the channel lets the threads finish what is queued and exit.
        self.tx.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A store with its log, ready for the writer: what [`recover`] returns.
pub struct Recovered {
    store: Store,
    log: Log,
    /// The segments on disk, the new one included.
    on_disk: BTreeSet<u64>,
    next_lsn: u64,
    /// Log records replayed into the store.
    #[cfg_attr(not(test), allow(dead_code))]
    pub replayed: usize,
}

/// Reads the log in data directory `dir` and replays into `store` the
/// records after the last one it holds; then checkpoints, starts a new
/// segment for the writer, and deletes the segments in which no stored
/// message's data lies.
#[cfg(test)]
pub fn recover(store: Store, dir: &Path) -> Result<Recovered, StoreError> {
    replay(store, dir)?.start_log(dir)
}

/// A store that holds every record of the log, durably: what [`replay`]
/// returns, before the writer's segment is begun.
pub struct Replayed {
    store: Store,
    /// The segments on disk, oldest first.
    segments: Vec<u64>,
    /// How many bytes of records the newest one holds.
    newest_len: u64,
    next_lsn: u64,
    /// Log records replayed into the store.
    pub replayed: usize,
}

/// The first half of [`recover`]: the log's records replayed into
/// `store` and made durable there. Writes nothing when nothing needs
/// replaying: a start after a clean stop on a full disk gets this far.
pub fn replay(store: Store, dir: &Path) -> Result<Replayed, StoreError> {
    let log_err = |e: LogError| StoreError::Log(e.to_string());
    let io_err = |e: std::io::Error| StoreError::Log(e.to_string());
    let applied = store.applied_lsn()?;
    let storage = store.storage().clone();
    let found = wal::open(&*storage, dir, applied).map_err(log_err)?;
    let replayed = found.records.len();
    if let Some(&newest) = found.segments.last() {
        // redb may hold, and will make durable at its next checkpoint,
        // positions in the segment being written when the last run ended:
        // its records must be durable first.
        wal::rewrite_records(&*storage, dir, newest, found.newest_len).map_err(io_err)?;
    }
    let mut last = applied;
    let mut chunk: Vec<Change> = Vec::new();
    for record in found.records {
        chunk.extend(log_record::decode(&record.payload, record.at)?);
        last = record.lsn;
        if chunk.len() >= MAX_CHANGES_PER_COMMIT {
            store.apply(chunk.iter(), last, None)?;
            chunk.clear();
        }
    }
    if !chunk.is_empty() || last != applied {
        store.apply(chunk.iter(), last, None)?;
    }
    if replayed > 0 || found.legacy {
        // The writer's records go to a new segment, which a start reads
        // alone: everything before it must be durable in redb.
        store.checkpoint()?;
    }
    if replayed > 0 {
        tracing::info!(
            records = replayed,
            last_lsn = last,
            "replayed the write-ahead log"
        );
    }
    if found.legacy {
        wal::remove_legacy(&*storage, dir).map_err(io_err)?;
    }
    Ok(Replayed {
        store,
        segments: found.segments,
        newest_len: found.newest_len,
        next_lsn: last + 1,
        replayed,
    })
}

impl Replayed {
    /// The second half of [`recover`]: begins the writer's segment and
    /// deletes the segments no stored message needs.
    pub fn start_log(self, dir: &Path) -> Result<Recovered, StoreError> {
        let io_err = |e: std::io::Error| StoreError::Log(e.to_string());
        let Replayed {
            store,
            segments,
            newest_len,
            next_lsn,
            replayed,
        } = self;
        let storage = store.storage().clone();
        let live: BTreeSet<u64> = store.segment_use()?.into_keys().collect();
        let newest = segments.last().copied().max(live.last().copied());
        let first = newest.map_or(1, |id| id + 1);
        let log = Log::start(&storage, dir, first, newest_len).map_err(io_err)?;
        let mut on_disk = BTreeSet::from([log.segment()]);
        for id in segments {
            if live.contains(&id) {
                on_disk.insert(id);
            } else if let Err(e) = log.remove(id) {
                tracing::warn!(segment = id, error = %e, "could not delete a log segment");
                on_disk.insert(id);
            }
        }
        Ok(Recovered {
            store,
            log,
            on_disk,
            next_lsn,
            replayed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put_queue(id: u64) -> Vec<Change> {
        vec![Change::PutQueue {
            id,
            record: b"{}".to_vec(),
        }]
    }

    /// A log that cannot be written fails the batch as a failed redb
    /// commit did (ServiceUnavailable), and every write after it.
    #[tokio::test]
    async fn a_failed_log_write_fails_the_batch_and_every_later_write() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
        let mut recovered = recover(store, dir.path()).unwrap();
        recovered.log = Log::failing(dir.path()).unwrap();
        let journal = Journal::durable(recovered, Duration::from_secs(3600));
        let err = journal.submit(put_queue(1)).wait().await.unwrap_err();
        assert!(matches!(err, EngineError::Unavailable(_)), "{err:?}");
        assert!(
            err.to_sqs().message.contains("write-ahead log"),
            "{}",
            err.to_sqs().message
        );
        let err = journal.submit(put_queue(2)).wait().await.unwrap_err();
        assert!(matches!(err, EngineError::Unavailable(_)), "{err:?}");
    }

    fn put_message(seq: u64, body: &str) -> Vec<Change> {
        vec![crate::store::tests::put(seq, body)]
    }

    /// A send is answered once its record is synced, while redb's apply of
    /// it is still held up; a read of redb through `readable` waits for
    /// the apply and then finds it. Without that wait, a receive right
    /// after an acknowledged send whose body left the cache would miss it.
    #[tokio::test]
    async fn acknowledged_before_applied_and_read_only_once_applied() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
        let recovered = recover(store.clone(), dir.path()).unwrap();
        let journal = Journal::durable(recovered, Duration::from_secs(3600));
        let held = store.hold_writes().unwrap();
        let acked = tokio::time::timeout(
            Duration::from_secs(10),
            journal.submit(put_message(7, "body")).wait(),
        )
        .await;
        assert!(
            matches!(acked, Ok(Ok(()))),
            "the send waited for redb: {acked:?}"
        );
        assert_eq!(store.read_messages(1, &[7]).unwrap().len(), 1);
        assert!(
            store.read_messages(1, &[7]).unwrap()[0].is_none(),
            "the apply was not held"
        );
        let readable = tokio::spawn(journal.readable().wait());
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!readable.is_finished(), "readable before the apply");
        drop(held);
        readable.await.unwrap().unwrap();
        let read = store.read_messages(1, &[7]).unwrap();
        assert_eq!(read[0].as_ref().map(|m| m.body.as_str()), Some("body"));
        // Caught up: the next reader does not wait at all.
        assert!(journal.readable().0.is_none());
    }

    /// Where the crash child below works; unset in a normal test run.
    const CRASH_DIR: &str = "SLUICE_JOURNAL_CRASH_DIR";

    /// The child of the test below: acknowledges a put that redb cannot
    /// take (its write lock is held), then dies without closing anything.
    #[tokio::test]
    async fn crash_child_acknowledges_then_dies() {
        let Ok(dir) = std::env::var(CRASH_DIR) else {
            return;
        };
        let dir = Path::new(&dir);
        let store = Store::open(&dir.join("db.redb"), None).unwrap();
        let recovered = recover(store.clone(), dir).unwrap();
        let journal = Journal::durable(recovered, Duration::from_secs(3600));
        let _held = store.hold_writes().unwrap();
        let ticket = journal.submit(put_message(7, "survives")).wait();
        tokio::time::timeout(Duration::from_secs(10), ticket)
            .await
            .unwrap()
            .unwrap();
        std::process::exit(0);
    }

    /// D1 with the answer ahead of redb: a change acknowledged once its
    /// log record was synced, and never applied to redb, is replayed from
    /// the log after a crash.
    #[test]
    fn d1_an_acknowledged_change_redb_never_applied_survives_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "journal::tests::crash_child_acknowledges_then_dies",
            ])
            .env(CRASH_DIR, dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "the child did not get its answer");
        let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
        assert_eq!(store.applied_lsn().unwrap(), 0, "redb took the put");
        let recovered = recover(store.clone(), dir.path()).unwrap();
        assert_eq!(recovered.replayed, 1);
        let read = store.read_messages(1, &[7]).unwrap();
        assert_eq!(read[0].as_ref().map(|m| m.body.as_str()), Some("survives"));
    }

    /// The segment files in data directory `dir`.
    fn segment_files(dir: &Path) -> Vec<u64> {
        wal::segment_ids(dir).unwrap()
    }

    /// The length of segment `id`'s file.
    fn segment_len(dir: &Path, id: u64) -> u64 {
        let path = dir.join(wal::LOG_DIR).join(format!("{id:020}.wal"));
        std::fs::metadata(path).unwrap().len()
    }

    /// Whether segment `id` was made ready ahead and waits for the log.
    fn ready(dir: &Path, id: u64) -> bool {
        dir.join(wal::LOG_DIR)
            .join(format!("{id:020}.ready"))
            .exists()
    }

    /// Waits (up to 10 s) until `done` holds.
    async fn until(what: &str, mut done: impl FnMut() -> bool) {
        for _ in 0..1000 {
            if done() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("timed out waiting for {what}");
    }

    fn delete(seqs: impl IntoIterator<Item = u64>) -> Vec<Change> {
        seqs.into_iter()
            .map(|seq| Change::DeleteMessage { queue: 1, seq })
            .collect()
    }

    /// The store in `dir` with a journal that checkpoints every 20 ms.
    fn open_checkpointing(dir: &Path) -> (Store, Journal) {
        let store = Store::open(&dir.join("db.redb"), None).unwrap();
        let recovered = recover(store.clone(), dir).unwrap();
        (
            store,
            Journal::durable(recovered, Duration::from_millis(20)),
        )
    }

    /// A start zero-fills its first segment at its first record, the
    /// writer moves to the
    /// segment made ready ahead (records go over zeros, for a cheaper
    /// sync) and cuts the one it leaves to its records, so that the
    /// applier sizes it right.
    #[tokio::test]
    async fn d1_the_writer_moves_to_a_segment_made_ready_and_cuts_what_it_leaves() {
        let dir = tempfile::tempdir().unwrap();
        let open = |dir: &Path| {
            let store = Store::open(&dir.join("db.redb"), None).unwrap();
            let recovered = recover(store.clone(), dir).unwrap();
            // Checkpoints only at a stop.
            let journal = Journal::durable(recovered, Duration::from_secs(3600));
            (store, journal)
        };
        let (store, journal) = open(dir.path());
        let first = segment_files(dir.path())[0];
        assert_eq!(
            segment_len(dir.path(), first),
            8,
            "the magic until a record"
        );
        let puts = (1..=3).flat_map(|seq| put_message(seq, &format!("m{seq}")));
        journal.submit(puts.collect()).wait().await.unwrap();
        assert_eq!(segment_len(dir.path(), first), 1 << 20, "zero-filled");
        until("the next segment made ready", || {
            ready(dir.path(), first + 1)
        })
        .await;
        // A clean stop checkpoints, and the log moves on.
        drop(journal);
        drop(store);
        assert_eq!(segment_files(dir.path()), [first, first + 1]);
        assert!(!ready(dir.path(), first + 1));
        let written = segment_len(dir.path(), first);
        assert!(written < 1024, "cut to its records: {written} bytes");
        let zeroed = segment_len(dir.path(), first + 1);
        assert!(zeroed >= 16 << 10, "the segment made ready: {zeroed} bytes");

        let (store, journal) = open(dir.path());
        // Holding no message's data, it goes at the start.
        assert_eq!(segment_files(dir.path()), [first, first + 2]);
        assert_eq!(
            bodies(&store, &[1, 2, 3]),
            ["m1", "m2", "m3"].map(|m| Some(m.to_string()))
        );
        drop(journal);
    }

    fn bodies(store: &Store, seqs: &[u64]) -> Vec<Option<String>> {
        let read = store.read_messages(1, seqs).unwrap();
        read.into_iter().map(|m| m.map(|m| m.body)).collect()
    }

    /// D1 with a message written once: redb keeps where a put's data lies
    /// in the log, which stays readable after checkpoints and a restart;
    /// once no stored message needs a segment, a checkpoint deletes it.
    #[tokio::test]
    async fn d1_data_stays_in_its_segment_until_no_message_needs_it() {
        let dir = tempfile::tempdir().unwrap();
        let (store, journal) = open_checkpointing(dir.path());
        let first = segment_files(dir.path())[0];
        let puts = (1..=3).flat_map(|seq| put_message(seq, &format!("m{seq}")));
        journal.submit(puts.collect()).wait().await.unwrap();
        until("a checkpoint", || segment_files(dir.path()).len() > 1).await;
        let used = store.segment_use().unwrap();
        assert_eq!(used.keys().copied().collect::<Vec<_>>(), [first]);
        assert_eq!(used[&first].messages, 3);
        assert_eq!(used[&first].seqs, (1, 3));
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            bodies(&store, &[1, 2, 3]),
            [some("m1"), some("m2"), some("m3")]
        );

        // After a restart the data is still read from the segment.
        drop(journal);
        drop(store);
        let (store, journal) = open_checkpointing(dir.path());
        assert!(segment_files(dir.path()).contains(&first));
        assert_eq!(bodies(&store, &[3, 1]), [some("m3"), some("m1")]);

        // Two deleted: the segment stays for the third.
        journal.submit(delete([1, 2])).wait().await.unwrap();
        let newest = *segment_files(dir.path()).last().unwrap();
        until("another checkpoint", || {
            segment_files(dir.path()).last() > Some(&newest)
        })
        .await;
        assert!(segment_files(dir.path()).contains(&first));
        assert_eq!(store.segment_use().unwrap()[&first].messages, 1);

        // The last one deleted: the segment goes at the next checkpoint.
        journal.submit(delete([3])).wait().await.unwrap();
        until("the segment's deletion", || {
            !segment_files(dir.path()).contains(&first)
        })
        .await;
        assert!(store.segment_use().unwrap().is_empty());
        assert_eq!(bodies(&store, &[1, 2, 3]), [None, None, None]);
    }

    /// A segment most of whose messages are gone is compacted: the data
    /// of the few left is copied into redb, the segment deleted, and
    /// those messages read the same, before and after a restart.
    #[tokio::test]
    async fn d1_a_mostly_dead_segment_is_compacted_into_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let (store, journal) = open_checkpointing(dir.path());
        let first = segment_files(dir.path())[0];
        // Compaction finds a segment's messages queue by queue.
        journal.submit(put_queue(1)).wait().await.unwrap();
        let body = |seq: u64| format!("{seq}-{}", "x".repeat(500));
        let puts = (1..=20).flat_map(|seq| put_message(seq, &body(seq)));
        journal.submit(puts.collect()).wait().await.unwrap();
        journal
            .submit(delete((1..=20).filter(|seq| seq % 10 != 0)))
            .wait()
            .await
            .unwrap();
        until("the compacted segment's deletion", || {
            !segment_files(dir.path()).contains(&first)
        })
        .await;
        assert!(store.segment_use().unwrap().is_empty());
        let want = [Some(body(10)), Some(body(20))];
        assert_eq!(bodies(&store, &[10, 20]), want);
        assert_eq!(bodies(&store, &[11]), [None]);
        drop(journal);
        drop(store);
        let (store, _journal) = open_checkpointing(dir.path());
        assert_eq!(bodies(&store, &[10, 20]), want);
    }

    /// A store written before segments: its single log file is replayed
    /// at the first start (the data of its puts kept in redb), then
    /// removed.
    #[tokio::test]
    async fn d1_a_legacy_log_is_replayed_then_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
        let mut record = Vec::new();
        Log::start_record(&mut record);
        for change in put_message(4, "from the old log") {
            log_record::encode(&change, &mut record);
        }
        let mut scratch = Log::create(&wal::os(), &dir.path().join("scratch"), 1).unwrap();
        scratch.write(1, &mut record).unwrap();
        let mut legacy = b"SLUICEW1".to_vec();
        legacy.extend_from_slice(&record);
        std::fs::write(dir.path().join(wal::LEGACY_LOG_FILE), legacy).unwrap();
        let recovered = recover(store.clone(), dir.path()).unwrap();
        assert_eq!(recovered.replayed, 1);
        assert!(!dir.path().join(wal::LEGACY_LOG_FILE).exists());
        assert!(store.segment_use().unwrap().is_empty());
        assert_eq!(bodies(&store, &[4]), [Some("from the old log".to_string())]);
    }

    /// The same journal over a log that can be written acknowledges both.
    #[tokio::test]
    async fn a_working_log_acknowledges_writes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
        let recovered = recover(store, dir.path()).unwrap();
        let journal = Journal::durable(recovered, Duration::from_secs(3600));
        journal.submit(put_queue(1)).wait().await.unwrap();
        journal.submit(put_queue(2)).wait().await.unwrap();
    }
}
