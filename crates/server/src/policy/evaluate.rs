//! Evaluation of a queue policy for one request (rule A6): an explicit
//! Deny wins over any Allow; without either, the policy says nothing.

use super::document::{Condition, ConditionKey, Effect, Operator, Policy, Principals, Statement};
use crate::auth::access::wildcard;

/// What a policy says of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// A statement that applies allows it, none denies it.
    Allow,
    /// A statement that applies denies it.
    Deny,
    /// No statement applies.
    NotNamed,
}

/// What a request is, as policies see it.
#[derive(Debug, Clone, Copy)]
pub struct RequestFacts<'a> {
    /// The requester's account (for a service acting for a resource, the
    /// resource's).
    pub account: &'a str,
    /// The service acting (`sns.amazonaws.com` delivering a topic's
    /// message); `None` for a client's own request.
    pub service: Option<&'a str>,
    /// The IAM action (`sqs:SendMessage`).
    pub action: &'a str,
    /// The queue's ARN.
    pub resource: &'a str,
    /// `aws:SourceArn`, when the request has one.
    pub source_arn: Option<&'a str>,
    /// `aws:SourceAccount`, when the request has one.
    pub source_account: Option<&'a str>,
    /// `aws:SecureTransport`.
    pub secure_transport: bool,
}

impl Policy {
    /// What the policy says of `request`.
    pub fn evaluate(&self, request: &RequestFacts<'_>) -> Decision {
        let mut allowed = false;
        for s in self.statements.iter().filter(|s| s.applies(request)) {
            match s.effect {
                Effect::Deny => return Decision::Deny,
                Effect::Allow => allowed = true,
            }
        }
        if allowed {
            Decision::Allow
        } else {
            Decision::NotNamed
        }
    }
}

impl Statement {
    fn applies(&self, r: &RequestFacts<'_>) -> bool {
        let principal = match &self.principals {
            Principals::Anyone => true,
            Principals::Named { accounts, services } => {
                accounts.iter().any(|a| a == r.account)
                    || r.service.is_some_and(|s| services.iter().any(|n| n == s))
            }
        };
        principal
            && self.actions.iter().any(|p| wildcard(p, r.action, true))
            && self
                .resources
                .as_ref()
                .is_none_or(|rs| rs.iter().any(|p| wildcard(p, r.resource, false)))
            && self.conditions.iter().all(|c| c.holds(r))
    }
}

impl Condition {
    /// True when some value matches the request's value of the key; a key
    /// the request has no value for matches nothing.
    fn holds(&self, r: &RequestFacts<'_>) -> bool {
        let secure = r.secure_transport.to_string();
        let actual = match self.key {
            ConditionKey::SourceArn => r.source_arn,
            ConditionKey::SourceAccount => r.source_account,
            ConditionKey::PrincipalAccount => Some(r.account),
            ConditionKey::SecureTransport => Some(secure.as_str()),
        };
        let Some(actual) = actual else {
            return false;
        };
        self.values.iter().any(|v| match self.operator {
            Operator::StringEquals => v == actual,
            // IAM matches ArnEquals as ArnLike: wildcards in either.
            Operator::StringLike | Operator::ArnEquals | Operator::ArnLike => {
                wildcard(v, actual, false)
            }
            Operator::Bool => v.eq_ignore_ascii_case(actual),
        })
    }
}
