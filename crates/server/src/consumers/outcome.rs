//! A handler's answer, read as Lambda reads a function's (rule C2).

use std::collections::BTreeSet;

use serde_json::Value;

/// Why a whole batch failed, as counted in the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The handler answered with a status outside 2xx.
    Status,
    /// The handler answered with the `X-Amz-Function-Error` header.
    FunctionError,
    /// No full answer within the consumer's timeout.
    Timeout,
    /// No connection, or it broke before the answer.
    Connection,
    /// A 2xx whose body is not a readable batch response.
    BadResponse,
}

impl FailureKind {
    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Status => "status",
            FailureKind::FunctionError => "function_error",
            FailureKind::Timeout => "timeout",
            FailureKind::Connection => "connection",
            FailureKind::BadResponse => "bad_response",
        }
    }

    /// Every kind, for the metrics.
    pub const ALL: [FailureKind; 5] = [
        FailureKind::Status,
        FailureKind::FunctionError,
        FailureKind::Timeout,
        FailureKind::Connection,
        FailureKind::BadResponse,
    ];
}

/// What becomes of a delivered batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Delete every message.
    AllSucceeded,
    /// Delete every message but these (message ids).
    Partial(BTreeSet<String>),
    /// Delete nothing: the messages come back after their visibility timeout.
    Failed(FailureKind),
}

/// Reads a 2xx answer without the function-error header. With
/// `report_failures` off the body is not read: any 2xx is a success.
/// Otherwise, as Lambda: an empty body, `null`, `{}`, or an empty or null
/// `batchItemFailures` is a full success; invalid JSON, or an item whose
/// `itemIdentifier` is missing, not a string, empty or not a message of the
/// batch, fails the whole batch.
pub fn read_success(body: &[u8], batch_ids: &BTreeSet<&str>, report_failures: bool) -> Outcome {
    if !report_failures || body.iter().all(u8::is_ascii_whitespace) {
        return Outcome::AllSucceeded;
    }
    let Ok(answer) = serde_json::from_slice::<Value>(body) else {
        return Outcome::Failed(FailureKind::BadResponse);
    };
    let failures = match &answer {
        Value::Null => return Outcome::AllSucceeded,
        Value::Object(map) => match map.get("batchItemFailures") {
            None | Some(Value::Null) => return Outcome::AllSucceeded,
            Some(Value::Array(items)) => items,
            Some(_) => return Outcome::Failed(FailureKind::BadResponse),
        },
        // A function may return any JSON; only a batch response names failures.
        _ => return Outcome::AllSucceeded,
    };
    let mut failed = BTreeSet::new();
    for item in failures {
        let id = item.get("itemIdentifier").and_then(Value::as_str);
        match id {
            Some(id) if !id.is_empty() && batch_ids.contains(id) => {
                failed.insert(id.to_string());
            }
            _ => return Outcome::Failed(FailureKind::BadResponse),
        }
    }
    if failed.is_empty() {
        Outcome::AllSucceeded
    } else {
        Outcome::Partial(failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str) -> Outcome {
        let ids: BTreeSet<&str> = ["a", "b", "c"].into();
        read_success(body.as_bytes(), &ids, true)
    }

    /// C2: the answers Lambda reads as a full success.
    #[test]
    fn c2_full_success_answers() {
        for body in [
            "",
            "  \n",
            "null",
            "{}",
            r#"{"batchItemFailures":[]}"#,
            r#"{"batchItemFailures":null}"#,
            r#""done""#,
        ] {
            assert_eq!(read(body), Outcome::AllSucceeded, "{body:?}");
        }
    }

    /// C2: named items fail; the others are deleted.
    #[test]
    fn c2_named_items_fail() {
        assert_eq!(
            read(r#"{"batchItemFailures":[{"itemIdentifier":"b"},{"itemIdentifier":"c"}]}"#),
            Outcome::Partial(["b".to_string(), "c".to_string()].into())
        );
    }

    /// C2: anything unreadable fails the whole batch.
    #[test]
    fn c2_unreadable_answers_fail_the_batch() {
        for body in [
            "{not json",
            r#"{"batchItemFailures":[{"itemIdentifier":""}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifier":null}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifier":"zzz"}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifer":"a"}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifier":"a"},{"itemIdentifier":"nope"}]}"#,
            r#"{"batchItemFailures":"a"}"#,
        ] {
            assert_eq!(
                read(body),
                Outcome::Failed(FailureKind::BadResponse),
                "{body:?}"
            );
        }
    }

    /// C2: without ReportBatchItemFailures the body is not read.
    #[test]
    fn c2_body_ignored_without_item_reporting() {
        let ids: BTreeSet<&str> = ["a"].into();
        let body = br#"{"batchItemFailures":[{"itemIdentifier":"a"}]}"#;
        assert_eq!(read_success(body, &ids, false), Outcome::AllSucceeded);
    }
}
