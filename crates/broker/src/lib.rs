//! The broker: the queue operations every storage engine implements.
//!
//! The trait speaks in queue operations (send a batch, receive, delete a
//! batch, change visibility, …), not in rows or keys, so that each engine can
//! do an operation in the way its storage does best. Rules that need no
//! storage (validation, attribute parsing, digests) live in `sluice-core` and
//! the service layer and are not repeated here. Operations fail with an
//! [`EngineError`], which the server turns into the SQS error clients see
//! through one `From` conversion. Engines keep SNS's topics and
//! subscriptions too ([`Topics`], a supertrait), as records they load and
//! store whole, consumers' idempotency records ([`IdempotencyKeys`],
//! another), and the expired messages waiting for the archive
//! ([`ExpiredMessages`]). Beside the trait: [`receipts`] seals the
//! engines' receipt handles before clients see them, and [`json_file`]
//! keeps a lone node's alarms and consumers in its data directory, what
//! [`Coordination`] keeps on shared storage. [`conformance`] is the
//! behaviour suite every engine must pass; `model_tests` (feature
//! `model-tests`) the random sequences every engine must survive.

pub mod activity;
mod backup;
pub mod conformance;
pub mod coordination;
mod error;
pub mod expired;
pub mod failure;
pub mod handles;
pub mod idempotency;
pub mod json_file;
pub mod metadata;
#[cfg(feature = "model-tests")]
pub mod model_tests;
pub mod moves;
pub mod receipts;
pub mod tags;
pub mod topics;
mod types;

use std::future::Future;

pub use backup::{BackupReport, backup_unsupported};
pub use coordination::{
    ClaimGuard, Coordination, HandleSecret, JobClaim, SlotLease, StoredAlarm, StoredConsumer,
};
pub use error::EngineError;
pub use expired::{ExpiredMessage, ExpiredMessages};
pub use idempotency::IdempotencyKeys;
pub use metadata::MetaChange;
pub use topics::{Subscription, Topic, Topics};
pub use types::*;

/// The SQS queue operations, atomic per call. Queue names are already
/// validated. Clones share the same engine (background tasks hold one).
/// Every engine also keeps the cluster's shared records ([`Coordination`])
/// and the SNS topics and subscriptions ([`Topics`]).
pub trait Broker: Coordination + Topics + IdempotencyKeys + ExpiredMessages {
    /// Creates a queue, or returns the existing one when the requested
    /// attributes match it (rule V9); `QueueNameExists` when they do not.
    fn create_queue(
        &self,
        spec: CreateQueue,
    ) -> impl Future<Output = Result<QueueMeta, EngineError>> + Send;

    /// The queue's configuration, tags and timestamps.
    fn get_queue(&self, name: &str) -> impl Future<Output = Result<QueueMeta, EngineError>> + Send;

