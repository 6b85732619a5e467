//! Subscription filter policies (rule N4): a policy is parsed and checked
//! once with SNS's operators, limits and error messages
//! ([`FilterPolicy::parse`]), then decides for every published message
//! whether the subscription gets it, on the message's attributes or on its
//! JSON body ([`Scope`]).
//!
//! Ground truth is the recorded AWS answers in the notes
//! (`notes/sns/filter-policies.md`, `notes/sns/recorded-cases.md` R and S).
//! Every recorded validation message is word for word what AWS's rule
//! engine (event-ruler's JSON rule compiler, late-2022 version) says, so
//! where the recordings and the developer guide are silent the engine's
//! behaviour is followed, and the code says so.
//!
//! Files:
//! * `policy.rs`: [`FilterPolicy`], [`Scope`], the order of the checks and
//!   the evaluation of a parsed policy;
//! * `error.rs`: [`FilterPolicyError`] and the whole messages;
//! * `jackson.rs`: the JSON parser's messages for text that is not JSON;
//! * `structure.rs`: the walk of the policy object (nesting, `$or`);
//! * `compile.rs`: rule lists and match expressions;
//! * `complexity.rs`: the 150-combinations limit;
//! * `rule.rs`: one rule against one value;
//! * `value.rs`: values with their JSON types, numbers;
//! * `ip.rs`: addresses and CIDR blocks;
//! * `message.rs`: [`Attribute`], [`MessageAttributes`], [`Message`], and
//!   the lookup of a key path in attributes or a body;
//! * `tests.rs` (with `tests/`): the recorded cases and properties.

mod compile;
mod complexity;
mod error;
mod ip;
mod jackson;
mod message;
mod policy;
mod rule;
mod structure;
mod value;

#[cfg(test)]
mod tests;

pub use error::FilterPolicyError;
pub use message::{Attribute, Message, MessageAttributes};
pub use policy::{FilterPolicy, MAX_KEYS, MAX_POLICY_BYTES, Scope};
