//! Query parameters (`Name=value&List.member.1=…`) decoded into typed
//! inputs, as the Query API model lays them out.

use std::collections::{BTreeMap, BTreeSet};

/// Parameters every Query request may carry that are not an action's
/// input: the envelope and the signature of its older forms.
const ENVELOPE: &[&str] = &[
    "Action",
    "Version",
    "AWSAccessKeyId",
    "Signature",
    "SignatureMethod",
    "SignatureVersion",
    "Timestamp",
    "Expires",
    "SecurityToken",
];

/// A request's parameters by name (the URL's and the body's merged), the
/// envelope left out.
#[derive(Debug, Default)]
pub struct Params<'a> {
    map: BTreeMap<&'a str, &'a str>,
}

/// Why parameters do not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// A value of the wrong form for its type.
    Invalid {
        /// The parameter's last name segment (`DelaySeconds`).
        name: String,
        /// The value as sent.
        value: String,
        /// Why, in the words SQS uses (`Must be an integer.`).
        reason: &'static str,
    },
    /// A map entry without its key.
    Missing {
        /// The parameter that is missing (`Attribute.1.Name`).
        name: String,
    },
}

impl<'a> Params<'a> {
    /// The parameters of `pairs`, the envelope and `X-Amz-*` left out; the
    /// last of a repeated name counts.
    pub fn new(pairs: &'a [(String, String)]) -> Self {
        let map = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .filter(|(k, _)| !ENVELOPE.contains(k) && !k.starts_with("X-Amz-"))
            .collect();
        Params { map }
    }

    /// Sets `key` to `value` unless the request gave it (a Query request
    /// sent to a queue's URL names its `QueueUrl` by its path).
    pub fn set_if_absent(&mut self, key: &'a str, value: &'a str) {
        self.map.entry(key).or_insert(value);
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.map.get(key).copied()
    }

    /// The prefix of a structure's members at `key` (`key.`), or `None`
    /// when no parameter is under it; the top level's is empty.
    pub fn structure_prefix(&self, key: &str) -> Option<String> {
        if key.is_empty() {
            return Some(String::new());
        }
        let prefix = format!("{key}.");
        self.has_prefix(&prefix).then_some(prefix)
    }

    /// A list's items at `key.1`, `key.2`, … in numeric order; `None` when
    /// it has none.
    pub fn list<T: FromQuery>(&self, key: &str) -> Result<Option<Vec<T>>, DecodeError> {
        let mut items = Vec::new();
        for i in self.indices(key) {
            if let Some(item) = T::from_query(self, &format!("{key}.{i}"))? {
                items.push(item);
            }
        }
        Ok((!items.is_empty()).then_some(items))
    }

    /// A map's entries at `key.N.{key_name}` and `key.N.{value_name}`;
    /// `None` when it has none. An entry without its key is refused; one
    /// with a key and no value is left out, unless its value is text
    /// (`Attribute.1.Value=` is the empty string).
    pub fn map<V: FromQuery>(
        &self,
        key: &str,
        key_name: &str,
        value_name: &str,
    ) -> Result<Option<BTreeMap<String, V>>, DecodeError> {
        let mut out = BTreeMap::new();
        for i in self.indices(key) {
            let entry_key = format!("{key}.{i}.{key_name}");
            let Some(name) = self.get(&entry_key) else {
                return Err(DecodeError::Missing { name: entry_key });
            };
            match V::from_query(self, &format!("{key}.{i}.{value_name}"))? {
                Some(value) => {
                    out.insert(name.to_string(), value);
                }
                None => {
                    if let Some(empty) = V::empty_text() {
                        out.insert(name.to_string(), empty);
                    }
                }
            }
        }
        Ok((!out.is_empty()).then_some(out))
    }

    fn has_prefix(&self, prefix: &str) -> bool {
        self.map
            .range(prefix..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(prefix))
    }

