//! What is true of each SQS operation beyond its wire, as exhaustive
//! matches: a new operation in the model does not compile until each of
//! these is decided for it.

use super::Operation;

impl Operation {
    /// The IAM action an access rule or a queue policy names it by. A
    /// batch is authorized as its single action, as SQS does: there is no
    /// `sqs:SendMessageBatch` permission (recorded:
    /// aws/serverless-application-model#3633, a refused SendMessageBatch
    /// names `sqs:sendmessage`).
    pub const fn iam_action(self) -> &'static str {
        match self {
            Operation::AddPermission => "sqs:AddPermission",
            Operation::CancelMessageMoveTask => "sqs:CancelMessageMoveTask",
            Operation::ChangeMessageVisibility => "sqs:ChangeMessageVisibility",
            Operation::ChangeMessageVisibilityBatch => "sqs:ChangeMessageVisibility",
            Operation::CreateQueue => "sqs:CreateQueue",
            Operation::DeleteMessage => "sqs:DeleteMessage",
            Operation::DeleteMessageBatch => "sqs:DeleteMessage",
            Operation::DeleteQueue => "sqs:DeleteQueue",
            Operation::GetQueueAttributes => "sqs:GetQueueAttributes",
            Operation::GetQueueUrl => "sqs:GetQueueUrl",
            Operation::ListDeadLetterSourceQueues => "sqs:ListDeadLetterSourceQueues",
            Operation::ListMessageMoveTasks => "sqs:ListMessageMoveTasks",
            Operation::ListQueueTags => "sqs:ListQueueTags",
            Operation::ListQueues => "sqs:ListQueues",
            Operation::PurgeQueue => "sqs:PurgeQueue",
            Operation::ReceiveMessage => "sqs:ReceiveMessage",
            Operation::RemovePermission => "sqs:RemovePermission",
            Operation::SendMessage => "sqs:SendMessage",
            Operation::SendMessageBatch => "sqs:SendMessage",
            Operation::SetQueueAttributes => "sqs:SetQueueAttributes",
            Operation::StartMessageMoveTask => "sqs:StartMessageMoveTask",
            Operation::TagQueue => "sqs:TagQueue",
            Operation::UntagQueue => "sqs:UntagQueue",
        }
    }

    /// True when the operation reads the region the request was signed
    /// for: the ones that name a queue by its name, or list queues, since
    /// queues are regional (rule W3).
    pub const fn needs_signing_region(self) -> bool {
        match self {
            Operation::CreateQueue | Operation::GetQueueUrl | Operation::ListQueues => true,
            Operation::AddPermission
            | Operation::CancelMessageMoveTask
            | Operation::ChangeMessageVisibility
            | Operation::ChangeMessageVisibilityBatch
            | Operation::DeleteMessage
            | Operation::DeleteMessageBatch
            | Operation::DeleteQueue
            | Operation::GetQueueAttributes
            | Operation::ListDeadLetterSourceQueues
            | Operation::ListMessageMoveTasks
            | Operation::ListQueueTags
            | Operation::PurgeQueue
            | Operation::ReceiveMessage
            | Operation::RemovePermission
            | Operation::SendMessage
            | Operation::SendMessageBatch
            | Operation::SetQueueAttributes
            | Operation::StartMessageMoveTask
            | Operation::TagQueue
            | Operation::UntagQueue => false,
        }
    }

    /// True when a Query request may be sent to a queue's URL for it: the
    /// operations that name no queue are refused there, as SQS refuses
    /// them (rule W7).
    pub const fn allowed_at_queue_url(self) -> bool {
        !matches!(self, Operation::CreateQueue | Operation::ListQueues)
    }

    /// True when AddPermission may grant it to another account (SQS's
    /// list of shareable actions).
    pub const fn shareable(self) -> bool {
        match self {
            Operation::SendMessage
            | Operation::ReceiveMessage
            | Operation::DeleteMessage
            | Operation::ChangeMessageVisibility
            | Operation::GetQueueAttributes
            | Operation::GetQueueUrl
            | Operation::ListDeadLetterSourceQueues
            | Operation::PurgeQueue
            | Operation::ListQueueTags
            | Operation::SendMessageBatch
            | Operation::DeleteMessageBatch
            | Operation::ChangeMessageVisibilityBatch => true,
            Operation::AddPermission
            | Operation::CancelMessageMoveTask
            | Operation::CreateQueue
            | Operation::DeleteQueue
            | Operation::ListMessageMoveTasks
            | Operation::ListQueues
            | Operation::RemovePermission
            | Operation::SetQueueAttributes
            | Operation::StartMessageMoveTask
            | Operation::TagQueue
            | Operation::UntagQueue => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A2: every operation's IAM action is `sqs:` and its name, a batch's
    /// that of its single action.
    #[test]
    fn a2_iam_actions_are_named_after_their_operation() {
        for op in Operation::ALL {
            let single = op.name().strip_suffix("Batch").unwrap_or(op.name());
            assert_eq!(op.iam_action(), format!("sqs:{single}"));
        }
        assert_eq!(Operation::SendMessageBatch.iam_action(), "sqs:SendMessage");
    }
}
