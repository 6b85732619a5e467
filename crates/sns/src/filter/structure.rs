//! The shape of a policy: [`compile`] walks the JSON object into a
//! [`Conjunction`] of key tests (nested keys joined with `.`) and `$or`
//! groups, refusing what AWS's rule engine refuses.
//!
//! The walk is the engine's (event-ruler's `JsonRuleCompiler`): keys in
//! document order, an object value nests, an array value is a rule list,
//! anything else is `"<key>" must be an object or an array` (recorded 160,
//! 163, 164, 196), an empty object is refused. `$or` is the OR operator
//! when the policy compiles that way; when it does not, the engine compiles
//! the policy again with `$or` as a plain key and answers with that
//! attempt's result (its README: "$or" is an operator only with an array of
//! 2+ objects that use no operator names as keys; otherwise it is a normal
//! field name). That retry is not recorded for SNS; the notes say the same
//! (filter-policies.md §2, "$or").

use serde_json::{Map, Value};

use super::compile::{Refusal, rule_list};
use super::rule::Rule;

/// The key that joins the objects of its array with OR.
pub(super) const OR_KEY: &str = "$or";

/// Names the engine refuses as keys inside an `$or` branch (its
/// `RESERVED_FIELD_NAMES_IN_OR_RELATIONSHIP`); using one makes `$or` a
/// plain key.
const RESERVED: &[&str] = &[
    "exactly",
    "equals-ignore-case",
    "prefix",
    "suffix",
    "anything-but",
    "exists",
    "wildcard",
    "numeric",
    "cidr",
    "=",
    "<",
    "<=",
    ">",
    ">=",
    "regex",
    "not-wildcard",
    "not-equals-ignore-case",
    "date-after",
    "date-on-or-after",
    "date-before",
    "date-on-or-before",
    "in-date-range",
    "ip-address-in-range",
    "ip-address-not-in-range",
];

/// Key tests that must all hold, and `$or` groups of which one branch each
/// must hold.
#[derive(Debug, Clone, Default)]
pub(super) struct Conjunction {
    /// One test per key path.
    pub(super) keys: Vec<KeyTest>,
    /// Each group: the branches of one `$or`.
    pub(super) any_of: Vec<Vec<Conjunction>>,
}

impl Conjunction {
    /// Adds the test of `path`. A path given twice (`"a.b"` and
    /// `"a": {"b"}`) keeps the later list, as the engine's rule map does;
    /// a path repeated inside an `$or` branch is tested as well as the
    /// outer one (the engine would keep one of them; not recorded).
    fn insert(&mut self, path: String, rules: Vec<Rule>) {
        let test = KeyTest::new(path, rules);
        match self.keys.iter_mut().find(|k| k.path == test.path) {
            Some(existing) => *existing = test,
            None => self.keys.push(test),
        }
    }
}

/// The rules of one key path.
#[derive(Debug, Clone)]
pub(super) struct KeyTest {
    /// The key, nested keys joined with `.` (`detail.scope`).
    pub(super) path: Box<str>,
    /// The rules, one of which must match.
    pub(super) rules: Vec<Rule>,
    /// Whether every rule is `exists`, so presence alone decides.
    pub(super) presence_only: bool,
}

impl KeyTest {
    fn new(path: String, rules: Vec<Rule>) -> Self {
        let presence_only = rules.iter().all(|r| matches!(r, Rule::Exists(_)));
        Self {
            path: path.into(),
            rules,
            presence_only,
        }
    }
}

/// A policy the engine accepts.
#[derive(Debug, Clone)]
pub(super) struct Compiled {
    /// What a message must satisfy.
    pub(super) root: Conjunction,
    /// Whether some key's value is an object (not allowed in the
    /// `MessageAttributes` scope).
    pub(super) nested: bool,
    /// Whether `$or` was read as the OR operator (else as a plain key).
    pub(super) or_operator: bool,
}

/// Compiles `policy` (the top-level object) as the engine does: with `$or`
/// as an operator, and when that fails with a parse error, again with
/// `$or` as a plain key, whose outcome then stands.
pub(super) fn compile(policy: &Map<String, Value>) -> Result<Compiled, Refusal> {
    match walk(policy, true) {
        Err(refusal) if refusal.retry_plain => walk(policy, false),
        outcome => outcome,
    }
}

fn walk(policy: &Map<String, Value>, or_operator: bool) -> Result<Compiled, Refusal> {
    let mut walk = Walk {
        or_operator,
        nested: false,
    };
    let mut root = Conjunction::default();
    walk.object(policy, "", false, &mut root)?;
    Ok(Compiled {
        root,
        nested: walk.nested,
        or_operator,
    })
}

struct Walk {
    or_operator: bool,
    nested: bool,
}

impl Walk {
    /// Adds the keys of `object`, whose path is `prefix`, to `into`.
    fn object(
        &mut self,
        object: &Map<String, Value>,
        prefix: &str,
        inside_or: bool,
        into: &mut Conjunction,
    ) -> Result<(), Refusal> {
        for (key, value) in object {
            if self.or_operator && key == OR_KEY {
                into.any_of.push(self.or_group(value, prefix)?);
                continue;
            }
            if inside_or && RESERVED.contains(&key.as_str()) {
                return Err(Refusal::parse(format!(
                    "{key} is Ruler reserved fieldName which cannot be used inside $or."
                )));
            }
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            match value {
                Value::Object(inner) => {
                    self.nested = true;
                    self.object(inner, &path, inside_or, into)?;
                }
                Value::Array(items) => into.insert(path, rule_list(items)?),
                _ => {
                    return Err(Refusal::parse(format!(
                        "\"{key}\" must be an object or an array"
                    )));
                }
            }
        }
        if object.is_empty() {
            return Err(Refusal::parse("Empty objects are not allowed"));
        }
        Ok(())
    }

    /// The branches of an `$or` (the engine's messages; with the retry
    /// they only decide that `$or` is a plain key).
    fn or_group(&mut self, value: &Value, prefix: &str) -> Result<Vec<Conjunction>, Refusal> {
        let Value::Array(branches) = value else {
            return Err(Refusal::parse("It must be an Array followed with $or."));
        };
        let mut group = Vec::with_capacity(branches.len());
        for branch in branches {
            let Value::Object(branch) = branch else {
                return Err(Refusal::parse(
                    "Only JSON object is allowed in array of $or relationship.",
                ));
            };
            let mut conjunction = Conjunction::default();
            self.object(branch, prefix, true, &mut conjunction)?;
            group.push(conjunction);
        }
        if group.len() < 2 {
            return Err(Refusal::parse(
                "There must have at least 2 Objects in $or relationship.",
            ));
        }
        Ok(group)
    }
}
