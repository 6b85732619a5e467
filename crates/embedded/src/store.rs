//! Durable records in redb: queues, messages and their delivery states.
//!
//! Tables are keyed so that one queue's messages are contiguous: `queues`
//! (id → record), `messages` and `states` ((queue, seq) → the message, and
//! its delivery state or its place in a log segment), `heads` (where each
//! queue's receivable messages start), `segments` (the log segments rows
//! still point into), `dedup` (FIFO deduplication windows), `failures`
//! (consumers' last failure reasons), `move_tasks`, and `meta` for
//! high-water marks that must never go back (ids are never reused, so a
//! receipt handle from before a restart can never name another message).
//! docs/embedded-engine.md describes each row's layout.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use redb::{
    Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
};

use std::collections::BTreeMap;

use crate::change::{Change, QueueRecord};
use crate::codec::{self, CorruptRecord};
use crate::dedup::Seen;
use crate::log_record;
use crate::message::{MessageData, MessageState};
use crate::wal::{BodyAt, Segments};
use sluice_broker::MoveTask;

const QUEUES: TableDefinition<u64, &[u8]> = TableDefinition::new("queues");
/// The data of the messages whose data is not in the log (moved, redriven,
/// compacted out of a segment), or a record pointing into the log
/// ([`codec::encode_in_log`]) in stores written before such pointers moved
/// into `states`.
const MESSAGES: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("messages");
/// Every stored message's delivery state. For a message whose data lies
/// in the log the row also holds where, and the message's head
/// ([`codec::encode_state_in_log`]): that message has no other row, so a
/// send, receive and delete each change one tree, not three.
const STATES: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("states");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const DEDUP: TableDefinition<(u64, &str), &[u8]> = TableDefinition::new("dedup");
const TASKS: TableDefinition<&str, &[u8]> = TableDefinition::new("move_tasks");
const FAILURES: TableDefinition<(u64, u64), &str> = TableDefinition::new("failures");
/// The head ([`codec::head_prefix`]: tens of bytes) of each message with a
/// record in `messages`: a start reads these instead of every body.
const HEADS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("heads");
/// For each log segment holding the data of a stored message: how many
/// messages and bytes, and the sequences between which they are
/// ([`SegmentUse`]). A segment without an entry holds none and can go.
const SEGMENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("segments");

const NEXT_SEQ: &str = "next_seq";
const NEXT_QUEUE_ID: &str = "next_queue_id";
/// The last log record applied: written in the transaction that applies
/// it, so what redb holds durably names exactly the records it holds.
const APPLIED_LSN: &str = "applied_lsn";
/// Set once `heads` holds a head for every message (stores written before
/// it existed get it built at their first open).
const HEADS_BUILT: &str = "heads_built";

/// Errors of the durable store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// redb failed.
    #[error("storage: {0}")]
    Redb(String),
    /// A record did not decode.
    #[error(transparent)]
    Corrupt(#[from] CorruptRecord),
    /// A queue record did not decode.
    #[error("corrupt queue record: {0}")]
    QueueRecord(#[from] serde_json::Error),
    /// The write-ahead log failed, or could not be read back.
    #[error("write-ahead log: {0}")]
    Log(String),
    /// An earlier write failed; the engine accepts no more writes.
    #[error("an earlier write to storage failed; restart the server")]
    Failed,
}

/// The store's own file errors are those of the log's segments.
impl From<std::io::Error> for StoreError {
    fn from(e: std::io::Error) -> Self {
        StoreError::Log(e.to_string())
    }
}

macro_rules! redb_err {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::Redb(e.to_string())
            }
        }
    )*};
}
redb_err!(
    redb::Error,
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::SetDurabilityError
);

/// Everything read back at start-up but the messages, which
/// [`Store::for_each_message`] streams.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Queues with their messages.
    pub queues: Vec<RecoveredQueue>,
    /// First sequence not yet used.
    pub next_seq: u64,
    /// First queue id not yet used.
    pub next_queue_id: u64,
    /// Message move tasks.
    pub tasks: Vec<MoveTask>,
}

/// A queue read back at start-up.
#[derive(Debug)]
pub struct RecoveredQueue {
    /// Queue id.
    pub id: u64,
    /// Its record.
    pub record: QueueRecord,
    /// Its FIFO deduplication window.
    pub dedup: Vec<(String, Seen)>,
    /// Failure reasons consumers gave, by sequence.
    pub failures: Vec<(u64, String)>,
}

/// Fills `heads` from `messages` unless it already matches them: a store
/// written before the table existed, or one an older binary wrote in
/// since (the counts then differ).
fn build_heads(txn: &redb::WriteTransaction, segments: &Segments) -> Result<(), StoreError> {
    let messages = txn.open_table(MESSAGES)?;
    let mut heads = txn.open_table(HEADS)?;
    let mut meta = txn.open_table(META)?;
    if meta.get(HEADS_BUILT)?.is_some() && heads.len()? == messages.len()? {
        return Ok(());
    }
    let began = Instant::now();
    heads.retain(|_, _| false)?;
    let mut built = 0u64;
    for row in messages.iter()? {
        let (key, record) = row?;
        let Some(data) = record_data(segments, record.value())? else {
            return Err(CorruptRecord("message data missing from the log").into());
        };
        heads.insert(key.value(), codec::head_prefix(&data)?)?;
        built += 1;
    }
    meta.insert(HEADS_BUILT, 1)?;
    if built > 0 {
        tracing::info!(
            messages = built,
            elapsed_ms = began.elapsed().as_millis() as u64,
            "indexed the stored messages' heads (once, for faster starts)"
        );
    }
    Ok(())
}

