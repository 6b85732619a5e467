//! The errors of `sluice bench`: what stops a run, and what one request can
//! run into.

use std::time::Duration;

/// Why one request to the endpoint failed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The connection could not be made or broke.
    #[error("transport error: {0}")]
    Transport(String),
    /// No complete answer in time.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The endpoint answered with an SQS error (or another non-2xx status).
    #[error("HTTP {status}: {code}: {message}")]
    Service {
        /// The HTTP status.
        status: u16,
        /// The SQS error code (`x-amzn-query-error`, else the `__type`).
        code: String,
        /// The error message.
        message: String,
    },
    /// A 2xx answer whose body is not the JSON the action returns.
    #[error("unexpected response body: {0}")]
    Decode(String),
}

/// Why a benchmark run or the null server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A flag or the endpoint URL is not usable.
    #[error("{0}")]
    Usage(String),
    /// The queues could not be prepared (created, found or purged).
    #[error("cannot prepare queue {queue}")]
    Setup {
        /// The queue being prepared.
        queue: String,
        /// What the endpoint answered.
        source: RequestError,
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
    /// The async runtime or a socket failed.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}
