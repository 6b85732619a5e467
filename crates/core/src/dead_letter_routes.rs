//! Failure classes and the dead-letter queue each one goes to (sluice's
//! `SluiceDeadLetterRoutes` attribute, rule X7).
//!
//! The dead-letter guides in the seeds advise one DLQ per kind of failure:
//! a validation error will fail every retry and should be set aside at
//! once, while an outage downstream deserves its retries, and a fix for one
//! kind should replay exactly that kind. A consumer names the kind when it
//! fails a message (`FailureClass` on NackMessage); a route sends a message
//! whose failures of that class reach the route's count to the route's DLQ.
//! Failures of no routed class (timeouts, unclassified nacks) follow
//! `RedrivePolicy` as plain SQS does.

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, SqsError};
use crate::redrive_policy::looks_like_queue_arn;

/// The queue attribute that holds the routes.
pub const ATTRIBUTE: &str = "SluiceDeadLetterRoutes";

/// Most routes one queue may have.
pub const MAX_ROUTES: usize = 10;

/// Longest failure class name.
pub const MAX_CLASS_LEN: usize = 64;

/// Most `reasonContains` texts one route may have.
pub const MAX_REASON_TEXTS: usize = 10;

/// Longest `reasonContains` text, in characters.
pub const MAX_REASON_TEXT_LEN: usize = 256;

/// Is `class` a valid failure class name (`[A-Za-z0-9_-]{1,64}`)?
pub fn is_failure_class(class: &str) -> bool {
    (1..=MAX_CLASS_LEN).contains(&class.len())
        && class
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// One class's dead-letter queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetterRoute {
    /// The failure class the route takes.
    pub class: String,
    /// ARN of the class's dead-letter queue.
    pub dead_letter_target_arn: String,
    /// Failures of this class after which the message moves (1: at once).
    pub max_receive_count: u32,
    /// A failure given without a class takes this route's class when its
    /// reason contains one of these texts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reason_contains: Vec<String>,
}

/// A queue's routes, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeadLetterRoutes(pub Vec<DeadLetterRoute>);

impl DeadLetterRoutes {
    /// Parses and checks a routes document: a JSON list of
    /// `{"class", "deadLetterTargetArn", "maxReceiveCount"}`, each class once.
    pub fn parse(doc: &str) -> Result<Self, SqsError> {
        let bad = |why: &str| {
            SqsError::new(
                ErrorCode::InvalidAttributeValue,
                format!("Value {doc} for parameter {ATTRIBUTE} is invalid. Reason: {why}"),
            )
        };
        let value: serde_json::Value =
            serde_json::from_str(doc).map_err(|_| bad("It is not a valid JSON list."))?;
        let items = value
            .as_array()
            .ok_or_else(|| bad("It is not a valid JSON list."))?;
        if items.len() > MAX_ROUTES {
            return Err(bad(&format!("At most {MAX_ROUTES} routes are allowed.")));
        }
        let mut routes: Vec<DeadLetterRoute> = Vec::with_capacity(items.len());
        for item in items {
            let obj = item
                .as_object()
                .ok_or_else(|| bad("Each route must be a JSON map."))?;
            if let Some(key) = obj.keys().find(|k| {
                !matches!(
                    k.as_str(),
                    "class" | "deadLetterTargetArn" | "maxReceiveCount" | "reasonContains"
                )
            }) {
                return Err(bad(&format!(
                    "Only following attributes are supported: [class, deadLetterTargetArn, maxReceiveCount, reasonContains]. Found {key}"
                )));
            }
            let class = obj
                .get("class")
                .and_then(|v| v.as_str())
                .ok_or_else(|| bad("A route does not contain mandatory attribute: class."))?;
            if !is_failure_class(class) {
                return Err(bad(&format!(
                    "Invalid class {class}: 1 to {MAX_CLASS_LEN} letters, digits, '-' or '_'."
                )));
            }
            if routes.iter().any(|r| r.class == class) {
                return Err(bad(&format!("Class {class} is routed twice.")));
            }
            let arn = obj
                .get("deadLetterTargetArn")
                .and_then(|v| v.as_str())
                .ok_or_else(|| {
                    bad("A route does not contain mandatory attribute: deadLetterTargetArn.")
                })?;
            if !looks_like_queue_arn(arn) {
                return Err(bad("Invalid value for deadLetterTargetArn."));
            }
            let count = match obj.get("maxReceiveCount") {
                Some(serde_json::Value::Number(n)) => n.as_u64(),
                Some(serde_json::Value::String(s)) => s.parse::<u64>().ok(),
                None => {
                    return Err(bad(
                        "A route does not contain mandatory attribute: maxReceiveCount.",
                    ));
                }
                _ => None,
            }
            .filter(|n| (1..=1000).contains(n))
            .ok_or_else(|| {
                bad("Invalid value for maxReceiveCount: valid values are from 1 to 1000 both inclusive.")
            })?;
            let reason_contains = reason_texts(obj.get("reasonContains")).ok_or_else(|| {
                bad(&format!(
                    "reasonContains must be a text or a list of at most {MAX_REASON_TEXTS} texts of 1 to {MAX_REASON_TEXT_LEN} characters."
                ))
            })?;
            routes.push(DeadLetterRoute {
                class: class.to_string(),
                dead_letter_target_arn: arn.to_string(),
                max_receive_count: count as u32,
                reason_contains,
            });
        }
        Ok(Self(routes))
    }

