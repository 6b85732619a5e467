//! Queue policies (rule A6): the `Policy` attribute read as the access
//! policy language SQS accepts, the part sluice enforces. `parse` reads a
//! document and refuses any element sluice would not enforce (rule A7),
//! so that nothing in a policy is silently ignored; `evaluate` answers
//! whether a request is allowed, denied, or not named by the policy.
//!
//! Supported: `Statement` (one or a list) with `Effect` Allow/Deny,
//! `Principal` or `NotPrincipal` `"*"`, `{"AWS": …}` naming accounts (12
//! digits or `arn:aws:iam::<account>:root`, one or a list, or `"*"`) and
//! `{"Service": …}`, `Action` or `NotAction` (patterns, one or a list),
//! `Resource` or `NotResource` (queue ARN patterns, one or a list; none
//! means the queue itself), `Sid`, and `Condition` with the operators in
//! [`Operator`] (each also `…IfExists`) on the keys in [`ConditionKey`].

pub mod cache;
mod document;
mod evaluate;
mod parse;
mod resource_tags;

pub use document::{ConditionKey, Operator, Policy, Refused};
pub use evaluate::{Decision, RequestFacts};
pub use parse::invalid_policy;
pub use resource_tags::resource_tags;

#[cfg(test)]
mod tests;
