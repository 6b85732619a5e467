//! Per-credential access rules (rule A2): which actions a key may ask for
//! and which queues it may name, as `allow` and `queues` patterns in its
//! `[[auth.credentials]]`, and SQS's words when it may not.
//!
//! What a request names is worked out by `crate::authorize`, the one call
//! site in the request path; this module only holds the rules.

use sluice_core::{ErrorCode, SqsError};

/// What a credential may do; `None` is "everything" (the default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Access {
    /// IAM-style action patterns (`sqs:SendMessage`, `sqs:Get*`,
    /// `sluice:*`, `*`), matched without regard to case as IAM does.
    pub allow: Option<Vec<String>>,
    /// Queue-name patterns (`orders*`), matched as written (queue names
    /// are case-sensitive).
    pub queues: Option<Vec<String>>,
}

impl Access {
    /// Checks the patterns: `*` and `?` wildcards, an action pattern must
    /// be `*` or `<service>:<action>`.
    pub fn validate(&self) -> Result<(), String> {
        for p in self.allow.iter().flatten() {
            let ok = p == "*"
                || p.split_once(':').is_some_and(|(service, action)| {
                    !action.is_empty()
                        && (service.eq_ignore_ascii_case("sqs")
                            || service.eq_ignore_ascii_case("sluice")
                            || service == "*")
                });
            if !ok {
                return Err(format!(
                    "allow pattern {p:?} is not \"*\" nor sqs:<Action> or sluice:<Action>"
                ));
            }
        }
        if let Some(p) = self.queues.iter().flatten().find(|p| p.is_empty()) {
            return Err(format!("queues pattern {p:?} is empty"));
        }
        Ok(())
    }

    /// True when some `allow` pattern matches `action` (`sqs:SendMessage`).
    pub fn allows_action(&self, action: &str) -> bool {
        self.allow
            .as_ref()
            .is_none_or(|patterns| patterns.iter().any(|p| wildcard(p, action, true)))
    }

    /// True when some `queues` pattern matches the queue `name`.
    pub fn allows_queue(&self, name: &str) -> bool {
        self.queues
            .as_ref()
            .is_none_or(|patterns| patterns.iter().any(|p| wildcard(p, name, false)))
    }

    /// True when the credential may do anything to any queue: the check
    /// of its own account's queues is then all there is.
    pub fn is_unlimited(&self) -> bool {
        self.allow.is_none() && self.queues.is_none()
    }
}

/// SQS's answer to a request no rule allows: `AccessDenied`, 403, worded
/// as SQS words it (recorded, aws/serverless-application-model#3633:
/// "User: arn:aws:iam::0123456789012:user/test is not authorized to
/// perform: sqs:sendmessage on resource: arn:aws:sqs:us-west-2:
/// 0123456789012:test because no identity-based policy allows the
/// sqs:sendmessage action"). The user is named by its access key id:
/// sluice has no user names.
pub fn access_denied(account: &str, access_key_id: &str, action: &str, resource: &str) -> SqsError {
    let action = action.to_ascii_lowercase();
    SqsError::new(
        ErrorCode::AccessDenied,
        format!(
            "User: arn:aws:iam::{account}:user/{access_key_id} is not authorized to perform: \
             {action} on resource: {resource} because no identity-based policy allows the \
             {action} action"
        ),
    )
}

/// SQS's answer to a request a statement of the queue's policy denies:
/// `AccessDenied` as [`access_denied`], with IAM's words for an explicit
/// deny ("… with an explicit deny in a resource-based policy").
pub fn explicit_deny(account: &str, access_key_id: &str, action: &str, resource: &str) -> SqsError {
    let action = action.to_ascii_lowercase();
    SqsError::new(
        ErrorCode::AccessDenied,
        format!(
            "User: arn:aws:iam::{account}:user/{access_key_id} is not authorized to perform: \
             {action} on resource: {resource} with an explicit deny in a resource-based policy"
        ),
    )
}

