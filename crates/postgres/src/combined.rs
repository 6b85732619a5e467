//! What the combiners of the engine's state carry (see combine.rs): each
//! combined request of a standard queue, and what the one statement that
//! serves them gives each.

use sluice_broker::{EngineError, ReceivedMessage};
use sluice_core::receipt::ReceiptHandle;

/// One DeleteMessage or DeleteMessageBatch request on a standard queue.
pub(crate) struct DeleteRequest {
    pub(crate) handles: Vec<String>,
    pub(crate) decoded: Vec<Option<ReceiptHandle>>,
}

/// Each handle's outcome, in the request's order.
pub(crate) type DeleteResults = Vec<Result<(), EngineError>>;

/// What the one-statement receive gave one of the requests it served.
pub(crate) struct Share {
    pub(crate) delivered: Vec<ReceivedMessage>,
    /// Messages the statement picked but left, over maxReceiveCount, for
    /// the DLQ: told to every request it could not fill.
    pub(crate) dead: i64,
    /// When the next message is due, if the statement found none.
    pub(crate) next_due: Option<i64>,
}
