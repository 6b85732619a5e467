//! The errors of `sluice bench`: what stops a run. What one request can run
//! into is the client's [`ClientError`].

use sluice_client::ClientError;

/// Why a benchmark run or the null server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A flag is not usable.
    #[error("{0}")]
    Usage(String),
    /// The endpoint, credentials or CA file are not usable.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The queues could not be prepared (created, found or purged).
    #[error("cannot prepare queue {queue}")]
    Setup {
        /// The queue being prepared.
        queue: String,
        /// What the endpoint answered.
        source: ClientError,
    },
    /// The run ended, but no send was acknowledged: there is nothing to measure.
    #[error("no message was acknowledged by the endpoint{0}")]
    NothingSent(String),
    /// Acknowledged messages were never received. (Duplicates alone do not
    /// fail a run: SQS delivers at least once.)
    #[error("verification failed: {lost} acknowledged message(s) were never received")]
    Lost {
        /// Acknowledged sends never received.
        lost: u64,
    },
    /// `--push`: the handler did not get every message of the backlog, or
    /// some were not deleted.
    #[error("the handler got {delivered} of {messages} messages and {left} are left in the queue")]
    Undelivered {
        /// Records the handler got.
        delivered: u64,
        /// The backlog.
        messages: u64,
        /// Still in the queue after the run.
        left: u64,
    },
    /// `--fanout`: a queue did not grow by the publishes acknowledged.
    #[error(
        "verification failed: {queue} got {got} messages for {published} acknowledged publishes"
    )]
    Unfanned {
        /// The queue's URL.
        queue: String,
        /// What it got.
        got: u64,
        /// Publishes acknowledged.
        published: u64,
    },
    /// `--idempotency`: claims were answered wrongly.
    #[error("verification failed: {0}")]
    Verification(String),
    /// The async runtime or a socket failed.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}
