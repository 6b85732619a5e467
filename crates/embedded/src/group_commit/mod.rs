//! The two threads behind the journal: the log writer and the applier.
//!
//! The writer drains pending changes, encodes them as one log record, writes
//! it, hands the changes to the applier, then syncs the log. Each put of a
//! message learns where its data lies in the log, and redb keeps that
//! position instead of the data: a message is written once. Once synced, a
//! ticket resolves: its changes are durable, and the apply to redb (without
//! durability) runs beside the sync and after it, off the path of the
//! answer. So an acknowledged change may not be in redb yet: anything that
//! reads redb first waits, through the [`Gate`], until every record handed
//! over is applied (`Journal::readable`); the index and the body cache
//! answer everything else. A batch holding a dead-letter move of a body on
//! disk is encoded by the applier (what the move writes depends on what
//! redb holds), and written once applied; its puts keep their data in redb.
//!
//! Checkpoints are the writer's: after the last record before it, it asks
//! the applier for a durable redb commit, which applies everything before
//! it first; then the writer starts a new log segment and deletes the older
//! ones in which redb, durably, needs no message's data any more. That wait
//! also bounds how far the applier can fall behind, and so the changes
//! queued for it in memory: one checkpoint's worth (its interval, or
//! [`log_writer::CHECKPOINT_BYTES`] of log). An older segment of which less than half
//! is still needed, and that lost nothing since the previous checkpoint
//! (consumers are not draining it), is compacted: the applier copies the
//! data of its remaining messages into redb, a few hundred at a time
//! between applies, and it goes at the checkpoint after.

mod applier;
mod gate;
mod handoff;
mod log_writer;
mod spawn;
#[cfg(test)]
mod tests;

pub(crate) use gate::Gate;
pub(crate) use handoff::{Failure, MAX_CHANGES_PER_COMMIT, Outcome, Pending};
pub(crate) use spawn::spawn;
