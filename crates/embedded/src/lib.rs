//! sluice's embedded engine: every queue's index in memory, every change
//! durable in redb through one group-commit writer.
//!
//! Each queue has its own lock; no lock is held across an await. A request
//! changes the index under its queue's lock, hands the matching durable
//! changes to the [`journal`] before releasing the lock (so commits follow
//! the index's order), then waits outside the lock until its commit is on
//! disk before it answers. With `in_memory` there is no journal and nothing
//! survives a restart (rule D2: named, opt-in).

mod body_cache;
mod codec;
mod dead_letter;
mod dedup;
mod fair;
mod fifo;
mod group_commit;
mod groups;
mod journal;
mod log_record;
mod queue_state;
mod seq_hash;
mod store;
mod wal;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use sluice_broker::tags;
use sluice_broker::{
    Broker, CreateQueue, MessageFilter, MoveTask, Nack, NewMessage, PeekPage, PeekedMessage,
    QueueCounts, QueueMeta, QueueStats, ReceiveOptions, ReceivedMessage, Redrive, RedriveOutcome,
    SentMessage, StorageStats, VisibilityChange,
};
use sluice_core::clock::{Clock, Millis};
use sluice_core::limits::{MAX_INFLIGHT, PURGE_INTERVAL_SECS, RECREATE_AFTER_DELETE_SECS};
use sluice_core::message::message_size;
use sluice_core::receipt::ReceiptHandle;
use sluice_core::{ErrorCode, SqsError};
use tokio::sync::Notify;

use body_cache::BodyBudget;
use dedup::{DedupWindow, Seen};
use journal::{Journal, Ticket};
use queue_state::{
    Attempt, DeliveryRules, MessageData, MessageState, Order, Phase, QueueState, Removed,
};
use sluice_broker::activity::{self, Activity};
use sluice_broker::moves::{
    key_of_arn_near, recorded_failure, redrive_destination, refused_reason, replay_count,
    sibling_arn, unmovable_reason,
};
pub use store::StoreError;
use store::{Change, QueueRecord, Store};

/// The file that holds the durable records inside the data directory.
pub const DATA_FILE: &str = "sluice.redb";

/// The write-ahead log's segments inside the data directory: changes not
/// yet checkpointed into [`DATA_FILE`], and the data of the messages
/// stored since; [`newest_log_segment`] names the one being written.
pub use wal::LOG_DIR;
pub use wal::newest_segment as newest_log_segment;

/// How often the background sweeper applies retention and wakes waiters.
const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// A cached body older than this may go when the budget is over half used,
/// so queues nobody reads give the budget back to those being read.
const CACHE_IDLE_MS: Millis = 10_000;

/// Messages looked at per lock hold while a peek or a redrive reads bodies.
const SCAN_CHUNK: usize = 256;

/// Settings of the durable engine.
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedOptions {
    /// Bytes of recently sent message bodies kept in memory so that a
    /// receive soon after the send needs no read from disk. Older bodies
    /// are read from the store when needed. Default 64 MiB.
    pub body_cache_bytes: usize,
    /// redb's page cache, bytes; `None` keeps redb's default (1 GiB).
    pub storage_cache_bytes: Option<usize>,
    /// Longest time a change stays only in the write-ahead log before a
    /// checkpoint writes it into the store (default 1 s; 64 MiB of log
    /// also triggers one). Longer means fewer, bigger checkpoints and more
    /// to replay after a crash.
    pub checkpoint_interval: Duration,
}

impl Default for EmbeddedOptions {
    fn default() -> Self {
        Self {
            body_cache_bytes: 64 << 20,
            storage_cache_bytes: None,
            checkpoint_interval: Duration::from_secs(1),
        }
    }
}

/// The embedded engine.
#[derive(Clone)]
pub struct EmbeddedBroker {
    inner: Arc<Inner>,
}

struct Inner {
    clock: Arc<dyn Clock>,
    queues: RwLock<HashMap<String, Arc<QueueCell>>>,
    journal: Journal,
    /// Durable mode: where bodies not in memory are read from.
    store: Option<Store>,
    /// Durable mode: the budget of bodies kept in memory.
    budget: Option<Arc<BodyBudget>>,
    next_seq: AtomicU64,
    next_queue_id: AtomicU64,
    /// Message move task records (rule R7).
    tasks: Mutex<Vec<MoveTask>>,
    /// When each name was last deleted, so that it cannot be created again
    /// for a minute (rule V19). In memory only: a restart forgets it.
    deleted: Mutex<HashMap<String, Millis>>,
    /// How long a deleted name stays taken (ms); 0 frees it at once.
    deleted_name_hold_ms: AtomicU64,
}

struct QueueCell {
    id: u64,
    state: Mutex<QueueState>,
    /// Wakes long polls when a message may have become receivable.
    arrivals: Notify,
    /// Activity counters (rule M1).
    activity: Activity,
}

/// What recovery found.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecoveryStats {
    /// Queues read back.
    pub queues: usize,
    /// Messages read back.
    pub messages: usize,
    /// Write-ahead log records replayed into the store first.
    pub log_records: usize,
    /// Whether the store had to be repaired by reading all of it, which
    /// the checkpoints' saved allocator state normally spares a restart
    /// after a crash.
    pub store_repaired: bool,
}

impl EmbeddedBroker {
    /// An engine that keeps everything in memory only: not durable.
    pub fn in_memory(clock: Arc<dyn Clock>) -> Self {
        Self::with_journal(clock, Journal::Memory, None, None, 1, 1)
    }

    /// Opens (or creates) the durable engine in `dir` with the default
    /// [`EmbeddedOptions`], reading back every queue and message index
    /// stored there.
    pub fn open(dir: &Path, clock: Arc<dyn Clock>) -> Result<(Self, RecoveryStats), StoreError> {
        Self::open_with(dir, clock, EmbeddedOptions::default())
    }

