//! A consumer's filter criteria (rule C13): Lambda's event filtering for
//! SQS event sources, the EventBridge pattern language matched against each
//! message's record as the event holds it. A message that matches no
//! pattern is deleted without being delivered, as Lambda deletes it.
//!
//! As Lambda documents (<https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html>,
//! "Filter rule syntax", and
//! <https://docs.aws.amazon.com/lambda/latest/dg/with-sqs-filtering.html>):
//!
//! - up to 5 patterns, ORed: a message is delivered when one matches;
//! - in a pattern, every field must match (AND); a field's rules are a
//!   list, any of which may match (OR); `$or` holds alternative patterns;
//! - rules: a string, number, boolean or `null` literal (exact match, `""`
//!   for empty), `prefix`, `suffix`, `equals-ignore-case`, `anything-but`
//!   (a value, a list, or a `prefix`/`suffix`/`equals-ignore-case`),
//!   `numeric` (`=`, or a range of `>`/`>=` and `<`/`<=`), `exists`;
//! - `body` given as an object matches a body that is JSON, field by field;
//!   `body` given as rules matches a body that is a plain string; a
//!   mismatch of the two (a JSON body, string rules, or the other way
//!   round) drops the message, as Lambda's table of SQS body formats says;
//! - in an event value that is a list, any element may match.

use serde_json::{Map, Value};

/// Most patterns of one consumer (Lambda's default quota).
pub const MAX_PATTERNS: usize = 5;

/// Longest pattern, in characters (Lambda's `Filter.Pattern` limit).
pub const MAX_PATTERN_CHARS: usize = 4096;

/// The record's top-level fields a pattern may name (an SQS record's).
const RECORD_FIELDS: [&str; 10] = [
    "messageId",
    "receiptHandle",
    "body",
    "attributes",
    "messageAttributes",
    "md5OfBody",
    "md5OfMessageAttributes",
    "eventSource",
    "eventSourceARN",
    "awsRegion",
];

/// Why a filter pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FilterError(String);

fn bad(message: impl Into<String>) -> FilterError {
    FilterError(message.into())
}

/// A consumer's compiled patterns; empty lets every message through.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    patterns: Vec<Pattern>,
}

/// One pattern: fields that must all match, and `$or` alternatives.
#[derive(Debug, Clone, PartialEq)]
struct Pattern {
    fields: Vec<(String, Node)>,
    any_of: Vec<Vec<Pattern>>,
}

/// What a field of a pattern holds.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// A nested pattern: the value must be an object matching it.
    Object(Pattern),
    /// Rules for a leaf, any of which may match.
    Rules(Vec<Rule>),
}

