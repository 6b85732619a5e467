//! What a parsed queue policy holds: its statements, each with its
//! effect, principals, actions, resources and conditions. Read by
//! `parse.rs`, evaluated by `evaluate.rs`.

use std::fmt;
use std::net::IpAddr;

/// A parsed queue policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub(super) statements: Vec<Statement>,
}

/// Allow or Deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    Allow,
    Deny,
}

/// Whom a statement names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Principals {
    /// Everyone (`"*"`, `{"AWS": "*"}`).
    Anyone,
    /// These account ids (`{"AWS": …}`) and services (`{"Service":
    /// "sns.amazonaws.com"}`).
    Named {
        accounts: Vec<String>,
        services: Vec<String>,
    },
}

/// A list of a statement and whether it came as its `Not…` form
/// (`NotPrincipal`, `NotAction`, `NotResource`): the statement then
/// applies to what the list does not name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Matched<T> {
    pub(super) items: T,
    pub(super) negated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Statement {
    pub(super) effect: Effect,
    pub(super) principals: Matched<Principals>,
    pub(super) actions: Matched<Vec<String>>,
    /// `None`: neither `Resource` nor `NotResource`, the queue itself.
    pub(super) resources: Option<Matched<Vec<String>>>,
    pub(super) conditions: Vec<Condition>,
}

/// The condition operators sluice evaluates (without their `…IfExists`
/// suffix, kept in [`Condition::if_exists`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// Exact, case-sensitive.
    StringEquals,
    /// None of the values, exactly.
    StringNotEquals,
    /// Exact, ignoring case.
    StringEqualsIgnoreCase,
    /// None of the values, ignoring case.
    StringNotEqualsIgnoreCase,
    /// `*` and `?` wildcards, case-sensitive.
    StringLike,
    /// None of the wildcard values.
    StringNotLike,
    /// Exact ARN.
    ArnEquals,
    /// ARN with wildcards.
    ArnLike,
    /// None of the ARNs.
    ArnNotEquals,
    /// None of the ARN patterns.
    ArnNotLike,
    /// `true` or `false`.
    Bool,
    /// Within one of the CIDR ranges.
    IpAddress,
    /// Within none of the CIDR ranges.
    NotIpAddress,
    /// `true`: the request has no value for the key; `false`: it has one.
    Null,
}

impl Operator {
    /// A negated operator holds when the request has no value for its key
    /// (IAM's rule), and otherwise when no value matches.
    pub(super) fn is_negated(self) -> bool {
        matches!(
            self,
            Operator::StringNotEquals
                | Operator::StringNotEqualsIgnoreCase
                | Operator::StringNotLike
                | Operator::ArnNotEquals
                | Operator::ArnNotLike
                | Operator::NotIpAddress
        )
    }
}

/// The condition keys sluice knows a request's value of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConditionKey {
    /// `aws:SourceArn`: the resource a service acts for; absent from a
    /// client's own request.
    SourceArn,
    /// `aws:SourceAccount`: that resource's account; absent likewise.
    SourceAccount,
    /// `aws:PrincipalAccount`: the requester's account.
    PrincipalAccount,
    /// `aws:PrincipalOrgID`: the organisation the server's accounts
    /// belong to (`[auth] organization_id`); absent without one, and for a
    /// service.
    PrincipalOrgId,
    /// `aws:SecureTransport`: whether the request came over TLS.
    SecureTransport,
    /// `aws:SourceIp`: the client's address; absent for a service.
    SourceIp,
    /// `aws:ResourceTag/<key>`: the queue's tag of that key.
    ResourceTag(String),
}

/// A value of an `IpAddress` condition: an address and how many leading
/// bits of it a request's address must share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cidr {
    pub(super) network: IpAddr,
    pub(super) prefix: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Condition {
    pub(super) operator: Operator,
    /// `…IfExists`: holds when the request has no value for the key.
    pub(super) if_exists: bool,
    pub(super) key: ConditionKey,
    pub(super) values: Vec<String>,
    /// `IpAddress`/`NotIpAddress`: the values as ranges.
    pub(super) ranges: Vec<Cidr>,
}

/// Why a document is refused. SQS refuses a malformed one in its own
/// words; one that is valid policy language but asks for what sluice
/// does not enforce is refused with the reason, so that the operator
/// knows what to change (rule A7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not a policy document SQS would take.
    Malformed(String),
    /// Valid, but naming something sluice does not enforce.
    Unsupported(String),
}

impl Refused {
    /// The reason, for the log.
    pub fn as_str(&self) -> &str {
        match self {
            Refused::Malformed(why) | Refused::Unsupported(why) => why,
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