    /// Opens (or creates) the durable engine in `dir`. Recovery reads each
    /// message's delivery state, retention clock and group into the index;
    /// bodies stay on disk until a receive, peek or redrive needs them.
    pub fn open_with(
        dir: &Path,
        clock: Arc<dyn Clock>,
        options: EmbeddedOptions,
    ) -> Result<(Self, RecoveryStats), StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Redb(e.to_string()))?;
        let store = Store::open(&dir.join(DATA_FILE), options.storage_cache_bytes)?;
        let journal = journal::recover(store.clone(), dir)?;
        let budget = Arc::new(BodyBudget::new(options.body_cache_bytes));
        let recovered = store.load()?;
        let now = clock.now();
        let mut stats = RecoveryStats {
            log_records: journal.replayed,
            store_repaired: store.repaired_on_open(),
            ..RecoveryStats::default()
        };
        let mut queues = HashMap::new();
        let mut next_queue_id = recovered.next_queue_id;
        for q in recovered.queues {
            next_queue_id = next_queue_id.max(q.id + 1);
            let record = q.record;
            let mut state = QueueState::new(
                QueueMeta {
                    name: record.name.clone(),
                    config: record.config,
                    tags: record.tags,
                    created_at: record.created_at,
                    modified_at: record.modified_at,
                },
                Some(budget.clone()),
            );
            state.last_purge = record.last_purge;
            stats.queues += 1;
            stats.messages += store.for_each_message(q.id, |seq, enqueued_at, group, ms| {
                state.insert(seq, None, enqueued_at, group, ms, now);
            })?;
            for (key, seen) in q.dedup {
                state.dedup.insert(key, seen);
            }
            for (seq, reason) in q.failures {
                state.set_failure(seq, reason.into());
            }
            state.compact();
            queues.insert(record.name, Arc::new(QueueCell::new(q.id, state)));
        }
        let broker = Self::with_journal(
            clock,
            Journal::durable(journal, options.checkpoint_interval),
            Some(store),
            Some(budget),
            recovered.next_seq,
            next_queue_id,
        );
        *broker.inner.queues.write() = queues;
        *broker.inner.tasks.lock() = recovered.tasks;
        Ok((broker, stats))
    }

    fn with_journal(
        clock: Arc<dyn Clock>,
        journal: Journal,
        store: Option<Store>,
        budget: Option<Arc<BodyBudget>>,
        next_seq: u64,
        next_queue_id: u64,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                clock,
                queues: RwLock::new(HashMap::new()),
                journal,
                store,
                budget,
                next_seq: AtomicU64::new(next_seq),
                next_queue_id: AtomicU64::new(next_queue_id),
                tasks: Mutex::new(Vec::new()),
                deleted: Mutex::new(HashMap::new()),
                deleted_name_hold_ms: AtomicU64::new(RECREATE_AFTER_DELETE_SECS * 1000),
            }),
        }
    }

    /// How long a deleted queue's name stays taken (rule V19: a minute, as
    /// on SQS); zero frees it at once, for test suites that recreate the
    /// same queues quickly.
    pub fn set_deleted_name_hold(&self, hold: Duration) {
        let ms = u64::try_from(hold.as_millis()).unwrap_or(u64::MAX);
        self.inner.deleted_name_hold_ms.store(ms, Ordering::Relaxed);
    }

    /// True when changes survive a restart.
    pub fn is_durable(&self) -> bool {
        self.inner.journal.is_durable()
    }

    /// Bytes of message bodies held in the durable engine's cache now
    /// (0 in memory, where the index is the only copy).
    pub fn cached_body_bytes(&self) -> usize {
        self.inner.budget.as_ref().map_or(0, |b| b.used())
    }

    /// Starts the background task that applies retention and wakes long
    /// polls whose messages became visible, even when no request comes.
    /// Must be called inside a Tokio runtime; stops when the engine is dropped.
    pub fn start_sweeper(&self) -> tokio::task::JoinHandle<()> {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(SWEEP_INTERVAL);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                inner.sweep();
            }
        })
    }

    /// Applies retention and due timers to every queue now.
    pub fn sweep(&self) {
        self.inner.sweep();
    }

    fn queue(&self, name: &str) -> Result<Arc<QueueCell>, SqsError> {
        self.inner
            .queues
            .read()
            .get(name)
            .cloned()
            .ok_or_else(SqsError::no_queue)
    }
}

impl QueueCell {
    fn new(id: u64, state: QueueState) -> Self {
        Self {
            id,
            state: Mutex::new(state),
            arrivals: Notify::new(),
            activity: Activity::default(),
        }
    }
}

impl Inner {
    fn now(&self) -> Millis {
        self.clock.now()
    }

    fn sweep(&self) {
        let now = self.now();
        let cells: Vec<Arc<QueueCell>> = self.queues.read().values().cloned().collect();
        for cell in cells {
            let woke = {
                let mut st = cell.state.lock();
                let mut changes = Vec::new();
                let woke = self.tick(&cell, &mut st, now, &mut changes);
                st.trim_cache(now.saturating_sub(CACHE_IDLE_MS));
                // Retention deletes need no waiter: nobody answers from them.
                // An idle queue sends the writer nothing.
                if !changes.is_empty() {
                    drop(self.journal.submit(changes));
                }
                woke
            };
            if woke {
                cell.arrivals.notify_waiters();
            }
        }
    }

