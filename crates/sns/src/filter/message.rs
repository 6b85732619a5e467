//! A published message as filter policies read it: its attributes
//! ([`Attribute`], read once into [`MessageAttributes`]) and its body
//! (parsed once, on first need, by [`Message`]), and the [`Lookup`] of the
//! values at a key path in either.
//!
//! Attributes (filter-policies.md §3): `String` is a string, `Number` a
//! number, `String.Array` a JSON array whose elements keep their JSON types
//! (any element may match, recorded 200); `Binary` takes part in no value
//! rule but counts as present for `exists` (the notes: "presence means the
//! attribute was sent (any type)"). The docs' `Number.Array` reads like
//! `String.Array` (docs, not recorded). A string attribute value is
//! compared in its JSON-escaped form: the developer guide warns that for
//! attribute-based filtering double quotes and backslashes must be
//! "double escaped" in the policy, or it will not match (docs, not
//! recorded); so `say "hi"` matches the policy string `say \"hi\"`,
//! written `"say \\\"hi\\\""` in the policy's JSON.
//!
//! Body (recorded 201–209): only a JSON object matches. Its keys flatten to
//! dotted paths (`{"a":{"b":1}}` and `{"a.b":1}` both have `a.b`), arrays
//! are crushed (a key matches if any element matches; arrays of objects
//! and arrays of arrays expose their elements' keys), empty arrays and
//! objects are no value, `null` is one. Two keys of a policy may be
//! satisfied by different elements of one array (not recorded; as the
//! notes' reference implementation does).

use std::cell::OnceCell;

use serde_json::Value;

use super::value::{Num, Scalar};

/// One message attribute as published: its name, its `DataType`
/// (`String`, `String.Array`, `Number`, `Binary`, or one of those with a
/// custom `.suffix`) and its value (`StringValue`, or the base64 of a
/// `BinaryValue`, which never matches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attribute<'a> {
    /// The attribute's name.
    pub name: &'a str,
    /// The attribute's `DataType`.
    pub data_type: &'a str,
    /// The attribute's value as text (a JSON array for `String.Array`).
    pub value: &'a str,
}

/// A message's attributes, read once (numbers parsed, arrays decoded) so
/// that every subscription's policy matches without reading them again.
#[derive(Debug, Clone, Default)]
pub struct MessageAttributes<'a> {
    entries: Vec<(&'a str, Values<'a>)>,
}

/// The values one attribute offers to value rules.
#[derive(Debug, Clone)]
enum Values<'a> {
    /// A `String` or `Number` attribute.
    One(Scalar<'a>),
    /// A `String` attribute whose value needed escaping, escaped.
    Escaped(String),
    /// A `String.Array`'s elements.
    Many(Vec<Value>),
    /// A `Binary` attribute, or one whose value cannot be read as its type:
    /// present, but no value to match.
    Opaque,
}

impl<'a> MessageAttributes<'a> {
    /// Reads `attributes`.
    pub fn new(attributes: &[Attribute<'a>]) -> Self {
        let entries = attributes
            .iter()
            .map(|a| (a.name, read(a.data_type, a.value)))
            .collect();
        Self { entries }
    }
}

fn read<'a>(data_type: &str, value: &'a str) -> Values<'a> {
    if data_type == "String.Array" || data_type == "Number.Array" {
        return match serde_json::from_str::<Value>(value) {
            Ok(Value::Array(mut elements)) => {
                elements.iter_mut().for_each(escape_strings);
                Values::Many(elements)
            }
            _ => Values::Opaque,
        };
    }
    match data_type.split('.').next() {
        Some("String") => match escaped(value) {
            Some(text) => Values::Escaped(text),
            None => Values::One(Scalar::Str(value)),
        },
        Some("Number") => Num::parse(value).map_or(Values::Opaque, |n| Values::One(Scalar::Num(n))),
        _ => Values::Opaque,
    }
}

/// `text` as it stands inside a JSON string (quotes, backslashes and
/// control characters escaped), or `None` when that is `text` itself.
fn escaped(text: &str) -> Option<String> {
    if !text.chars().any(|c| c == '"' || c == '\\' || c < ' ') {
        return None;
    }
    let quoted = Value::from(text).to_string();
    Some(quoted[1..quoted.len() - 1].to_string())
}

