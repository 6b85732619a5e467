//! A key's rule list, compiled: [`rule_list`] turns the JSON array into
//! [`Rule`]s or refuses it with AWS's message ([`Refusal`]).
//!
//! Every recorded message (recorded-cases.md 154–190) is word for word the
//! one AWS's rule engine gives (event-ruler's `JsonRuleCompiler`, in the
//! version of late 2022 that has `suffix`, `equals-ignore-case` and `cidr`
//! but only `prefix` inside `anything-but`), so the checks here follow
//! that compiler's order: a match expression's value is checked before the
//! "one key" rule, a numeric array term by term. Messages not recorded come
//! from the same compiler and say so. The engine's `exactly` and `wildcard`
//! operators are not in SNS's documentation and are refused like any
//! unknown operator. The engine's ±5e9 bound on numbers is not enforced:
//! the notes saw no bound enforced (the docs name ±1e9).

use serde_json::{Map, Value};

use super::ip::parse_cidr;
use super::rule::{Exclusion, Literal, NumericRange, Rule};
use super::value::Num;

/// "Only one key allowed in match expression" (recorded, 156).
const ONLY_ONE_KEY: &str = "Only one key allowed in match expression";

/// The engine's (odd) message for a second key after `numeric` or a
/// plain `anything-but` (recorded for numeric arrays, 176).
const TOO_MANY_ELEMENTS: &str = "Too many elements in numeric expression";

/// Why AWS's rule engine refuses a policy.
#[derive(Debug, Clone)]
pub(super) struct Refusal {
    /// AWS's message.
    pub(super) message: String,
    /// Whether the engine tries the policy again with `$or` as a plain key
    /// (its JSON parse errors do; the CIDR code's argument errors do not).
    pub(super) retry_plain: bool,
}

impl Refusal {
    /// A refusal of the compiler proper (a `JsonParseException`).
    pub(super) fn parse(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retry_plain: true,
        }
    }

    /// A refusal of the CIDR code (an `IllegalArgumentException`).
    fn argument(message: String) -> Self {
        Self {
            message,
            retry_plain: false,
        }
    }
}

/// The rules of a key's list: plain values and match expressions.
pub(super) fn rule_list(items: &[Value]) -> Result<Vec<Rule>, Refusal> {
    let mut rules = Vec::with_capacity(items.len());
    for item in items {
        rules.push(match item {
            Value::Object(expression) => match_expression(expression)?,
            Value::String(s) => Rule::Equals(Literal::string(s)),
            Value::Number(n) => Rule::Equals(Literal::Num(Num::from_json(n))),
            Value::Bool(b) => Rule::Equals(Literal::Bool(*b)),
            Value::Null => Rule::Equals(Literal::Null),
            Value::Array(_) => {
                return Err(Refusal::parse(
                    "Match value must be String, number, true, false, or null",
                ));
            }
        });
    }
    if rules.is_empty() {
        return Err(Refusal::parse("Empty arrays are not allowed"));
    }
    Ok(rules)
}

/// `{"operator": value}`.
fn match_expression(expression: &Map<String, Value>) -> Result<Rule, Refusal> {
    let Some((operator, value)) = expression.iter().next() else {
        // Not recorded; the engine's message.
        return Err(Refusal::parse("Match expression name not found"));
    };
    let single = expression.len() == 1;
    let rule = match operator.as_str() {
        "prefix" => Rule::Prefix(pattern(value, operator)?.into()),
        "suffix" => Rule::Suffix(pattern(value, operator)?.into()),
        "equals-ignore-case" => {
            Rule::EqualsIgnoreCase(pattern(value, operator)?.to_lowercase().into())
        }
        "numeric" => {
            let Value::Array(terms) = value else {
                // Not recorded; the engine's message.
                return Err(Refusal::parse("Value of numeric must be an array."));
            };
            let range = numeric(terms)?;
            if !single {
                return Err(Refusal::parse(TOO_MANY_ELEMENTS));
            }
            return Ok(Rule::Numeric(range));
        }
        "anything-but" => return anything_but(value, single).map(Rule::AnythingBut),
        "exists" => match value {
            Value::Bool(present) => Rule::Exists(*present),
            _ => {
                return Err(Refusal::parse(
                    "exists match pattern must be either true or false.",
                ));
            }
        },
        "cidr" => {
            let Value::String(block) = value else {
                // Recorded (165): AWS names "prefix" here.
                return Err(Refusal::parse("prefix match pattern must be a string"));
            };
            Rule::Cidr(parse_cidr(block).map_err(Refusal::argument)?)
        }
        other => return Err(Refusal::parse(format!("Unrecognized match type {other}"))),
    };
    if !single {
        return Err(Refusal::parse(ONLY_ONE_KEY));
    }
    Ok(rule)
}

/// The string a `prefix`/`suffix`/`equals-ignore-case` takes.
fn pattern<'a>(value: &'a Value, operator: &str) -> Result<&'a str, Refusal> {
    match value {
        Value::String(s) => Ok(s),
        _ => Err(Refusal::parse(format!(
            "{operator} match pattern must be a string"
        ))),
    }
}

