//! The write-ahead log: each group commit is one record appended to the
//! newest segment file and made durable with one `fdatasync`, before redb
//! holds it durably.
//!
//! The log is also where message bodies live: redb holds, for a message
//! sent through the log, only where its data lies in a segment
//! ([`BodyAt`]), so a message that stays is written once, not once to the
//! log and again to redb. So segments are not reused after a checkpoint:
//! each checkpoint starts a new one, and an older segment is deleted once
//! redb durably holds no message in it (the store counts them).
//!
//! Segment layout: an 8-byte magic, then records, each a 16-byte header —
//! CRC-32 (crc32fast) (over the rest of the header and the payload),
//! payload length, log sequence number (LSN), all little-endian — and the
//! payload ([`crate::log_record`]). LSNs run without a gap. A reader stops at
//! the first record that is torn, fails its checksum, or does not continue
//! the chain (a torn tail is what a kill -9 normally leaves, not an error).
//!
//! Every record after the last checkpoint is in the newest segment: a new
//! segment starts only once redb holds every record before it durably. So
//! a start reads only that one.
//!
//! Segments are zero-filled ahead of the writer. An `fdatasync` after an
//! append must also make the file's new size durable, a journal commit of
//! the file system on top of the data's flush; over bytes already allocated
//! it flushes the data alone, about a third faster, and every answer of a
//! durable server waits for one. So a [`Preparer`] thread writes the next
//! segment (magic, then zeros, about as long as the last segment grew) as
//! a `.ready` file, off the answers' path, and the log renames it to a
//! `.wal` when it moves there. A run's first segment gets its zeros with
//! its first record, not at the start: a start that writes nothing (one
//! serving reads on a nearly full disk) takes no room. A reader takes zeros after the last record
//! as the end of the log (a zero header fails its checksum); a finished
//! segment is cut to its records, and a start cuts a zero tail a crash
//! left. A segment that outgrows its zeros goes on by appending.

mod backup;
mod error;
mod files;
mod preparer;
mod reader;
mod record;
mod recovery;
#[cfg(test)]
mod tests;
mod writer;

pub use backup::{HeldSegments, write_empty_segment};
pub use error::LogError;
#[cfg(test)]
pub use files::{LEGACY_LOG_FILE, segment_ids};
pub use files::{LOG_DIR, newest_segment, remove_legacy};
pub use reader::Segments;
pub use record::BodyAt;
pub(crate) use record::read_records;
pub use recovery::{open, rewrite_records};
pub use writer::Log;

/// The operating system's storage, for tests.
#[cfg(test)]
pub fn os() -> std::sync::Arc<dyn crate::storage::Storage> {
    std::sync::Arc::new(crate::storage::OsStorage)
}
