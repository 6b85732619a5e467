//! Start-up: opening the data directory and reading every queue's index
//! back from the store after the log's replay.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use parking_lot::{Mutex, RwLock};
use sluice_broker::QueueMeta;
use sluice_core::clock::Clock;
use sluice_core::limits::RECREATE_AFTER_DELETE_SECS;

use crate::body_cache::BodyBudget;
use crate::engine::{EmbeddedBroker, EmbeddedOptions, Inner, QueueCell, RecoveryStats};
use crate::journal::{self, Journal};
use crate::queue_state::QueueState;
use crate::store::{INCOMPLETE_BACKUP_MARKER, Store, StoreError};

/// The file that holds the durable records inside the data directory.
pub const DATA_FILE: &str = "sluice.redb";

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
        if dir.join(INCOMPLETE_BACKUP_MARKER).exists() {
            return Err(StoreError::IncompleteBackup(dir.display().to_string()));
        }
        let store = Store::open(&dir.join(DATA_FILE), options.storage_cache_bytes)?;
        let journal = journal::recover(store.clone(), dir)?;
        let budget = Arc::new(BodyBudget::new(options.body_cache_bytes));
        let recovered = store.load()?;
        let handle_secret = store.handle_secret()?;
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
        *broker.inner.handle_secret.lock() = Some(handle_secret);
        Ok((broker, stats))
    }

    pub(crate) fn with_journal(
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
                handle_secret: Mutex::new(None),
            }),
        }
    }
}
