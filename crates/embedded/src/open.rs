//! Start-up: opening the data directory, reading the topics back from
//! their file and every queue's index from the store after the log's
//! replay. A reopen after a failed write (`crate::reopen`) goes through
//! the same steps but the topics' (their file is written whole before a
//! change is served, so memory never runs ahead of it).

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use parking_lot::{Mutex, RwLock};
use sluice_broker::{HandleSecret, MoveTask, QueueMeta};
use sluice_core::clock::{Clock, Millis};
use sluice_core::limits::RECREATE_AFTER_DELETE_SECS;

use crate::body_cache::BodyBudget;
use crate::engine::{EmbeddedBroker, EmbeddedOptions, Inner, QueueCell, RecoveryStats, Reopener};
use crate::journal::{self, Core, Journal};
use crate::queue_state::QueueState;
use crate::storage::{OsStorage, Overlay, Storage, probe};
use crate::store::{INCOMPLETE_BACKUP_MARKER, Store, StoreError};
use crate::topic_set::{self, TOPICS_FILE, TopicState};
use sluice_broker::idempotency::IdempotencyRecord;
use sluice_keyring::DataKeys;

/// The file that holds the durable records inside the data directory.
pub const DATA_FILE: &str = "sluice.redb";

/// The engine's state as read back from the store.
pub(crate) struct Index {
    /// Each queue by name: its id and index.
    pub(crate) queues: HashMap<String, (u64, QueueState)>,
    pub(crate) next_seq: u64,
    pub(crate) next_queue_id: u64,
    pub(crate) tasks: Vec<MoveTask>,
    pub(crate) idempotency: Vec<(String, IdempotencyRecord)>,
}

/// The storage opened: its store and writer, and what it holds.
pub(crate) struct Opened {
    pub(crate) core: Core,
    pub(crate) index: Index,
    pub(crate) stats: RecoveryStats,
    pub(crate) handle_secret: HandleSecret,
    /// Messages (queue, sequence) sealed by data keys no longer kept.
    pub(crate) unreadable: Vec<(u64, u64)>,
}

/// Opens the store in `dir`, replays the log into it, starts a new log
/// segment and reads the index back; messages' bodies stay on disk.
///
/// When that fails on a full disk (a replay, or a new store, needs room),
/// the same steps run over an [`Overlay`] that keeps what they write in
/// memory: the index holds everything the store and the log hold, bodies
/// are read from them, and writes are refused until the storage takes
/// them, when the reopen (rule D5) does the real replay (rule D6).
pub(crate) fn open_storage(
    storage: &Arc<dyn Storage>,
    dir: &Path,
    options: &EmbeddedOptions,
    keys: &Arc<DataKeys>,
    budget: &Arc<BodyBudget>,
    now: Millis,
) -> Result<Opened, StoreError> {
    let failed = match open_writing(storage, dir, options, keys, budget, now) {
        Ok(opened) => return Ok(opened),
        Err(e) => e,
    };
    // Only a full disk: another failure stays an error the operator sees,
    // and a store another server holds is never served from memory
    // beside it (the overlay takes no lock on the file).
    if matches!(failed, StoreError::AlreadyOpen(_)) {
        return Err(failed);
    }
    match probe(&**storage, dir) {
        Err(e) if is_full(&e) => {}
        _ => return Err(failed),
    }
    tracing::warn!(error = %failed, "the store could not be recovered on a full disk: serving what the store and the log hold, refusing writes until the storage takes them");
    let overlay: Arc<dyn Storage> = Arc::new(Overlay::new(storage.clone()));
    let store = Store::open_on(overlay, &dir.join(DATA_FILE), options.storage_cache_bytes)?
        .with_keys(keys.clone());
    let (_, read) = read_back(&store, dir, keys, budget, now)?;
    Ok(read.with(Core::closed(&failed.to_string(), Some(store))))
}

