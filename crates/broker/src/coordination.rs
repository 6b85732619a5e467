//! Cluster coordination: what several nodes sharing one storage keep in it
//! besides queues, and how they divide background work. The alarms (so
//! every node shows the same ones and one node evaluates them), the
//! message move task records (one active task per source queue), the
//! claims on background jobs, the activity counters of every node, and the
//! secret receipt handles are sealed with, the push consumers created at
//! run time and the leases on their delivery slots.
//!
//! [`Coordination`] is apart from [`Broker`](crate::Broker), which holds the
//! SQS queue operations only: the server's alarm and move-task components
//! reach storage through it. An engine no other node shares keeps the
//! defaults: every claim is granted, alarms stay in the server.

use std::future::Future;

use sluice_core::clock::Millis;

use crate::error::EngineError;
use crate::types::{MoveTask, QueueStats};

/// Cluster storage and background-job claims, atomic per call. Clones
/// share the same engine (background tasks hold one).
pub trait Coordination: Clone + Send + Sync + 'static {
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
    ) -> impl Future<Output = Result<Option<JobClaim>, EngineError>> + Send {
        let _ = name;
        async { Ok(Some(JobClaim::default())) }
    }

    /// Counts, oldest message age and the activity counters of every node
    /// sharing this engine's storage, as alarms read them (rule M1). An
    /// engine no other node shares answers its own queue stats.
    fn cluster_queue_stats(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<QueueStats, EngineError>> + Send;

    /// Creates or replaces a move task record.
    fn save_move_task(
        &self,
        task: MoveTask,
    ) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Every move task record, newest first.
    fn move_tasks(&self) -> impl Future<Output = Result<Vec<MoveTask>, EngineError>> + Send;

    /// Every alarm kept in shared storage, by name. An engine no other
    /// node shares keeps none (the server keeps them).
    fn stored_alarms(&self) -> impl Future<Output = Result<Vec<StoredAlarm>, EngineError>> + Send {
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
    ) -> impl Future<Output = Result<Option<String>, EngineError>> + Send {
        let _ = (alarm, replaces);
        async { Err(EngineError::AlarmsNotShared) }
    }

    /// Deletes stored alarms by name; unknown names are ignored.
    fn delete_stored_alarms(
        &self,
        names: Vec<String>,
    ) -> impl Future<Output = Result<(), EngineError>> + Send {
        let _ = names;
        async { Err(EngineError::AlarmsNotShared) }
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
    ) -> impl Future<Output = Result<bool, EngineError>> + Send {
        let _ = (alarm, expected_state, expected_updated_at);
        async { Err(EngineError::AlarmsNotShared) }
    }

    /// Every push consumer created at run time kept in shared storage
    /// (rule C9), by name. An engine no other node shares keeps none (the
    /// server keeps them in its data directory).
    fn stored_consumers(
        &self,
    ) -> impl Future<Output = Result<Vec<StoredConsumer>, EngineError>> + Send {
        async { Ok(Vec::new()) }
    }

    /// Adds a run-time consumer; false (nothing changed) when one of that
    /// name is stored already.
    fn insert_stored_consumer(
        &self,
        consumer: StoredConsumer,
    ) -> impl Future<Output = Result<bool, EngineError>> + Send {
        let _ = consumer;
        async { Err(EngineError::ConsumersNotShared) }
    }

    /// Replaces the definition of the stored consumer of that name; false
    /// (nothing changed) when there is none.
    fn update_stored_consumer(
        &self,
        consumer: StoredConsumer,
    ) -> impl Future<Output = Result<bool, EngineError>> + Send {
        let _ = consumer;
        async { Err(EngineError::ConsumersNotShared) }
    }

    /// Deletes the stored consumer `name`; false when there was none.
    fn delete_stored_consumer(
        &self,
        name: String,
    ) -> impl Future<Output = Result<bool, EngineError>> + Send {
        let _ = name;
        async { Err(EngineError::ConsumersNotShared) }
    }

    /// Leases one of the delivery slots `0..slots` of consumer `consumer`
    /// for `lease_ms`, across every node sharing the storage (rule C14):
    /// `None` while live leases hold them all. A lease not renewed ends
    /// by itself, so a dead node's slots come free.
    fn claim_consumer_slot(
        &self,
        consumer: String,
        slots: u32,
        lease_ms: u64,
    ) -> impl Future<Output = Result<Option<SlotLease>, EngineError>> + Send {
        let _ = (consumer, slots, lease_ms);
        async { Err(EngineError::ConsumersNotShared) }
    }

    /// Extends `lease` to `lease_ms` from now; false when it was lost
    /// (it ended and another claim took the slot).
    fn renew_consumer_slot(
        &self,
        lease: SlotLease,
        lease_ms: u64,
    ) -> impl Future<Output = Result<bool, EngineError>> + Send {
        let _ = (lease, lease_ms);
        async { Err(EngineError::ConsumersNotShared) }
    }

    /// Frees the slot `lease` holds; nothing when the lease was lost.
    fn release_consumer_slot(
        &self,
        lease: SlotLease,
    ) -> impl Future<Output = Result<(), EngineError>> + Send {
        let _ = lease;
        async { Err(EngineError::ConsumersNotShared) }
    }

    /// The server's 32-byte secret that receipt handles are sealed with
    /// (rule A3): made at random once, then the same for the life of the
    /// storage and for every node sharing it, so handles survive restarts
    /// and work on any node. An in-memory engine makes one per process.
    fn handle_secret(&self) -> impl Future<Output = Result<HandleSecret, EngineError>> + Send;
}

