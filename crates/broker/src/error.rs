//! What an engine's operation can fail with, in the engine's terms.
//!
//! Engines say what went wrong (`QueueDoesNotExist`, a receipt handle of
//! another delivery, storage that cannot be reached); the one conversion
//! into an SQS error, `From<EngineError> for SqsError`, decides the code
//! and the words clients see, so both engines answer alike.

use sluice_core::limits::{MAX_INFLIGHT, MAX_VISIBILITY_TIMEOUT, PURGE_INTERVAL_SECS};
use sluice_core::{ErrorCode, SqsError};

/// Why a [`Broker`](crate::Broker) or [`Coordination`](crate::Coordination)
/// operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The named queue does not exist (or was deleted meanwhile).
    #[error("the queue does not exist")]
    QueueDoesNotExist,
    /// CreateQueue of an existing name with a different value for
    /// `attribute` (rule V13).
    #[error("the queue exists with a different {attribute}")]
    QueueNameExists {
        /// The attribute whose value differs.
        attribute: String,
    },
    /// CreateQueue of an existing name that differs in something other
    /// than a named attribute (e.g. its tags).
    #[error("the queue {name} exists with other settings")]
    QueueExists {
        /// The queue's name.
        name: String,
    },
    /// The name was deleted less than 60 s ago (rule V19).
    #[error("the queue was deleted recently")]
    QueueDeletedRecently,
    /// A receipt handle that names no delivery of this queue.
    #[error("receipt handle {handle} is not valid")]
    ReceiptHandleIsInvalid {
        /// The handle as given.
        handle: String,
    },
    /// A FIFO receipt handle whose delivery is over (rule F15).
    #[error("receipt handle {handle} has expired")]
    ReceiptHandleExpired {
        /// The handle as given.
        handle: String,
    },
    /// A valid handle of a message that is gone, for a visibility change.
    #[error("the message of receipt handle {handle} is gone")]
    MessageGone {
        /// The handle as given.
        handle: String,
    },
    /// The message is not in flight under this handle.
    #[error("the message is not in flight")]
    MessageNotInflight,
    /// A visibility change that would keep the message invisible more than
    /// 12 hours after the receive that issued the handle (rule V26).
    #[error("visibility timeout {timeout} would pass 12 hours after the receive")]
    TotalVisibilityBeyondLimit {
        /// The visibility timeout asked for, in seconds.
        timeout: u32,
    },
    /// The queue holds the most in-flight messages it may.
    #[error("too many messages in flight")]
    OverLimit,
    /// A purge within 60 s of the previous one (rule V8).
    #[error("queue {queue} was purged less than a minute ago")]
    PurgeQueueInProgress {
        /// The queue's name.
        queue: String,
    },
    /// A second active move task on one source queue (rule R7).
    #[error("a move task is already running on the source queue")]
    MoveTaskAlreadyRunning,
    /// A permanent nack on a queue without a redrive policy (rule X2).
    #[error("the queue has no redrive policy")]
    NoRedrivePolicy,
    /// A permanent nack whose dead-letter queue does not exist (rule X2).
    #[error("the dead-letter queue does not exist")]
    DeadLetterQueueMissing,
    /// An alarm operation on an engine that keeps no alarms.
    #[error("this engine keeps no alarms")]
    AlarmsNotShared,
    /// A run-time consumer or delivery slot operation on an engine no
    /// other node shares (the server keeps those itself).
    #[error("this engine keeps no consumers")]
    ConsumersNotShared,
    /// The named topic does not exist (or was deleted meanwhile).
    #[error("the topic does not exist")]
    TopicDoesNotExist,
    /// The named subscription does not exist (or was deleted meanwhile).
    #[error("the subscription does not exist")]
    SubscriptionDoesNotExist,
    /// The storage cannot answer now; a retry may succeed. The text is
    /// what the client reads.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The storage failed. The text is what the client reads: no details
    /// of the storage (those go to the log).
    #[error("storage failure: {0}")]
    Storage(String),
    /// A request a rule shared with the server refuses (attribute and tag
    /// validation in `sluice-core` and [`MetaChange`](crate::MetaChange)),
    /// already as SQS words it.
    #[error("{0}")]
    Rejected(SqsError),
}

impl EngineError {
    /// The SQS error clients see (a copy, for tests' assertions).
    pub fn to_sqs(&self) -> SqsError {
        self.clone().into()
    }
}

impl From<SqsError> for EngineError {
    fn from(e: SqsError) -> Self {
        EngineError::Rejected(e)
    }
}