/// A message record's data: the record itself, or what it points at in
/// the log; `None` when that segment is gone.
fn record_data<'a>(
    segments: &Segments,
    record: &'a [u8],
) -> Result<Option<std::borrow::Cow<'a, [u8]>>, StoreError> {
    match codec::decode_in_log(record)? {
        None => Ok(Some(std::borrow::Cow::Borrowed(record))),
        Some(at) => Ok(segments
            .read(at)
            .map_err(|e| StoreError::Log(e.to_string()))?
            .map(std::borrow::Cow::Owned)),
    }
}

/// A row read from `heads`.
type HeadRow<'a> = Result<
    (
        redb::AccessGuard<'a, (u64, u64)>,
        redb::AccessGuard<'a, &'static [u8]>,
    ),
    redb::StorageError,
>;

/// The sequence of a row read from `heads`, unless reading it failed.
fn head_seq(row: &HeadRow<'_>) -> Option<u64> {
    row.as_ref().ok().map(|(key, _)| key.value().1)
}

/// What one log segment holds for the store: see [`SEGMENTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentUse {
    /// Messages whose data lies in it.
    pub messages: u64,
    /// Their data's bytes.
    pub bytes: u64,
    /// The lowest and highest of their sequences (bounds: deletes do not
    /// narrow them).
    pub seqs: (u64, u64),
}

