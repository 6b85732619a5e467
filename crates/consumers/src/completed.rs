//! Skipping messages whose work is done (rule I1): a consumer told
//! `skip_completed` makes a key of each received message (its message id,
//! or a value in its JSON body) and deletes without delivery the ones whose
//! idempotency key stands `COMPLETED`, as a redrive or a duplicate would
//! otherwise make the handler do the work again. The key is looked up as a
//! consumer calling ClaimIdempotencyKey with it in the queue's account
//! would find it (the lookup itself is the gathering's, in `gather`).

use serde_json::Value;
use sluice_broker::ReceivedMessage;

/// Which key of a message names its work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletedKey {
    /// `message_id`: the message id (a selective redrive keeps it).
    MessageId,
    /// `$.a.b`: the string or number at this path of the JSON body.
    BodyPath(Vec<String>),
}

impl CompletedKey {
    /// Reads `message_id` or a `$.`-path of object members.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text == "message_id" {
            return Ok(Self::MessageId);
        }
        let path: Option<Vec<String>> = text
            .strip_prefix("$.")
            .map(|rest| rest.split('.').map(str::to_string).collect());
        match path {
            Some(members) if members.iter().all(|m| !m.is_empty()) => Ok(Self::BodyPath(members)),
            _ => Err(format!(
                "skip_completed must be \"message_id\" or a JSON path such as \"$.order.id\", got {text:?}"
            )),
        }
    }

    /// The key of `m`; `None` when its body has no string or number there.
    pub fn key_of(&self, m: &ReceivedMessage) -> Option<String> {
        match self {
            Self::MessageId => Some(m.message_id.clone()),
            Self::BodyPath(path) => {
                let body: Value = serde_json::from_str(&m.body).ok()?;
                match path.iter().try_fold(&body, |v, member| v.get(member))? {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                }
            }
        }
    }
}

/// A consumer's `skip_completed`, ready to look keys up.
#[derive(Debug, Clone)]
pub struct SkipCompleted {
    /// Which key.
    pub key: CompletedKey,
    /// The queue's account, whose keys these are.
    pub account: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str, body: &str) -> ReceivedMessage {
        ReceivedMessage {
            message_id: id.into(),
            body: body.into(),
            receive_count: 1,
            ..Default::default()
        }
    }

    #[test]
    fn i1_keys_from_the_message_id_or_the_body() {
        let by_id = CompletedKey::parse("message_id").unwrap();
        assert_eq!(by_id.key_of(&message("m-1", "x")).as_deref(), Some("m-1"));
        let by_order = CompletedKey::parse("$.order.id").unwrap();
        let m = |body| message("m", body);
        assert_eq!(
            by_order.key_of(&m(r#"{"order":{"id":"o-7"}}"#)).as_deref(),
            Some("o-7")
        );
        assert_eq!(
            by_order.key_of(&m(r#"{"order":{"id":42}}"#)).as_deref(),
            Some("42")
        );
        for none in [
            r#"{"order":{}}"#,
            r#"{"order":{"id":[1]}}"#,
            "not json",
            "[]",
        ] {
            assert_eq!(by_order.key_of(&m(none)), None, "{none}");
        }
        for bad in ["", "id", "$.", "$.a..b", "$"] {
            assert!(CompletedKey::parse(bad).is_err(), "{bad}");
        }
    }
}
