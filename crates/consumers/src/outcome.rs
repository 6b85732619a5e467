//! A handler's answer, read as Lambda reads a function's (rule C2), items
//! marked permanent (rule C5), and the FIFO rule that holds back the rest
//! of a failed item's group (rule C3).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use sluice_core::dead_letter_routes::is_failure_class;

/// Why a whole batch failed, as counted in the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The handler answered with this status, outside 2xx.
    Status(u16),
    /// The handler answered with the `X-Amz-Function-Error` header.
    FunctionError,
    /// No full answer within the consumer's timeout.
    Timeout,
    /// No connection, or it broke before the answer.
    Connection,
    /// A 2xx whose body is not a readable batch response.
    BadResponse,
    /// A 429 or 503 with a `Retry-After` (see [`Outcome::Throttled`]).
    Throttled,
}

impl FailureKind {
    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Status(_) => "status",
            FailureKind::FunctionError => "function_error",
            FailureKind::Timeout => "timeout",
            FailureKind::Connection => "connection",
            FailureKind::BadResponse => "bad_response",
            FailureKind::Throttled => "throttled",
        }
    }

    /// Whether the failure says the handler is down or overloaded rather
    /// than that it refused these messages: no answer in time, a broken
    /// connection, or a 5xx. Further receives back off (rule C12); a 4xx,
    /// a function error or an unreadable answer come from a handler that
    /// runs, and the next batch may well succeed.
    pub fn handler_down(self) -> bool {
        match self {
            FailureKind::Timeout | FailureKind::Connection => true,
            FailureKind::Status(code) => code >= 500,
            FailureKind::FunctionError | FailureKind::BadResponse | FailureKind::Throttled => false,
        }
    }
}

/// Longest failure reason kept, as NackMessage's `Reason`.
pub const MAX_REASON_CHARS: usize = 1024;

/// The failure reason kept with each message of a batch that failed as a
/// whole (rule C11): the HTTP status, and the `errorType` and
/// `errorMessage` of a Lambda error payload when the body has them.
pub fn answer_failure_reason(kind: FailureKind, status: u16, body: &[u8]) -> String {
    let error = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
        let message = v.get("errorMessage")?.as_str()?.to_string();
        Some(match v.get("errorType").and_then(Value::as_str) {
            Some(t) if !t.is_empty() => format!("{t}: {message}"),
            _ => message,
        })
    });
    let what = match kind {
        FailureKind::FunctionError => format!("function error (HTTP {status})"),
        FailureKind::BadResponse => format!("unreadable batch response (HTTP {status})"),
        _ => format!("HTTP {status}"),
    };
    let reason = match error {
        Some(e) => format!("{what}: {e}"),
        None => what,
    };
    reason.chars().take(MAX_REASON_CHARS).collect()
}

/// One item the handler named in `batchItemFailures`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemFailure {
    /// `"permanent": true`: to the dead-letter queue now, not retried.
    pub permanent: bool,
    /// The item's `"reason"`, cut to [`MAX_REASON_CHARS`].
    pub reason: Option<String>,
    /// The item's `"class"`, which the queue's `SluiceDeadLetterRoutes`
    /// may route (rule X7).
    pub class: Option<String>,
}

/// What becomes of a delivered batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Delete every message.
    AllSucceeded,
    /// Delete every message but these (by message id).
    Partial(BTreeMap<String, ItemFailure>),
    /// Delete nothing: the messages come back after their visibility timeout.
    Failed(FailureKind),
    /// Delete nothing, and send no new batch for this long: the handler
    /// answered 429 or 503 with `Retry-After` (rule C7).
    Throttled(std::time::Duration),
    /// No connection could be made: nothing was posted, the batch is kept
    /// in flight with its receive and posted again once the back-off
    /// pause ends (rule C12).
    Unreached,
}

