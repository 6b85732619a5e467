//! [`FilterPolicy`]: a subscription's policy, parsed and checked once with
//! SNS's limits and words, then matched against every published message;
//! and its [`Scope`].
//!
//! The checks run in this order: size; JSON (Jackson's words); a
//! top-level object; at most 5 top-level keys; the rule compiler (structure
//! and rules, first error in document order); no nesting in the
//! `MessageAttributes` scope; at most 150 combinations. Recorded answers
//! pin the compiler before the nesting check (`{"key":{"suffix":"value"}}`
//! in the attributes scope answers `"suffix" must be an object or an
//! array`, recorded 160); the rest of the order is not recorded.

use serde::Deserialize;
use serde_json::Value;

use super::complexity::{MAX_COMBINATIONS, combinations};
use super::error::FilterPolicyError;
use super::jackson::syntax_error;
use super::message::{Attribute, Body, Lookup, Message, MessageAttributes};
use super::rule::Rule;
use super::structure::{Conjunction, KeyTest, compile};

/// The largest policy text, in bytes: 256 KB (docs; the refusal's wording
/// is not recorded).
pub const MAX_POLICY_BYTES: usize = 256 * 1024;

/// The most keys a policy's top level may have (`$or` counts as one; for a
/// nested policy only the top-level keys count, as the notes and the 2022
/// guide say; the current guide's example counts leaf keys instead, which
/// no recording settles).
pub const MAX_KEYS: usize = 5;

/// What a policy is matched against: the subscription's `FilterPolicyScope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scope {
    /// The message attributes (the default).
    #[default]
    MessageAttributes,
    /// The message body, which must be a JSON object; nesting allowed.
    MessageBody,
}

impl Scope {
    /// The scope of a `FilterPolicyScope` value (exact spelling), or `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "MessageAttributes" => Some(Self::MessageAttributes),
            "MessageBody" => Some(Self::MessageBody),
            _ => None,
        }
    }

    /// The `FilterPolicyScope` value of this scope.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MessageAttributes => "MessageAttributes",
            Self::MessageBody => "MessageBody",
        }
    }
}

/// A subscription's filter policy, parsed and validated: parse once, match
/// many times. Matching allocates nothing but what reading the message
/// needs (see [`Message`] to read a message once for all subscriptions).
#[derive(Debug, Clone)]
pub struct FilterPolicy {
    scope: Scope,
    root: Conjunction,
}

// The server keeps parsed policies in state shared between threads.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<FilterPolicy>();
};

impl FilterPolicy {
    /// Parses and validates `text` for `scope`. The error's `Display` is
    /// AWS's message after `Invalid parameter: FilterPolicy: ` (see
    /// [`FilterPolicyError`] for the one exception and the whole messages).
    /// An empty text is no policy to SNS (it removes one); that is the
    /// caller's to handle, here it is not JSON.
    pub fn parse(text: &str, scope: Scope) -> Result<Self, FilterPolicyError> {
        if text.len() > MAX_POLICY_BYTES {
            return Err(FilterPolicyError::TooLarge);
        }
        let Value::Object(policy) = parse_json(text)? else {
            // Not recorded; the rule engine's message.
            return Err(FilterPolicyError::Invalid(
                "Filter is not an object".to_string(),
            ));
        };
        if policy.len() > MAX_KEYS {
            return Err(FilterPolicyError::TooManyKeys);
        }
        let compiled = compile(&policy).map_err(|r| FilterPolicyError::Invalid(r.message))?;
        if scope == Scope::MessageAttributes && compiled.nested {
            return Err(FilterPolicyError::NestedInAttributeScope);
        }
        if combinations(&policy, compiled.or_operator) > MAX_COMBINATIONS {
            return Err(FilterPolicyError::TooComplex);
        }
        Ok(Self {
            scope,
            root: compiled.root,
        })
    }

    /// The scope the policy was parsed for.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// Whether `message` passes the policy, read in the policy's scope.
    pub fn matches(&self, message: &Message<'_>) -> bool {
        match self.scope {
            Scope::MessageAttributes => self.matches_message_attributes(message.attributes()),
            Scope::MessageBody => message
                .body_json()
                .is_some_and(|body| self.matches_body_value(body)),
        }
    }

    /// Whether a message with these attributes passes the policy, read as
    /// a `MessageAttributes` policy (whatever its scope). Reads the
    /// attributes first; [`matches_message_attributes`](Self::matches_message_attributes)
    /// takes them read.
    pub fn matches_attributes(&self, attributes: &[Attribute<'_>]) -> bool {
        self.matches_message_attributes(&MessageAttributes::new(attributes))
    }

    /// Whether a message with these (read) attributes passes the policy.
    pub fn matches_message_attributes(&self, attributes: &MessageAttributes<'_>) -> bool {
        holds(&self.root, attributes)
    }

    /// Whether a message with this body passes the policy, read as a
    /// `MessageBody` policy. A body that is not a JSON object passes no
    /// policy. Parses the body; [`matches_body_value`](Self::matches_body_value)
    /// takes it parsed.
    pub fn matches_body(&self, body: &str) -> bool {
        serde_json::from_str::<Value>(body).is_ok_and(|value| self.matches_body_value(&value))
    }

    /// Whether a message whose body parsed to `body` passes the policy.
    pub fn matches_body_value(&self, body: &Value) -> bool {
        match body {
            Value::Object(object) => holds(&self.root, &Body(object)),
            _ => false,
        }
    }
}

/// The policy's JSON, read as Jackson's `readTree` reads it (content after
/// the first value is ignored), or Jackson's message.
fn parse_json(text: &str) -> Result<Value, FilterPolicyError> {
    let mut reader = serde_json::Deserializer::from_str(text);
    Value::deserialize(&mut reader)
        .map_err(|e| FilterPolicyError::Json(syntax_error(text).unwrap_or_else(|| e.to_string())))
}

/// Whether every key test holds and every `$or` group has a branch that
/// holds.
fn holds(conjunction: &Conjunction, message: &impl Lookup) -> bool {
    conjunction.keys.iter().all(|key| key_holds(key, message))
        && conjunction
            .any_of
            .iter()
            .all(|group| group.iter().any(|branch| holds(branch, message)))
}

/// Whether one of the key's rules holds: a value rule on one of its
/// values, or an `exists` rule on its presence.
fn key_holds(key: &KeyTest, message: &impl Lookup) -> bool {
    let found = if key.presence_only {
        // Any value proves presence; stop at the first.
        message.find(&key.path, &mut |_| true)
    } else {
        message.find(&key.path, &mut |value| {
            key.rules.iter().any(|r| r.matches(value))
        })
    };
    if found.matched && !key.presence_only {
        return true;
    }
    key.rules.iter().any(|rule| match rule {
        Rule::Exists(true) => found.present,
        Rule::Exists(false) => !found.present,
        _ => false,
    })
}