/// Escapes the strings of an array attribute's element, as [`escaped`].
fn escape_strings(element: &mut Value) {
    match element {
        Value::String(s) => {
            if let Some(text) = escaped(s) {
                *s = text;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(escape_strings),
        _ => {}
    }
}

/// A published message for filtering: its attributes read once, its body
/// parsed at most once, when the first `MessageBody` policy needs it.
#[derive(Debug)]
pub struct Message<'a> {
    attributes: MessageAttributes<'a>,
    body: &'a str,
    parsed: OnceCell<Option<Value>>,
}

impl<'a> Message<'a> {
    /// A message with these attributes and this body.
    pub fn new(attributes: &[Attribute<'a>], body: &'a str) -> Self {
        Self {
            attributes: MessageAttributes::new(attributes),
            body,
            parsed: OnceCell::new(),
        }
    }

    /// The message's attributes, read.
    pub fn attributes(&self) -> &MessageAttributes<'a> {
        &self.attributes
    }

    /// The body parsed as JSON, or `None` when it is not JSON.
    pub fn body_json(&self) -> Option<&Value> {
        self.parsed
            .get_or_init(|| serde_json::from_str(self.body).ok())
            .as_ref()
    }
}

/// What looking up a key path found.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Found {
    /// Whether a value passed the test (the lookup stopped there).
    pub(super) matched: bool,
    /// Whether the path is present (for attributes: the attribute was
    /// sent; for a body: the path has a value). Complete when not `matched`.
    pub(super) present: bool,
}

/// Where key paths are looked up: the values at a path are offered to a
/// test one by one until one passes.
pub(super) trait Lookup {
    /// Offers each value at `path` to `test`, stopping at the first that
    /// passes.
    fn find(&self, path: &str, test: &mut dyn FnMut(Scalar<'_>) -> bool) -> Found;
}

impl Lookup for MessageAttributes<'_> {
    fn find(&self, path: &str, test: &mut dyn FnMut(Scalar<'_>) -> bool) -> Found {
        let Some((_, values)) = self.entries.iter().find(|(name, _)| *name == path) else {
            return Found::default();
        };
        let mut found = Found {
            matched: false,
            present: true,
        };
        match values {
            Values::One(value) => found.matched = test(*value),
            Values::Escaped(text) => found.matched = test(Scalar::Str(text)),
            Values::Many(elements) => {
                // Presence is the attribute's; the elements only offer values.
                let mut ignored = Found::default();
                found.matched = elements.iter().any(|e| leaves(e, test, &mut ignored));
            }
            Values::Opaque => {}
        }
        found
    }
}

/// A JSON body's top-level object.
pub(super) struct Body<'a>(pub(super) &'a serde_json::Map<String, Value>);

impl Lookup for Body<'_> {
    fn find(&self, path: &str, test: &mut dyn FnMut(Scalar<'_>) -> bool) -> Found {
        let mut found = Found::default();
        let matched = in_object(self.0, path, test, &mut found);
        found.matched = matched;
        found
    }
}

/// Offers the values at `path` under `object`: the keys equal to `path`
/// hold them, the keys that are a dotted prefix of it lead to them.
fn in_object(
    object: &serde_json::Map<String, Value>,
    path: &str,
    test: &mut dyn FnMut(Scalar<'_>) -> bool,
    found: &mut Found,
) -> bool {
    object.iter().any(|(key, value)| {
        if path == key {
            leaves(value, test, found)
        } else {
            match path
                .strip_prefix(key.as_str())
                .and_then(|rest| rest.strip_prefix('.'))
            {
                Some(rest) => under(value, rest, test, found),
                None => false,
            }
        }
    })
}

/// Offers the values at `path` under `value`, crushing arrays.
fn under(
    value: &Value,
    path: &str,
    test: &mut dyn FnMut(Scalar<'_>) -> bool,
    found: &mut Found,
) -> bool {
    match value {
        Value::Object(object) => in_object(object, path, test, found),
        Value::Array(elements) => elements.iter().any(|e| under(e, path, test, found)),
        _ => false,
    }
}

/// Offers `value` itself: a scalar, or an array's scalars at any depth.
/// Objects hold no value at this path (their keys make longer paths).
fn leaves(value: &Value, test: &mut dyn FnMut(Scalar<'_>) -> bool, found: &mut Found) -> bool {
    match value {
        Value::Array(elements) => elements.iter().any(|e| leaves(e, test, found)),
        Value::Object(_) => false,
        scalar => match Scalar::from_json(scalar) {
            Some(s) => {
                found.present = true;
                test(s)
            }
            None => false,
        },
    }
}
