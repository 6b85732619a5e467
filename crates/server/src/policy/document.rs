//! What a parsed queue policy holds: its statements, each with its
//! effect, principals, actions, resources and conditions. Read by
//! `parse.rs`, evaluated by `evaluate.rs`.

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

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Statement {
    pub(super) effect: Effect,
    pub(super) principals: Principals,
    pub(super) actions: Vec<String>,
    /// `None`: no `Resource` member, the queue itself.
    pub(super) resources: Option<Vec<String>>,
    pub(super) conditions: Vec<Condition>,
}

/// The condition operators sluice evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// Exact, case-sensitive.
    StringEquals,
    /// `*` and `?` wildcards, case-sensitive.
    StringLike,
    /// Exact ARN.
    ArnEquals,
    /// ARN with wildcards.
    ArnLike,
    /// `true` or `false`.
    Bool,
}

/// The condition keys sluice knows a request's value of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionKey {
    /// `aws:SourceArn`: the resource a service acts for; absent from a
    /// client's own request.
    SourceArn,
    /// `aws:SourceAccount`: that resource's account; absent likewise.
    SourceAccount,
    /// `aws:PrincipalAccount`: the requester's account.
    PrincipalAccount,
    /// `aws:SecureTransport`: whether the request came over TLS.
    SecureTransport,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Condition {
    pub(super) operator: Operator,
    pub(super) key: ConditionKey,
    pub(super) values: Vec<String>,
}

/// Why a document is refused, for the log (the client gets
/// [`invalid_policy`](super::invalid_policy)).
pub(super) type Refused = String;
