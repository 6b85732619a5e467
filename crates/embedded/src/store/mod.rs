//! Durable records in redb: queues, messages and their delivery states.
//!
//! Tables are keyed so that one queue's messages are contiguous: `queues`
//! (id → record), `messages` and `states` ((queue, seq) → the message, and
//! its delivery state or its place in a log segment), `heads` (where each
//! queue's receivable messages start), `segments` (the log segments rows
//! still point into), `dedup` (FIFO deduplication windows), `failures`
//! (consumers' last failure reasons), `move_tasks`, and `meta` for
//! high-water marks that must never go back (ids are never reused, so a
//! receipt handle from before a restart can never name another message).
//! docs/embedded-engine.md describes each row's layout.

mod apply;
mod backup_marker;
mod compaction;
mod database;
mod error;
mod heads;
mod read;
mod recovery;
mod segment_use;
mod snapshot;
mod tables;
#[cfg(test)]
mod test_support;
#[cfg(test)]
pub(crate) mod tests;

pub use backup_marker::INCOMPLETE_BACKUP_MARKER;
pub use database::Store;
pub use error::StoreError;