/// The secret receipt handles are sealed with (rule A3). Its Debug print
/// hides the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct HandleSecret(pub [u8; 32]);

impl HandleSecret {
    /// A new secret from the operating system's random source.
    pub fn random() -> Result<Self, EngineError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| EngineError::Storage(format!("no random source: {e}")))?;
        Ok(Self(bytes))
    }

    /// The secret read back from storage; `None` unless it is 32 bytes.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }
}

impl std::fmt::Debug for HandleSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HandleSecret(…)")
    }
}

/// An alarm as shared storage keeps it. The engine does not read the
/// definition or the history: the server writes and reads them as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAlarm {
    /// Unique name.
    pub name: String,
    /// Where it was defined (`api`, `config`, `dlq_alarms`).
    pub source: String,
    /// The definition, JSON.
    pub definition: String,
    /// `OK`, `ALARM` or `INSUFFICIENT_DATA`.
    pub state: String,
    /// Why it is in that state.
    pub reason: String,
    /// When the state last changed (or the alarm was created).
    pub updated_at: Millis,
    /// State changes, newest first, JSON.
    pub history: String,
}

/// A push consumer created at run time, as shared storage keeps it. The
/// engine does not read the definition: the server writes and reads it as
/// JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredConsumer {
    /// Unique name.
    pub name: String,
    /// Its settings and whether it is paused, JSON.
    pub definition: String,
}

/// One delivery slot of a consumer leased by this node (see
/// [`Coordination::claim_consumer_slot`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotLease {
    /// The consumer's name.
    pub consumer: String,
    /// Which slot, below the consumer's `max_concurrency`.
    pub slot: u32,
    /// What tells this lease apart from a later one of the same slot.
    pub token: String,
}

/// A background job this node holds (see [`Coordination::claim_job`]):
/// released when dropped.
#[derive(Default)]
pub struct JobClaim {
    guard: Option<Box<dyn ClaimGuard>>,
}

/// What keeps a [`JobClaim`] held, e.g. a database session holding a lock.
pub trait ClaimGuard: Send + 'static {
    /// False once the claim may have passed to another node (its session
    /// ended): the job must stop at once.
    fn is_held(&self) -> bool;
}

impl JobClaim {
    /// A claim that lasts as long as `guard` lives and holds.
    pub fn holding(guard: impl ClaimGuard) -> Self {
        Self {
            guard: Some(Box::new(guard)),
        }
    }

    /// False once the job may run elsewhere; a local claim always holds.
    pub fn is_held(&self) -> bool {
        self.guard.as_ref().is_none_or(|g| g.is_held())
    }
}

impl std::fmt::Debug for JobClaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JobClaim")
    }
}
