//! What is true of each of sluice's own operations beyond its wire, as
//! exhaustive matches: a new operation in the model does not compile
//! until each of these is decided for it.

use super::Operation;

impl Operation {
    /// The IAM action an access rule names it by (`sluice:<Action>`).
    pub const fn iam_action(self) -> &'static str {
        match self {
            Operation::ListConsumers => "sluice:ListConsumers",
            Operation::CreateConsumer => "sluice:CreateConsumer",
            Operation::UpdateConsumer => "sluice:UpdateConsumer",
            Operation::DeleteConsumer => "sluice:DeleteConsumer",
            Operation::PauseConsumer => "sluice:PauseConsumer",
            Operation::ResumeConsumer => "sluice:ResumeConsumer",
            Operation::NackMessage => "sluice:NackMessage",
            Operation::PeekMessages => "sluice:PeekMessages",
            Operation::RedriveMessages => "sluice:RedriveMessages",
            Operation::PutAlarm => "sluice:PutAlarm",
            Operation::DescribeAlarms => "sluice:DescribeAlarms",
            Operation::DeleteAlarms => "sluice:DeleteAlarms",
            Operation::GetDepthHistory => "sluice:GetDepthHistory",
            Operation::CreateBackup => "sluice:CreateBackup",
            Operation::DescribeTopics => "sluice:DescribeTopics",
            Operation::ClaimIdempotencyKey => "sluice:ClaimIdempotencyKey",
            Operation::CompleteIdempotencyKey => "sluice:CompleteIdempotencyKey",
            Operation::ReleaseIdempotencyKey => "sluice:ReleaseIdempotencyKey",
            Operation::ListArchivedMessages => "sluice:ListArchivedMessages",
            Operation::RestoreArchivedMessages => "sluice:RestoreArchivedMessages",
        }
    }

    /// True when it may name a queue, so the access check must look at
    /// the queues it names even for a key allowed everything (a queue of
    /// another account needs that account's consent). CreateBackup names
    /// none: it copies the whole server; DescribeTopics names topics,
    /// which it lists of the key's own account only; idempotency keys are
    /// the key's own account's.
    pub const fn names_queues(self) -> bool {
        match self {
            Operation::CreateBackup
            | Operation::DescribeTopics
            | Operation::ClaimIdempotencyKey
            | Operation::CompleteIdempotencyKey
            | Operation::ReleaseIdempotencyKey => false,
            Operation::ListConsumers
            | Operation::CreateConsumer
            | Operation::UpdateConsumer
            | Operation::DeleteConsumer
            | Operation::PauseConsumer
            | Operation::ResumeConsumer
            | Operation::NackMessage
            | Operation::PeekMessages
            | Operation::RedriveMessages
            | Operation::PutAlarm
            | Operation::DescribeAlarms
            | Operation::DeleteAlarms
            | Operation::GetDepthHistory
            | Operation::ListArchivedMessages
            | Operation::RestoreArchivedMessages => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A2: every operation's IAM action is `sluice:` and its name.
    #[test]
    fn a2_iam_actions_are_named_after_their_operation() {
        for op in Operation::ALL {
            assert_eq!(op.iam_action(), format!("sluice:{}", op.name()));
        }
    }
}
