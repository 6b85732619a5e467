//! sluice's embedded engine: every queue's index in memory, every change
//! durable in redb through one group-commit writer.
//!
//! Each queue has its own lock; no lock is held across an await. A request
//! changes the index under its queue's lock, hands the matching durable
//! changes to the [`journal`] before releasing the lock (so commits follow
//! the index's order), then waits outside the lock until its commit is on
//! disk before it answers. With `in_memory` there is no journal and nothing
//! survives a restart (rule D2: named, opt-in).

mod bodies;
mod body_cache;
mod change;
mod codec;
mod dead_letter;
mod dedup;
mod delete;
mod engine;
mod fair;
mod fifo;
mod group_commit;
mod groups;
mod ids;
mod journal;
mod log_record;
mod message;
mod move_tasks;
mod nack;
mod open;
mod peek;
mod queue_state;
mod queues;
mod receive;
mod redrive;
mod send;
mod seq_hash;
mod stats;
mod store;
mod sweep;
mod visibility;
mod wal;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use sluice_broker::{
    Broker, CreateQueue, MessageFilter, MoveTask, Nack, NewMessage, PeekPage, QueueCounts,
    QueueMeta, QueueStats, ReceiveOptions, ReceivedMessage, Redrive, RedriveOutcome, SentMessage,
    StorageStats, VisibilityChange,
};
use sluice_core::SqsError;
use sluice_core::clock::{Clock, Millis};
use tokio::sync::Notify;

use body_cache::BodyBudget;
use journal::Journal;
use queue_state::QueueState;
use sluice_broker::activity::Activity;
use store::Store;
pub use store::StoreError;

/// The file that holds the durable records inside the data directory.
pub const DATA_FILE: &str = "sluice.redb";

/// The write-ahead log's segments inside the data directory: changes not
/// yet checkpointed into [`DATA_FILE`], and the data of the messages
/// stored since; [`newest_log_segment`] names the one being written.
pub use wal::LOG_DIR;
pub use wal::newest_segment as newest_log_segment;

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
        sweep::start(&self.inner)
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

impl Broker for EmbeddedBroker {
    async fn create_queue(&self, spec: CreateQueue) -> Result<QueueMeta, SqsError> {
        queues::create_queue(self, spec).await
    }

    async fn get_queue(&self, name: &str) -> Result<QueueMeta, SqsError> {
        queues::get_queue(self, name).await
    }

    async fn list_queues(&self) -> Result<Vec<String>, SqsError> {
        queues::list_queues(self).await
    }

    async fn delete_queue(&self, name: &str) -> Result<(), SqsError> {
        queues::delete_queue(self, name).await
    }

    async fn queue_counts(&self, name: &str) -> Result<QueueCounts, SqsError> {
        queues::queue_counts(self, name).await
    }

    async fn set_queue_attributes(
        &self,
        name: &str,
        attributes: BTreeMap<String, String>,
    ) -> Result<QueueMeta, SqsError> {
        queues::set_queue_attributes(self, name, attributes).await
    }

    async fn tag_queue(&self, name: &str, tags: BTreeMap<String, String>) -> Result<(), SqsError> {
        queues::tag_queue(self, name, tags).await
    }

    async fn untag_queue(&self, name: &str, keys: Vec<String>) -> Result<(), SqsError> {
        queues::untag_queue(self, name, keys).await
    }

    async fn purge_queue(&self, name: &str) -> Result<(), SqsError> {
        queues::purge_queue(self, name).await
    }

    async fn send_messages(
        &self,
        name: &str,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<SentMessage>, SqsError> {
        send::send_messages(self, name, messages).await
    }

    async fn receive_messages(
        &self,
        name: &str,
        options: ReceiveOptions,
    ) -> Result<Vec<ReceivedMessage>, SqsError> {
        receive::receive_messages(self, name, options).await
    }

    async fn delete_messages(
        &self,
        name: &str,
        receipt_handles: Vec<String>,
    ) -> Result<Vec<Result<(), SqsError>>, SqsError> {
        delete::delete_messages(self, name, receipt_handles).await
    }

    async fn change_visibility(
        &self,
        name: &str,
        changes_requested: Vec<VisibilityChange>,
    ) -> Result<Vec<Result<(), SqsError>>, SqsError> {
        visibility::change_visibility(self, name, changes_requested).await
    }

    async fn redrive_messages(
        &self,
        source: &str,
        redrive: &Redrive,
    ) -> Result<RedriveOutcome, SqsError> {
        redrive::redrive_messages(self, source, redrive).await
    }

    async fn save_move_task(&self, task: MoveTask) -> Result<(), SqsError> {
        move_tasks::save_move_task(self, task).await
    }

    async fn nack_message(
        &self,
        name: &str,
        receipt_handle: &str,
        nack: Nack,
    ) -> Result<(), SqsError> {
        nack::nack_message(self, name, receipt_handle, nack).await
    }

    async fn peek_messages(
        &self,
        name: &str,
        filter: &MessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> Result<PeekPage, SqsError> {
        peek::peek_messages(self, name, filter, after, limit).await
    }

    fn storage_stats(&self) -> Option<StorageStats> {
        stats::storage_stats(self)
    }

    async fn queue_stats(&self, name: &str) -> Result<QueueStats, SqsError> {
        stats::queue_stats(self, name).await
    }

    async fn move_tasks(&self) -> Result<Vec<MoveTask>, SqsError> {
        move_tasks::move_tasks(self).await
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