    /// The normalised document, as GetQueueAttributes shows it.
    pub fn to_document(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_default()
    }

    /// The route of `class`, if it has one.
    pub fn route_of(&self, class: &str) -> Option<&DeadLetterRoute> {
        self.0.iter().find(|r| r.class == class)
    }

    /// The class a failure given without one takes from its reason: that
    /// of the first route (in the order given) one of whose
    /// `reasonContains` texts the reason contains.
    pub fn class_of_reason(&self, reason: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|r| {
                r.reason_contains
                    .iter()
                    .any(|t| reason.contains(t.as_str()))
            })
            .map(|r| r.class.as_str())
    }
}

/// The ARNs of the dead-letter queues a queue sends messages to: its
/// RedrivePolicy's target first, then its routes' targets, each once.
/// Owned or borrowed, as the caller holds them.
pub fn dead_letter_targets<T: PartialEq>(
    redrive_target: Option<T>,
    route_targets: impl IntoIterator<Item = T>,
) -> Vec<T> {
    let mut targets: Vec<T> = redrive_target.into_iter().collect();
    for target in route_targets {
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    targets
}

/// `reasonContains` as given: absent, one text or a list of texts.
fn reason_texts(value: Option<&serde_json::Value>) -> Option<Vec<String>> {
    let texts: Vec<String> = match value {
        None => return Some(Vec::new()),
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()?,
        Some(_) => return None,
    };
    let fits = |t: &String| (1..=MAX_REASON_TEXT_LEN).contains(&t.chars().count());
    (texts.len() <= MAX_REASON_TEXTS && texts.iter().all(fits)).then_some(texts)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DLQ: &str = "arn:aws:sqs:us-east-1:000000000000:invalid-dlq";

    #[test]
    fn x7_routes_are_checked_and_normalised() {
        let doc = format!(
            r#"[{{"class":"validation","deadLetterTargetArn":"{DLQ}","maxReceiveCount":"1"}},
                {{"maxReceiveCount":5,"class":"infra_down","deadLetterTargetArn":"{DLQ}"}}]"#
        );
        let routes = DeadLetterRoutes::parse(&doc).unwrap();
        assert_eq!(routes.route_of("validation").unwrap().max_receive_count, 1);
        assert_eq!(routes.route_of("infra_down").unwrap().max_receive_count, 5);
        assert!(routes.route_of("timeout").is_none());
        assert_eq!(
            routes.to_document(),
            format!(
                r#"[{{"class":"validation","deadLetterTargetArn":"{DLQ}","maxReceiveCount":1}},{{"class":"infra_down","deadLetterTargetArn":"{DLQ}","maxReceiveCount":5}}]"#
            )
        );
        assert_eq!(
            DeadLetterRoutes::parse(&routes.to_document()).unwrap(),
            routes
        );
    }

    #[test]
    fn x7_bad_routes_are_invalid_attribute_values() {
        let route = |class: &str, arn: &str, count: &str| {
            format!(r#"{{"class":{class},"deadLetterTargetArn":{arn},"maxReceiveCount":{count}}}"#)
        };
        let ok = route(r#""a""#, &format!("\"{DLQ}\""), "3");
        let eleven = vec![ok.clone(); 11].join(",");
        for bad in [
            "nope".to_string(),
            "{}".to_string(),
            format!("[{}]", route(r#""a b""#, &format!("\"{DLQ}\""), "3")),
            format!(
                "[{}]",
                route(
                    &format!("\"{}\"", "c".repeat(65)),
                    &format!("\"{DLQ}\""),
                    "3"
                )
            ),
            format!("[{}]", route(r#""a""#, r#""not-an-arn""#, "3")),
            format!("[{}]", route(r#""a""#, &format!("\"{DLQ}\""), "0")),
            format!("[{}]", route(r#""a""#, &format!("\"{DLQ}\""), "1001")),
            format!("[{ok},{ok}]"),
            format!("[{eleven}]"),
            r#"[{"class":"a","maxReceiveCount":1}]"#.to_string(),
            format!(r#"[{{"class":"a","deadLetterTargetArn":"{DLQ}","maxReceiveCount":1,"x":1}}]"#),
        ] {
            assert_eq!(
                DeadLetterRoutes::parse(&bad).unwrap_err().code,
                ErrorCode::InvalidAttributeValue,
                "{bad}"
            );
        }
        assert!(DeadLetterRoutes::parse("[]").unwrap().0.is_empty());
        let with_texts = |texts: &str| {
            DeadLetterRoutes::parse(&format!(
                r#"[{{"class":"a","deadLetterTargetArn":"{DLQ}","maxReceiveCount":1,"reasonContains":{texts}}}]"#
            ))
            .map(|r| r.0[0].reason_contains.clone())
        };
        assert_eq!(with_texts("[]"), Ok(Vec::new()), "an empty list is no rule");
        let many = format!("[{}]", [r#""x""#; 11].join(","));
        let long = format!(r#""{}""#, "y".repeat(257));
        for bad in [r#""""#, "7", r#"["a", 1]"#, &many, &long] {
            assert!(with_texts(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn x7_a_reason_picks_the_class_of_the_first_route_that_names_it() {
        let doc = format!(
            r#"[{{"class":"timeout","deadLetterTargetArn":"{DLQ}","maxReceiveCount":3,"reasonContains":"timed out"}},
                {{"class":"server","deadLetterTargetArn":"{DLQ}","maxReceiveCount":5,"reasonContains":["HTTP 5","timed out"]}},
                {{"class":"validation","deadLetterTargetArn":"{DLQ}","maxReceiveCount":1}}]"#
        );
        let routes = DeadLetterRoutes::parse(&doc).unwrap();
        assert_eq!(
            routes.class_of_reason("consumer w: handler timed out after 30 s"),
            Some("timeout")
        );
        assert_eq!(
            routes.class_of_reason("consumer w: HTTP 503"),
            Some("server")
        );
        assert_eq!(routes.class_of_reason("invalid JSON"), None);
        assert_eq!(
            DeadLetterRoutes::parse(&routes.to_document()).unwrap(),
            routes
        );
        let doc = routes.to_document();
        assert!(
            doc.contains(r#""maxReceiveCount":3,"reasonContains":["timed out"]}"#),
            "{doc}"
        );
        assert!(
            doc.ends_with(r#""maxReceiveCount":1}]"#),
            "no empty list shown: {doc}"
        );
    }

    #[test]
    fn x7_class_names() {
        for good in ["validation", "infra-down", "E_42", &"x".repeat(64)] {
            assert!(is_failure_class(good), "{good}");
        }
        for bad in ["", "a b", "é", "a.b", &"x".repeat(65)] {
            assert!(!is_failure_class(bad), "{bad}");
        }
    }
}
