//! One rule of a key's list ([`Rule`]) and how it matches one value.
//!
//! A key matches when any of its rules matches; a value rule matches when
//! any of the key's values (an array's elements one by one) passes it;
//! `exists` looks at presence only (filter-policies.md §3). Typing follows
//! AWS's rule engine: string operators see strings, numeric ones numbers.

use super::ip::{Cidr, Ip, parse_ip};
use super::value::{Num, Scalar};

/// One rule of a key's list.
#[derive(Debug, Clone)]
pub(super) enum Rule {
    /// A plain value: `"a"`, `100`, `true`, `null`.
    Equals(Literal),
    /// `{"prefix": "a"}`: a string that starts with it.
    Prefix(Box<str>),
    /// `{"suffix": "a"}`: a string that ends with it.
    Suffix(Box<str>),
    /// `{"equals-ignore-case": "a"}`: a string equal to it but for case
    /// (the pattern is kept lower-cased).
    EqualsIgnoreCase(Box<str>),
    /// `{"anything-but": …}`: any present value it does not exclude.
    AnythingBut(Exclusion),
    /// `{"numeric": [...]}`: a number in the range.
    Numeric(NumericRange),
    /// `{"cidr": "10.0.0.0/24"}`: a string that is an address in the block.
    Cidr(Cidr),
    /// `{"exists": true|false}`: presence or absence of the key.
    Exists(bool),
}

/// A plain value of a rule list.
#[derive(Debug, Clone)]
pub(super) enum Literal {
    /// A string; `ip` is set when the string is an IP address, which then
    /// matches any spelling of that address (`2001:db8::1` matches
    /// `2001:0db8:0:0:0:0:0:1`), as the engine turns such literals into
    /// address ranges. Not recorded.
    Str { text: Box<str>, ip: Option<Ip> },
    /// A number, equal to any spelling of it (`301.5` and `3.015e2`).
    Num(Num),
    /// `true` or `false`.
    Bool(bool),
    /// `null`, which matches a JSON `null` (not a missing key).
    Null,
}

impl Literal {
    /// The literal for a string of the policy.
    pub(super) fn string(text: &str) -> Self {
        Self::Str {
            text: text.into(),
            ip: parse_ip(text),
        }
    }
}

/// What `anything-but` excludes.
#[derive(Debug, Clone)]
pub(super) enum Exclusion {
    /// These strings (a string or a list of strings).
    Strings(Box<[Box<str>]>),
    /// These numbers (a number or a list of numbers).
    Numbers(Box<[Num]>),
    /// Strings that start with this (`{"anything-but": {"prefix": "a"}}`).
    Prefix(Box<str>),
}

/// A numeric range: `=` is a closed range of one point.
#[derive(Debug, Clone, Copy)]
pub(super) struct NumericRange {
    /// The lower bound and whether it is included.
    pub(super) low: Option<(f64, bool)>,
    /// The upper bound and whether it is included.
    pub(super) high: Option<(f64, bool)>,
}

impl NumericRange {
    fn contains(self, x: f64) -> bool {
        let above = match self.low {
            None => true,
            Some((low, true)) => x >= low,
            Some((low, false)) => x > low,
        };
        let below = match self.high {
            None => true,
            Some((high, true)) => x <= high,
            Some((high, false)) => x < high,
        };
        above && below
    }
}

impl Rule {
    /// Whether `value`, one value of the key, passes this rule. `Exists`
    /// passes no value: presence is the caller's to judge.
    pub(super) fn matches(&self, value: Scalar<'_>) -> bool {
        match (self, value) {
            (Self::Equals(literal), value) => literal_matches(literal, value),
            (Self::Prefix(p), Scalar::Str(s)) => s.starts_with(&**p),
            (Self::Suffix(p), Scalar::Str(s)) => s.ends_with(&**p),
            (Self::EqualsIgnoreCase(p), Scalar::Str(s)) => {
                s.chars().flat_map(char::to_lowercase).eq(p.chars())
            }
            (Self::AnythingBut(exclusion), value) => !excludes(exclusion, value),
            (Self::Numeric(range), Scalar::Num(n)) => range.contains(n.value()),
            (Self::Cidr(block), Scalar::Str(s)) => parse_ip(s).is_some_and(|ip| block.contains(ip)),
            _ => false,
        }
    }
}

fn literal_matches(literal: &Literal, value: Scalar<'_>) -> bool {
    match (literal, value) {
        (Literal::Str { ip: Some(ip), .. }, Scalar::Str(s)) => parse_ip(s) == Some(*ip),
        (Literal::Str { text, ip: None }, Scalar::Str(s)) => **text == *s,
        (Literal::Num(a), Scalar::Num(b)) => a.equals(b),
        (Literal::Bool(a), Scalar::Bool(b)) => *a == b,
        (Literal::Null, Scalar::Null) => true,
        _ => false,
    }
}

/// Whether `anything-but` excludes `value`. Only a value of the excluded
/// kind can be excluded: `{"anything-but": ["100"]}` lets the number 100
/// through, and `null` or `true` pass any `anything-but` (the engine
/// compares the typed value; docs: "matches any message attribute or
/// message body property values that don't include any of the policy
/// property values").
fn excludes(exclusion: &Exclusion, value: Scalar<'_>) -> bool {
    match (exclusion, value) {
        (Exclusion::Strings(list), Scalar::Str(s)) => list.iter().any(|x| **x == *s),
        (Exclusion::Numbers(list), Scalar::Num(n)) => list.iter().any(|x| x.equals(n)),
        (Exclusion::Prefix(p), Scalar::Str(s)) => s.starts_with(&**p),
        _ => false,
    }
}
