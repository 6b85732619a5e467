//! The JSON protocol's side of the generated types that serde does not
//! do: batch entries refused while they are parsed (rule L8), and numbers
//! written as JSON writes them.

use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, Error as _, IgnoredAny, SeqAccess, Visitor};
use sluice_core::limits::MAX_BATCH_ENTRIES;

/// The start of the message of a batch with too many entries, as SQS words it.
pub const TOO_MANY_ENTRIES: &str = "Maximum number of entries per request are";

/// A number as JSON writes it (`2.0`, `1.5`), for the Query protocol's
/// text too.
pub(super) fn number_text(value: f64) -> String {
    serde_json::Number::from_f64(value).map_or_else(|| "0".into(), |n| n.to_string())
}

/// A batch's entries, refused while they are parsed when there are more
/// than [`MAX_BATCH_ENTRIES`]: the entries past the limit are only counted
/// (skipped without being built), so a body of a million `{}` entries costs
/// no more memory than its bytes.
pub fn bounded_entries<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Entries<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Entries<T> {
        type Value = Option<Vec<T>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of batch entries")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::new();
            while entries.len() < MAX_BATCH_ENTRIES {
                match seq.next_element()? {
                    Some(entry) => entries.push(entry),
                    None => return Ok(Some(entries)),
                }
            }
            let mut sent = entries.len();
            while seq.next_element::<IgnoredAny>()?.is_some() {
                sent += 1;
            }
            if sent > MAX_BATCH_ENTRIES {
                return Err(A::Error::custom(format!(
                    "{TOO_MANY_ENTRIES} {MAX_BATCH_ENTRIES}. You have sent {sent}."
                )));
            }
            Ok(Some(entries))
        }
    }
    deserializer.deserialize_option(Entries(PhantomData))
}