/// IAM's wildcard match: `*` any run of characters, `?` any one.
pub fn wildcard(pattern: &str, text: &str, fold_case: bool) -> bool {
    let eq = |a: u8, b: u8| {
        if fold_case {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    // Greedy with one backtrack point: linear enough for short patterns.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == b'?' || (p[pi] != b'*' && eq(p[pi], t[ti]))) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(allow: Option<&[&str]>, queues: Option<&[&str]>) -> Access {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Access {
            allow: allow.map(own),
            queues: queues.map(own),
        }
    }

    /// A2: IAM wildcards, `*` and `?`, anywhere in the pattern.
    #[test]
    fn a2_wildcards() {
        assert!(wildcard("*", "", false));
        assert!(wildcard("*", "anything", false));
        assert!(wildcard("orders*", "orders", false));
        assert!(wildcard("orders*", "orders-1", false));
        assert!(!wildcard("orders*", "my-orders", false));
        assert!(wildcard("*-dlq", "orders-dlq", false));
        assert!(wildcard("a*b*c", "aXXbYYc", false));
        assert!(!wildcard("a*b*c", "aXXbYY", false));
        assert!(wildcard("q?", "q1", false));
        assert!(!wildcard("q?", "q", false));
        assert!(!wildcard("orders", "orders-1", false));
        assert!(!wildcard("Orders*", "orders", false));
        assert!(wildcard("sqs:get*", "sqs:GetQueueUrl", true));
    }

    /// A2: action patterns ignore case (IAM does), queue patterns do not;
    /// no list means everything, an empty list nothing.
    #[test]
    fn a2_action_and_queue_rules() {
        let all = Access::default();
        assert!(all.is_unlimited());
        assert!(all.allows_action("sqs:SendMessage") && all.allows_queue("x"));

        let reader = access(
            Some(&[
                "sqs:ReceiveMessage",
                "sqs:DeleteMessage",
                "sqs:ChangeMessageVisibility*",
                "sqs:GetQueue*",
            ]),
            Some(&["orders*"]),
        );
        assert!(reader.allows_action("sqs:ReceiveMessage"));
        assert!(reader.allows_action("SQS:receivemessage"));
        assert!(
            reader.allows_action(sluice_protocol::sqs::Operation::DeleteMessageBatch.iam_action())
        );
        assert!(reader.allows_action(
            sluice_protocol::sqs::Operation::ChangeMessageVisibilityBatch.iam_action()
        ));
        assert!(reader.allows_action("sqs:GetQueueUrl"));
        assert!(!reader.allows_action(sluice_protocol::sqs::Operation::SendMessage.iam_action()));
        assert!(
            !reader.allows_action(sluice_protocol::sqs::Operation::SendMessageBatch.iam_action())
        );
        assert!(
            !reader.allows_action(sluice_protocol::sluice::Operation::PeekMessages.iam_action())
        );
        assert!(reader.allows_queue("orders-1"));
        assert!(!reader.allows_queue("payments"));
        assert!(!reader.allows_queue("Orders-1"));

        let nothing = access(Some(&[]), Some(&[]));
        assert!(!nothing.allows_action("sqs:ListQueues"));
        assert!(!nothing.allows_queue("orders"));

        let ours = access(Some(&["sluice:*"]), None);
        assert!(ours.allows_action(sluice_protocol::sluice::Operation::PeekMessages.iam_action()));
        assert!(ours.allows_action(sluice_protocol::sluice::Operation::PutAlarm.iam_action()));
        assert!(!ours.allows_action(sluice_protocol::sqs::Operation::ReceiveMessage.iam_action()));
    }

    /// A2: bad patterns are refused at start-up.
    #[test]
    fn a2_patterns_are_validated() {
        assert!(
            access(Some(&["sqs:*", "sluice:Peek*", "*"]), Some(&["*"]))
                .validate()
                .is_ok()
        );
        assert!(access(Some(&["SendMessage"]), None).validate().is_err());
        assert!(access(Some(&["s3:*"]), None).validate().is_err());
        assert!(access(None, Some(&[""])).validate().is_err());
    }

    /// A2: AccessDenied worded as SQS words it (recorded:
    /// aws/serverless-application-model#3633), 403.
    #[test]
    fn a2_access_denied_words() {
        let e = access_denied(
            "0123456789012",
            "test",
            "sqs:SendMessage",
            "arn:aws:sqs:us-west-2:0123456789012:test",
        );
        assert_eq!(e.code, ErrorCode::AccessDenied);
        assert_eq!(e.code.http_status(), 403);
        assert_eq!(
            e.message,
            "User: arn:aws:iam::0123456789012:user/test is not authorized to perform: \
             sqs:sendmessage on resource: arn:aws:sqs:us-west-2:0123456789012:test because \
             no identity-based policy allows the sqs:sendmessage action"
        );
    }
}