/// Whether `e` says the disk (or the user's quota on it) is full.
fn is_full(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

/// [`open_storage`] writing to `storage`, as every start on a disk with
/// room does.
fn open_writing(
    storage: &Arc<dyn Storage>,
    dir: &Path,
    options: &EmbeddedOptions,
    keys: &Arc<DataKeys>,
    budget: &Arc<BodyBudget>,
    now: Millis,
) -> Result<Opened, StoreError> {
    storage
        .create_dir_all(dir)
        .map_err(|e| StoreError::Redb(e.to_string()))?;
    let store = Store::open_on(
        storage.clone(),
        &dir.join(DATA_FILE),
        options.storage_cache_bytes,
    )?
    .with_keys(keys.clone());
    let (replayed, read) = read_back(&store, dir, keys, budget, now)?;
    let core = match replayed.start_log(dir) {
        Ok(recovered) => Core::open(recovered, options.checkpoint_interval),
        // Everything is read back: the engine serves reads, and refuses
        // writes until the storage takes them (rule D6).
        Err(e) => {
            tracing::warn!(error = %e, "the log could not be begun: serving reads, refusing writes until the storage takes them");
            Core::closed(&e.to_string(), Some(store))
        }
    };
    Ok(read.with(core))
}

/// What [`read_back`] found, waiting for the core that will serve it.
struct ReadBack {
    index: Index,
    stats: RecoveryStats,
    handle_secret: HandleSecret,
    unreadable: Vec<(u64, u64)>,
}

impl ReadBack {
    fn with(self, core: Core) -> Opened {
        Opened {
            core,
            index: self.index,
            stats: self.stats,
            handle_secret: self.handle_secret,
            unreadable: self.unreadable,
        }
    }
}

/// Replays the log into `store` and reads the index back from it; the
/// replay is returned too, to begin the log after.
fn read_back(
    store: &Store,
    dir: &Path,
    keys: &DataKeys,
    budget: &Arc<BodyBudget>,
    now: Millis,
) -> Result<(journal::Replayed, ReadBack), StoreError> {
    let replayed = journal::replay(store.clone(), dir)?;
    // Before anything is served: a key the keyring lacks stops the start.
    let loaded = keys.load(store.data_key_records()?, now)?;
    store.update_data_keys(&loaded.rewrapped, &loaded.shredded)?;
    if !loaded.rewrapped.is_empty() {
        tracing::info!(
            data_keys = loaded.rewrapped.len(),
            "data keys re-wrapped by the keyring's active key"
        );
    }
    let mut unreadable = Vec::new();
    let mut stats = RecoveryStats {
        log_records: replayed.replayed,
        store_repaired: store.repaired_on_open(),
        ..RecoveryStats::default()
    };
    let index = load_index(store, budget, now, keys, &mut unreadable, &mut stats)?;
    let handle_secret = store.handle_secret()?;
    let read = ReadBack {
        index,
        stats,
        handle_secret,
        unreadable,
    };
    Ok((replayed, read))
}

/// Reads every queue's index, its dedup windows and failure reasons, and
/// the move tasks back from `store`.
fn load_index(
    store: &Store,
    budget: &Arc<BodyBudget>,
    now: Millis,
    keys: &DataKeys,
    unreadable_messages: &mut Vec<(u64, u64)>,
    stats: &mut RecoveryStats,
) -> Result<Index, StoreError> {
    let recovered = store.load()?;
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
        let mut unreadable = 0usize;
        stats.messages += store.for_each_message(q.id, |seq, enqueued_at, group, ms, key| {
            // Sealed by a data key no longer kept (its keyring key was
            // retired, or its queue deleted): the message is shredded,
            // left out of the index and deleted.
            if key.is_some_and(|k| keys.get(k).is_none()) {
                unreadable += 1;
                unreadable_messages.push((q.id, seq));
                return;
            }
            state.insert(seq, None, enqueued_at, group, ms, now);
        })?;
        stats.messages -= unreadable;
        stats.shredded_messages += unreadable;
        if unreadable > 0 {
            tracing::warn!(queue = %record.name, messages = unreadable, "messages sealed by a retired key are unreadable and were dropped");
        }
        for (key, seen) in q.dedup {
            state.dedup.insert(key, seen);
        }
        for (seq, stored) in q.failures {
            // A reason sealed by a data key no longer kept is shredded.
            if let Some(reason) = crate::codec::open_reason(&stored, keys) {
                state.set_failure(seq, reason.into());
            }
        }
        state.compact();
        queues.insert(record.name, (q.id, state));
    }
    Ok(Index {
        queues,
        next_seq: recovered.next_seq,
        next_queue_id,
        tasks: recovered.tasks,
        idempotency: recovered.idempotency,
    })
}

