//! A policy's complexity: the "total combination of values" SNS caps at
//! [`MAX_COMBINATIONS`] (filter-policies.md §5).
//!
//! The formula reproduces every recorded answer (recorded-cases.md
//! 191–196): the factors of an object's keys multiply; an array's factor is
//! its key's depth (1 at the top) times its number of values; an object's
//! factor is its own combinations one level deeper; an `$or`'s factor is
//! the sum of its branches' combinations at the same depth. So
//! `{"a":{"b":{"c":[4 values]}},"d":{"e":[3 values]}}` is 3·4 × 2·3 = 72,
//! the docs' example. Arithmetic saturates, so no policy overflows it.

use serde_json::{Map, Value};

use super::structure::OR_KEY;

/// The most combinations a policy may have (150 is accepted, 151 is not).
pub(super) const MAX_COMBINATIONS: u64 = 150;

/// The combinations of `policy`, with `$or` read as the operator when
/// `or_operator` (as the policy compiled), else as a plain key.
pub(super) fn combinations(policy: &Map<String, Value>, or_operator: bool) -> u64 {
    of_object(policy, 1, or_operator)
}

fn of_object(object: &Map<String, Value>, depth: u64, or_operator: bool) -> u64 {
    object.iter().fold(1, |total, (key, value)| {
        let factor = match value {
            Value::Array(branches) if or_operator && key == OR_KEY => branches
                .iter()
                .filter_map(Value::as_object)
                .map(|branch| of_object(branch, depth, or_operator))
                .fold(0, u64::saturating_add),
            Value::Array(values) => {
                depth.saturating_mul(u64::try_from(values.len()).unwrap_or(u64::MAX))
            }
            Value::Object(inner) => of_object(inner, depth.saturating_add(1), or_operator),
            // Not reached: the compiler refuses any other value first.
            _ => 1,
        };
        total.saturating_mul(factor)
    })
}