    /// The queue's `Policy` document, if it has one: what the access check
    /// of every authenticated request reads, so engines answer it without
    /// copying the rest of the queue's description.
    fn queue_policy(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<String>, EngineError>> + Send {
        async move { Ok(self.get_queue(name).await?.config.policy) }
    }

    /// The names of all queues, sorted.
    fn list_queues(&self) -> impl Future<Output = Result<Vec<String>, EngineError>> + Send;

    /// Deletes a queue and all its messages.
    fn delete_queue(&self, name: &str) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Approximate message counts (visible, in flight, delayed).
    fn queue_counts(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<QueueCounts, EngineError>> + Send;

    /// Applies `change` to the queue's metadata (attributes or tags) all
    /// or nothing, atomically against concurrent changes; the metadata as
    /// stored. The change's rules are [`MetaChange::apply`]'s: an engine
    /// only loads and stores.
    fn update_queue(
        &self,
        name: &str,
        change: MetaChange,
    ) -> impl Future<Output = Result<QueueMeta, EngineError>> + Send;

    /// Deletes every message (rule V8); `PurgeQueueInProgress` within 60 s
    /// of the previous purge.
    fn purge_queue(&self, name: &str) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Stores already validated messages durably (rule V1) and returns their
    /// ids, in the order given.
    fn send_messages(
        &self,
        name: &str,
        messages: Vec<NewMessage>,
    ) -> impl Future<Output = Result<Vec<SentMessage>, EngineError>> + Send;

    /// Receives up to `max_messages` (rules V2, V6).
    fn receive_messages(
        &self,
        name: &str,
        options: ReceiveOptions,
    ) -> impl Future<Output = Result<Vec<ReceivedMessage>, EngineError>> + Send;

    /// Deletes messages by receipt handle (rule V4); one result per handle.
    fn delete_messages(
        &self,
        name: &str,
        receipt_handles: Vec<String>,
    ) -> impl Future<Output = Result<Vec<Result<(), EngineError>>, EngineError>> + Send;

    /// Changes the visibility timeout of in-flight messages (rule V5); one
    /// result per entry.
    fn change_visibility(
        &self,
        name: &str,
        changes: Vec<VisibilityChange>,
    ) -> impl Future<Output = Result<Vec<Result<(), EngineError>>, EngineError>> + Send;

    /// Moves receivable messages out of `source` (a dead-letter queue) into
    /// the destination, or each into the queue its `DeadLetterQueueSourceArn`
    /// names (rule R7): at most `max`, only those matching the filter, with
    /// replay marks and limits when asked (rule X3). Moved messages get a new
    /// id and a fresh enqueue time; each move is atomic.
    fn redrive_messages(
        &self,
        source: &str,
        redrive: &Redrive,
    ) -> impl Future<Output = Result<RedriveOutcome, EngineError>> + Send;

    /// Counts, oldest message age and activity counters (rule M1).
    fn queue_stats(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<QueueStats, EngineError>> + Send;

    /// What the engine holds on this node's disk and in its memory;
    /// `None` for an engine with nothing of its own to report (the
    /// database holds PostgreSQL's).
    fn storage_stats(&self) -> Option<StorageStats> {
        None
    }

    /// Whether queues that ask for server-side encryption have their
    /// messages sealed at rest (a keyring is configured): new queues then
    /// ask for it by default, whatever the transport (rule E2).
    fn encrypts_at_rest(&self) -> bool {
        false
    }

    /// The data keys made, when [`Broker::encrypts_at_rest`]; `None` for
    /// an engine that seals nothing (or does not say).
    fn encryption_stats(&self) -> Option<EncryptionStats> {
        None
    }

    /// The name of the keyring key that seals the new messages of a queue
    /// with these attributes (never its material): `None` when its
    /// messages are stored clear (the queue asks for no encryption, or the
    /// engine seals nothing), `Some(None)` when its `KmsMasterKeyId` names
    /// no live key of the keyring (sends to it are refused).
    fn sealing_key(&self, sse_sqs: bool, kms_key_id: Option<&str>) -> Option<Option<String>> {
        let _ = (sse_sqs, kms_key_id);
        None
    }

    /// Puts `keyring` in use while serving (the operator rotated or
    /// retired a key and signalled the server, rule E5): the data keys
    /// that follow the server's key are wrapped again by the new active
    /// key and stored before this returns, so the old key can then be
    /// retired. A keyring lacking a key that stored data needs changes
    /// nothing. Engines that keep nothing at rest refuse.
    fn rekey(
        &self,
        keyring: std::sync::Arc<sluice_keyring::Keyring>,
    ) -> impl Future<Output = Result<Rekey, EngineError>> + Send {
        drop(keyring);
        async {
            Err(EngineError::Unavailable(
                "this engine keeps nothing at rest to encrypt".into(),
            ))
        }
    }

    /// Records a consumer's failure of an in-flight message (rule X2): the
    /// reason is kept with the message; a permanent failure moves it to the
    /// DLQ at once, otherwise it is visible again after `retry_after_seconds`.
    fn nack_message(
        &self,
        name: &str,
        receipt_handle: &str,
        nack: Nack,
    ) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Reads messages without receiving them (rule X1): no receive count or
    /// visibility changes. Up to `limit` messages matching `filter`, in queue
    /// order, after position `after`.
    fn peek_messages(
        &self,
        name: &str,
        filter: &MessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> impl Future<Output = Result<PeekPage, EngineError>> + Send;

    /// Copies the engine's data, while it serves, into the new directory
    /// `directory` (absolute, not existing yet), so that a server started
    /// on it holds every change acknowledged before the call (rule D7).
    /// The directory appears only once the copy is complete and synced.
    /// Engines without a copy of their own refuse, saying what to use.
    fn backup(
        &self,
        directory: &std::path::Path,
    ) -> impl Future<Output = Result<BackupReport, EngineError>> + Send {
        let _ = directory;
        async {
            Err(backup_unsupported(
                "This storage engine has no online backup.",
            ))
        }
    }
}