    /// Locks a live queue with its timers and retention brought up to `now`.
    /// Retention deletes go to the journal without a wait: nobody answers
    /// from them.
    fn lock_current<'a>(
        &self,
        cell: &'a QueueCell,
        now: Millis,
    ) -> Result<parking_lot::MutexGuard<'a, QueueState>, SqsError> {
        let mut st = cell.state.lock();
        if st.deleted {
            return Err(deleted_error());
        }
        let mut changes = Vec::new();
        self.tick(cell, &mut st, now, &mut changes);
        if !changes.is_empty() {
            drop(self.journal.submit(changes));
        }
        Ok(st)
    }

    /// Advances one queue's timers and retention, recording the deletes.
    fn tick(
        &self,
        cell: &QueueCell,
        st: &mut QueueState,
        now: Millis,
        changes: &mut Vec<Change>,
    ) -> bool {
        let (expired, woke) = st.tick(now);
        activity::add(&cell.activity.expired, expired.len() as u64);
        let forgotten = st.dedup.expire(now);
        st.attempts.retain(|_, a| a.expires_at > now);
        if self.journal.is_durable() {
            changes.extend(expired.into_iter().map(|seq| Change::DeleteMessage {
                queue: cell.id,
                seq,
            }));
            changes.extend(forgotten.into_iter().map(|key| Change::DeleteDedup {
                queue: cell.id,
                key,
            }));
        }
        woke
    }

    /// The durable form of a queue's record, when durable.
    fn put_queue(&self, id: u64, st: &QueueState, changes: &mut Vec<Change>) {
        if !self.journal.is_durable() {
            return;
        }
        let record = QueueRecord {
            name: st.meta.name.clone(),
            config: st.meta.config.clone(),
            tags: st.meta.tags.clone(),
            created_at: st.meta.created_at,
            modified_at: st.meta.modified_at,
            last_purge: st.last_purge,
        };
        match serde_json::to_vec(&record) {
            Ok(record) => changes.push(Change::PutQueue { id, record }),
            Err(e) => tracing::error!(error = %e, "queue record did not encode"),
        }
    }

    /// The data of messages of queue `queue`: the bodies given are used,
    /// the others are read from the store in one read transaction. `None`
    /// where a message is no longer stored (deleted meanwhile).
    ///
    /// Call it after the changes that inserted the messages are
    /// acknowledged (after waiting on a later ticket), or accept `None` for
    /// messages whose insert is still on its way to disk. It waits for redb
    /// to hold every acknowledged change before it reads.
    async fn load_bodies(
        &self,
        queue: u64,
        wanted: Vec<(u64, Option<Arc<MessageData>>)>,
    ) -> Result<Vec<Option<Arc<MessageData>>>, SqsError> {
        let missing: Vec<u64> = wanted
            .iter()
            .filter(|(_, body)| body.is_none())
            .map(|&(seq, _)| seq)
            .collect();
        let read = match (&self.store, missing.is_empty()) {
            (Some(store), false) => {
                let failed = |e: StoreError| {
                    tracing::error!(error = %e, "reading message bodies failed");
                    SqsError::internal("The storage could not be read.")
                };
                // A message's data never changes once stored, so what redb
                // has already is right; only a message it lacks may be an
                // acknowledged send the applier has not reached. A backlog's
                // old messages are all found at once, without that wait.
                let mut read = store.read_messages(queue, &missing).map_err(failed)?;
                let absent: Vec<u64> = missing
                    .iter()
                    .zip(&read)
                    .filter(|(_, data)| data.is_none())
                    .map(|(&seq, _)| seq)
                    .collect();
                if !absent.is_empty() {
                    self.journal.readable().wait().await?;
                    let mut again = store
                        .read_messages(queue, &absent)
                        .map_err(failed)?
                        .into_iter();
                    for data in read.iter_mut().filter(|d| d.is_none()) {
                        *data = again.next().flatten();
                    }
                }
                read
            }
            _ => Vec::new(),
        };
        let mut read = read.into_iter();
        Ok(wanted
            .into_iter()
            .map(|(_, body)| body.or_else(|| read.next().flatten().map(Arc::new)))
            .collect())
    }

    fn put_state(&self, id: u64, seq: u64, state: &MessageState, changes: &mut Vec<Change>) {
        if self.journal.is_durable() {
            changes.push(Change::PutState {
                queue: id,
                seq,
                state: codec::encode_state(state),
            });
        }
    }
}

fn uuid_string(bytes: &[u8; 16]) -> String {
    // Written into a buffer of the exact length: `to_string` grows its
    // String three times, for every message received.
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    (uuid::Uuid::from_bytes(*bytes).hyphenated())
        .encode_lower(&mut buf)
        .to_owned()
}

/// Messages taken out of a queue's index.
type Taken = Vec<Removed>;

/// The sequence of the message `handle` holds in flight, with the errors
/// ChangeMessageVisibility gives (rule V5). `standard`: the rules of a
/// standard queue's ChangeMessageVisibility (rule V20), where any handle of
/// a message in flight counts, and so does the latest handle once its
/// visibility ended.
fn in_flight_seq(
    st: &QueueState,
    queue_id: u64,
    handle: &str,
    standard: bool,
) -> Result<u64, SqsError> {
    let rh = ReceiptHandle::decode(handle)
        .filter(|rh| rh.queue_id == queue_id && rh.receive > 0)
        .ok_or_else(|| SqsError::bad_receipt(handle))?;
    let Some(entry) = st.get(rh.seq) else {
        return Err(SqsError::invalid_value(
            "ReceiptHandle",
            handle,
            "Message does not exist or is not available for visibility timeout change.",
        ));
    };
    if rh.receive > entry.receive_count {
        return Err(SqsError::bad_receipt(handle));
    }
    let in_flight = entry.phase == Phase::InFlight;
    let latest = rh.receive == entry.receive_count;
    let allowed = if standard {
        in_flight || latest
    } else {
        in_flight && latest
    };
    if !allowed {
        return Err(SqsError::new(
            ErrorCode::MessageNotInflight,
            "Message not inflight.",
        ));
    }
    Ok(rh.seq)
}

/// What a peek or a redrive copies out of the index under the lock, to
/// look at with the message's data once it is read.
#[derive(Debug, Clone)]
struct Snapshot {
    seq: u64,
    order: Option<Order>,
    state: MessageState,
    phase: Phase,
    body: Option<Arc<MessageData>>,
    failure: Option<Arc<str>>,
}

impl Snapshot {
    fn of(st: &QueueState, seq: u64, order: Option<Order>) -> Option<Self> {
        let state = st.message_state(seq)?;
        st.get(seq).map(|entry| Snapshot {
            seq,
            order,
            state,
            phase: entry.phase,
            body: entry.body.clone(),
            failure: st.failure(seq).cloned(),
        })
    }
}

/// How a message looks to a peek or a redrive filter (rules X1, X3).
fn peeked(snap: &Snapshot, data: &MessageData, fifo: bool) -> PeekedMessage {
    let seq = snap.seq;
    let failure_reason = snap
        .failure
        .as_deref()
        .or_else(|| recorded_failure(&data.system_attributes))
        .map(str::to_string);
    PeekedMessage {
        position: seq,
        message_id: uuid_string(&data.message_id),
        body: data.body.clone(),
        attributes: data.attributes.clone(),
        system_attributes: data.system_attributes.clone(),
        sent_at: data.sent_at,
        receive_count: snap.state.receive_count,
        first_receive_at: snap.state.first_receive_at,
        last_receive_at: snap.state.last_receive_at,
        state: match snap.phase {
            Phase::Ready => "visible",
            Phase::InFlight => "in_flight",
            Phase::Delayed => "delayed",
        },
        group_id: data.group_id.clone(),
        dedup_id: data.dedup_id.clone(),
        sequence_number: fifo.then(|| sequence_number(seq)),
        failure_reason,
    }
}

/// A delivered message as the receive answers it.
fn received(
    queue_id: u64,
    seq: u64,
    state: &MessageState,
    data: &MessageData,
    fifo: bool,
) -> ReceivedMessage {
    ReceivedMessage {
        message_id: uuid_string(&data.message_id),
        receipt_handle: ReceiptHandle {
            queue_id,
            seq,
            receive: state.receive_count,
        }
        .encode(),
        body: data.body.clone(),
        attributes: data.attributes.clone(),
        system_attributes: data.system_attributes.clone(),
        sent_at: data.sent_at,
        first_receive_at: state.first_receive_at,
        receive_count: state.receive_count,
        group_id: data.group_id.clone(),
        dedup_id: data.dedup_id.clone(),
        sequence_number: fifo.then(|| sequence_number(seq)),
        body_md5: data.body_md5,
    }
}