impl EmbeddedBroker {
    /// An engine that keeps everything in memory only: not durable.
    pub fn in_memory(clock: Arc<dyn Clock>) -> Self {
        let keys = Arc::new(DataKeys::new(None));
        Self::with_journal(clock, Journal::Memory, None, None, 1, 1, keys)
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
        if dir.join(INCOMPLETE_BACKUP_MARKER).exists() {
            return Err(StoreError::IncompleteBackup(dir.display().to_string()));
        }
        Self::open_on(Arc::new(OsStorage), dir, clock, options)
    }

    /// [`EmbeddedBroker::open_with`] on the files of `storage` (a
    /// [`crate::FaultStorage`] in fault-injection tests).
    pub fn open_on(
        storage: Arc<dyn Storage>,
        dir: &Path,
        clock: Arc<dyn Clock>,
        options: EmbeddedOptions,
    ) -> Result<(Self, RecoveryStats), StoreError> {
        // Read first: a file that cannot be served stops the start before
        // anything else is opened.
        let topics = topic_set::read(&*storage, dir).map_err(|why| StoreError::Topics {
            path: dir.join(TOPICS_FILE).display().to_string(),
            why,
        })?;
        let budget = Arc::new(BodyBudget::new(options.body_cache_bytes));
        let keys = Arc::new(DataKeys::new(options.keyring.clone()));
        let opened = open_storage(&storage, dir, &options, &keys, &budget, clock.now())?;
        let Opened {
            core,
            index,
            stats,
            handle_secret,
            unreadable,
        } = opened;
        let reopener = Reopener::new(storage, dir.to_path_buf(), options);
        let broker = Self::with_journal(
            clock,
            Journal::over(core),
            Some(budget),
            Some(reopener),
            index.next_seq,
            index.next_queue_id,
            keys,
        );
        *broker.inner.queues.write() = index
            .queues
            .into_iter()
            .map(|(name, (id, state))| (name, Arc::new(QueueCell::new(id, state))))
            .collect();
        *broker.inner.tasks.lock() = index.tasks;
        *broker.inner.idempotency.lock() = index.idempotency.into_iter().collect();
        *broker.inner.handle_secret.lock() = Some(handle_secret);
        broker.inner.topics.current.store(Arc::new(topics));
        broker.drop_unreadable(unreadable);
        Ok((broker, stats))
    }

    pub(crate) fn with_journal(
        clock: Arc<dyn Clock>,
        journal: Journal,
        budget: Option<Arc<BodyBudget>>,
        reopener: Option<Reopener>,
        next_seq: u64,
        next_queue_id: u64,
        data_keys: Arc<DataKeys>,
    ) -> Self {
        Self {
            inner: Arc::new_cyclic(|me| Inner {
                me: me.clone(),
                clock,
                queues: RwLock::new(HashMap::new()),
                journal,
                reopener,
                budget,
                next_seq: AtomicU64::new(next_seq),
                next_queue_id: AtomicU64::new(next_queue_id),
                tasks: Mutex::new(Vec::new()),
                deleted: Mutex::new(HashMap::new()),
                deleted_name_hold_ms: AtomicU64::new(RECREATE_AFTER_DELETE_SECS * 1000),
                handle_secret: Mutex::new(None),
                topics: TopicState::default(),
                data_keys,
                idempotency: Mutex::new(HashMap::new()),
            }),
        }
    }
}