/// The wait a 429 or 503 answer asks for in its `Retry-After` header, read
/// at `now`: delay-seconds, or an HTTP-date (RFC 9110, section 10.2.3, in
/// any of its three forms), a date already past asking for no wait. A
/// header of neither form asks for nothing: the answer is a plain status
/// failure.
pub fn retry_after(
    status: u16,
    header: Option<&str>,
    now: std::time::SystemTime,
) -> Option<std::time::Duration> {
    if status != 429 && status != 503 {
        return None;
    }
    let header = header?.trim();
    if let Ok(seconds) = header.parse::<u64>() {
        return Some(std::time::Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(header).ok()?;
    Some(date.duration_since(now).unwrap_or_default())
}

/// Reads a 2xx answer without the function-error header. With
/// `report_failures` off the body is not read: any 2xx is a success.
/// Otherwise, as Lambda: an empty body, `null`, `{}`, or an empty or null
/// `batchItemFailures` is a full success; invalid JSON, or an item whose
/// `itemIdentifier` is missing, not a string, empty or not a message of the
/// batch, fails the whole batch. Beyond Lambda, an item may add
/// `"permanent": true`, a `"reason"` string (rule C5) and a failure
/// `"class"` (rule X7); a `permanent` that is not a boolean, a `reason`
/// that is not a string or a `class` that is no class name fails the whole
/// batch too.
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
    let mut failed = BTreeMap::new();
    for item in failures {
        let id = item.get("itemIdentifier").and_then(Value::as_str);
        let Some(id) = id.filter(|id| !id.is_empty() && batch_ids.contains(id)) else {
            return Outcome::Failed(FailureKind::BadResponse);
        };
        let Some(failure) = item_failure(item) else {
            return Outcome::Failed(FailureKind::BadResponse);
        };
        // Named twice: permanent if either says so.
        let entry: &mut ItemFailure = failed.entry(id.to_string()).or_default();
        entry.permanent |= failure.permanent;
        entry.reason = entry.reason.take().or(failure.reason);
        entry.class = entry.class.take().or(failure.class);
    }
    if failed.is_empty() {
        Outcome::AllSucceeded
    } else {
        Outcome::Partial(failed)
    }
}

/// The optional `permanent`, `reason` and `class` of an item; `None` when
/// one has the wrong type (or the class is no valid class name).
fn item_failure(item: &Value) -> Option<ItemFailure> {
    let permanent = match item.get("permanent") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return None,
    };
    let reason = match item.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(r)) => Some(r.chars().take(MAX_REASON_CHARS).collect()),
        Some(_) => return None,
    };
    let class = match item.get("class") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if is_failure_class(c) => Some(c.clone()),
        Some(_) => return None,
    };
    Some(ItemFailure {
        permanent,
        reason,
        class,
    })
}

