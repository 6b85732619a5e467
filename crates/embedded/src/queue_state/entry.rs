//! What the index holds per message, and what it hands back: places,
//! phases, entries, removed messages, deliveries, FIFO receive attempts.

use std::sync::Arc;

use sluice_core::clock::Millis;

use crate::groups::{GroupId, GroupNames};
use crate::message::{MessageData, MessageState};

/// A ready message's place in its queue: `(sequence, 0)` normally, and
/// `(newest sequence so far, n)` for a message sent to the back (rule V12),
/// so it comes after every message already there and before later sends.
pub type Order = (u64, u64);

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Receivable now.
    Ready,
    /// Not yet receivable because of a delay, never received.
    Delayed,
    /// Received, hidden until its visibility timeout ends.
    InFlight,
}

/// A message in the index: what delivery decisions need, and its body
/// only while cached (durable mode) or always (in-memory mode). Kept small
/// on purpose: a backlog costs this much memory per waiting message.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The immutable data when held in memory; `None` means "read it from
    /// the store".
    pub body: Option<Arc<MessageData>>,
    /// Start of its retention clock.
    pub enqueued_at: Millis,
    /// When it is (again) receivable.
    pub visible_at: Millis,
    /// Receives so far (the receive times are in a side map: most waiting
    /// messages were never received).
    pub receive_count: u32,
    /// Its message group, interned in the queue's [`GroupNames`].
    pub(super) group: Option<GroupId>,
    /// Which index holds it.
    pub phase: Phase,
    /// Received often enough to go to the back when ready again (V12).
    pub(super) at_back: bool,
}

/// A FIFO group's turn, by its ready head: when the head became receivable,
/// whether it was received before (at the same moment a message never
/// received has waited longer), and the head's sequence.
pub type HeadTurn = (Millis, bool, u64);

impl Entry {
    /// Its group's turn while it is the group's ready head (rule F14).
    pub(super) fn head_turn(&self, seq: u64) -> HeadTurn {
        (self.visible_at, self.receive_count > 0, seq)
    }
}

/// A message taken out of a queue's index, with all it needs to be put
/// into another one (or back).
#[derive(Debug, Clone)]
pub struct Removed {
    /// Its sequence in the queue it left.
    pub seq: u64,
    /// Its data, when it was in memory.
    pub body: Option<Arc<MessageData>>,
    /// Start of its retention clock.
    pub enqueued_at: Millis,
    /// Delivery state.
    pub state: MessageState,
    /// Message group.
    pub group: Option<Arc<str>>,
    /// The last failure reason a consumer gave (rule X2).
    pub failure: Option<Arc<str>>,
}

/// What [`QueueState::deliver`] did.
#[derive(Debug, Default)]
pub struct Delivery {
    /// Sequences delivered, now in flight.
    pub delivered: Vec<u64>,
    /// Messages over their queue's maxReceiveCount, removed from the index.
    pub dead: Vec<Removed>,
}

/// A FIFO receive remembered for retries with the same attempt id (rule F4).
#[derive(Debug, Clone)]
pub struct Attempt {
    /// When the attempt id is forgotten.
    pub expires_at: Millis,
    /// (sequence, receive count) of each message delivered.
    pub seqs: Vec<(u64, u32)>,
    /// What was answered.
    pub messages: Vec<sluice_broker::ReceivedMessage>,
}

/// The tenant of a fair queue a message belongs to: its group; none for an
/// ungrouped message, a tenant of its own.
pub(super) fn fair_group<'a>(groups: &'a GroupNames, entry: &Entry) -> Option<&'a Arc<str>> {
    entry.group.map(|g| groups.name(g))
}