/// A FIFO sequence number as SQS writes them: a decimal string.
fn sequence_number(seq: u64) -> String {
    sluice_core::message::sequence_number(seq)
}

fn deleted_error() -> SqsError {
    SqsError::no_queue()
}

fn queue_exists(name: &str) -> SqsError {
    SqsError::new(
        ErrorCode::QueueNameExists,
        format!(
            "A queue already exists with the same name and a different value for an attribute: {name}"
        ),
    )
}

impl Broker for EmbeddedBroker {
    async fn create_queue(&self, spec: CreateQueue) -> Result<QueueMeta, SqsError> {
        let inner = &self.inner;
        let now = inner.now();
        // Lock order: a queue's lock may be held while reading the registry
        // (receive looks up its dead-letter queue), so the registry is never
        // held while waiting for a queue's lock.
        let existing = inner.queues.read().get(&spec.name).cloned();
        if let Some(cell) = existing {
            let st = cell.state.lock();
            if !st.deleted {
                // QueueAlreadyExists names the differing attribute (rule V13).
                return match st.meta.config.first_mismatch(&spec.name, &spec.requested) {
                    None => Ok(st.meta.clone()),
                    Some(attribute) => Err(SqsError::queue_name_exists(&attribute)),
                };
            }
        }
        {
            // A deleted name is free again only a minute later (rule V19).
            let hold = inner.deleted_name_hold_ms.load(Ordering::Relaxed);
            let mut deleted = inner.deleted.lock();
            deleted.retain(|_, at| now < at.saturating_add(hold));
            if deleted.contains_key(&spec.name) {
                return Err(SqsError::queue_deleted_recently());
            }
        }
        let (meta, ticket): (QueueMeta, Ticket) = {
            let mut queues = inner.queues.write();
            if queues.contains_key(&spec.name) {
                // Created by a concurrent request since the check above.
                return Err(queue_exists(&spec.name));
            }
            tags::check_tags(&spec.name, &spec.tags)?;
            let id = inner.next_queue_id.fetch_add(1, Ordering::SeqCst);
            let meta = QueueMeta {
                name: spec.name.clone(),
                config: spec.config,
                tags: spec.tags,
                created_at: now,
                modified_at: now,
            };
            let st = QueueState::new(meta.clone(), inner.budget.clone());
            let mut changes = Vec::new();
            inner.put_queue(id, &st, &mut changes);
            let ticket = inner.journal.submit(changes);
            queues.insert(spec.name, Arc::new(QueueCell::new(id, st)));
            (meta, ticket)
        };
        ticket.wait().await?;
        Ok(meta)
    }

    async fn get_queue(&self, name: &str) -> Result<QueueMeta, SqsError> {
        let cell = self.queue(name)?;
        let st = cell.state.lock();
        if st.deleted {
            return Err(deleted_error());
        }
        Ok(st.meta.clone())
    }

    async fn list_queues(&self) -> Result<Vec<String>, SqsError> {
        let mut names: Vec<String> = self.inner.queues.read().keys().cloned().collect();
        names.sort();
        Ok(names)
    }

    async fn delete_queue(&self, name: &str) -> Result<(), SqsError> {
        let inner = &self.inner;
        let cell = inner
            .queues
            .write()
            .remove(name)
            .ok_or_else(SqsError::no_queue)?;
        inner.deleted.lock().insert(name.to_string(), inner.now());
        let ticket = {
            let mut st = cell.state.lock();
            st.deleted = true;
            st.clear();
            let changes = if inner.journal.is_durable() {
                vec![Change::DeleteQueue { id: cell.id }]
            } else {
                Vec::new()
            };
            inner.journal.submit(changes)
        };
        cell.arrivals.notify_waiters();
        ticket.wait().await
    }

