//! The values rules are matched against: [`Scalar`], one value of a
//! message (a body property or an attribute, or one element of either's
//! array), and [`Num`], a number as SNS compares it.
//!
//! Values keep their JSON type, as in AWS's rule engine (event-ruler, whose
//! rule compiler words every recorded validation message): a string `"100"`
//! is not the number `100`, prefix/suffix/cidr see only strings, numeric
//! rules only numbers. A `Number` attribute is a number, a `String`
//! attribute a string (filter-policies.md §3, "MessageAttributes scope").

use serde_json::Value;

/// One value of a message, with its JSON type.
#[derive(Debug, Clone, Copy)]
pub(super) enum Scalar<'a> {
    /// A string (a `String` attribute, a JSON string).
    Str(&'a str),
    /// A number (a `Number` attribute, a JSON number).
    Num(Num),
    /// `true` or `false`.
    Bool(bool),
    /// JSON `null`.
    Null,
}

impl<'a> Scalar<'a> {
    /// The scalar `value` is, or `None` for an array or an object.
    pub(super) fn from_json(value: &'a Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::Str(s)),
            Value::Number(n) => Some(Self::Num(Num::from_json(n))),
            Value::Bool(b) => Some(Self::Bool(*b)),
            Value::Null => Some(Self::Null),
            Value::Array(_) | Value::Object(_) => None,
        }
    }
}

/// A number: its floating-point value, and its exact value when it is an
/// integer, so that two large integers (account ids) are not taken as equal
/// because they round to the same `f64`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Num {
    value: f64,
    integer: Option<i128>,
}

impl Num {
    /// The number a JSON number is.
    pub(super) fn from_json(n: &serde_json::Number) -> Self {
        let integer = n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from));
        let value = match integer {
            // Rounded past 2^53; `integer` keeps the exact value for equality.
            Some(i) => i as f64,
            None => n.as_f64().unwrap_or(f64::NAN),
        };
        Self { value, integer }
    }

    /// A `Number` attribute's value (`99`, `-1.5`, `3.015e2`), or `None`
    /// when it is not a number (`inf` and `NaN` are not).
    pub(super) fn parse(text: &str) -> Option<Self> {
        let numeric = !text.is_empty()
            && text.bytes().any(|b| b.is_ascii_digit())
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
        if !numeric {
            return None;
        }
        let value: f64 = text.parse().ok()?;
        if !value.is_finite() {
            return None;
        }
        let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
        let integer = if digits.bytes().all(|b| b.is_ascii_digit()) {
            text.strip_prefix('+').unwrap_or(text).parse().ok()
        } else {
            None
        };
        Some(Self { value, integer })
    }

    /// The value as a float, for range comparisons.
    pub(super) fn value(self) -> f64 {
        self.value
    }

    /// Numeric equality (`301.5` equals `3.015e2`): exact for two integers,
    /// by value otherwise.
    pub(super) fn equals(self, other: Num) -> bool {
        match (self.integer, other.integer) {
            (Some(a), Some(b)) => a == b,
            _ => self.value == other.value,
        }
    }
}