/// One rule on a leaf value.
#[derive(Debug, Clone, PartialEq)]
enum Rule {
    /// Equal to this string, number, boolean or null.
    Exactly(Value),
    Prefix(String),
    PrefixIgnoreCase(String),
    Suffix(String),
    SuffixIgnoreCase(String),
    EqualsIgnoreCase(String),
    /// Present, and matching none of these.
    AnythingBut(Vec<Rule>),
    /// A number within these bounds.
    Numeric(Vec<(Comparison, f64)>),
    /// Present (true) or absent (false).
    Exists(bool),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Comparison {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Filter {
    /// Compiles `patterns` (each a JSON text), refusing what Lambda would:
    /// more than 5, one longer than 4,096 characters, one that is not a
    /// JSON object of known fields and rules.
    pub fn compile(patterns: &[String]) -> Result<Self, FilterError> {
        if patterns.len() > MAX_PATTERNS {
            return Err(bad(format!(
                "filter has {} patterns; at most {MAX_PATTERNS} are allowed",
                patterns.len()
            )));
        }
        let patterns = patterns
            .iter()
            .enumerate()
            .map(|(i, text)| {
                compile_text(text).map_err(|e| bad(format!("filter pattern {}: {}", i + 1, e.0)))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { patterns })
    }

    /// Whether the filter lets everything through.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether the message whose record (as the event holds it) is
    /// `record` is delivered: there is no pattern, or one matches.
    pub fn admits(&self, record: &Value) -> bool {
        if self.patterns.is_empty() {
            return true;
        }
        let Some(record) = record.as_object() else {
            return false;
        };
        // The body is parsed once, and only when a pattern looks into it.
        let body = record
            .get("body")
            .and_then(Value::as_str)
            .and_then(json_body);
        self.patterns
            .iter()
            .any(|p| matches_record(p, record, body.as_ref()))
    }
}

fn compile_text(text: &str) -> Result<Pattern, FilterError> {
    if text.chars().count() > MAX_PATTERN_CHARS {
        return Err(bad(format!("longer than {MAX_PATTERN_CHARS} characters")));
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(bad("must be a JSON object"));
    };
    if map.is_empty() {
        return Err(bad("must name at least one field"));
    }
    for key in map.keys() {
        if key != "$or" && !RECORD_FIELDS.contains(&key.as_str()) {
            return Err(bad(format!(
                "unknown field {key:?}: an SQS record has {}",
                RECORD_FIELDS.join(", ")
            )));
        }
    }
    compile_object(&map)
}

fn compile_object(map: &Map<String, Value>) -> Result<Pattern, FilterError> {
    let mut pattern = Pattern {
        fields: Vec::new(),
        any_of: Vec::new(),
    };
    for (key, value) in map {
        if key == "$or" {
            let Some(alternatives) = value.as_array().filter(|a| a.len() >= 2) else {
                return Err(bad("$or must be a list of at least two patterns"));
            };
            let alternatives = alternatives
                .iter()
                .map(|a| match a {
                    Value::Object(m) if !m.is_empty() => compile_object(m),
                    _ => Err(bad("each pattern of $or must be a non-empty object")),
                })
                .collect::<Result<_, _>>()?;
            pattern.any_of.push(alternatives);
            continue;
        }
        let node = match value {
            Value::Object(m) if !m.is_empty() => Node::Object(compile_object(m)?),
            Value::Array(rules) if !rules.is_empty() => Node::Rules(
                rules
                    .iter()
                    .map(compile_rule)
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(format!("field {key:?}: {}", e.0)))?,
            ),
            _ => {
                return Err(bad(format!(
                    "field {key:?} must be a non-empty object or list of rules"
                )));
            }
        };
        pattern.fields.push((key.clone(), node));
    }
    Ok(pattern)
}

fn compile_rule(rule: &Value) -> Result<Rule, FilterError> {
    let Value::Object(op) = rule else {
        return match rule {
            Value::Array(_) => Err(bad("a rule cannot be a list")),
            literal => Ok(Rule::Exactly(literal.clone())),
        };
    };
    let mut entries = op.iter();
    let (Some((name, arg)), None) = (entries.next(), entries.next()) else {
        return Err(bad("a rule object must hold exactly one operator"));
    };
    match name.as_str() {
        "prefix" => string_or_ignore_case(arg, "prefix", Rule::Prefix, Rule::PrefixIgnoreCase),
        "suffix" => string_or_ignore_case(arg, "suffix", Rule::Suffix, Rule::SuffixIgnoreCase),
        "equals-ignore-case" => match arg {
            Value::String(s) => Ok(Rule::EqualsIgnoreCase(s.clone())),
            _ => Err(bad("equals-ignore-case takes a string")),
        },
        "anything-but" => compile_anything_but(arg),
        "numeric" => compile_numeric(arg),
        "exists" => match arg {
            Value::Bool(b) => Ok(Rule::Exists(*b)),
            _ => Err(bad("exists takes true or false")),
        },
        other => Err(bad(format!(
            "unknown operator {other:?}: prefix, suffix, equals-ignore-case, anything-but, numeric \
             and exists are supported"
        ))),
    }
}

fn string_or_ignore_case(
    arg: &Value,
    name: &str,
    exact: fn(String) -> Rule,
    ignore_case: fn(String) -> Rule,
) -> Result<Rule, FilterError> {
    match arg {
        Value::String(s) => Ok(exact(s.clone())),
        Value::Object(m) if m.len() == 1 => match m.get("equals-ignore-case") {
            Some(Value::String(s)) => Ok(ignore_case(s.clone())),
            _ => Err(bad(format!(
                "{name} takes a string or {{\"equals-ignore-case\": string}}"
            ))),
        },
        _ => Err(bad(format!(
            "{name} takes a string or {{\"equals-ignore-case\": string}}"
        ))),
    }
}

fn compile_anything_but(arg: &Value) -> Result<Rule, FilterError> {
    let literal = |v: &Value| match v {
        Value::String(_) | Value::Number(_) => Ok(Rule::Exactly(v.clone())),
        _ => Err(bad("anything-but takes strings or numbers")),
    };
    let inner = match arg {
        Value::Array(values) if !values.is_empty() => {
            values.iter().map(literal).collect::<Result<_, _>>()?
        }
        Value::Object(m) if m.len() == 1 => {
            let rule = compile_rule(arg)?;
            match (m.keys().next().map(String::as_str), &rule) {
                (Some("prefix" | "suffix" | "equals-ignore-case"), _) => vec![rule],
                _ => {
                    return Err(bad(
                        "anything-but takes a value, a list, or a prefix, suffix or \
                         equals-ignore-case",
                    ));
                }
            }
        }
        other => vec![literal(other)?],
    };
    Ok(Rule::AnythingBut(inner))
}

fn compile_numeric(arg: &Value) -> Result<Rule, FilterError> {
    let usage = || bad("numeric takes [\"=\", n] or a range such as [\">\", 0, \"<=\", 5]");
    let Some(items) = arg.as_array().filter(|a| a.len() == 2 || a.len() == 4) else {
        return Err(usage());
    };
    let mut bounds = Vec::new();
    for pair in items.chunks(2) {
        let op = match pair[0].as_str() {
            Some("=") => Comparison::Eq,
            Some("<") => Comparison::Lt,
            Some("<=") => Comparison::Le,
            Some(">") => Comparison::Gt,
            Some(">=") => Comparison::Ge,
            _ => return Err(usage()),
        };
        let n = pair[1].as_f64().ok_or_else(usage)?;
        bounds.push((op, n));
    }
    // Two bounds make a range: a lower one then an upper one.
    if let [(low, _), (high, _)] = bounds[..]
        && !(matches!(low, Comparison::Gt | Comparison::Ge)
            && matches!(high, Comparison::Lt | Comparison::Le))
    {
        return Err(usage());
    }
    Ok(Rule::Numeric(bounds))
}

/// The body as JSON, when it is a JSON object or list: only then can an
/// object pattern look into it, and only otherwise can string rules match
/// it (a body of `42` or `"x"` is read as the plain string it was sent as).
fn json_body(body: &str) -> Option<Value> {
    let trimmed = body.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    serde_json::from_str(body).ok()
}

fn matches_record(pattern: &Pattern, record: &Map<String, Value>, body: Option<&Value>) -> bool {
    let fields_match = pattern.fields.iter().all(|(key, node)| {
        if key != "body" {
            return matches_field(node, record.get(key));
        }
        match (node, body) {
            (Node::Object(inner), Some(json)) => matches_value(inner, json),
            (Node::Rules(rules), None) => matches_rules(rules, record.get("body")),
            // A JSON body against string rules, or a plain one against
            // an object pattern: Lambda drops the message.
            _ => false,
        }
    });
    fields_match
        && pattern
            .any_of
            .iter()
            .all(|alts| alts.iter().any(|p| matches_record(p, record, body)))
}

fn matches_value(pattern: &Pattern, value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            pattern
                .fields
                .iter()
                .all(|(key, node)| matches_field(node, map.get(key)))
                && pattern
                    .any_of
                    .iter()
                    .all(|alts| alts.iter().any(|p| matches_value(p, value)))
        }
        // A list of objects: one of them may match.
        Value::Array(items) => items.iter().any(|v| matches_value(pattern, v)),
        _ => false,
    }
}

