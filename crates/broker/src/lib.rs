//! The broker: the queue operations every storage engine implements.
//!
//! The trait speaks in queue operations (send a batch, receive, delete a
//! batch, change visibility, …), not in rows or keys, so that each engine can
//! do an operation in the way its storage does best. Rules that need no
//! storage (validation, attribute parsing, digests) live in `sluice-core` and
//! the service layer and are not repeated here. [`conformance`] is the
//! behaviour suite every engine must pass; `model_tests` (feature
//! `model-tests`) the random sequences every engine must survive.

pub mod activity;
pub mod conformance;
#[cfg(feature = "model-tests")]
pub mod model_tests;
pub mod moves;
pub mod shared;
pub mod tags;
mod types;

use std::collections::BTreeMap;
use std::future::Future;

use sluice_core::SqsError;

pub use shared::{HandleSecret, StoredAlarm};
pub use types::*;

/// The queue operations, atomic per call. Queue names are already validated.
/// Clones share the same engine (background tasks hold one).
pub trait Broker: Clone + Send + Sync + 'static {
    /// Creates a queue, or returns the existing one when the requested
    /// attributes match it (rule V9); `QueueNameExists` when they do not.
    fn create_queue(
        &self,
        spec: CreateQueue,
    ) -> impl Future<Output = Result<QueueMeta, SqsError>> + Send;

    /// The queue's configuration, tags and timestamps.
    fn get_queue(&self, name: &str) -> impl Future<Output = Result<QueueMeta, SqsError>> + Send;

    /// The names of all queues, sorted.
    fn list_queues(&self) -> impl Future<Output = Result<Vec<String>, SqsError>> + Send;

    /// Deletes a queue and all its messages.
    fn delete_queue(&self, name: &str) -> impl Future<Output = Result<(), SqsError>> + Send;

    /// Approximate message counts (visible, in flight, delayed).
    fn queue_counts(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<QueueCounts, SqsError>> + Send;

    /// Applies changed attributes, all or nothing.
    fn set_queue_attributes(
        &self,
        name: &str,
        attributes: BTreeMap<String, String>,
    ) -> impl Future<Output = Result<QueueMeta, SqsError>> + Send;

    /// Adds or replaces tags.
    fn tag_queue(
        &self,
        name: &str,
        tags: BTreeMap<String, String>,
    ) -> impl Future<Output = Result<(), SqsError>> + Send;

    /// Removes tags by key; unknown keys are ignored.
    fn untag_queue(
        &self,
        name: &str,
        keys: Vec<String>,
    ) -> impl Future<Output = Result<(), SqsError>> + Send;

    /// Deletes every message (rule V8); `PurgeQueueInProgress` within 60 s
    /// of the previous purge.
    fn purge_queue(&self, name: &str) -> impl Future<Output = Result<(), SqsError>> + Send;

    /// Stores already validated messages durably (rule V1) and returns their
    /// ids, in the order given.
    fn send_messages(
        &self,
        name: &str,
        messages: Vec<NewMessage>,
    ) -> impl Future<Output = Result<Vec<SentMessage>, SqsError>> + Send;

    /// Receives up to `max_messages` (rules V2, V6).
    fn receive_messages(
        &self,
        name: &str,
        options: ReceiveOptions,
    ) -> impl Future<Output = Result<Vec<ReceivedMessage>, SqsError>> + Send;

    /// Deletes messages by receipt handle (rule V4); one result per handle.
    fn delete_messages(
        &self,
        name: &str,
        receipt_handles: Vec<String>,
    ) -> impl Future<Output = Result<Vec<Result<(), SqsError>>, SqsError>> + Send;

    /// Changes the visibility timeout of in-flight messages (rule V5); one
    /// result per entry.
    fn change_visibility(
        &self,
        name: &str,
        changes: Vec<VisibilityChange>,
    ) -> impl Future<Output = Result<Vec<Result<(), SqsError>>, SqsError>> + Send;

    /// Moves receivable messages out of `source` (a dead-letter queue) into
    /// the destination, or each into the queue its `DeadLetterQueueSourceArn`
    /// names (rule R7): at most `max`, only those matching the filter, with
    /// replay marks and limits when asked (rule X3). Moved messages get a new
    /// id and a fresh enqueue time; each move is atomic.
    fn redrive_messages(
        &self,
        source: &str,
        redrive: &Redrive,
    ) -> impl Future<Output = Result<RedriveOutcome, SqsError>> + Send;

    /// Creates or replaces a move task record.
    fn save_move_task(&self, task: MoveTask) -> impl Future<Output = Result<(), SqsError>> + Send;

    /// Every move task record, newest first.
    fn move_tasks(&self) -> impl Future<Output = Result<Vec<MoveTask>, SqsError>> + Send;

    /// Counts, oldest message age and activity counters (rule M1).
    fn queue_stats(&self, name: &str) -> impl Future<Output = Result<QueueStats, SqsError>> + Send;

    /// What the engine holds on this node's disk and in its memory;
    /// `None` for an engine with nothing of its own to report (the
    /// database holds PostgreSQL's).
    fn storage_stats(&self) -> Option<StorageStats> {
        None
    }

    /// Records a consumer's failure of an in-flight message (rule X2): the
    /// reason is kept with the message; a permanent failure moves it to the
    /// DLQ at once, otherwise it is visible again after `retry_after_seconds`.
    fn nack_message(
        &self,
        name: &str,
        receipt_handle: &str,
        nack: Nack,
    ) -> impl Future<Output = Result<(), SqsError>> + Send;

    /// True when other nodes share this engine's storage: background work
    /// must then run on one node at a time, and a move task found active at
    /// start-up may belong to a live node.
    fn is_shared(&self) -> bool {
        false
    }

    /// Claims background job `name` (e.g. a move task) for this node until
    /// the claim is dropped or the node dies; `None` while another node
    /// holds it. An engine no other node shares always grants it.
    fn claim_job(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<JobClaim>, SqsError>> + Send {
        let _ = name;
        async { Ok(Some(JobClaim::default())) }
    }

    /// Counts, oldest message age and the activity counters of every node
    /// sharing this engine's storage, as alarms read them (rule M1). An
    /// engine no other node shares answers [`Broker::queue_stats`].
    fn cluster_queue_stats(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<QueueStats, SqsError>> + Send {
        self.queue_stats(name)
    }

    /// Every alarm kept in shared storage, by name. An engine no other
    /// node shares keeps none (the server keeps them).
    fn stored_alarms(&self) -> impl Future<Output = Result<Vec<StoredAlarm>, SqsError>> + Send {
        async { Ok(Vec::new()) }
    }

    /// Adds `alarm`, or replaces the definition and source of the alarm of
    /// that name (keeping its state and history) when its source is one of
    /// `replaces`; otherwise changes nothing and returns the existing
    /// alarm's source.
    fn put_stored_alarm(
        &self,
        alarm: StoredAlarm,
        replaces: Vec<String>,
    ) -> impl Future<Output = Result<Option<String>, SqsError>> + Send {
        let _ = (alarm, replaces);
        async { Err(shared::alarms_not_shared()) }
    }

    /// Deletes stored alarms by name; unknown names are ignored.
    fn delete_stored_alarms(
        &self,
        names: Vec<String>,
    ) -> impl Future<Output = Result<(), SqsError>> + Send {
        let _ = names;
        async { Err(shared::alarms_not_shared()) }
    }

    /// Saves the state, reason, time and history of `alarm` if its stored
    /// state is still `expected_state` since `expected_updated_at`; false
    /// (nothing saved) when another node changed it first or it is gone.
    /// This compare-and-set is what makes each change notified once.
    fn save_alarm_state(
        &self,
        alarm: StoredAlarm,
        expected_state: String,
        expected_updated_at: u64,
    ) -> impl Future<Output = Result<bool, SqsError>> + Send {
        let _ = (alarm, expected_state, expected_updated_at);
        async { Err(shared::alarms_not_shared()) }
    }

    /// The server's 32-byte secret that receipt handles are sealed with
    /// (rule A3): made at random once, then the same for the life of the
    /// storage and for every node sharing it, so handles survive restarts
    /// and work on any node. An in-memory engine makes one per process.
    fn handle_secret(&self) -> impl Future<Output = Result<HandleSecret, SqsError>> + Send;

    /// Reads messages without receiving them (rule X1): no receive count or
    /// visibility changes. Up to `limit` messages matching `filter`, in queue
    /// order, after position `after`.
    fn peek_messages(
        &self,
        name: &str,
        filter: &MessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> impl Future<Output = Result<PeekPage, SqsError>> + Send;
}