impl SegmentUse {
    fn encode(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (i, v) in [self.messages, self.bytes, self.seqs.0, self.seqs.1]
            .into_iter()
            .enumerate()
        {
            out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, CorruptRecord> {
        let v = |i: usize| -> Result<u64, CorruptRecord> {
            let b = bytes
                .get(i * 8..i * 8 + 8)
                .ok_or(CorruptRecord("segment entry"))?;
            Ok(u64::from_le_bytes(
                b.try_into().map_err(|_| CorruptRecord("segment entry"))?,
            ))
        };
        Ok(Self {
            messages: v(0)?,
            bytes: v(1)?,
            seqs: (v(2)?, v(3)?),
        })
    }
}

/// The changes one transaction makes to segments' use, written to
/// [`SEGMENTS`] once at its end.
#[derive(Default)]
struct SegmentTally(BTreeMap<u64, (i64, i64, u64, u64)>);

impl SegmentTally {
    fn put(&mut self, at: BodyAt, seq: u64) {
        let e = self.0.entry(at.segment).or_insert((0, 0, u64::MAX, 0));
        e.0 += 1;
        e.1 += i64::from(at.len);
        e.2 = e.2.min(seq);
        e.3 = e.3.max(seq);
    }

    /// A message record leaves the store: counts it out of its segment if
    /// it points into one.
    fn removed(&mut self, record: &[u8]) {
        if let Ok(Some(at)) = codec::decode_in_log(record) {
            self.taken(at);
        }
    }

    /// A state row leaves the store: counts its message out of its
    /// segment if the row holds where its data lies.
    fn removed_state(&mut self, row: &[u8]) {
        if let Ok(Some((at, _))) = codec::state_in_log(row) {
            self.taken(at);
        }
    }

    /// The data at `at` no longer lies in its segment for the store.
    fn taken(&mut self, at: BodyAt) {
        let e = self.0.entry(at.segment).or_insert((0, 0, u64::MAX, 0));
        e.0 -= 1;
        e.1 -= i64::from(at.len);
    }

    fn write(self, table: &mut redb::Table<u64, &[u8]>) -> Result<(), StoreError> {
        for (segment, (messages, bytes, low, high)) in self.0 {
            let old = match table.get(segment)? {
                Some(v) => SegmentUse::decode(v.value())?,
                None => SegmentUse {
                    messages: 0,
                    bytes: 0,
                    seqs: (u64::MAX, 0),
                },
            };
            let messages = old.messages.saturating_add_signed(messages);
            if messages == 0 {
                table.remove(segment)?;
                continue;
            }
            let now = SegmentUse {
                messages,
                bytes: old.bytes.saturating_add_signed(bytes),
                seqs: (old.seqs.0.min(low), old.seqs.1.max(high)),
            };
            table.insert(segment, now.encode().as_slice())?;
        }
        Ok(())
    }
}

/// The redb database.
#[derive(Clone)]
pub struct Store {
    db: Arc<Database>,
    /// The log's segments, where most messages' data lies.
    segments: Arc<Segments>,
    /// Whether opening had to rebuild redb's allocator state by reading
    /// the whole file (a crash before any quick-repair commit).
    repaired: bool,
}

impl Store {
    /// Opens or creates the database file; `cache_bytes` bounds redb's
    /// page cache (redb's own default, 1 GiB, when `None`).
    pub fn open(path: &Path, cache_bytes: Option<usize>) -> Result<Self, StoreError> {
        let mut builder = Database::builder();
        if let Some(bytes) = cache_bytes {
            builder.set_cache_size(bytes);
        }
        let repairing = Arc::new(AtomicBool::new(false));
        let seen = repairing.clone();
        builder.set_repair_callback(move |_| {
            if !seen.swap(true, Ordering::Relaxed) {
                tracing::warn!("the store was not closed cleanly: rebuilding its allocator state");
            }
        });
        let began = Instant::now();
        let db = Arc::new(builder.create(path)?);
        let dir = path.parent().unwrap_or(Path::new("."));
        let segments = Arc::new(Segments::new(dir));
        let repaired = repairing.load(Ordering::Relaxed);
        if repaired {
            tracing::warn!(
                elapsed_ms = began.elapsed().as_millis() as u64,
                "store repaired"
            );
        }
        let mut txn = db.begin_write()?;
        // Like every durable commit here (see `checkpoint`): a commit
        // without it would drop the allocator state the last one saved.
        txn.set_quick_repair(true);
        {
            txn.open_table(QUEUES)?;
            txn.open_table(MESSAGES)?;
            txn.open_table(STATES)?;
            txn.open_table(META)?;
            txn.open_table(DEDUP)?;
            txn.open_table(TASKS)?;
            txn.open_table(FAILURES)?;
            txn.open_table(SEGMENTS)?;
        }
        build_heads(&txn, &segments)?;
        txn.commit()?;
        Ok(Self {
            db,
            segments,
            repaired,
        })
    }

    /// The log's segments, shared with the log writer, which closes one
    /// before it deletes it.
    pub fn segments(&self) -> &Arc<Segments> {
        &self.segments
    }

    /// The segments holding the data of a stored message, with what they
    /// hold.
    pub fn segment_use(&self) -> Result<BTreeMap<u64, SegmentUse>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(SEGMENTS)?;
        let mut out = BTreeMap::new();
        for row in table.iter()? {
            let (id, v) = row?;
            out.insert(id.value(), SegmentUse::decode(v.value())?);
        }
        Ok(out)
    }

    /// Copies into redb the data of up to `limit` messages still in
    /// `segment`, going on from queue and sequence `from`: how a segment
    /// that a few long-lived messages hold is reclaimed (once none is left
    /// in it, it goes at the next checkpoint). Returns where to go on
    /// from, or `None` once the segment is done.
    pub fn take_in(
        &self,
        segment: u64,
        from: (u64, u64),
        limit: usize,
    ) -> Result<Option<(u64, u64)>, StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::None)?;
        let mut resume = None;
        {
            let queues = txn.open_table(QUEUES)?;
            let mut messages = txn.open_table(MESSAGES)?;
            let mut heads = txn.open_table(HEADS)?;
            let mut states = txn.open_table(STATES)?;
            let mut table = txn.open_table(SEGMENTS)?;
            let Some(used) = table.get(segment)?.map(|v| SegmentUse::decode(v.value())) else {
                return Ok(None);
            };
            let (low, high) = used?.seqs;
            // (key, where its data lies, its state alone when that row also
            // held the data's place and head; `None` for a pointer record in
            // `messages`, as stores from before such rows hold).
            let mut found = Vec::new();
            'queues: for row in queues.range(from.0..)? {
                let queue = row?.0.value();
                let start = if queue == from.0 {
                    low.max(from.1)
                } else {
                    low
                };
                // Every message has a state row, so this walk meets them all.
                for row in states.range((queue, start)..=(queue, high.max(start)))? {
                    let (key, value) = row?;
                    let key = key.value();
                    let here = match codec::state_in_log(value.value())? {
                        Some((at, _)) => Some((at, Some(codec::state_only(value.value())?))),
                        None => match messages.get(key)? {
                            Some(record) => {
                                codec::decode_in_log(record.value())?.map(|at| (at, None))
                            }
                            None => None,
                        },
                    };
                    if let Some((at, state)) = here
                        && at.segment == segment
                    {
                        if found.len() == limit {
                            resume = Some(key);
                            break 'queues;
                        }
                        found.push((key, at, state));
                    }
                }
            }
            let mut tally = SegmentTally::default();
            for (key, at, state) in found {
                let data = self
                    .segments
                    .read(at)
                    .map_err(|e| StoreError::Log(e.to_string()))?
                    .ok_or(CorruptRecord("message data missing from the log"))?;
                messages.insert(key, data.as_slice())?;
                if let Some(state) = state {
                    heads.insert(key, codec::head_prefix(&data)?)?;
                    states.insert(key, state.as_slice())?;
                }
                tally.taken(at);
            }
            tally.write(&mut table)?;
        }
        txn.commit()?;
        Ok(resume)
    }

    /// Whether opening had to walk the whole file to repair it: a crash
    /// normally does not need that (see [`Store::checkpoint`]).
    pub fn repaired_on_open(&self) -> bool {
        self.repaired
    }

    /// The last log record the store holds (0 before the first).
    pub fn applied_lsn(&self) -> Result<u64, StoreError> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(APPLIED_LSN)?.map(|v| v.value()).unwrap_or(0))
    }

    /// Makes every change applied so far durable: one redb commit with
    /// immediate durability, which writes out what the commits without
    /// durability left in memory.
    ///
    /// With quick repair the commit also saves redb's allocator state (and
    /// commits in two phases), so that opening after a crash need not walk
    /// every page of the file to rebuild it: that walk took seconds with a
    /// million messages stored, and grows with the store.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        txn.set_quick_repair(true);
        txn.commit()?;
        Ok(())
    }

    /// Applies changes in one transaction, as log record `lsn`, without
    /// syncing: visible to every later read at once, durable at the next
    /// [`Store::checkpoint`]; the log makes them durable before that.
    ///
    /// With `log`, appends the changes as applied to it
    /// ([`crate::log_record`]): a move of a message on disk is written as
    /// the delete and put it became.
    pub fn apply<'a>(
        &self,
        changes: impl Iterator<Item = &'a Change>,
        lsn: u64,
        mut log: Option<&mut Vec<u8>>,
    ) -> Result<(), StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::None)?;
        {
            let mut queues = txn.open_table(QUEUES)?;
            let mut messages = txn.open_table(MESSAGES)?;
            let mut heads = txn.open_table(HEADS)?;
            let mut states = txn.open_table(STATES)?;
            let mut meta = txn.open_table(META)?;
            let mut dedup = txn.open_table(DEDUP)?;
            let mut tasks = txn.open_table(TASKS)?;
            let mut failures = txn.open_table(FAILURES)?;
            let mut segment_table = txn.open_table(SEGMENTS)?;
            let mut tally = SegmentTally::default();
            let mut max_seq = None::<u64>;
            let mut max_queue = None::<u64>;
            for change in changes {
                if let Some(out) = log.as_deref_mut()
                    && !matches!(change, Change::MoveMessage { .. })
                {
                    log_record::encode(change, out);
                }
                match change {
                    Change::PutQueue { id, record } => {
                        queues.insert(*id, record.as_slice())?;
                        max_queue = max_queue.max(Some(*id));
                    }
                    Change::DeleteQueue { id } => {
                        queues.remove(*id)?;
                        let range = (*id, 0)..=(*id, u64::MAX);
                        messages.retain_in(range.clone(), |_, record| {
                            tally.removed(record);
                            false
                        })?;
                        heads.retain_in(range.clone(), |_, _| false)?;
                        states.retain_in(range, |_, row| {
                            tally.removed_state(row);
                            false
                        })?;
                        dedup.retain_in((*id, "")..(*id + 1, ""), |_, _| false)?;
                        failures.retain_in((*id, 0)..=(*id, u64::MAX), |_, _| false)?;
                    }
                    Change::PutDedup { queue, key, seen } => {
                        dedup.insert((*queue, key.as_str()), seen.as_slice())?;
                    }
                    Change::DeleteDedup { queue, key } => {
                        dedup.remove((*queue, key.as_str()))?;
                    }
                    Change::PutFailure { queue, seq, reason } => {
                        failures.insert((*queue, *seq), reason.as_str())?;
                    }
                    Change::PutTask { handle, record } => {
                        tasks.insert(handle.as_str(), record.as_slice())?;
                    }
                    Change::PutMessage {
                        queue,
                        seq,
                        data,
                        state,
                        in_log,
                    } => {
                        let key = (*queue, *seq);
                        // Sequences are never reused; were one put twice,
                        // the segment of the row replaced must not count it
                        // any more.
                        let old = match in_log {
                            Some(at) => {
                                tally.put(*at, *seq);
                                let row = codec::encode_state_in_log(
                                    state,
                                    *at,
                                    codec::head_prefix(data)?,
                                );
                                states
                                    .insert(key, row.as_slice())?
                                    .map(|v| v.value().to_vec())
                            }
                            None => {
                                if let Some(old) = messages.insert(key, data.as_slice())? {
                                    tally.removed(old.value());
                                }
                                heads.insert(key, codec::head_prefix(data)?)?;
                                states
                                    .insert(key, state.as_slice())?
                                    .map(|v| v.value().to_vec())
                            }
                        };
                        if let Some(old) = old {
                            tally.removed_state(&old);
                            // A row of the other layout must not outlive it.
                            if in_log.is_some() && codec::state_in_log(&old)?.is_none() {
                                if let Some(record) = messages.remove(key)? {
                                    tally.removed(record.value());
                                }
                                heads.remove(key)?;
                            }
                        }
                        max_seq = max_seq.max(Some(*seq));
                    }
                    Change::PutState { queue, seq, state } => {
                        let key = (*queue, *seq);
                        let merged = match states.get(key)? {
                            // The message was deleted meanwhile: its state
                            // must not outlive it.
                            None => continue,
                            Some(old) => codec::state_in_log(old.value())?
                                .map(|_| codec::restate(old.value(), state)),
                        };
                        match merged {
                            Some(row) => states.insert(key, row.as_slice())?,
                            None => states.insert(key, state.as_slice())?,
                        };
                    }
                    Change::DeleteMessage { queue, seq } => {
                        let key = (*queue, *seq);
                        let in_log = match states.remove(key)? {
                            Some(old) => codec::state_in_log(old.value())?.map(|(at, _)| at),
                            None => None,
                        };
                        match in_log {
                            Some(at) => tally.taken(at),
                            None => {
                                if let Some(old) = messages.remove(key)? {
                                    tally.removed(old.value());
                                }
                                heads.remove(key)?;
                            }
                        }
                        failures.remove(key)?;
                    }
                    Change::MoveMessage {
                        from,
                        to,
                        state,
                        rewrite,
                    } => {
                        let in_log = match states.remove(*from)? {
                            Some(row) => codec::state_in_log(row.value())?.map(|(at, _)| at),
                            None => None,
                        };
                        let old = match in_log {
                            Some(at) => {
                                tally.taken(at);
                                self.segments
                                    .read(at)
                                    .map_err(|e| StoreError::Log(e.to_string()))?
                            }
                            None => {
                                let old = messages.remove(*from)?.map(|v| v.value().to_vec());
                                heads.remove(*from)?;
                                match old {
                                    Some(old) => {
                                        tally.removed(&old);
                                        record_data(&self.segments, &old)?.map(|d| d.into_owned())
                                    }
                                    None => None,
                                }
                            }
                        };
                        failures.remove(*from)?;
                        if let Some(out) = log.as_deref_mut() {
                            log_record::delete_message(out, *from);
                        }
                        let Some(old) = old else {
                            // Whoever took it out of the index owned it; a
                            // missing record is a bug, not a reason to stop.
                            tracing::warn!(
                                queue = from.0,
                                seq = from.1,
                                "moved message not in store"
                            );
                            continue;
                        };
                        let mut data = codec::decode_message(&old)?;
                        (rewrite.0)(&mut data);
                        let data = codec::encode_message(&data);
                        messages.insert(*to, data.as_slice())?;
                        heads.insert(*to, codec::head_prefix(&data)?)?;
                        states.insert(*to, state.as_slice())?;
                        if let Some(out) = log.as_deref_mut() {
                            log_record::put_message(out, *to, &data, state);
                        }
                        max_seq = max_seq.max(Some(to.1));
                    }
                    Change::Purge { queue, below } => {
                        let range = (*queue, 0)..(*queue, *below);
                        messages.retain_in(range.clone(), |_, record| {
                            tally.removed(record);
                            false
                        })?;
                        heads.retain_in(range.clone(), |_, _| false)?;
                        states.retain_in(range.clone(), |_, row| {
                            tally.removed_state(row);
                            false
                        })?;
                        failures.retain_in(range, |_, _| false)?;
                    }
                }
            }
            if let Some(seq) = max_seq {
                let stored = meta.get(NEXT_SEQ)?.map(|v| v.value()).unwrap_or(0);
                if seq + 1 > stored {
                    meta.insert(NEXT_SEQ, seq + 1)?;
                }
            }
            if let Some(id) = max_queue {
                let stored = meta.get(NEXT_QUEUE_ID)?.map(|v| v.value()).unwrap_or(0);
                if id + 1 > stored {
                    meta.insert(NEXT_QUEUE_ID, id + 1)?;
                }
            }
            meta.insert(APPLIED_LSN, lsn)?;
            tally.write(&mut segment_table)?;
        }
        txn.commit()?;
        Ok(())
    }

    /// Reads every queue back, without its messages.
    pub fn load(&self) -> Result<Recovered, StoreError> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        let mut out = Recovered {
            next_seq: meta.get(NEXT_SEQ)?.map(|v| v.value()).unwrap_or(1).max(1),
            next_queue_id: meta
                .get(NEXT_QUEUE_ID)?
                .map(|v| v.value())
                .unwrap_or(1)
                .max(1),
            queues: Vec::new(),
            tasks: Vec::new(),
        };
        for row in txn.open_table(TASKS)?.iter()? {
            let (_, record) = row?;
            out.tasks.push(serde_json::from_slice(record.value())?);
        }
        let queues = txn.open_table(QUEUES)?;
        let dedup = txn.open_table(DEDUP)?;
        let failures = txn.open_table(FAILURES)?;
        for row in queues.iter()? {
            let (id, record) = row?;
            let id = id.value();
            let record: QueueRecord = serde_json::from_slice(record.value())?;
            let mut recovered = RecoveredQueue {
                id,
                record,
                dedup: Vec::new(),
                failures: Vec::new(),
            };
            for row in failures.range((id, 0)..=(id, u64::MAX))? {
                let (key, reason) = row?;
                recovered
                    .failures
                    .push((key.value().1, reason.value().to_string()));
            }
            for row in dedup.range((id, "")..(id + 1, ""))? {
                let (key, value) = row?;
                let (_, key) = key.value();
                let seen = Seen::decode(value.value()).ok_or(CorruptRecord("dedup entry"))?;
                recovered.dedup.push((key.to_string(), seen));
            }
            out.queues.push(recovered);
        }
        Ok(out)
    }

    /// Streams one queue's messages in sequence order to `each` as the
    /// index needs them: sequence, start of the retention clock, group and
    /// delivery state. Reads the messages' heads, not their records: a
    /// start costs tens of bytes per message whatever the bodies' size.
    /// Returns how many there were.
    pub fn for_each_message(
        &self,
        queue: u64,
        mut each: impl FnMut(u64, u64, Option<&str>, MessageState),
    ) -> Result<usize, StoreError> {
        let txn = self.db.begin_read()?;
        let messages = txn.open_table(MESSAGES)?;
        let heads = txn.open_table(HEADS)?;
        let states = txn.open_table(STATES)?;
        let range = (queue, 0)..=(queue, u64::MAX);
        // Every message has a state row; `heads` has rows, in the same
        // order, for the messages whose state row does not hold the head.
        let mut head_rows = heads.range(range.clone())?.peekable();
        let mut count = 0;
        for row in states.range(range)? {
            let (key, value) = row?;
            let (_, seq) = key.value();
            let row = value.value();
            let state = codec::decode_state(row)?;
            match codec::state_in_log(row)? {
                Some((_, head)) => {
                    let (enqueued_at, group) = codec::decode_head(head)?;
                    each(seq, enqueued_at, group, state);
                }
                None => {
                    while head_rows
                        .next_if(|r| head_seq(r).is_some_and(|s| s < seq))
                        .is_some()
                    {}
                    match head_rows.next_if(|r| head_seq(r) == Some(seq)) {
                        Some(head) => {
                            let (_, head) = head?;
                            let (enqueued_at, group) = codec::decode_head(head.value())?;
                            each(seq, enqueued_at, group, state);
                        }
                        None => {
                            if let Some(Err(_)) = head_rows.peek() {
                                head_rows.next().transpose()?;
                            }
                            if messages.get(key.value())?.is_some() {
                                return Err(CorruptRecord("message without head").into());
                            }
                            // A state row without a message, which stores
                            // from before a state was written only for a
                            // stored message may hold: nothing to index.
                            continue;
                        }
                    }
                }
            }
            count += 1;
        }
        Ok(count)
    }

    /// Makes this a store from before the heads table (for tests).
    #[cfg(test)]
    pub fn drop_heads(&self) {
        let mut txn = self.db.begin_write().unwrap();
        txn.set_quick_repair(true);
        txn.delete_table(HEADS).unwrap();
        txn.open_table(META).unwrap().remove(HEADS_BUILT).unwrap();
        txn.commit().unwrap();
    }

    /// Applies `puts` as a binary from before the heads table would:
    /// without their heads (for tests).
    #[cfg(test)]
    pub fn put_without_heads(&self, puts: &[Change]) {
        let mut txn = self.db.begin_write().unwrap();
        txn.set_quick_repair(true);
        {
            let mut messages = txn.open_table(MESSAGES).unwrap();
            let mut states = txn.open_table(STATES).unwrap();
            for change in puts {
                if let Change::PutMessage {
                    queue,
                    seq,
                    data,
                    state,
                    ..
                } = change
                {
                    messages.insert((*queue, *seq), data.as_slice()).unwrap();
                    states.insert((*queue, *seq), state.as_slice()).unwrap();
                }
            }
        }
        txn.commit().unwrap();
    }

    /// Rows in `messages`, `heads` and `states` (for tests).
    #[cfg(test)]
    pub fn rows(&self) -> Result<(u64, u64, u64), StoreError> {
        let txn = self.db.begin_read()?;
        Ok((
            txn.open_table(MESSAGES)?.len()?,
            txn.open_table(HEADS)?.len()?,
            txn.open_table(STATES)?.len()?,
        ))
    }

    /// Rewrites each message whose state row says where its data lies in
    /// the log as the earlier layout stored it: a pointer record in
    /// `messages`, its head in `heads`, its state alone (for tests).
    #[cfg(test)]
    pub fn to_pointer_records(&self) {
        let txn = self.db.begin_write().unwrap();
        {
            let mut messages = txn.open_table(MESSAGES).unwrap();
            let mut heads = txn.open_table(HEADS).unwrap();
            let mut states = txn.open_table(STATES).unwrap();
            let rows: Vec<((u64, u64), Vec<u8>)> = states
                .iter()
                .unwrap()
                .map(|r| {
                    let (k, v) = r.unwrap();
                    (k.value(), v.value().to_vec())
                })
                .collect();
            for (key, row) in rows {
                let Some((at, head)) = codec::state_in_log(&row).unwrap() else {
                    continue;
                };
                messages
                    .insert(key, codec::encode_in_log(at).as_slice())
                    .unwrap();
                heads.insert(key, head).unwrap();
                states
                    .insert(key, codec::state_only(&row).unwrap().as_slice())
                    .unwrap();
            }
        }
        txn.commit().unwrap();
    }

    /// Takes redb's write lock until the transaction is dropped: the next
    /// apply waits for it, as it would behind a slow one.
    #[cfg(test)]
    pub fn hold_writes(&self) -> Result<redb::WriteTransaction, StoreError> {
        Ok(self.db.begin_write()?)
    }

    /// A message record's data, read from the log when it lies there;
    /// `None` when its segment is gone (the message was deleted meanwhile).
    fn decode_record(&self, record: &[u8]) -> Result<Option<MessageData>, StoreError> {
        match record_data(&self.segments, record)? {
            Some(data) => Ok(Some(codec::decode_message(&data)?)),
            None => Ok(None),
        }
    }

    /// Reads the data of some of a queue's messages in one read
    /// transaction; `None` for a message no longer (or not yet) stored.
    pub fn read_messages(
        &self,
        queue: u64,
        seqs: &[u64],
    ) -> Result<Vec<Option<MessageData>>, StoreError> {
        let txn = self.db.begin_read()?;
        let messages = txn.open_table(MESSAGES)?;
        let states = txn.open_table(STATES)?;
        let (Some(&low), Some(&high)) = (seqs.iter().min(), seqs.iter().max()) else {
            return Ok(Vec::new());
        };
        let mut out: Vec<Option<MessageData>> = seqs.iter().map(|_| None).collect();
        // Positions in `seqs` whose data lies in the log, and where; and
        // those whose state row does not say where the data is: their
        // data, if any, is in `messages`.
        let (mut in_log, mut elsewhere) = (Vec::new(), Vec::new());
        let mut found = |i: usize, row: &[u8]| -> Result<(), StoreError> {
            match codec::state_in_log(row)? {
                Some((at, _)) => in_log.push((i, at)),
                None => elsewhere.push(i),
            }
            Ok(())
        };
        if high - low > 2 * seqs.len() as u64 + 16 {
            for (i, &seq) in seqs.iter().enumerate() {
                if let Some(row) = states.get((queue, seq))? {
                    found(i, row.value())?;
                }
            }
        } else {
            // Close together, as the oldest messages a receive takes are:
            // one walk along the leaves instead of a descent from the root
            // for each (with millions of messages, through pages mostly not
            // cached).
            let mut order: Vec<usize> = (0..seqs.len()).collect();
            order.sort_by_key(|&i| seqs[i]);
            let mut wanted = order.iter().peekable();
            for row in states.range((queue, low)..=(queue, high))? {
                let (key, value) = row?;
                let seq = key.value().1;
                while wanted.next_if(|&&i| seqs[i] < seq).is_some() {}
                while let Some(&i) = wanted.next_if(|&&i| seqs[i] == seq) {
                    found(i, value.value())?;
                }
                if wanted.peek().is_none() {
                    break;
                }
            }
        }
        // A segment is gone once its messages were deleted meanwhile.
        let ats: Vec<BodyAt> = in_log.iter().map(|&(_, at)| at).collect();
        self.segments.read_many(&ats, |k, data| {
            out[in_log[k].0] = Some(codec::decode_message(data)?);
            Ok::<(), StoreError>(())
        })?;
        for i in elsewhere {
            if let Some(record) = messages.get((queue, seqs[i]))? {
                out[i] = self.decode_record(record.value())?;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::change::Rewrite;

    /// A put of message `seq` of queue 1 with `body`, for tests here and
    /// in the journal.
    pub(crate) fn put(seq: u64, body: &str) -> Change {
        let data = MessageData {
            message_id: [1; 16],
            sent_at: 0,
            enqueued_at: 0,
            body: body.into(),
            attributes: Default::default(),
            system_attributes: Default::default(),
            group_id: None,
            dedup_id: None,
            body_md5: None,
        };
        Change::PutMessage {
            queue: 1,
            seq,
            data: codec::encode_message(&data),
            state: never_received(),
            in_log: None,
        }
    }

    /// The state of a message nobody received yet.
    fn never_received() -> [u8; codec::STATE_LEN] {
        codec::encode_state(&MessageState {
            visible_at: 0,
            receive_count: 0,
            first_receive_at: 0,
            last_receive_at: 0,
        })
    }

    /// The sequences a start would read back for `queue`.
    fn started(store: &Store, queue: u64) -> Vec<u64> {
        let mut seqs = Vec::new();
        store
            .for_each_message(queue, |seq, _, _, _| seqs.push(seq))
            .unwrap();
        seqs
    }

    /// D1 across a start that reads each message's head, not its record: heads follow
    /// every put, delete, purge and move, and a store written before they
    /// existed gets them at its first open.
    #[test]
    fn d1_heads_follow_the_messages_and_older_stores_get_them_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.redb");
        let store = Store::open(&path, None).unwrap();
        let puts: Vec<Change> = (1..=6).map(|seq| put(seq, "body")).collect();
        store.apply(puts.iter(), 1, None).unwrap();
        let changes = [
            Change::DeleteMessage { queue: 1, seq: 2 },
            Change::Purge { queue: 1, below: 2 },
            Change::MoveMessage {
                from: (1, 3),
                to: (2, 7),
                state: never_received(),
                rewrite: Rewrite(Arc::new(|m| m.group_id = Some("g".into()))),
            },
        ];
        store.apply(changes.iter(), 2, None).unwrap();
        assert_eq!(started(&store, 1), [4, 5, 6]);
        let mut groups = Vec::new();
        store
            .for_each_message(2, |seq, _, group, _| {
                groups.push((seq, group.map(str::to_string)))
            })
            .unwrap();
        assert_eq!(groups, [(7, Some("g".to_string()))]);

        store.drop_heads();
        drop(store);
        let store = Store::open(&path, None).unwrap();
        assert_eq!(started(&store, 1), [4, 5, 6]);
        assert_eq!(started(&store, 2), [7]);

        // An older binary put a message (and no head) after the build.
        store.put_without_heads(&[put(8, "late")]);
        drop(store);
        let store = Store::open(&path, None).unwrap();
        assert_eq!(started(&store, 1), [4, 5, 6, 8]);
        store
            .apply([Change::DeleteQueue { id: 2 }].iter(), 3, None)
            .unwrap();
        assert!(started(&store, 2).is_empty());
    }

    /// D1 across compaction in steps: `take_in` copies a segment's
    /// messages into redb a few at a time, across queues, going on from
    /// where it stopped, and leaves other segments' messages alone; each
    /// reads the same before and after, and once none is left the segment
    /// has no entry.
    #[test]
    fn d1_compaction_in_steps_moves_every_message_of_its_segment_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
        // Queues 1 and 3 get messages in segment 5, queue 2 in segment 6.
        let layout = [(5, vec![(1, 1..=4), (3, 7..=9)]), (6, vec![(2, 5..=6)])];
        let changes = puts_in_log(dir.path(), &layout);
        store.apply(changes.iter(), 1, None).unwrap();
        let indexed = |queue: u64| {
            let mut seen = Vec::new();
            store
                .for_each_message(queue, |seq, _, _, _| seen.push(seq))
                .unwrap();
            seen
        };
        let indexed_before: Vec<_> = [1, 2, 3].map(indexed).to_vec();
        let body = |queue: u64, seq: u64| {
            store.read_messages(queue, &[seq]).unwrap()[0]
                .as_ref()
                .map(|m| m.body.clone())
        };
        let all = [
            (1, 1),
            (1, 2),
            (1, 3),
            (1, 4),
            (2, 5),
            (2, 6),
            (3, 7),
            (3, 8),
            (3, 9),
        ];
        let before: Vec<_> = all.iter().map(|&(q, s)| body(q, s)).collect();
        assert_eq!(store.segment_use().unwrap()[&5].messages, 7);

        let mut from = (0, 0);
        let mut steps = 0;
        while let Some(next) = store.take_in(5, from, 3).unwrap() {
            from = next;
            steps += 1;
        }
        assert_eq!(steps, 2, "seven messages, three a step");
        let used = store.segment_use().unwrap();
        assert!(!used.contains_key(&5), "{used:?}");
        assert_eq!(used[&6].messages, 2);
        // Segment 5 can go: what moved reads from redb alone.
        store.segments().forget(5);
        let log_dir = dir.path().join(crate::wal::LOG_DIR);
        std::fs::remove_file(log_dir.join(format!("{:020}.wal", 5))).unwrap();
        let after: Vec<_> = all.iter().map(|&(q, s)| body(q, s)).collect();
        assert_eq!(before, after);
        assert!(after.iter().all(Option::is_some));
        // A start indexes the same messages.
        assert_eq!([1, 2, 3].map(indexed).to_vec(), indexed_before);
    }

    /// A queue and some of its sequences.
    type QueueSeqs = (u64, std::ops::RangeInclusive<u64>);

    /// Writes the puts of `layout` (segment, then queue and sequences) to
    /// log segments in `dir`, as the log writer does, and returns them,
    /// pointing at their data, with a PutQueue for each queue first.
    fn puts_in_log(dir: &Path, layout: &[(u64, Vec<QueueSeqs>)]) -> Vec<Change> {
        let mut queues: Vec<u64> = layout
            .iter()
            .flat_map(|(_, q)| q.iter().map(|(id, _)| *id))
            .collect();
        queues.sort_unstable();
        queues.dedup();
        let mut changes: Vec<Change> = queues
            .into_iter()
            .map(|id| Change::PutQueue {
                id,
                record: b"{}".to_vec(),
            })
            .collect();
        for (segment, queues) in layout {
            let mut log = crate::wal::Log::create(dir, *segment).unwrap();
            let mut buf = Vec::new();
            crate::wal::Log::start_record(&mut buf);
            let base = log.end();
            for (queue, seqs) in queues {
                for seq in seqs.clone() {
                    let Change::PutMessage { data, state, .. } = put(seq, &format!("m{seq}"))
                    else {
                        unreachable!()
                    };
                    let start = log_record::put_message(&mut buf, (*queue, seq), &data, &state);
                    let at = BodyAt {
                        segment: *segment,
                        offset: base + start as u64,
                        len: data.len() as u32,
                    };
                    changes.push(Change::PutMessage {
                        queue: *queue,
                        seq,
                        data,
                        state,
                        in_log: Some(at),
                    });
                }
            }
            log.write(1, &mut buf).unwrap();
        }
        changes
    }

    /// A message whose data lies in the log is one row of `states`: a send,
    /// a receive and a delete each change one tree. The row keeps the
    /// data's place and the head through receives, a start indexes the
    /// message from it alone, and its delete counts it out of its segment.
    #[test]
    fn d1_a_message_in_the_log_is_one_row_from_send_to_delete() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
        let changes = puts_in_log(dir.path(), &[(4, vec![(1, 1..=3)])]);
        store.apply(changes.iter(), 1, None).unwrap();
        assert_eq!(store.rows().unwrap(), (0, 0, 3), "messages, heads, states");

        let received = MessageState {
            visible_at: 500,
            receive_count: 1,
            first_receive_at: 100,
            last_receive_at: 100,
        };
        let receive = Change::PutState {
            queue: 1,
            seq: 2,
            state: codec::encode_state(&received),
        };
        store.apply([receive].iter(), 2, None).unwrap();
        assert_eq!(store.rows().unwrap(), (0, 0, 3));
        let read = store.read_messages(1, &[1, 2, 3]).unwrap();
        let bodies: Vec<_> = read
            .iter()
            .map(|m| m.as_ref().map(|m| m.body.as_str()))
            .collect();
        assert_eq!(bodies, [Some("m1"), Some("m2"), Some("m3")]);
        let mut indexed = Vec::new();
        store
            .for_each_message(1, |seq, _, _, state| indexed.push((seq, state)))
            .unwrap();
        assert_eq!(indexed.len(), 3);
        assert_eq!(indexed[1], (2, received));

        let delete = Change::DeleteMessage { queue: 1, seq: 2 };
        store.apply([delete].iter(), 3, None).unwrap();
        assert_eq!(store.rows().unwrap(), (0, 0, 2));
        assert_eq!(store.segment_use().unwrap()[&4].messages, 2);
        assert!(store.read_messages(1, &[2]).unwrap()[0].is_none());
        // A state for a message deleted meanwhile leaves no row behind.
        let late = Change::PutState {
            queue: 1,
            seq: 2,
            state: codec::encode_state(&received),
        };
        store.apply([late].iter(), 4, None).unwrap();
        assert_eq!(store.rows().unwrap(), (0, 0, 2));
        let purge = Change::Purge {
            queue: 1,
            below: 10,
        };
        store.apply([purge].iter(), 5, None).unwrap();
        assert_eq!(store.rows().unwrap(), (0, 0, 0));
        assert!(store.segment_use().unwrap().is_empty());

        // Were a sequence put again (sequences are never reused), no row of
        // the first put would outlive the second.
        store.apply([put(9, "in redb")].iter(), 6, None).unwrap();
        assert_eq!(store.rows().unwrap(), (1, 1, 1));
        let again = puts_in_log(dir.path(), &[(8, vec![(1, 9..=9)])]);
        store.apply(again.iter(), 7, None).unwrap();
        assert_eq!(store.rows().unwrap(), (0, 0, 1));
        assert_eq!(store.segment_use().unwrap()[&8].messages, 1);
    }

    /// A store written when a message in the log had a pointer record in
    /// `messages`, its head in `heads` and its state alone in `states`
    /// (before this layout) reads, indexes, receives, deletes and compacts
    /// as before.
    #[test]
    fn d1_pointer_records_of_the_earlier_layout_still_work() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
        let changes = puts_in_log(dir.path(), &[(4, vec![(1, 1..=4)])]);
        store.apply(changes.iter(), 1, None).unwrap();
        store.to_pointer_records();
        assert_eq!(store.rows().unwrap(), (4, 4, 4));

        let read = store.read_messages(1, &[4, 1]).unwrap();
        let bodies: Vec<_> = read
            .iter()
            .map(|m| m.as_ref().map(|m| m.body.as_str()))
            .collect();
        assert_eq!(bodies, [Some("m4"), Some("m1")]);
        let count = store.for_each_message(1, |_, _, _, _| {}).unwrap();
        assert_eq!(count, 4);
        let receive = Change::PutState {
            queue: 1,
            seq: 1,
            state: never_received(),
        };
        let delete = Change::DeleteMessage { queue: 1, seq: 2 };
        store.apply([receive, delete].iter(), 2, None).unwrap();
        assert_eq!(store.rows().unwrap(), (3, 3, 3));
        assert_eq!(store.segment_use().unwrap()[&4].messages, 3);
        while store.take_in(4, (0, 0), 2).unwrap().is_some() {}
        assert!(store.segment_use().unwrap().is_empty());
        let read = store.read_messages(1, &[1, 3, 4]).unwrap();
        assert!(read.iter().all(Option::is_some));
        assert_eq!(store.for_each_message(1, |_, _, _, _| {}).unwrap(), 3);
    }

    /// Reads answer in the order asked, with `None` for what is not
    /// stored, whether the sequences are close (one walk along the
    /// leaves) or far apart (one lookup each), repeated or out of order.
    #[test]
    fn read_messages_answers_in_the_order_asked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
        let changes: Vec<Change> = [3, 4, 5, 7, 9, 1000]
            .into_iter()
            .map(|seq| put(seq, &format!("m{seq}")))
            .collect();
        store.apply(changes.iter(), 1, None).unwrap();
        let bodies = |seqs: &[u64]| -> Vec<Option<String>> {
            let read = store.read_messages(1, seqs).unwrap();
            read.into_iter().map(|m| m.map(|m| m.body)).collect()
        };
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            bodies(&[9, 3, 6, 4, 9, 2]),
            [some("m9"), some("m3"), None, some("m4"), some("m9"), None]
        );
        assert_eq!(bodies(&[1000, 5, 8]), [some("m1000"), some("m5"), None]);
        assert_eq!(bodies(&[7]), [some("m7")]);
        assert!(bodies(&[]).is_empty());
        assert_eq!(store.read_messages(2, &[3]).unwrap().len(), 1);
        assert!(store.read_messages(2, &[3]).unwrap()[0].is_none());
    }
}