    async fn queue_counts(&self, name: &str) -> Result<QueueCounts, SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let now = inner.now();
        let st = inner.lock_current(&cell, now)?;
        Ok(st.counts())
    }

    async fn set_queue_attributes(
        &self,
        name: &str,
        attributes: BTreeMap<String, String>,
    ) -> Result<QueueMeta, SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let (meta, ticket) = {
            let mut st = cell.state.lock();
            if st.deleted {
                return Err(deleted_error());
            }
            st.meta.config.apply(&attributes, false)?;
            st.meta.modified_at = inner.now();
            let mut changes = Vec::new();
            inner.put_queue(cell.id, &st, &mut changes);
            (st.meta.clone(), inner.journal.submit(changes))
        };
        ticket.wait().await?;
        Ok(meta)
    }

    async fn tag_queue(&self, name: &str, tags: BTreeMap<String, String>) -> Result<(), SqsError> {
        self.update_tags(name, |existing| tags::add_tags(name, existing, tags))
            .await
    }

    async fn untag_queue(&self, name: &str, keys: Vec<String>) -> Result<(), SqsError> {
        self.update_tags(name, |existing| {
            tags::remove_tags(existing, &keys);
            Ok(())
        })
        .await
    }

    async fn purge_queue(&self, name: &str) -> Result<(), SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let now = inner.now();
        let ticket = {
            let mut st = cell.state.lock();
            if st.deleted {
                return Err(deleted_error());
            }
            if let Some(last) = st.last_purge
                && now < last + PURGE_INTERVAL_SECS * 1000
            {
                return Err(SqsError::new(
                    ErrorCode::PurgeQueueInProgress,
                    format!(
                        "Only one PurgeQueue operation on {name} is allowed every {PURGE_INTERVAL_SECS} seconds."
                    ),
                ));
            }
            st.clear();
            st.last_purge = Some(now);
            // A purge also ends the deduplication window (rule F11).
            let forgotten = st.dedup.clear();
            st.attempts.clear();
            let mut changes = Vec::new();
            if inner.journal.is_durable() {
                changes.push(Change::Purge {
                    queue: cell.id,
                    below: inner.next_seq.load(Ordering::SeqCst),
                });
                changes.extend(forgotten.into_iter().map(|key| Change::DeleteDedup {
                    queue: cell.id,
                    key,
                }));
            }
            inner.put_queue(cell.id, &st, &mut changes);
            inner.journal.submit(changes)
        };
        ticket.wait().await
    }

    async fn send_messages(
        &self,
        name: &str,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<SentMessage>, SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let now = inner.now();
        let durable = inner.journal.is_durable();
        // Build and encode outside the lock: only the sequence needs it.
        let prepared: Vec<(Arc<MessageData>, Option<u32>, Vec<u8>)> = messages
            .into_iter()
            .map(|m| {
                let data = MessageData {
                    message_id: *uuid::Uuid::new_v4().as_bytes(),
                    sent_at: now,
                    enqueued_at: now,
                    body: m.body,
                    attributes: m.attributes,
                    system_attributes: m.system_attributes,
                    group_id: m.group_id,
                    dedup_id: m.dedup_id,
                    body_md5: m.body_md5,
                };
                let encoded = if durable {
                    codec::encode_message(&data)
                } else {
                    Vec::new()
                };
                (Arc::new(data), m.delay_seconds, encoded)
            })
            .collect();
        let mut sent = Vec::with_capacity(prepared.len());
        let ticket = {
            let mut st = cell.state.lock();
            if st.deleted {
                return Err(deleted_error());
            }
            let queue_delay = st.meta.config.delay_seconds;
            let fifo = st.meta.config.fifo;
            let per_group = st.meta.config.deduplicates_per_group();
            let mut changes = Vec::with_capacity(if durable { prepared.len() } else { 0 });
            for (data, delay, encoded) in prepared {
                // FIFO deduplication (rule F2): a live id answers with the
                // first message and enqueues nothing.
                let dedup_key = match (fifo, &data.dedup_id) {
                    (true, Some(dedup_id)) => {
                        let key = DedupWindow::key(
                            per_group,
                            data.group_id.as_deref().unwrap_or(""),
                            dedup_id,
                        );
                        if let Some(seen) = st.dedup.get(&key, now) {
                            sent.push(SentMessage {
                                message_id: uuid_string(&seen.message_id),
                                sequence_number: Some(sequence_number(seen.seq)),
                            });
                            continue;
                        }
                        Some(key)
                    }
                    _ => None,
                };
                let seq = inner.next_seq.fetch_add(1, Ordering::SeqCst);
                if let Some(key) = dedup_key {
                    let seen = Seen {
                        message_id: data.message_id,
                        seq,
                        expires_at: now + dedup::WINDOW_MS,
                    };
                    if durable {
                        changes.push(Change::PutDedup {
                            queue: cell.id,
                            key: key.clone(),
                            seen: seen.encode(),
                        });
                    }
                    st.dedup.insert(key, seen);
                }
                let delay_ms = u64::from(delay.unwrap_or(queue_delay)) * 1000;
                let state = MessageState {
                    visible_at: now + delay_ms,
                    receive_count: 0,
                    first_receive_at: 0,
                    last_receive_at: 0,
                };
                if durable {
                    changes.push(Change::PutMessage {
                        queue: cell.id,
                        seq,
                        data: encoded,
                        state: codec::encode_state(&state),
                        in_log: None,
                    });
                }
                sent.push(SentMessage {
                    message_id: uuid_string(&data.message_id),
                    sequence_number: fifo.then(|| sequence_number(seq)),
                });
                activity::add(&cell.activity.sent, 1);
                activity::add(
                    &cell.activity.sent_bytes,
                    message_size(&data.body, &data.attributes) as u64,
                );
                st.insert(
                    seq,
                    Some(data.clone()),
                    data.enqueued_at,
                    data.group_id.as_deref(),
                    state,
                    now,
                );
            }
            inner.journal.submit(changes)
        };
        ticket.wait().await?;
        cell.arrivals.notify_waiters();
        Ok(sent)
    }

    async fn receive_messages(
        &self,
        name: &str,
        options: ReceiveOptions,
    ) -> Result<Vec<ReceivedMessage>, SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let deadline = tokio::time::Instant::now() + options.wait;
        loop {
            let notified = cell.arrivals.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let now = inner.now();
            let (delivered, ticket, next_due, dead, fifo) = {
                let mut st = cell.state.lock();
                if st.deleted {
                    return Err(deleted_error());
                }
                let mut changes = Vec::new();
                inner.tick(&cell, &mut st, now, &mut changes);
                if st.has_ready() && st.in_flight() >= MAX_INFLIGHT {
                    drop(inner.journal.submit(changes));
                    return Err(SqsError::new(
                        ErrorCode::OverLimit,
                        format!(
                            "The maximum number of in flight messages ({MAX_INFLIGHT}) was reached."
                        ),
                    ));
                }
                let fifo = st.meta.config.fifo;
                // A FIFO receive retried with the same attempt id gets the
                // same messages and handles while they are still its (rule F4).
                if let (true, Some(id)) = (fifo, &options.attempt_id)
                    && let Some(attempt) = st.attempts.get(id)
                    && attempt.seqs.iter().all(|&(seq, count)| {
                        st.get(seq)
                            .is_some_and(|e| e.phase == Phase::InFlight && e.receive_count == count)
                    })
                {
                    let replay = attempt.messages.clone();
                    drop(inner.journal.submit(changes));
                    return Ok(replay);
                }
                // Without its dead-letter queue a policy moves nothing: the
                // messages stay deliverable rather than vanish.
                let redrive = st
                    .meta
                    .config
                    .redrive_out_of(&st.meta.name)
                    .and_then(|policy| {
                        let dlq = inner
                            .queues
                            .read()
                            .get(&key_of_arn_near(
                                &st.meta.name,
                                &policy.dead_letter_target_arn,
                            ))
                            .cloned()?;
                        Some((policy, dlq))
                    });
                let visibility = options
                    .visibility_timeout
                    .unwrap_or(st.meta.config.visibility_timeout);
                let room = MAX_INFLIGHT - st.in_flight();
                let max = (options.max_messages as usize).min(room);
                let rules = DeliveryRules::new(
                    &st.meta.config,
                    u64::from(visibility) * 1000,
                    redrive.as_ref().map(|(p, _)| p.max_receive_count),
                );
                let delivery = st.deliver(max, now, &rules);
                let mut delivered = Vec::with_capacity(delivery.delivered.len());
                for seq in delivery.delivered {
                    let (Some(entry), Some(state)) = (st.get(seq), st.message_state(seq)) else {
                        continue;
                    };
                    inner.put_state(cell.id, seq, &state, &mut changes);
                    delivered.push((seq, state, entry.body.clone()));
                }
                let dead = match redrive {
                    Some((policy, dlq)) if !delivery.dead.is_empty() => Some((
                        sibling_arn(&policy.dead_letter_target_arn, &st.meta.name),
                        dlq,
                        delivery.dead,
                    )),
                    _ => None,
                };
                (
                    delivered,
                    inner.journal.submit(changes),
                    st.next_due(),
                    dead,
                    fifo,
                )
            };
            if let Some((source_arn, dlq, dead)) = dead {
                self.move_to_dead_letter_queue(
                    &cell,
                    &source_arn,
                    &dlq,
                    dead,
                    now,
                    "maxReceiveCount",
                )
                .await?;
            }
            if !delivered.is_empty() {
                ticket.wait().await?;
                // The inserts of these messages came before this receive's
                // changes in the journal, so what is not cached is in the
                // log, and in redb once `load_bodies` has waited for it.
                let (states, bodies): (Vec<_>, Vec<_>) = delivered
                    .into_iter()
                    .map(|(seq, state, body)| ((seq, state), (seq, body)))
                    .unzip();
                let bodies = inner.load_bodies(cell.id, bodies).await?;
                let messages: Vec<ReceivedMessage> = states
                    .into_iter()
                    .zip(bodies)
                    // A body gone meanwhile: the message was deleted (by a
                    // purge, retention or an older handle) since delivery.
                    .filter_map(|((seq, state), body)| {
                        body.map(|data| received(cell.id, seq, &state, &data, fifo))
                    })
                    .collect();
                if let (true, Some(id), false) = (fifo, &options.attempt_id, messages.is_empty()) {
                    let seqs = messages
                        .iter()
                        .filter_map(|m| ReceiptHandle::decode(&m.receipt_handle))
                        .map(|h| (h.seq, h.receive))
                        .collect();
                    cell.state.lock().attempts.insert(
                        id.clone(),
                        Attempt {
                            expires_at: now + dedup::WINDOW_MS,
                            seqs,
                            messages: messages.clone(),
                        },
                    );
                }
                activity::add(&cell.activity.received, messages.len() as u64);
                return Ok(messages);
            }
            drop(ticket);
            let now_instant = tokio::time::Instant::now();
            if now_instant >= deadline {
                activity::add(&cell.activity.empty_receives, 1);
                return Ok(Vec::new());
            }
            // Sleep until a send wakes us, the next timer is due, or the deadline.
            let wake_at = match next_due {
                Some(due) => deadline
                    .min(now_instant + Duration::from_millis(due.saturating_sub(now).max(1))),
                None => deadline,
            };
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep_until(wake_at) => {}
            }
        }
    }

    async fn delete_messages(
        &self,
        name: &str,
        receipt_handles: Vec<String>,
    ) -> Result<Vec<Result<(), SqsError>>, SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        // In a FIFO queue a delete may open its group to waiting receives
        // (rule F13).
        let mut opened = false;
        let (results, ticket) = {
            let mut st = cell.state.lock();
            if st.deleted {
                return Err(deleted_error());
            }
            let mut changes = Vec::new();
            let fifo = st.meta.config.fifo;
            inner.tick(&cell, &mut st, inner.now(), &mut changes);
            let results = receipt_handles
                .iter()
                .map(|handle| {
                    let rh = ReceiptHandle::decode(handle)
                        .filter(|rh| rh.queue_id == cell.id && rh.receive > 0)
                        .ok_or_else(|| SqsError::bad_receipt(handle))?;
                    match st.get(rh.seq) {
                        // Already deleted: deleting again succeeds (rule V4).
                        None => Ok(()),
                        // FIFO: only the latest delivery, while in flight, may delete.
                        Some(e)
                            if fifo
                                && rh.receive <= e.receive_count
                                && (rh.receive != e.receive_count
                                    || e.phase != Phase::InFlight) =>
                        {
                            Err(SqsError::expired_receipt(handle))
                        }
                        Some(e) if rh.receive > e.receive_count => {
                            Err(SqsError::bad_receipt(handle))
                        }
                        Some(_) => {
                            st.remove(rh.seq);
                            opened |= fifo;
                            activity::add(&cell.activity.deleted, 1);
                            if inner.journal.is_durable() {
                                changes.push(Change::DeleteMessage {
                                    queue: cell.id,
                                    seq: rh.seq,
                                });
                            }
                            Ok(())
                        }
                    }
                })
                .collect::<Vec<_>>();
            (results, inner.journal.submit(changes))
        };
        ticket.wait().await?;
        if opened {
            cell.arrivals.notify_waiters();
        }
        Ok(results)
    }

    async fn change_visibility(
        &self,
        name: &str,
        changes_requested: Vec<VisibilityChange>,
    ) -> Result<Vec<Result<(), SqsError>>, SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let now = inner.now();
        let mut woke = false;
        let (results, ticket) = {
            let mut st = cell.state.lock();
            if st.deleted {
                return Err(deleted_error());
            }
            let mut changes = Vec::new();
            inner.tick(&cell, &mut st, now, &mut changes);
            let standard = !st.meta.config.fifo;
            let results = changes_requested
                .iter()
                .map(|c| {
                    let seq = in_flight_seq(&st, cell.id, &c.receipt_handle, standard)?;
                    let visible_at = now + u64::from(c.visibility_timeout) * 1000;
                    st.set_visibility(seq, visible_at, now);
                    woke |= c.visibility_timeout == 0;
                    if let Some(state) = st.message_state(seq) {
                        inner.put_state(cell.id, seq, &state, &mut changes);
                    }
                    Ok(())
                })
                .collect::<Vec<_>>();
            (results, inner.journal.submit(changes))
        };
        ticket.wait().await?;
        if woke {
            cell.arrivals.notify_waiters();
        }
        Ok(results)
    }

    async fn redrive_messages(
        &self,
        source: &str,
        redrive: &Redrive,
    ) -> Result<RedriveOutcome, SqsError> {
        let src = self.queue(source)?;
        let inner = &self.inner;
        let now = inner.now();
        let mut outcome = RedriveOutcome::default();
        let destination =
            |data: &MessageData| redrive_destination(redrive, source, &data.system_attributes);
        // Choose a page at a time: the index under the lock, then the data
        // (read from disk unless cached) without it.
        let mut chosen: Vec<(u64, u32, Arc<MessageData>)> = Vec::new();
        let mut after: Option<Order> = None;
        'scan: loop {
            let (page, fifo) = {
                let st = inner.lock_current(&src, now)?;
                let page: Vec<Snapshot> = st
                    .ready_after(after, SCAN_CHUNK)
                    .into_iter()
                    .filter_map(|(order, seq)| Snapshot::of(&st, seq, Some(order)))
                    .collect();
                (page, st.meta.config.fifo)
            };
            let Some(last) = page.last() else { break };
            after = last.order;
            let bodies = inner
                .load_bodies(
                    src.id,
                    page.iter().map(|p| (p.seq, p.body.clone())).collect(),
                )
                .await?;
            for (snap, data) in page.iter().zip(bodies) {
                // Not on disk yet (its move is still being written): the
                // next redrive takes it.
                let Some(data) = data else { continue };
                if chosen.len() + outcome.message_ids.len() >= redrive.max {
                    break 'scan;
                }
                if redrive.filter != MessageFilter::default()
                    && !redrive.filter.matches(&peeked(snap, &data, fifo))
                {
                    continue;
                }
                let replays = replay_count(&data.attributes);
                if redrive.max_replays.is_some_and(|limit| replays >= limit) {
                    outcome.refused += 1;
                    outcome.reason = Some(refused_reason(&uuid_string(&data.message_id), replays));
                    continue;
                }
                // A message with nowhere to go stays, is reported, and does
                // not count against `max`: the same in a dry run and a real one.
                let target = destination(&data);
                if !target
                    .as_deref()
                    .is_some_and(|t| inner.queues.read().contains_key(t))
                {
                    outcome.unmovable += 1;
                    outcome.reason = Some(unmovable_reason(target.as_deref()));
                    continue;
                }
                if redrive.dry_run {
                    outcome.message_ids.push(uuid_string(&data.message_id));
                    continue;
                }
                chosen.push((snap.seq, snap.state.receive_count, data));
            }
        }
        if redrive.dry_run {
            outcome.moved = outcome.message_ids.len() as u64;
            return Ok(outcome);
        }
        // Take the chosen messages that are still ready as they were seen.
        let taken: Vec<(Removed, Arc<MessageData>)> = {
            let mut st = inner.lock_current(&src, now)?;
            let mut taken = Vec::with_capacity(chosen.len());
            for (seq, count, data) in chosen {
                let unchanged = st
                    .get(seq)
                    .is_some_and(|e| e.phase == Phase::Ready && e.receive_count == count);
                if let Some(removed) = unchanged.then(|| st.remove(seq)).flatten() {
                    taken.push((removed, data));
                }
            }
            taken
        };
        // Group by destination, keeping each group's order.
        let mut by_destination: Vec<(Option<String>, dead_letter::Chosen)> = Vec::new();
        for (removed, data) in taken {
            let target = destination(&data);
            match by_destination.iter_mut().find(|(t, _)| *t == target) {
                Some((_, list)) => list.push((removed, data)),
                None => by_destination.push((target, vec![(removed, data)])),
            }
        }
        // Every move is made before the first wait, so a caller that gives up
        // waiting leaves no message taken out of the DLQ and not put anywhere.
        let mut tickets = Vec::new();
        for (target, entries) in by_destination {
            let dest = target
                .as_deref()
                .and_then(|t| inner.queues.read().get(t).cloned());
            let Some(dest) = dest else {
                // Deleted since the choice.
                outcome.unmovable += entries.len() as u64;
                outcome.reason = Some(unmovable_reason(target.as_deref()));
                self.put_back(&src, entries.into_iter().map(|(r, _)| r).collect(), now);
                continue;
            };
            match self.redrive_into(&src, &dest, entries, redrive.mark_replay, now) {
                Ok((ids, ticket)) => {
                    outcome.moved += ids.len() as u64;
                    outcome.message_ids.extend(ids);
                    tickets.push(ticket);
                }
                Err(entries) => {
                    outcome.unmovable += entries.len() as u64;
                    outcome.reason = Some(sluice_broker::moves::NON_EXISTENT_QUEUE.into());
                    self.put_back(&src, entries.into_iter().map(|(r, _)| r).collect(), now);
                }
            }
        }
        for ticket in tickets {
            ticket.wait().await?;
        }
        Ok(outcome)
    }

    async fn save_move_task(&self, task: MoveTask) -> Result<(), SqsError> {
        let inner = &self.inner;
        let ticket = {
            let mut tasks = inner.tasks.lock();
            let mut changes = Vec::new();
            if inner.journal.is_durable() {
                let record =
                    serde_json::to_vec(&task).map_err(|e| SqsError::internal(e.to_string()))?;
                changes.push(Change::PutTask {
                    handle: task.handle.clone(),
                    record,
                });
            }
            match tasks.iter_mut().find(|t| t.handle == task.handle) {
                Some(existing) => *existing = task,
                None => tasks.push(task),
            }
            inner.journal.submit(changes)
        };
        ticket.wait().await
    }

    async fn nack_message(
        &self,
        name: &str,
        receipt_handle: &str,
        nack: Nack,
    ) -> Result<(), SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let now = inner.now();
        let (ticket, dead, visible_now) = {
            let mut st = inner.lock_current(&cell, now)?;
            let mut changes = Vec::new();
            let seq = in_flight_seq(&st, cell.id, receipt_handle, false)?;
            let dlq = if nack.permanent {
                let policy = st.meta.config.redrive().ok_or_else(|| {
                    SqsError::invalid_parameter("Permanent failure needs a dead-letter queue: the queue has no RedrivePolicy.")
                })?;
                let dlq = inner
                    .queues
                    .read()
                    .get(&key_of_arn_near(
                        &st.meta.name,
                        &policy.dead_letter_target_arn,
                    ))
                    .cloned()
                    .ok_or_else(|| {
                        SqsError::invalid_parameter("The queue's dead-letter queue does not exist.")
                    })?;
                Some((
                    sibling_arn(&policy.dead_letter_target_arn, &st.meta.name),
                    dlq,
                ))
            } else {
                None
            };
            if let Some(reason) = nack.reason {
                if inner.journal.is_durable() {
                    changes.push(Change::PutFailure {
                        queue: cell.id,
                        seq,
                        reason: reason.clone(),
                    });
                }
                st.set_failure(seq, reason.into());
            }
            let (dead, visible_now) = match dlq {
                Some((source_arn, dlq)) => {
                    let removed = st.remove(seq);
                    (removed.map(|r| (source_arn, dlq, vec![r])), false)
                }
                None => {
                    // An explicit wait wins; otherwise the queue's backoff
                    // for this attempt applies.
                    let retry = match (nack.retry_after_seconds, st.meta.config.backoff()) {
                        (Some(seconds), _) => u64::from(seconds) * 1000,
                        (None, Some(backoff)) => st
                            .get(seq)
                            .map_or(0, |e| backoff.delay_for(e.receive_count, seq, now)),
                        (None, None) => 0,
                    };
                    st.set_visibility(seq, now + retry, now);
                    if let Some(state) = st.message_state(seq) {
                        inner.put_state(cell.id, seq, &state, &mut changes);
                    }
                    (None, retry == 0)
                }
            };
            (inner.journal.submit(changes), dead, visible_now)
        };
        // Move before any wait: the message is out of its queue already.
        if let Some((source_arn, dlq, dead)) = dead {
            self.move_to_dead_letter_queue(&cell, &source_arn, &dlq, dead, now, "permanent nack")
                .await?;
        }
        ticket.wait().await?;
        if visible_now {
            cell.arrivals.notify_waiters();
        }
        Ok(())
    }

    async fn peek_messages(
        &self,
        name: &str,
        filter: &MessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> Result<PeekPage, SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let now = inner.now();
        let seqs: Vec<u64> = {
            let st = inner.lock_current(&cell, now)?;
            st.iter_from(after.unwrap_or(0))
                .map(|(seq, _)| seq)
                .collect()
        };
        let mut page = PeekPage::default();
        for chunk in seqs.chunks(SCAN_CHUNK) {
            let (snaps, fifo) = {
                let st = inner.lock_current(&cell, now)?;
                let snaps: Vec<Snapshot> = chunk
                    .iter()
                    .filter_map(|&seq| Snapshot::of(&st, seq, None))
                    .collect();
                (snaps, st.meta.config.fifo)
            };
            let bodies = inner
                .load_bodies(
                    cell.id,
                    snaps.iter().map(|p| (p.seq, p.body.clone())).collect(),
                )
                .await?;
            for (snap, data) in snaps.iter().zip(bodies) {
                // Gone since the index was read, or not on disk yet.
                let Some(data) = data else { continue };
                if page.messages.len() == limit {
                    page.next = page.messages.last().map(|m| m.position);
                    return Ok(page);
                }
                let peeked = peeked(snap, &data, fifo);
                if filter.matches(&peeked) {
                    page.messages.push(peeked);
                }
            }
        }
        Ok(page)
    }

    fn storage_stats(&self) -> Option<StorageStats> {
        let (log_segments, log_bytes) = match &self.inner.store {
            Some(store) => match store.segments().disk_use() {
                Ok(used) => used,
                // Better no sample than a wrong one.
                Err(e) => {
                    tracing::warn!(error = %e, "listing the log's segments failed");
                    return None;
                }
            },
            None => (0, 0),
        };
        Some(StorageStats {
            log_segments,
            log_bytes,
            cached_body_bytes: self.cached_body_bytes() as u64,
        })
    }

    async fn queue_stats(&self, name: &str) -> Result<QueueStats, SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let now = inner.now();
        let (counts, oldest) = {
            let st = inner.lock_current(&cell, now)?;
            (st.counts(), st.oldest_enqueued_at())
        };
        Ok(cell
            .activity
            .stats(counts, oldest.map_or(0, |t| now.saturating_sub(t))))
    }

    async fn move_tasks(&self) -> Result<Vec<MoveTask>, SqsError> {
        let mut tasks = self.inner.tasks.lock().clone();
        tasks.sort_by(|a, b| {
            b.started_at
                .cmp(&a.started_at)
                .then_with(|| b.handle.cmp(&a.handle))
        });
        Ok(tasks)
    }
}

