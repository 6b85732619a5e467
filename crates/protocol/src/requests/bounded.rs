//! Batch entries refused while they are parsed (rule L8).

use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, Error as _, IgnoredAny, SeqAccess, Visitor};
use sluice_core::limits::MAX_BATCH_ENTRIES;

/// The start of the message of a batch with too many entries, as SQS words it.
pub(super) const TOO_MANY_ENTRIES: &str = "Maximum number of entries per request are";

/// A batch's entries, refused while they are parsed when there are more
/// than [`MAX_BATCH_ENTRIES`]: the entries past the limit are only counted
/// (skipped without being built), so a body of a million `{}` entries costs
/// no more memory than its bytes.
pub(super) fn bounded_entries<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
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

#[cfg(test)]
mod tests {
    use crate::requests::messages::{HandleBatchInput, SendMessageBatchInput};
    use crate::requests::parse::parse;
    use sluice_core::ErrorCode;

    /// L8: a JSON batch of more than 10 entries is refused while parsing
    /// with SQS's code and count; 10 entries parse.
    #[test]
    fn l8_batches_are_refused_while_parsed() {
        let batch = |n: usize| {
            let entries = vec!["{}"; n].join(",");
            crate::request::Input::Json(bytes::Bytes::from(format!(
                r#"{{"QueueUrl":"u","Entries":[{entries}]}}"#
            )))
        };
        let ten: SendMessageBatchInput = parse(batch(10)).unwrap();
        assert_eq!(ten.entries.unwrap().len(), 10);
        let e = parse::<HandleBatchInput>(batch(100_000)).unwrap_err();
        assert_eq!(e.code, ErrorCode::TooManyEntriesInBatchRequest);
        assert_eq!(
            e.message,
            "Maximum number of entries per request are 10. You have sent 100000."
        );
        let none: HandleBatchInput = parse(crate::request::Input::Json(bytes::Bytes::from_static(
            br#"{"QueueUrl":"u","Entries":null}"#,
        )))
        .unwrap();
        assert!(none.entries.is_none());
        let absent: HandleBatchInput = parse(crate::request::Input::Value(
            serde_json::json!({"QueueUrl": "u"}),
        ))
        .unwrap();
        assert!(absent.entries.is_none());
        let as_value = serde_json::json!({"Entries": vec![serde_json::json!({}); 11]});
        let e = parse::<SendMessageBatchInput>(crate::request::Input::Value(as_value)).unwrap_err();
        assert_eq!(e.code, ErrorCode::TooManyEntriesInBatchRequest);
    }
}
