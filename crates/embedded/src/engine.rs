//! The engine's state: the handle, the queue registry, each queue's cell
//! (its index behind its lock), the topics, and what every operation does with a
//! queue: take its lock with timers and retention brought up to date, and
//! write the journal forms of its record and of a message's delivery state.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use parking_lot::{Mutex, RwLock};
use sluice_broker::EngineError;
use sluice_broker::activity;
use sluice_broker::activity::Activity;
use sluice_broker::idempotency::IdempotencyRecord;
use sluice_broker::{HandleSecret, MoveTask};
use sluice_core::clock::Clock;
use sluice_core::clock::Millis;
use sluice_keyring::{DataKeys, Keyring};
use tokio::sync::Notify;

use crate::body_cache::BodyBudget;
use crate::change::{Change, QueueRecord};
use crate::codec;
use crate::journal::Journal;
use crate::message::MessageState;
use crate::queue_state::QueueState;
use crate::storage::Storage;
use crate::topic_set::TopicState;

/// Settings of the durable engine.
#[derive(Debug, Clone)]
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
    /// Least time between two attempts to reopen the storage after a
    /// failed write (default 5 s): while the disk is full, each attempt
    /// writes and syncs a probe file of 1 MiB first. The server keeps the
    /// default (docs/reliability.md says why); tests shorten it.
    pub reopen_interval: Duration,
    /// The operator's keyring: queues that ask for encryption at rest have
    /// their messages sealed with data keys it wraps. `None`: no queue's
    /// messages are sealed, and a start on data sealed before is refused.
    pub keyring: Option<Arc<Keyring>>,
}

impl Default for EmbeddedOptions {
    fn default() -> Self {
        Self {
            body_cache_bytes: 64 << 20,
            storage_cache_bytes: None,
            checkpoint_interval: Duration::from_secs(1),
            reopen_interval: Duration::from_secs(5),
            keyring: None,
        }
    }
}

/// The embedded engine.
#[derive(Clone)]
pub struct EmbeddedBroker {
    pub(crate) inner: Arc<Inner>,
}

/// What the engine's handles share.
pub(crate) struct Inner {
    /// This engine, for the thread that reopens its storage.
    pub(crate) me: Weak<Inner>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) queues: RwLock<HashMap<String, Arc<QueueCell>>>,
    /// Durable mode: the store and its writer, swapped at a reopen.
    pub(crate) journal: Journal,
    /// Durable mode: how to reopen the storage after a failed write.
    pub(crate) reopener: Option<Reopener>,
    /// Durable mode: the budget of bodies kept in memory.
    pub(crate) budget: Option<Arc<BodyBudget>>,
    pub(crate) next_seq: AtomicU64,
    pub(crate) next_queue_id: AtomicU64,
    /// Message move task records (rule R7).
    pub(crate) tasks: Mutex<Vec<MoveTask>>,
    /// When each name was last deleted, so that it cannot be created again
    /// for a minute (rule V19). In memory only: a restart forgets it.
    pub(crate) deleted: Mutex<HashMap<String, Millis>>,
    /// How long a deleted name stays taken (ms); 0 frees it at once.
    pub(crate) deleted_name_hold_ms: AtomicU64,
    /// The receipt handles' key (rule A3): read from the store at open;
    /// in memory, made at the first use.
    pub(crate) handle_secret: Mutex<Option<HandleSecret>>,
    /// SNS's topics and subscriptions: read from their file at open,
    /// written whole at each change (see `crate::topic_set`).
    pub(crate) topics: TopicState,
    /// The data keys of encryption at rest.
    pub(crate) data_keys: Arc<DataKeys>,
    /// Consumers' idempotency records, by key (see `crate::idempotency`).
    pub(crate) idempotency: Mutex<HashMap<String, IdempotencyRecord>>,
}

/// What reopening the storage in process needs (see `crate::reopen`).
pub(crate) struct Reopener {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) dir: PathBuf,
    pub(crate) options: EmbeddedOptions,
    /// When the last attempt ended: the next waits `reopen_interval`.
    pub(crate) last_attempt: parking_lot::Mutex<Option<Instant>>,
    /// Whether an attempt is under way.
    pub(crate) running: AtomicBool,
}

