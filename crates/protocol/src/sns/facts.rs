//! What is true of each SNS operation beyond its wire, as exhaustive
//! matches: a new operation in the model does not compile until each of
//! these is decided for it.

use super::Operation;

impl Operation {
    /// The IAM action an access rule or a topic policy names it by
    /// (`sns:Publish`).
    pub const fn iam_action(self) -> &'static str {
        match self {
            Operation::AddPermission => "sns:AddPermission",
            Operation::CheckIfPhoneNumberIsOptedOut => "sns:CheckIfPhoneNumberIsOptedOut",
            Operation::ConfirmSubscription => "sns:ConfirmSubscription",
            Operation::CreatePlatformApplication => "sns:CreatePlatformApplication",
            Operation::CreatePlatformEndpoint => "sns:CreatePlatformEndpoint",
            Operation::CreateSMSSandboxPhoneNumber => "sns:CreateSMSSandboxPhoneNumber",
            Operation::CreateTopic => "sns:CreateTopic",
            Operation::DeleteEndpoint => "sns:DeleteEndpoint",
            Operation::DeletePlatformApplication => "sns:DeletePlatformApplication",
            Operation::DeleteSMSSandboxPhoneNumber => "sns:DeleteSMSSandboxPhoneNumber",
            Operation::DeleteTopic => "sns:DeleteTopic",
            Operation::GetDataProtectionPolicy => "sns:GetDataProtectionPolicy",
            Operation::GetEndpointAttributes => "sns:GetEndpointAttributes",
            Operation::GetPlatformApplicationAttributes => "sns:GetPlatformApplicationAttributes",
            Operation::GetSMSAttributes => "sns:GetSMSAttributes",
            Operation::GetSMSSandboxAccountStatus => "sns:GetSMSSandboxAccountStatus",
            Operation::GetSubscriptionAttributes => "sns:GetSubscriptionAttributes",
            Operation::GetTopicAttributes => "sns:GetTopicAttributes",
            Operation::ListEndpointsByPlatformApplication => {
                "sns:ListEndpointsByPlatformApplication"
            }
            Operation::ListOriginationNumbers => "sns:ListOriginationNumbers",
            Operation::ListPhoneNumbersOptedOut => "sns:ListPhoneNumbersOptedOut",
            Operation::ListPlatformApplications => "sns:ListPlatformApplications",
            Operation::ListSMSSandboxPhoneNumbers => "sns:ListSMSSandboxPhoneNumbers",
            Operation::ListSubscriptions => "sns:ListSubscriptions",
            Operation::ListSubscriptionsByTopic => "sns:ListSubscriptionsByTopic",
            Operation::ListTagsForResource => "sns:ListTagsForResource",
            Operation::ListTopics => "sns:ListTopics",
            Operation::OptInPhoneNumber => "sns:OptInPhoneNumber",
            Operation::Publish => "sns:Publish",
            Operation::PublishBatch => "sns:PublishBatch",
            Operation::PutDataProtectionPolicy => "sns:PutDataProtectionPolicy",
            Operation::RemovePermission => "sns:RemovePermission",
            Operation::SetEndpointAttributes => "sns:SetEndpointAttributes",
            Operation::SetPlatformApplicationAttributes => "sns:SetPlatformApplicationAttributes",
            Operation::SetSMSAttributes => "sns:SetSMSAttributes",
            Operation::SetSubscriptionAttributes => "sns:SetSubscriptionAttributes",
            Operation::SetTopicAttributes => "sns:SetTopicAttributes",
            Operation::Subscribe => "sns:Subscribe",
            Operation::TagResource => "sns:TagResource",
            Operation::Unsubscribe => "sns:Unsubscribe",
            Operation::UntagResource => "sns:UntagResource",
            Operation::VerifySMSSandboxPhoneNumber => "sns:VerifySMSSandboxPhoneNumber",
        }
    }

    /// True when sluice serves it: the topic, subscription, publish, tag
    /// and permission operations. SMS, mobile push and the platform
    /// applications are out of scope and answered as an action this
    /// endpoint does not serve.
    pub const fn is_served(self) -> bool {
        match self {
            Operation::AddPermission
            | Operation::ConfirmSubscription
            | Operation::CreateTopic
            | Operation::DeleteTopic
            | Operation::GetDataProtectionPolicy
            | Operation::GetSubscriptionAttributes
            | Operation::GetTopicAttributes
            | Operation::ListSubscriptions
            | Operation::ListSubscriptionsByTopic
            | Operation::ListTagsForResource
            | Operation::ListTopics
            | Operation::Publish
            | Operation::PublishBatch
            | Operation::PutDataProtectionPolicy
            | Operation::RemovePermission
            | Operation::SetSubscriptionAttributes
            | Operation::SetTopicAttributes
            | Operation::Subscribe
            | Operation::TagResource
            | Operation::Unsubscribe
            | Operation::UntagResource => true,
            Operation::CheckIfPhoneNumberIsOptedOut
            | Operation::CreatePlatformApplication
            | Operation::CreatePlatformEndpoint
            | Operation::CreateSMSSandboxPhoneNumber
            | Operation::DeleteEndpoint
            | Operation::DeletePlatformApplication
            | Operation::DeleteSMSSandboxPhoneNumber
            | Operation::GetEndpointAttributes
            | Operation::GetPlatformApplicationAttributes
            | Operation::GetSMSAttributes
            | Operation::GetSMSSandboxAccountStatus
            | Operation::ListEndpointsByPlatformApplication
            | Operation::ListOriginationNumbers
            | Operation::ListPhoneNumbersOptedOut
            | Operation::ListPlatformApplications
            | Operation::ListSMSSandboxPhoneNumbers
            | Operation::OptInPhoneNumber
            | Operation::SetEndpointAttributes
            | Operation::SetPlatformApplicationAttributes
            | Operation::SetSMSAttributes
            | Operation::VerifySMSSandboxPhoneNumber => false,
        }
    }

    /// True when a request for it may come unsigned while authentication
    /// is on: the URLs a subscriber follows (`SubscribeURL`,
    /// `UnsubscribeURL`) carry the token or the subscription's ARN, which
    /// are the credential, as on AWS.
    pub const fn allows_unsigned(self) -> bool {
        matches!(
            self,
            Operation::ConfirmSubscription | Operation::Unsubscribe
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A2: every SNS operation's IAM action is `sns:` and its name.
    #[test]
    fn a2_iam_actions_are_named_after_their_operation() {
        for op in Operation::ALL {
            assert_eq!(op.iam_action(), format!("sns:{}", op.name()));
        }
    }
}