/// Lambda's FIFO rule (C3): in each message group, the first failed
/// message and every later message of its group in the batch go back, so
/// that the group is retried in order; earlier ones succeed. `batch` is
/// (message id, group id) in the order delivered; returns the ids to keep,
/// the named ones with their failure, the held-back ones as plain retries.
pub fn hold_back_groups(
    batch: &[(&str, Option<&str>)],
    failed: &BTreeMap<String, ItemFailure>,
) -> BTreeMap<String, ItemFailure> {
    let mut failed_groups = BTreeSet::new();
    let mut keep = BTreeMap::new();
    for &(id, group) in batch {
        if let Some(f) = failed.get(id) {
            keep.insert(id.to_string(), f.clone());
            failed_groups.extend(group);
        } else if group.is_some_and(|g| failed_groups.contains(g)) {
            keep.insert(id.to_string(), ItemFailure::default());
        }
    }
    keep
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
            Outcome::Partial(
                [
                    ("b".to_string(), ItemFailure::default()),
                    ("c".to_string(), ItemFailure::default())
                ]
                .into()
            )
        );
    }

    /// C5, X7: `permanent`, `reason` and `class` are read per item; a long
    /// reason is cut.
    #[test]
    fn c5_permanent_items_reasons_and_classes() {
        let long = "x".repeat(MAX_REASON_CHARS + 10);
        let body = format!(
            r#"{{"batchItemFailures":[{{"itemIdentifier":"a","permanent":true,"reason":"bad JSON","class":"validation"}},{{"itemIdentifier":"b","permanent":false}},{{"itemIdentifier":"c","reason":"{long}"}}]}}"#
        );
        let Outcome::Partial(failed) = read(&body) else {
            panic!("partial expected");
        };
        assert_eq!(
            failed["a"],
            ItemFailure {
                permanent: true,
                reason: Some("bad JSON".into()),
                class: Some("validation".into()),
            }
        );
        assert_eq!(failed["b"], ItemFailure::default());
        assert_eq!(
            failed["c"].reason.as_ref().map(String::len),
            Some(MAX_REASON_CHARS)
        );
        for bad in [
            r#"{"batchItemFailures":[{"itemIdentifier":"a","permanent":"yes"}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifier":"a","reason":42}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifier":"a","class":"not a class"}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifier":"a","class":7}]}"#,
        ] {
            assert_eq!(
                read(bad),
                Outcome::Failed(FailureKind::BadResponse),
                "{bad}"
            );
        }
    }

    /// C3: a failed item holds back the later items of its own group only;
    /// earlier ones and other groups succeed.
    #[test]
    fn c3_failure_holds_back_the_rest_of_its_group() {
        let batch = [
            ("a1", Some("A")),
            ("b1", Some("B")),
            ("a2", Some("A")),
            ("a3", Some("A")),
            ("b2", Some("B")),
        ];
        let permanent = ItemFailure {
            permanent: true,
            ..ItemFailure::default()
        };
        let failed = [("a2".to_string(), permanent.clone())].into();
        let keep = hold_back_groups(&batch, &failed);
        assert_eq!(
            keep,
            [
                ("a2".to_string(), permanent),
                ("a3".to_string(), ItemFailure::default())
            ]
            .into()
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

    /// C7: only 429 and 503 ask for a pause, with delta-seconds or an
    /// HTTP-date (RFC 9110's three forms: IMF-fixdate, RFC 850, asctime).
    #[test]
    fn c7_retry_after_is_read_from_429_and_503() {
        use std::time::{Duration, SystemTime};
        // Wed, 21 Oct 2015 07:28:00 GMT.
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        let at = |s: Option<&str>| retry_after(503, s, now);
        assert_eq!(
            retry_after(429, Some("3"), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(at(Some(" 0 ")), Some(Duration::ZERO));
        assert_eq!(retry_after(500, Some("3"), now), None);
        assert_eq!(at(None), None);
        for later in [
            "Wed, 21 Oct 2015 07:28:30 GMT",
            "Wednesday, 21-Oct-15 07:28:30 GMT",
            "Wed Oct 21 07:28:30 2015",
        ] {
            assert_eq!(at(Some(later)), Some(Duration::from_secs(30)), "{later}");
        }
        assert_eq!(
            at(Some("Wed, 21 Oct 2015 07:27:00 GMT")),
            Some(Duration::ZERO),
            "a date past asks for no wait"
        );
        assert_eq!(at(Some("soon")), None);
        assert_eq!(at(Some("-3")), None);
    }

    /// C11: a whole-batch failure's reason names the status and a Lambda
    /// error payload's type and message.
    #[test]
    fn c11_answer_failure_reasons() {
        let payload = br#"{"errorMessage":"boom","errorType":"ValueError"}"#;
        assert_eq!(
            answer_failure_reason(FailureKind::FunctionError, 200, payload),
            "function error (HTTP 200): ValueError: boom"
        );
        assert_eq!(
            answer_failure_reason(FailureKind::Status(502), 502, b"<html>"),
            "HTTP 502"
        );
        assert_eq!(
            answer_failure_reason(
                FailureKind::Status(500),
                500,
                br#"{"errorMessage":"db down"}"#
            ),
            "HTTP 500: db down"
        );
        let long = format!(r#"{{"errorMessage":"{}"}}"#, "x".repeat(2000));
        let cut = answer_failure_reason(FailureKind::Status(500), 500, long.as_bytes());
        assert_eq!(cut.chars().count(), MAX_REASON_CHARS);
    }

    /// C2: without ReportBatchItemFailures the body is not read.
    #[test]
    fn c2_body_ignored_without_item_reporting() {
        let ids: BTreeSet<&str> = ["a"].into();
        let body = br#"{"batchItemFailures":[{"itemIdentifier":"a"}]}"#;
        assert_eq!(read_success(body, &ids, false), Outcome::AllSucceeded);
    }
}