    /// The 1-based indices present under `prefix.N…`, in numeric order.
    fn indices(&self, prefix: &str) -> BTreeSet<u32> {
        let dotted = format!("{prefix}.");
        self.map
            .range(dotted.as_str()..)
            .take_while(|(k, _)| k.starts_with(&dotted))
            .filter_map(|(k, _)| k[dotted.len()..].split('.').next()?.parse::<u32>().ok())
            .filter(|&i| i >= 1)
            .collect()
    }
}

/// A value read from Query parameters.
pub trait FromQuery: Sized {
    /// The value at `key`; `None` when absent.
    fn from_query(params: &Params<'_>, key: &str) -> Result<Option<Self>, DecodeError>;

    /// The value of a map entry sent without one: the empty string for
    /// text, none for other types.
    fn empty_text() -> Option<Self> {
        None
    }
}

/// The last segment of a parameter name, as errors name it.
fn last_segment(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

fn invalid(key: &str, raw: &str, reason: &'static str) -> DecodeError {
    DecodeError::Invalid {
        name: last_segment(key).to_string(),
        value: raw.to_string(),
        reason,
    }
}

impl FromQuery for String {
    fn from_query(params: &Params<'_>, key: &str) -> Result<Option<Self>, DecodeError> {
        Ok(params.get(key).map(str::to_string))
    }

    fn empty_text() -> Option<Self> {
        Some(String::new())
    }
}

impl FromQuery for i64 {
    fn from_query(params: &Params<'_>, key: &str) -> Result<Option<Self>, DecodeError> {
        params
            .get(key)
            .map(|raw| {
                raw.trim()
                    .parse::<i64>()
                    .map_err(|_| invalid(key, raw, "Must be an integer."))
            })
            .transpose()
    }
}

impl FromQuery for f64 {
    fn from_query(params: &Params<'_>, key: &str) -> Result<Option<Self>, DecodeError> {
        params
            .get(key)
            .map(|raw| {
                raw.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| invalid(key, raw, "Must be a number."))
            })
            .transpose()
    }
}

impl FromQuery for bool {
    fn from_query(params: &Params<'_>, key: &str) -> Result<Option<Self>, DecodeError> {
        params
            .get(key)
            .map(|raw| match raw {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(invalid(key, raw, "Must be true or false.")),
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &[(&str, &str)]) -> Vec<(String, String)> {
        text.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn w1_lists_come_in_numeric_order_and_maps_by_entry() {
        let raw = pairs(&[
            ("Action", "X"),
            ("Item.10", "ten"),
            ("Item.2", "two"),
            ("Item.1", "one"),
            ("Attribute.1.Name", "A"),
            ("Attribute.1.Value", ""),
            ("Attribute.2.Name", "B"),
            ("Attribute.2.Value", "b"),
        ]);
        let params = Params::new(&raw);
        assert_eq!(params.get("Action"), None, "the envelope is not input");
        let list: Vec<String> = params.list("Item").unwrap().unwrap();
        assert_eq!(list, ["one", "two", "ten"]);
        let map: BTreeMap<String, String> =
            params.map("Attribute", "Name", "Value").unwrap().unwrap();
        assert_eq!(map["A"], "");
        assert_eq!(map["B"], "b");
        assert_eq!(params.list::<String>("Nothing").unwrap(), None);
    }

    #[test]
    fn w2_values_of_the_wrong_form_and_keyless_entries_are_refused() {
        let raw = pairs(&[("Delay.Seconds", "x"), ("Tag.1.Value", "v")]);
        let params = Params::new(&raw);
        assert_eq!(
            i64::from_query(&params, "Delay.Seconds"),
            Err(DecodeError::Invalid {
                name: "Seconds".into(),
                value: "x".into(),
                reason: "Must be an integer."
            })
        );
        assert_eq!(
            params.map::<String>("Tag", "Key", "Value"),
            Err(DecodeError::Missing {
                name: "Tag.1.Key".into()
            })
        );
    }
}
