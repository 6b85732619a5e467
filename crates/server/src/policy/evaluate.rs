//! Evaluation of a queue policy for one request (rule A6): an explicit
//! Deny wins over any Allow; without either, the policy says nothing.

use std::collections::BTreeMap;
use std::net::IpAddr;

use super::document::{
    Cidr, Condition, ConditionKey, Effect, Matched, Operator, Policy, Principals, Statement,
};
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
    /// `aws:SourceIp`: the client's address; `None` for a service.
    pub source_ip: Option<IpAddr>,
    /// `aws:PrincipalOrgID`, when the requester belongs to one.
    pub principal_org_id: Option<&'a str>,
    /// The queue's tags (`aws:ResourceTag/…`), when the policy reads them.
    pub resource_tags: Option<&'a BTreeMap<String, String>>,
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

impl<T> Matched<T> {
    /// Whether the statement applies, given whether the list names it.
    fn applies(&self, named: bool) -> bool {
        named != self.negated
    }
}

impl Statement {
    fn applies(&self, r: &RequestFacts<'_>) -> bool {
        let principal = match &self.principals.items {
            Principals::Anyone => true,
            Principals::Named { accounts, services } => {
                accounts.iter().any(|a| a == r.account)
                    || r.service.is_some_and(|s| services.iter().any(|n| n == s))
            }
        };
        let action = self
            .actions
            .items
            .iter()
            .any(|p| wildcard(p, r.action, true));
        self.principals.applies(principal)
            && self.actions.applies(action)
            && self.resources.as_ref().is_none_or(|rs| {
                rs.applies(rs.items.iter().any(|p| wildcard(p, r.resource, false)))
            })
            && self.conditions.iter().all(|c| c.holds(r))
    }
}

impl Condition {
    /// Whether the condition holds for the request. A key the request has
    /// no value for matches nothing, so a positive operator fails and a
    /// negated one holds, as IAM evaluates them; `…IfExists` holds then.
    fn holds(&self, r: &RequestFacts<'_>) -> bool {
        let secure = r.secure_transport.to_string();
        let actual: Option<&str> = match &self.key {
            ConditionKey::SourceArn => r.source_arn,
            ConditionKey::SourceAccount => r.source_account,
            ConditionKey::PrincipalAccount => Some(r.account),
            ConditionKey::PrincipalOrgId => r.principal_org_id,
            ConditionKey::SecureTransport => Some(secure.as_str()),
            ConditionKey::SourceIp => None,
            ConditionKey::ResourceTag(tag) => r.resource_tags.and_then(|tags| {
                tags.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(tag))
                    .map(|(_, v)| v.as_str())
            }),
        };
        let present = match self.key {
            ConditionKey::SourceIp => r.source_ip.is_some(),
            _ => actual.is_some(),
        };
        if self.operator == Operator::Null {
            // "true": the key is absent; "false": it is present.
            return self
                .values
                .iter()
                .any(|v| v.eq_ignore_ascii_case("true") != present);
        }
        if !present {
            return self.if_exists || self.operator.is_negated();
        }
        let any = |matches: &dyn Fn(&str, &str) -> bool| {
            let actual = actual.unwrap_or_default();
            self.values.iter().any(|v| matches(v, actual))
        };
        match self.operator {
            Operator::StringEquals => any(&|v, a| v == a),
            Operator::StringNotEquals => !any(&|v, a| v == a),
            Operator::StringEqualsIgnoreCase => any(&|v, a| v.eq_ignore_ascii_case(a)),
            Operator::StringNotEqualsIgnoreCase => !any(&|v, a| v.eq_ignore_ascii_case(a)),
            Operator::StringLike => any(&|v, a| wildcard(v, a, false)),
            Operator::StringNotLike => !any(&|v, a| wildcard(v, a, false)),
            // IAM matches ArnEquals as ArnLike: wildcards in either.
            Operator::ArnEquals | Operator::ArnLike => any(&|v, a| wildcard(v, a, false)),
            Operator::ArnNotEquals | Operator::ArnNotLike => !any(&|v, a| wildcard(v, a, false)),
            Operator::Bool => any(&|v, a| v.eq_ignore_ascii_case(a)),
            Operator::IpAddress => r.source_ip.is_some_and(|ip| self.in_ranges(ip)),
            Operator::NotIpAddress => r.source_ip.is_some_and(|ip| !self.in_ranges(ip)),
            // Answered above, before the key's presence decides.
            Operator::Null => false,
        }
    }

    fn in_ranges(&self, ip: IpAddr) -> bool {
        self.ranges.iter().any(|range| range.contains(ip))
    }
}

impl Cidr {
    /// Whether `ip` is within the range; an IPv4 address seen as IPv6
    /// (`::ffff:a.b.c.d`) is compared as IPv4.
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}
