//! redb's tables and the keys of `meta`: what each row holds is in
//! docs/embedded-engine.md.

use redb::TableDefinition;

pub(super) const QUEUES: TableDefinition<u64, &[u8]> = TableDefinition::new("queues");
/// The data of the messages whose data is not in the log (moved, redriven,
/// compacted out of a segment), or a record pointing into the log
/// ([`codec::encode_in_log`]) in stores written before such pointers moved
/// into `states`.
pub(super) const MESSAGES: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("messages");
/// Every stored message's delivery state. For a message whose data lies
/// in the log the row also holds where, and the message's head
/// ([`codec::encode_state_in_log`]): that message has no other row, so a
/// send, receive and delete each change one tree, not three.
pub(super) const STATES: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("states");
pub(super) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
pub(super) const DEDUP: TableDefinition<(u64, &str), &[u8]> = TableDefinition::new("dedup");
pub(super) const TASKS: TableDefinition<&str, &[u8]> = TableDefinition::new("move_tasks");
pub(super) const FAILURES: TableDefinition<(u64, u64), &str> = TableDefinition::new("failures");
/// The head ([`codec::head_prefix`]: tens of bytes) of each message with a
/// record in `messages`: a start reads these instead of every body.
pub(super) const HEADS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("heads");
/// For each log segment holding the data of a stored message: how many
/// messages and bytes, and the sequences between which they are
/// ([`SegmentUse`]). A segment without an entry holds none and can go.
pub(super) const SEGMENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("segments");

/// The data keys of encryption at rest, wrapped by the keyring's keys:
/// JSON of a [`sluice_keyring::DataKeyRecord`] by its id.
pub(super) const DATA_KEYS: TableDefinition<u64, &[u8]> = TableDefinition::new("data_keys");

/// Consumers' idempotency records: JSON of a
/// [`sluice_broker::idempotency::IdempotencyRecord`] by its key (the
/// account's id, `/`, the caller's key).
pub(super) const IDEMPOTENCY: TableDefinition<&str, &[u8]> = TableDefinition::new("idempotency");

/// Secrets made once for the life of the store: the key receipt handles
/// are sealed with ([`HANDLE_SECRET`]).
pub(super) const SECRETS: TableDefinition<&str, &[u8]> = TableDefinition::new("secrets");
/// The row of `secrets` holding the receipt handles' 32-byte key.
pub(super) const HANDLE_SECRET: &str = "receipt_handles";

pub(super) const NEXT_SEQ: &str = "next_seq";
pub(super) const NEXT_QUEUE_ID: &str = "next_queue_id";
/// The last log record applied: written in the transaction that applies
/// it, so what redb holds durably names exactly the records it holds.
pub(super) const APPLIED_LSN: &str = "applied_lsn";
/// Set once `heads` holds a head for every message (stores written before
/// it existed get it built at their first open).
pub(super) const HEADS_BUILT: &str = "heads_built";
