//! What the access check reads of a request's input: the members that
//! name queues, borrowed from the input the action parses after it (no
//! copy of the input, no `serde_json::Value` built for members that are
//! strings). Any JSON value parses, as it did into a `Value`: a member of
//! another type is the action's to refuse, so that no input the action
//! accepts escapes the check.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The members of an input that name queues, whatever the action.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct Named<'a> {
    #[serde(borrow)]
    pub queue_url: Member<'a>,
    #[serde(borrow)]
    pub queue_name: Member<'a>,
    #[serde(borrow, rename = "QueueOwnerAWSAccountId")]
    pub queue_owner_aws_account_id: Member<'a>,
    #[serde(borrow)]
    pub source_arn: Member<'a>,
    #[serde(borrow)]
    pub destination_arn: Member<'a>,
    #[serde(borrow)]
    pub task_handle: Member<'a>,
    /// Only its `RedrivePolicy` names a queue.
    #[serde(borrow)]
    pub attributes: Attributes<'a>,
    /// A push consumer's name (UpdateConsumer, DeleteConsumer, ...).
    #[serde(borrow)]
    pub name: Member<'a>,
    /// The alarms DeleteAlarms deletes.
    #[serde(borrow)]
    pub alarm_names: StringList<'a>,
    /// PutAlarm's webhook URLs and queue ARNs.
    #[serde(borrow)]
    pub actions: StringList<'a>,
}

/// A member's text when it is a string; any other value is read (as a
/// `Value` would be) and dropped.
#[derive(Debug, Default)]
pub(super) struct Member<'a>(Option<Cow<'a, str>>);

impl Member<'_> {
    /// The text, when the member is a string.
    pub fn text(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // As an `Option<Value>` is read: an absent member is none.
        deserializer.deserialize_option(MemberVisitor)
    }
}

struct MemberVisitor;

impl<'de> Visitor<'de> for MemberVisitor {
    type Value = Member<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Member(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Member(Some(Cow::Owned(v.to_string()))))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Member(Some(Cow::Owned(v))))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Member(None))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Member(None))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Member(None))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Member(None))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Member(None))
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Member(None))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // Read as a `Value` reads it: the same input is refused the same way.
        while seq.next_element::<Value>()?.is_some() {}
        Ok(Member(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<String, Value>()?.is_some() {}
        Ok(Member(None))
    }
}

/// A list member's strings; its other items, and a member that is not a
/// list, are read (as a `Value` would be) and dropped.
#[derive(Debug, Default)]
pub(super) struct StringList<'a>(Vec<Cow<'a, str>>);

impl StringList<'_> {
    /// The list's strings, in order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|t| t.as_ref())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for StringList<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_option(StringListVisitor)
    }
}

struct StringListVisitor;

impl<'de> Visitor<'de> for StringListVisitor {
    type Value = StringList<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut texts = Vec::new();
        while let Some(item) = seq.next_element::<Member<'de>>()? {
            texts.extend(item.0);
        }
        Ok(StringList(texts))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        MemberVisitor.visit_map(map).map(|_| StringList::default())
    }

    fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Self::Value, E> {
        Ok(StringList::default())
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(StringList::default())
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(StringList::default())
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(StringList::default())
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(StringList::default())
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(StringList::default())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(StringList::default())
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(StringList::default())
    }
}

/// The `Attributes` member: its `RedrivePolicy` text (the last one, as a
/// JSON object keeps the last of a repeated name) when it is an object
/// that has one as a string.
#[derive(Debug, Default)]
pub(super) struct Attributes<'a> {
    redrive_policy: Member<'a>,
}

impl Attributes<'_> {
    /// The `RedrivePolicy` it sets, when it sets one as a string.
    pub fn redrive_policy(&self) -> Option<&str> {
        self.redrive_policy.text()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Attributes<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_option(AttributesVisitor)
    }
}

struct AttributesVisitor;

impl<'de> Visitor<'de> for AttributesVisitor {
    type Value = Attributes<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut redrive_policy = Member(None);
        while let Some(key) = map.next_key::<Member<'de>>()? {
            if key.text() == Some("RedrivePolicy") {
                redrive_policy = map.next_value()?;
            } else {
                map.next_value::<Value>()?;
            }
        }
        Ok(Attributes { redrive_policy })
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        MemberVisitor.visit_seq(seq).map(|_| Attributes::default())
    }

    fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Self::Value, E> {
        Ok(Attributes::default())
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Attributes::default())
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Attributes::default())
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Attributes::default())
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Attributes::default())
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Attributes::default())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Attributes::default())
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Attributes::default())
    }
}