impl Reopener {
    pub(crate) fn new(storage: Arc<dyn Storage>, dir: PathBuf, options: EmbeddedOptions) -> Self {
        Self {
            storage,
            dir,
            options,
            last_attempt: parking_lot::Mutex::new(None),
            running: AtomicBool::new(false),
        }
    }
}

/// One queue: its index behind its lock, its waiters and counters.
pub(crate) struct QueueCell {
    pub(crate) id: u64,
    pub(crate) state: Mutex<QueueState>,
    /// Wakes long polls when a message may have become receivable.
    pub(crate) arrivals: Notify,
    /// Activity counters (rule M1).
    pub(crate) activity: Activity,
    /// A copy of the queue's `Policy`, which the access check reads on
    /// every authenticated request: read from here, it does not wait on
    /// the state lock that sends and receives hold. Set whenever the
    /// description under the lock changes ([`QueueCell::publish_policy`]).
    policy: ArcSwapOption<String>,
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
    /// Messages dropped because the keyring key that sealed them was
    /// retired (crypto-shredding).
    pub shredded_messages: usize,
}

impl EmbeddedBroker {
    /// How long a deleted queue's name stays taken (rule V19: a minute, as
    /// on SQS); zero frees it at once, for test suites that recreate the
    /// same queues quickly.
    pub fn set_deleted_name_hold(&self, hold: Duration) {
        let ms = u64::try_from(hold.as_millis()).unwrap_or(u64::MAX);
        self.inner.deleted_name_hold_ms.store(ms, Ordering::Relaxed);
    }

    /// Why writes are refused now, if they are: the cause of the failed
    /// write, until the storage is reopened (rule D5).
    pub fn storage_failure(&self) -> Option<String> {
        self.inner.journal.failure()
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

    /// The live or deleted queue of that name, if it is still registered.
    pub(crate) fn queue(&self, name: &str) -> Result<Arc<QueueCell>, EngineError> {
        self.inner
            .queues
            .read()
            .get(name)
            .cloned()
            .ok_or(EngineError::QueueDoesNotExist)
    }
}

impl QueueCell {
    pub(crate) fn new(id: u64, state: QueueState) -> Self {
        let policy = ArcSwapOption::new(state.meta.config.policy.clone().map(Arc::new));
        Self {
            id,
            state: Mutex::new(state),
            arrivals: Notify::new(),
            activity: Activity::default(),
            policy,
        }
    }

    /// Copies `st`'s policy for [`QueueCell::policy`]; called under the
    /// state lock by whatever changed the queue's description.
    pub(crate) fn publish_policy(&self, st: &QueueState) {
        let current = self.policy.load();
        if current.as_deref() != st.meta.config.policy.as_ref() {
            self.policy
                .store(st.meta.config.policy.clone().map(Arc::new));
        }
    }

    /// The queue's `Policy`, without taking the state lock.
    pub(crate) fn policy(&self) -> Option<Arc<String>> {
        self.policy.load_full()
    }
}

impl Inner {
    pub(crate) fn now(&self) -> Millis {
        self.clock.now()
    }

    /// Locks a live queue with its timers and retention brought up to `now`.
    /// Retention deletes go to the journal without a wait: nobody answers
    /// from them.
    pub(crate) fn lock_current<'a>(
        &self,
        cell: &'a QueueCell,
        now: Millis,
    ) -> Result<parking_lot::MutexGuard<'a, QueueState>, EngineError> {
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
    pub(crate) fn tick(
        &self,
        cell: &QueueCell,
        st: &mut QueueState,
        now: Millis,
        changes: &mut Vec<Change>,
    ) -> bool {
        let tick = st.tick(now);
        let expired = tick.expired;
        activity::add(&cell.activity.expired, (expired.len() + tick.held) as u64);
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
        tick.woke
    }

    /// The durable form of a queue's record, when durable.
    pub(crate) fn put_queue(&self, id: u64, st: &QueueState, changes: &mut Vec<Change>) {
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

    pub(crate) fn put_state(
        &self,
        id: u64,
        seq: u64,
        state: &MessageState,
        changes: &mut Vec<Change>,
    ) {
        if self.journal.is_durable() {
            changes.push(Change::PutState {
                queue: id,
                seq,
                state: codec::encode_state(state),
            });
        }
    }
}

pub(crate) fn deleted_error() -> EngineError {
    EngineError::QueueDoesNotExist
}
