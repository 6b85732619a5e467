//! The change vocabulary: what an operation hands to the journal, the log
//! writer encodes ([`crate::log_record`]) and the applier writes into the
//! store. A leaf of the engine's layering: it names data, it does nothing.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sluice_core::attributes::QueueConfig;
use sluice_core::clock::Millis;

use sluice_keyring::Sealer;

use crate::codec;
use crate::message::MessageData;
use crate::wal::BodyAt;

/// A queue as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueueRecord {
    /// Name.
    pub name: String,
    /// Configuration.
    pub config: QueueConfig,
    /// Tags.
    pub tags: BTreeMap<String, String>,
    /// Creation time.
    pub created_at: Millis,
    /// Last attribute change.
    pub modified_at: Millis,
    /// Last purge.
    pub last_purge: Option<Millis>,
}

/// One durable change. A commit applies a list of them in order.
#[derive(Debug)]
pub enum Change {
    /// Creates or replaces a queue record.
    PutQueue {
        /// Queue id.
        id: u64,
        /// Encoded [`QueueRecord`].
        record: Vec<u8>,
    },
    /// Deletes a queue and all its messages.
    DeleteQueue {
        /// Queue id.
        id: u64,
    },
    /// Stores a new message.
    PutMessage {
        /// Queue id.
        queue: u64,
        /// Message sequence.
        seq: u64,
        /// Encoded [`MessageData`].
        data: Vec<u8>,
        /// Encoded [`MessageState`].
        state: [u8; codec::STATE_LEN],
        /// Where the log writer put `data`: redb then keeps this instead
        /// of the data. `None` until the writer has written it.
        in_log: Option<BodyAt>,
    },
    /// Updates a message's delivery state.
    PutState {
        /// Queue id.
        queue: u64,
        /// Message sequence.
        seq: u64,
        /// Encoded [`MessageState`].
        state: [u8; codec::STATE_LEN],
    },
    /// Deletes a message.
    DeleteMessage {
        /// Queue id.
        queue: u64,
        /// Message sequence.
        seq: u64,
    },
    /// Remembers a FIFO deduplication key.
    PutDedup {
        /// Queue id.
        queue: u64,
        /// The key in the queue's window.
        key: String,
        /// Encoded [`crate::dedup::Seen`].
        seen: [u8; 32],
    },
    /// Forgets a FIFO deduplication key.
    DeleteDedup {
        /// Queue id.
        queue: u64,
        /// The key in the queue's window.
        key: String,
    },
    /// Records a consumer's failure reason for a message.
    PutFailure {
        /// Queue id.
        queue: u64,
        /// Message sequence.
        seq: u64,
        /// The reason.
        reason: String,
    },
    /// Creates or replaces a message move task record.
    PutTask {
        /// The task handle.
        handle: String,
        /// JSON of the task.
        record: Vec<u8>,
    },
    /// Moves a message to another queue (or place) as the writer finds it
    /// on disk, rewritten by `rewrite`: a dead-letter move of a message
    /// whose body is not in memory needs no read on the request's path.
    MoveMessage {
        /// Queue and sequence it leaves.
        from: (u64, u64),
        /// Queue and sequence it takes.
        to: (u64, u64),
        /// Encoded [`MessageState`] at its new place.
        state: [u8; codec::STATE_LEN],
        /// What changes in its data.
        rewrite: Rewrite,
        /// The data key of the queue it moves to; `None` writes it clear.
        seal: Option<Sealer>,
    },
    /// Stores a queue's data key, wrapped (encryption at rest).
    PutDataKey {
        /// The data key's id.
        id: u64,
        /// JSON of its [`sluice_keyring::DataKeyRecord`].
        record: Vec<u8>,
    },
    /// Forgets a data key past its expiry ([`sluice_keyring::EXPIRY_MS`]).
    DeleteDataKey {
        /// The data key's id.
        id: u64,
    },
    /// Creates or replaces an idempotency record.
    PutIdempotency {
        /// The engine's key (account and key).
        key: String,
        /// JSON of its [`sluice_broker::idempotency::IdempotencyRecord`].
        record: Vec<u8>,
    },
    /// Forgets an idempotency record (released, or expired).
    DeleteIdempotency {
        /// The engine's key.
        key: String,
    },
    /// Deletes a queue's messages with a sequence below `below`.
    Purge {
        /// Queue id.
        queue: u64,
        /// First sequence kept.
        below: u64,
    },
}

/// A change to a message's data made while it moves.
#[derive(Clone)]
pub struct Rewrite(pub Arc<dyn Fn(&mut MessageData) + Send + Sync>);

impl std::fmt::Debug for Rewrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rewrite")
    }
}