impl From<EngineError> for SqsError {
    fn from(e: EngineError) -> Self {
        use EngineError::*;
        match e {
            QueueDoesNotExist => SqsError::no_queue(),
            QueueNameExists { attribute } => SqsError::queue_name_exists(&attribute),
            QueueExists { name } => SqsError::new(
                ErrorCode::QueueNameExists,
                format!(
                    "A queue already exists with the same name and a different value for an attribute: {name}"
                ),
            ),
            QueueDeletedRecently => SqsError::queue_deleted_recently(),
            ReceiptHandleIsInvalid { handle } => SqsError::bad_receipt(&handle),
            ReceiptHandleExpired { handle } => SqsError::expired_receipt(&handle),
            MessageGone { handle } => SqsError::invalid_value(
                "ReceiptHandle",
                handle,
                "Message does not exist or is not available for visibility timeout change.",
            ),
            MessageNotInflight => {
                SqsError::new(ErrorCode::MessageNotInflight, "Message not inflight.")
            }
            TotalVisibilityBeyondLimit { timeout } => SqsError::invalid_value(
                "VisibilityTimeout",
                timeout,
                &format!(
                    "Total VisibilityTimeout for the message is beyond the limit [{MAX_VISIBILITY_TIMEOUT} seconds]"
                ),
            ),
            OverLimit => SqsError::new(
                ErrorCode::OverLimit,
                format!("The maximum number of in flight messages ({MAX_INFLIGHT}) was reached."),
            ),
            PurgeQueueInProgress { queue } => SqsError::new(
                ErrorCode::PurgeQueueInProgress,
                format!(
                    "Only one PurgeQueue operation on {queue} is allowed every {PURGE_INTERVAL_SECS} seconds."
                ),
            ),
            // AWS answers it as an invalid parameter.
            MoveTaskAlreadyRunning => SqsError::new(
                ErrorCode::InvalidParameterValue,
                "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
            ),
            NoRedrivePolicy => SqsError::invalid_parameter(
                "Permanent failure needs a dead-letter queue: the queue has no RedrivePolicy.",
            ),
            DeadLetterQueueMissing => {
                SqsError::invalid_parameter("The queue's dead-letter queue does not exist.")
            }
            AlarmsNotShared => SqsError::internal(
                "This storage engine keeps no alarms; the server keeps them itself.",
            ),
            ConsumersNotShared => SqsError::internal(
                "This storage engine keeps no consumers; the server keeps them itself.",
            ),
            // No SQS action names a topic: reaching here is a fault of ours.
            TopicDoesNotExist => SqsError::internal("The topic does not exist."),
            SubscriptionDoesNotExist => SqsError::internal("The subscription does not exist."),
            Unavailable(message) => SqsError::new(ErrorCode::ServiceUnavailable, message),
            Storage(message) => SqsError::internal(message),
            Rejected(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(e: EngineError) -> (ErrorCode, String) {
        let sqs = SqsError::from(e);
        (sqs.code, sqs.message)
    }

    /// W2: every engine error reaches clients with the code and words the
    /// engines answered with when each wrote its own SQS errors (rules W7,
    /// V13, V19, V8, L4, F15, R7 and X2 name these answers).
    #[test]
    fn w2_engine_errors_keep_their_sqs_answers() {
        use ErrorCode::*;
        let handle = "AQAB";
        let cases = [
            (
                EngineError::QueueDoesNotExist,
                QueueDoesNotExist,
                "The specified queue does not exist.".to_string(),
            ),
            (
                EngineError::QueueNameExists {
                    attribute: "VisibilityTimeout".into(),
                },
                QueueNameExists,
                "A queue already exists with the same name and a different value for attribute VisibilityTimeout".into(),
            ),
            (
                EngineError::QueueExists { name: "q".into() },
                QueueNameExists,
                "A queue already exists with the same name and a different value for an attribute: q".into(),
            ),
            (
                EngineError::QueueDeletedRecently,
                QueueDeletedRecently,
                "You must wait 60 seconds after deleting a queue before you can create another with the same name.".into(),
            ),
            (
                EngineError::ReceiptHandleIsInvalid {
                    handle: handle.into(),
                },
                ReceiptHandleIsInvalid,
                "The input receipt handle \"AQAB\" is not a valid receipt handle.".into(),
            ),
            (
                EngineError::ReceiptHandleExpired {
                    handle: handle.into(),
                },
                InvalidParameterValue,
                "Value AQAB for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.".into(),
            ),
            (
                EngineError::MessageGone {
                    handle: handle.into(),
                },
                InvalidParameterValue,
                "Value AQAB for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.".into(),
            ),
            (
                EngineError::MessageNotInflight,
                MessageNotInflight,
                "Message not inflight.".into(),
            ),
            (
                EngineError::OverLimit,
                OverLimit,
                "The maximum number of in flight messages (120000) was reached.".into(),
            ),
            (
                EngineError::PurgeQueueInProgress { queue: "q".into() },
                PurgeQueueInProgress,
                "Only one PurgeQueue operation on q is allowed every 60 seconds.".into(),
            ),
            (
                EngineError::MoveTaskAlreadyRunning,
                InvalidParameterValue,
                "There is already a task running. Only one active task is allowed for a source queue arn at a given time.".into(),
            ),
            (
                EngineError::NoRedrivePolicy,
                InvalidParameterValue,
                "Permanent failure needs a dead-letter queue: the queue has no RedrivePolicy.".into(),
            ),
            (
                EngineError::DeadLetterQueueMissing,
                InvalidParameterValue,
                "The queue's dead-letter queue does not exist.".into(),
            ),
            (
                EngineError::AlarmsNotShared,
                InternalFailure,
                "This storage engine keeps no alarms; the server keeps them itself.".into(),
            ),
            (
                EngineError::ConsumersNotShared,
                InternalFailure,
                "This storage engine keeps no consumers; the server keeps them itself.".into(),
            ),
            (
                EngineError::Unavailable("retry".into()),
                ServiceUnavailable,
                "retry".into(),
            ),
            (
                EngineError::Storage("broken".into()),
                InternalFailure,
                "broken".into(),
            ),
            (
                EngineError::Rejected(SqsError::invalid_parameter("no")),
                InvalidParameterValue,
                "no".into(),
            ),
        ];
        for (error, code, message) in cases {
            assert_eq!(answer(error.clone()), (code, message), "{error:?}");
            assert_eq!(error.to_sqs(), SqsError::from(error.clone()));
        }
    }

    /// W2: a rule's refusal passes through an engine unchanged.
    #[test]
    fn w2_rejections_pass_through() {
        let refusal = SqsError::missing("QueueName");
        let through: EngineError = refusal.clone().into();
        assert_eq!(SqsError::from(through), refusal);
    }
}
