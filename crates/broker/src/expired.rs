//! Messages that retention took out of a queue which keeps what expires
//! (rule X8, queue attribute `SluiceArchiveExpired`): the engine holds them,
//! out of every count and never delivered, until the archive has them.
//! The archiver reads them, writes and syncs the archive, and only then
//! tells the engine to forget them, so no message is ever gone from both.

use std::future::Future;

use crate::error::EngineError;
use crate::types::PeekedMessage;

/// A message past its queue's retention, waiting for the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredMessage {
    /// The queue's key in the engine.
    pub queue: String,
    /// The message as a peek shows it; `position` names it to
    /// [`ExpiredMessages::forget_archived`].
    pub message: PeekedMessage,
}

impl ExpiredMessage {
    /// `message` of queue `queue`, shown as expired: the state both
    /// engines report for a message held for the archive, whatever its
    /// peek said before it expired.
    pub fn new(queue: String, mut message: PeekedMessage) -> Self {
        message.state = "expired";
        Self { queue, message }
    }
}

/// The expired messages an engine holds for the archive (a supertrait of
/// [`Broker`](crate::Broker)).
pub trait ExpiredMessages: Clone + Send + Sync + 'static {
    /// Up to `max` expired messages still held, oldest queue first and
    /// oldest message first within a queue, leaving out the queues in
    /// `skip` (whose archive is failing: they must not hold up the
    /// others). Reading changes nothing: a message is read again until it
    /// is forgotten.
    fn expired_messages(
        &self,
        max: usize,
        skip: &[String],
    ) -> impl Future<Output = Result<Vec<ExpiredMessage>, EngineError>> + Send;

    /// Forgets the expired messages of queue `queue` at these positions,
    /// once the archive holds them; durable on return. Positions already
    /// forgotten (or of a queue deleted since) are skipped.
    fn forget_archived(
        &self,
        queue: &str,
        positions: &[u64],
    ) -> impl Future<Output = Result<(), EngineError>> + Send;
}
