//! Tests of rule N4 ("Filter policies decide per subscription, on
//! attributes or on the body (nested), with SNS's operators and limits").
//!
//! Each recorded case of the notes is a test whose doc comment names its
//! source: the case number of `notes/sns/recorded-cases.md` and the
//! LocalStack test (`tests/aws/services/sns/test_sns_filter_policy.py`,
//! "LS-FP", or `test_sns.py`, "LS") whose snapshot holds AWS's answer.
//! Tests from the developer guide say "docs"; tests of behaviour neither
//! records say where it comes from.
//!
//! * `tests/validation.rs`: recorded validation messages (cases 154–190);
//! * `tests/limits.rs`: keys, complexity, nesting, JSON errors (51, 67,
//!   191–196);
//! * `tests/attributes.rs`: matching in the `MessageAttributes` scope;
//! * `tests/body.rs`: matching in the `MessageBody` scope;
//! * `tests/properties.rs`: properties over generated inputs.

mod attributes;
mod body;
mod limits;
mod properties;
mod validation;

use super::{Attribute, FilterPolicy, FilterPolicyError, Scope};

/// The error `policy` gets in `scope`; panics when it is accepted.
fn refusal(policy: &str, scope: Scope) -> FilterPolicyError {
    match FilterPolicy::parse(policy, scope) {
        Ok(parsed) => panic!("{policy} was accepted: {parsed:?}"),
        Err(e) => e,
    }
}

/// The `Display` of the error `policy` gets in the default scope, which
/// is what AWS writes after `Invalid parameter: FilterPolicy: `.
fn message(policy: &str) -> String {
    refusal(policy, Scope::MessageAttributes).to_string()
}

/// `policy` parsed in `scope`; panics when it is refused.
fn accepted(policy: &str, scope: Scope) -> FilterPolicy {
    match FilterPolicy::parse(policy, scope) {
        Ok(parsed) => parsed,
        Err(e) => panic!("{policy} was refused: {e}"),
    }
}

/// A `MessageAttributes` policy.
fn on_attributes(policy: &str) -> FilterPolicy {
    accepted(policy, Scope::MessageAttributes)
}

/// A `MessageBody` policy.
fn on_body(policy: &str) -> FilterPolicy {
    accepted(policy, Scope::MessageBody)
}

/// A `String` attribute.
fn string<'a>(name: &'a str, value: &'a str) -> Attribute<'a> {
    Attribute {
        name,
        data_type: "String",
        value,
    }
}

/// A `Number` attribute.
fn number<'a>(name: &'a str, value: &'a str) -> Attribute<'a> {
    Attribute {
        name,
        data_type: "Number",
        value,
    }
}

/// A `String.Array` attribute (`value` is the JSON array).
fn array<'a>(name: &'a str, value: &'a str) -> Attribute<'a> {
    Attribute {
        name,
        data_type: "String.Array",
        value,
    }
}