impl EmbeddedBroker {
    async fn update_tags(
        &self,
        name: &str,
        update: impl FnOnce(&mut BTreeMap<String, String>) -> Result<(), SqsError>,
    ) -> Result<(), SqsError> {
        let cell = self.queue(name)?;
        let inner = &self.inner;
        let ticket = {
            let mut st = cell.state.lock();
            if st.deleted {
                return Err(deleted_error());
            }
            update(&mut st.meta.tags)?;
            let mut changes = Vec::new();
            inner.put_queue(cell.id, &st, &mut changes);
            inner.journal.submit(changes)
        };
        ticket.wait().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_core::ManualClock;
    use sluice_core::attributes::QueueConfig;

    /// D1 with redb's apply off the answer's path: a send is answered while
    /// redb cannot take it yet, and a receive right after it, whose body is
    /// on disk only (no cache), waits for the apply rather than miss it.
    /// A durable broker in `dir` without a body cache, so every body is
    /// read from redb, and with its queue "q".
    async fn uncached_with_queue(dir: &Path, options: EmbeddedOptions) -> EmbeddedBroker {
        let options = EmbeddedOptions {
            body_cache_bytes: 0,
            ..options
        };
        let clock = Arc::new(ManualClock::default());
        let (b, _) = EmbeddedBroker::open_with(dir, clock, options).unwrap();
        let requested = BTreeMap::new();
        let spec = CreateQueue {
            name: "q".into(),
            config: QueueConfig::for_create("q", &requested).unwrap(),
            requested,
            tags: BTreeMap::new(),
        };
        b.create_queue(spec).await.unwrap();
        b
    }

    #[tokio::test]
    async fn a_receive_right_after_an_acknowledged_send_finds_its_body() {
        let dir = tempfile::tempdir().unwrap();
        let b = uncached_with_queue(dir.path(), EmbeddedOptions::default()).await;
        let held = b.inner.store.as_ref().unwrap().hold_writes().unwrap();
        let body = NewMessage {
            body: "on disk".into(),
            ..Default::default()
        };
        let send = b.send_messages("q", vec![body]);
        tokio::time::timeout(Duration::from_secs(10), send)
            .await
            .unwrap()
            .unwrap();
        let options = ReceiveOptions {
            max_messages: 1,
            visibility_timeout: Some(30),
            wait: Duration::ZERO,
            attempt_id: None,
        };
        let receiver = b.clone();
        let receive = tokio::spawn(async move { receiver.receive_messages("q", options).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!receive.is_finished(), "read redb before the apply");
        drop(held);
        let got = receive.await.unwrap().unwrap();
        assert_eq!(got.len(), 1, "the acknowledged message was missed");
        assert_eq!(got[0].body, "on disk");
    }

    /// D1 with redb's apply off the answer's path, the other way round: a
    /// body redb already holds is read without waiting for the applier,
    /// even while the applier is stuck behind later sends, so a backlog's
    /// old messages do not wait for the newest ones to be applied.
    #[tokio::test]
    async fn a_body_already_in_redb_is_read_without_waiting_for_the_applier() {
        let dir = tempfile::tempdir().unwrap();
        let options = EmbeddedOptions {
            // No checkpoint, which would wait for the held applier.
            checkpoint_interval: Duration::from_secs(3600),
            ..Default::default()
        };
        let b = uncached_with_queue(dir.path(), options).await;
        let message = |body: &str| NewMessage {
            body: body.into(),
            ..Default::default()
        };
        b.send_messages("q", vec![message("old")]).await.unwrap();
        b.inner.journal.readable().wait().await.unwrap();
        let held = b.inner.store.as_ref().unwrap().hold_writes().unwrap();
        b.send_messages("q", vec![message("new")]).await.unwrap();
        let options = ReceiveOptions {
            max_messages: 1,
            visibility_timeout: Some(30),
            wait: Duration::ZERO,
            attempt_id: None,
        };
        let receive = b.receive_messages("q", options);
        let got = tokio::time::timeout(Duration::from_secs(5), receive).await;
        drop(held);
        let got = got.expect("the read waited for the held applier").unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].body, "old");
    }
}