/// `anything-but`: a string, a number, a list of either, or
/// `{"prefix": "…"}` (recorded 186–190; the other messages are the engine's).
fn anything_but(value: &Value, single: bool) -> Result<Exclusion, Refusal> {
    let exclusion = match value {
        Value::Object(inner) => {
            let Some((operator, pattern)) = inner.iter().next() else {
                return Err(Refusal::parse("Anything-But expression name not found"));
            };
            if operator != "prefix" {
                return Err(Refusal::parse(format!(
                    "Unsupported anything-but pattern: {operator}"
                )));
            }
            let Value::String(prefix) = pattern else {
                return Err(Refusal::parse("prefix match pattern must be a string"));
            };
            if prefix.is_empty() {
                return Err(Refusal::parse("Null prefix not allowed"));
            }
            if inner.len() > 1 || !single {
                return Err(Refusal::parse(ONLY_ONE_KEY));
            }
            return Ok(Exclusion::Prefix(prefix.as_str().into()));
        }
        Value::String(s) => Exclusion::Strings(Box::new([s.as_str().into()])),
        Value::Number(n) => Exclusion::Numbers(Box::new([Num::from_json(n)])),
        Value::Array(items) => excluded_list(items)?,
        Value::Bool(_) | Value::Null => {
            return Err(Refusal::parse(
                "Value of anything-but must be an array or single string/number value.",
            ));
        }
    };
    if !single {
        return Err(Refusal::parse(TOO_MANY_ELEMENTS));
    }
    Ok(exclusion)
}

/// The list form of `anything-but`: all strings or all numbers.
fn excluded_list(items: &[Value]) -> Result<Exclusion, Refusal> {
    let mut strings = Vec::new();
    let mut numbers = Vec::new();
    for item in items {
        match item {
            Value::String(s) => strings.push(s.as_str().into()),
            Value::Number(n) => numbers.push(Num::from_json(n)),
            _ => {
                return Err(Refusal::parse(
                    "Inside anything but list, start|null|boolean is not supported.",
                ));
            }
        }
    }
    match (strings.is_empty(), numbers.is_empty()) {
        (false, true) => Ok(Exclusion::Strings(strings.into())),
        (true, false) => Ok(Exclusion::Numbers(numbers.into())),
        _ => Err(Refusal::parse(
            "Inside anything but list, either all values are number or string, mixed type is not supported",
        )),
    }
}

/// `numeric`'s terms: `[op, n]` or `[">"|">=", n, "<"|"<=", n]` (recorded
/// 171–184, each message in the order the engine reads the terms).
fn numeric(terms: &[Value]) -> Result<NumericRange, Refusal> {
    let operator = match terms.first() {
        Some(Value::String(s)) => s.as_str(),
        other => {
            return Err(Refusal::parse(format!(
                "Invalid member in numeric match: {}",
                token_text(other)
            )));
        }
    };
    let must_be_numeric = |name: &str| Refusal::parse(format!("Value of {name} must be numeric"));
    match operator {
        "=" => {
            let value = number(terms.get(1)).ok_or_else(|| must_be_numeric("equals"))?;
            if terms.len() > 2 {
                return Err(Refusal::parse(TOO_MANY_ELEMENTS));
            }
            Ok(NumericRange {
                low: Some((value, true)),
                high: Some((value, true)),
            })
        }
        ">" | ">=" => {
            let value = number(terms.get(1)).ok_or_else(|| must_be_numeric(operator))?;
            let low = (value, operator == ">=");
            if terms.len() == 2 {
                return Ok(NumericRange {
                    low: Some(low),
                    high: None,
                });
            }
            upper_bound(terms, low)
        }
        "<" | "<=" => {
            let value = number(terms.get(1)).ok_or_else(|| must_be_numeric(operator))?;
            if terms.len() > 2 {
                return Err(Refusal::parse(TOO_MANY_ELEMENTS));
            }
            Ok(NumericRange {
                low: None,
                high: Some((value, operator == "<=")),
            })
        }
        other => Err(Refusal::parse(format!(
            "Unrecognized numeric range operator: {other}"
        ))),
    }
}

/// The `"<"|"<=", n` that closes a range opened by `low`.
fn upper_bound(terms: &[Value], low: (f64, bool)) -> Result<NumericRange, Refusal> {
    let operator = match terms.get(2) {
        Some(Value::String(s)) => s.as_str(),
        other => {
            return Err(Refusal::parse(format!(
                "Bad value in numeric range: {}",
                token_text(other)
            )));
        }
    };
    let inclusive = match operator {
        "<" => false,
        "<=" => true,
        other => {
            return Err(Refusal::parse(format!(
                "Bad numeric range operator: {other}"
            )));
        }
    };
    let Some(high) = number(terms.get(3)) else {
        return Err(Refusal::parse(format!(
            "Value of {operator} must be numeric"
        )));
    };
    if terms.len() > 4 {
        return Err(Refusal::parse("Too many terms in numeric range expression"));
    }
    if low.0 >= high {
        return Err(Refusal::parse("Bottom must be less than top"));
    }
    Ok(NumericRange {
        low: Some(low),
        high: Some((high, inclusive)),
    })
}

fn number(term: Option<&Value>) -> Option<f64> {
    match term {
        Some(Value::Number(n)) => n.as_f64(),
        _ => None,
    }
}

/// The text Jackson gives for a term in a message: a string's content, a
/// number as written, `[`/`{` for a nested array/object, `]` past the end.
fn token_text(term: Option<&Value>) -> String {
    match term {
        None => "]".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(_)) => "[".to_string(),
        Some(Value::Object(_)) => "{".to_string(),
        Some(other) => other.to_string(),
    }
}