fn matches_field(node: &Node, value: Option<&Value>) -> bool {
    match node {
        Node::Object(inner) => value.is_some_and(|v| matches_value(inner, v)),
        Node::Rules(rules) => matches_rules(rules, value),
    }
}

fn matches_rules(rules: &[Rule], value: Option<&Value>) -> bool {
    rules.iter().any(|rule| match value {
        // A list matches when one of its elements does.
        Some(Value::Array(items)) if !matches!(rule, Rule::Exists(_)) => {
            items.iter().any(|v| matches_leaf(rule, Some(v)))
        }
        _ => matches_leaf(rule, value),
    })
}

fn matches_leaf(rule: &Rule, value: Option<&Value>) -> bool {
    let text = value.and_then(Value::as_str);
    match rule {
        Rule::Exists(wanted) => {
            // Only leaves exist for EventBridge: an object does not.
            let present = value.is_some_and(|v| !v.is_object());
            present == *wanted
        }
        // Numbers as written, as EventBridge compares them: 300 is not
        // 300.0 (the `numeric` rule compares values).
        Rule::Exactly(expected) => value == Some(expected),
        Rule::Prefix(p) => text.is_some_and(|s| s.starts_with(p.as_str())),
        Rule::Suffix(p) => text.is_some_and(|s| s.ends_with(p.as_str())),
        Rule::PrefixIgnoreCase(p) => {
            text.is_some_and(|s| s.to_lowercase().starts_with(&p.to_lowercase()))
        }
        Rule::SuffixIgnoreCase(p) => {
            text.is_some_and(|s| s.to_lowercase().ends_with(&p.to_lowercase()))
        }
        Rule::EqualsIgnoreCase(p) => text.is_some_and(|s| s.to_lowercase() == p.to_lowercase()),
        Rule::AnythingBut(excluded) => match value {
            None | Some(Value::Object(_)) => false,
            Some(v) => !excluded.iter().any(|r| matches_leaf(r, Some(v))),
        },
        Rule::Numeric(bounds) => value.and_then(Value::as_f64).is_some_and(|n| {
            bounds.iter().all(|&(op, bound)| match op {
                Comparison::Eq => n == bound,
                Comparison::Lt => n < bound,
                Comparison::Le => n <= bound,
                Comparison::Gt => n > bound,
                Comparison::Ge => n >= bound,
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    //! The examples are AWS's: the "Filter rule syntax" table of
    //! <https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html>,
    //! the RequestCode and RecordNumber filters of
    //! <https://docs.aws.amazon.com/lambda/latest/dg/with-sqs-filtering.html>,
    //! and EventBridge's operator table
    //! (<https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html>).
    use super::*;
    use serde_json::json;

    fn filter(patterns: &[&str]) -> Filter {
        let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
        Filter::compile(&patterns).unwrap()
    }

    /// A record whose body is `body`, with one message attribute.
    fn record(body: &str) -> Value {
        json!({
            "messageId": "059f36b4-87a3-44ab-83d2-661975830a7d",
            "body": body,
            "attributes": {"ApproximateReceiveCount": "1", "SenderId": "AIDAIENQZJOLO23YVJ4VO"},
            "messageAttributes": {
                "kind": {"stringValue": "Order", "stringListValues": [], "binaryListValues": [], "dataType": "String"}
            },
            "eventSource": "aws:sqs",
            "awsRegion": "us-west-2",
        })
    }

    fn admits(pattern: &str, body: &Value) -> bool {
        filter(&[pattern]).admits(&record(&body.to_string()))
    }

    /// C13: the SQS page's two filters on its sample message.
    #[test]
    fn c13_sqs_page_examples() {
        let aaaa = json!({"RecordNumber": 1234, "TimeStamp": "yyyy-mm-ddThh:mm:ss", "RequestCode": "AAAA"});
        let bbbb = json!({"RecordNumber": 10000, "TimeStamp": "yyyy-mm-ddThh:mm:ss", "RequestCode": "BBBB"});
        let code = r#"{ "body" : { "RequestCode" : [ "BBBB" ] } }"#;
        assert!(!admits(code, &aaaa));
        assert!(admits(code, &bbbb));
        let number = r#"{ "body" : { "RecordNumber" : [ { "numeric": [ ">", 9999 ] } ] } }"#;
        assert!(!admits(number, &aaaa));
        assert!(admits(number, &bbbb));
    }

    /// C13: each row of Lambda's "Filter rule syntax" table, matching and
    /// not matching.
    #[test]
    fn c13_filter_rule_syntax_table() {
        let rows: &[(&str, Value, Value)] = &[
            // Null
            (
                r#"{"UserID": [ null ]}"#,
                json!({"UserID": null}),
                json!({"UserID": "u1"}),
            ),
            // Empty
            (
                r#"{"LastName": [""]}"#,
                json!({"LastName": ""}),
                json!({"LastName": "Doe"}),
            ),
            // Equals
            (
                r#"{"Name": [ "Alice" ]}"#,
                json!({"Name": "Alice"}),
                json!({"Name": "alice"}),
            ),
            // Equals (ignore case)
            (
                r#"{"Name": [ { "equals-ignore-case": "alice" } ]}"#,
                json!({"Name": "ALICE"}),
                json!({"Name": "Alicia"}),
            ),
            // And
            (
                r#"{"Location": [ "New York" ], "Day": ["Monday"]}"#,
                json!({"Location": "New York", "Day": "Monday"}),
                json!({"Location": "New York", "Day": "Tuesday"}),
            ),
            // Or
            (
                r#"{"PaymentType": [ "Credit", "Debit"]}"#,
                json!({"PaymentType": "Debit"}),
                json!({"PaymentType": "Cash"}),
            ),
            // Or (multiple fields)
            (
                r#"{"$or": [ { "Location": [ "New York" ] }, { "Day": [ "Monday" ] } ]}"#,
                json!({"Location": "Paris", "Day": "Monday"}),
                json!({"Location": "Paris", "Day": "Sunday"}),
            ),
            // Not
            (
                r#"{"Weather": [ { "anything-but": [ "Raining" ] } ]}"#,
                json!({"Weather": "Sunny"}),
                json!({"Weather": "Raining"}),
            ),
            // Numeric (equals)
            (
                r#"{"Price": [ { "numeric": [ "=", 100 ] } ]}"#,
                json!({"Price": 100.0}),
                json!({"Price": 101}),
            ),
            // Numeric (range)
            (
                r#"{"Price": [ { "numeric": [ ">", 10, "<=", 20 ] } ]}"#,
                json!({"Price": 20}),
                json!({"Price": 10}),
            ),
            // Exists
            (
                r#"{"ProductName": [ { "exists": true } ]}"#,
                json!({"ProductName": "Widget"}),
                json!({"Other": 1}),
            ),
            // Does not exist
            (
                r#"{"ProductName": [ { "exists": false } ]}"#,
                json!({"Other": 1}),
                json!({"ProductName": "Widget"}),
            ),
            // Begins with
            (
                r#"{"Region": [ {"prefix": "us-" } ]}"#,
                json!({"Region": "us-east-1"}),
                json!({"Region": "eu-west-1"}),
            ),
            // Ends with
            (
                r#"{"FileName": [ { "suffix": ".png" } ]}"#,
                json!({"FileName": "a.png"}),
                json!({"FileName": "a.jpg"}),
            ),
        ];
        for (rule, yes, no) in rows {
            let pattern = format!(r#"{{"body": {rule}}}"#);
            assert!(admits(&pattern, yes), "{pattern} should admit {yes}");
            assert!(!admits(&pattern, no), "{pattern} should drop {no}");
        }
    }

    /// C13: EventBridge's variants of anything-but, prefix and suffix; a
    /// missing field matches no value rule; an event list matches when one
    /// element does; exact numbers are compared as written.
    #[test]
    fn c13_eventbridge_operators() {
        let p = r#"{"body": {"Region": [ { "anything-but": {"prefix": "us-" } } ]}}"#;
        assert!(admits(p, &json!({"Region": "eu-west-1"})));
        assert!(!admits(p, &json!({"Region": "us-east-1"})));
        assert!(!admits(p, &json!({})), "anything-but needs the field");
        let p = r#"{"body": {"FileName": [ { "anything-but": { "suffix": ".png" } } ]}}"#;
        assert!(!admits(p, &json!({"FileName": "a.png"})));
        let p =
            r#"{"body": {"state": [{ "anything-but": { "equals-ignore-case": "initializing" }}]}}"#;
        assert!(!admits(p, &json!({"state": "INITIALIZING"})));
        assert!(admits(p, &json!({"state": "running"})));
        let p = r#"{"body": {"state": [{ "anything-but": "initializing" }]}}"#;
        assert!(admits(p, &json!({"state": "running"})));
        let p = r#"{"body": {"service": [{ "prefix": { "equals-ignore-case": "eventb" }}]}}"#;
        assert!(admits(p, &json!({"service": "EventBridge"})));
        let p = r#"{"body": {"FileName": [{ "suffix": { "equals-ignore-case": ".png" }}]}}"#;
        assert!(admits(p, &json!({"FileName": "A.PNG"})));
        let p = r#"{"body": {"Name": ["Alice"]}}"#;
        assert!(!admits(p, &json!({})));
        let p = r#"{"body": {"tags": ["red"]}}"#;
        assert!(admits(p, &json!({"tags": ["blue", "red"]})));
        let p = r#"{"body": {"count": [300]}}"#;
        assert!(admits(p, &json!({"count": 300})));
        assert!(
            !admits(p, &json!({"count": "300"})),
            "a string is not a number"
        );
        let p = r#"{"body": {"order": {"kind": ["book"]}}}"#;
        assert!(admits(p, &json!({"order": {"kind": "book"}})));
        assert!(!admits(p, &json!({"order": "book"})));
    }

    /// C13: Lambda's table of SQS body formats: string rules on `body`
    /// match a plain body only; an object pattern a JSON body only;
    /// without `body` in the pattern the body's format does not matter.
    #[test]
    fn c13_plain_and_json_bodies() {
        let plain = filter(&[r#"{"body": [{"prefix": "Result: "}]}"#]);
        assert!(plain.admits(&record("Result: ok")));
        assert!(!plain.admits(&record("Error: no")));
        assert!(
            !plain.admits(&record(r#"{"a": "Result: "}"#)),
            "a JSON body, string rules"
        );
        let object = filter(&[r#"{"body": {"a": [{"exists": true}]}}"#]);
        assert!(
            !object.admits(&record("a=1")),
            "a plain body, an object pattern"
        );
        assert!(!object.admits(&record("{not json")));
        assert!(object.admits(&record(r#"{"a": 1}"#)));
        let attrs = filter(&[r#"{"attributes": {"SenderId": [{"prefix": "AIDA"}]}}"#]);
        assert!(attrs.admits(&record("plain")));
        assert!(attrs.admits(&record(r#"{"x": 1}"#)));
        let message_attrs =
            filter(&[r#"{"messageAttributes": {"kind": {"stringValue": ["Order"]}}}"#]);
        assert!(message_attrs.admits(&record("plain")));
        let other = filter(&[r#"{"messageAttributes": {"kind": {"stringValue": ["Refund"]}}}"#]);
        assert!(!other.admits(&record("plain")));
    }

    /// C13: several patterns are ORed; no pattern admits everything.
    #[test]
    fn c13_patterns_are_ored() {
        let f = filter(&[
            r#"{"body": {"type": ["order"]}}"#,
            r#"{"body": {"type": ["refund"]}}"#,
        ]);
        assert!(f.admits(&record(r#"{"type": "order"}"#)));
        assert!(f.admits(&record(r#"{"type": "refund"}"#)));
        assert!(!f.admits(&record(r#"{"type": "other"}"#)));
        assert!(filter(&[]).admits(&record("anything")));
    }

    /// C13: what Lambda refuses is refused, with the pattern's number.
    #[test]
    fn c13_invalid_patterns_refused() {
        let refused = |patterns: &[&str]| {
            let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
            Filter::compile(&patterns).unwrap_err().to_string()
        };
        let six = [r#"{"body": {"a": ["x"]}}"#; 6];
        assert!(refused(&six).contains("at most 5"));
        assert!(refused(&["not json"]).starts_with("filter pattern 1: not valid JSON"));
        assert!(refused(&[r#"["x"]"#]).contains("must be a JSON object"));
        assert!(refused(&["{}"]).contains("at least one field"));
        assert!(refused(&[r#"{"Body": {"a": ["x"]}}"#]).contains("unknown field \"Body\""));
        assert!(refused(&[r#"{"body": {"a": "x"}}"#]).contains("list of rules"));
        assert!(
            refused(&[r#"{"body": {"a": [{"wildcard": "*x"}]}}"#]).contains("unknown operator")
        );
        assert!(
            refused(&[r#"{"body": {"a": [{"numeric": ["<", 5, ">", 1]}]}}"#]).contains("numeric")
        );
        assert!(refused(&[r#"{"body": {"a": [{"numeric": [">", "5"]}]}}"#]).contains("numeric"));
        assert!(refused(&[r#"{"body": {"a": [{"exists": "yes"}]}}"#]).contains("exists"));
        assert!(refused(&[r#"{"body": {"a": [{"prefix": 1}]}}"#]).contains("prefix"));
        assert!(
            refused(&[r#"{"body": {"a": [{"prefix": "x", "suffix": "y"}]}}"#])
                .contains("exactly one")
        );
        assert!(
            refused(&[r#"{"body": {"a": [{"anything-but": {"numeric": [">", 1]}}]}}"#])
                .contains("anything-but")
        );
        let long = format!(
            r#"{{"body": {{"a": ["{}"]}}}}"#,
            "x".repeat(MAX_PATTERN_CHARS)
        );
        assert!(
            refused(&[r#"{"body": {"a": ["x"]}}"#, &long]).starts_with("filter pattern 2: longer")
        );
    }
}
