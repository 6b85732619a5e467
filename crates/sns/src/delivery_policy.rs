//! HTTP/S delivery policies (rule N6): a topic's `DeliveryPolicy` and a
//! subscription's, checked, stored as SNS stores them (normalized), the
//! `EffectiveDeliveryPolicy` SNS shows (every field filled from SNS's
//! defaults), and the retry schedule a failed delivery follows.
//!
//! Recorded answers (LocalStack test_sns.py,
//! `test_topic_delivery_policy_crud`, `test_subscribe_external_http_endpoint_content_type`)
//! give the stored and effective forms and their member order; the
//! limits are the SNS developer guide's ("Creating an HTTP/S delivery
//! policy"), and the one recorded refusal's words (numRetries over 100).

use std::time::Duration;

use serde_json::{Map, Value, json};

/// Why a delivery policy is refused: the text that follows
/// `DeliveryPolicy: ` in SNS's answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PolicyError(pub String);

/// The most retries a policy may ask for.
pub const MAX_RETRIES: u64 = 100;

/// The longest delay a policy may ask for, and the longest all retries
/// together may take.
pub const MAX_DELAY_SECS: u64 = 3600;

/// The retry policy SNS applies when none is set.
fn default_retry_policy() -> Value {
    json!({
        "minDelayTarget": 20,
        "maxDelayTarget": 20,
        "numRetries": 3,
        "numMaxDelayRetries": 0,
        "numNoDelayRetries": 0,
        "numMinDelayRetries": 0,
        "backoffFunction": "linear"
    })
}

/// The request policy SNS applies when none is set.
fn default_request_policy() -> Value {
    json!({"headerContentType": "text/plain; charset=UTF-8"})
}

/// A topic's `DeliveryPolicy` as SNS keeps it: checked, null sub-policies
/// dropped, `disableSubscriptionOverrides` added (false) to each protocol's.
pub fn normalize_topic_policy(text: &str) -> Result<String, PolicyError> {
    let value = parse(text)?;
    let Value::Object(protocols) = value else {
        return Err(PolicyError("must be a JSON object".into()));
    };
    let mut out = Map::new();
    for (protocol, policy) in protocols {
        if protocol != "http" && protocol != "https" {
            return Err(PolicyError(format!("Unexpected JSON member: {protocol}")));
        }
        let Value::Object(policy) = policy else {
            return Err(PolicyError(format!("{protocol} must be a JSON object")));
        };
        let mut normal = Map::new();
        for key in [
            "defaultHealthyRetryPolicy",
            "disableSubscriptionOverrides",
            "defaultThrottlePolicy",
            "defaultRequestPolicy",
        ] {
            match policy.get(key) {
                None | Some(Value::Null) => {}
                Some(v) => {
                    check_member(&format!("{protocol}.{key}"), key, v)?;
                    normal.insert(key.to_string(), v.clone());
                }
            }
            if key == "disableSubscriptionOverrides" && !normal.contains_key(key) {
                normal.insert(key.to_string(), Value::Bool(false));
            }
        }
        if let Some(unknown) = policy.keys().find(|k| {
            !matches!(
                k.as_str(),
                "defaultHealthyRetryPolicy"
                    | "disableSubscriptionOverrides"
                    | "defaultThrottlePolicy"
                    | "defaultRequestPolicy"
            )
        }) {
            return Err(PolicyError(format!("Unexpected JSON member: {unknown}")));
        }
        out.insert(protocol, Value::Object(normal));
    }
    Ok(Value::Object(out).to_string())
}

/// A topic's `EffectiveDeliveryPolicy`: its policy (if any) over SNS's
/// defaults, field by field.
pub fn effective_topic_policy(stored: Option<&str>) -> String {
    let stored: Map<String, Value> = stored
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let http = stored.get("http").and_then(Value::as_object);
    let mut retry = default_retry_policy();
    if let (Some(Value::Object(given)), Some(defaults)) = (
        http.and_then(|h| h.get("defaultHealthyRetryPolicy")),
        retry.as_object_mut(),
    ) {
        for (k, v) in given {
            defaults.insert(k.clone(), v.clone());
        }
    }
    let mut out = Map::new();
    out.insert("defaultHealthyRetryPolicy".into(), retry);
    out.insert(
        "disableSubscriptionOverrides".into(),
        http.and_then(|h| h.get("disableSubscriptionOverrides"))
            .cloned()
            .unwrap_or(Value::Bool(false)),
    );
    if let Some(throttle) = http.and_then(|h| h.get("defaultThrottlePolicy")) {
        out.insert("defaultThrottlePolicy".into(), throttle.clone());
    }
    out.insert(
        "defaultRequestPolicy".into(),
        http.and_then(|h| h.get("defaultRequestPolicy"))
            .cloned()
            .unwrap_or_else(default_request_policy),
    );
    json!({ "http": out }).to_string()
}

/// A subscription's `DeliveryPolicy` as SNS keeps it: the five members in
/// SNS's order, the missing ones `null` (`guaranteed`: false).
pub fn normalize_subscription_policy(text: &str) -> Result<String, PolicyError> {
    let value = parse(text)?;
    let Value::Object(given) = value else {
        return Err(PolicyError("must be a JSON object".into()));
    };
    const KEYS: [&str; 5] = [
        "healthyRetryPolicy",
        "sicklyRetryPolicy",
        "throttlePolicy",
        "requestPolicy",
        "guaranteed",
    ];
    if let Some(unknown) = given.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(PolicyError(format!("Unexpected JSON member: {unknown}")));
    }
    let mut out = Map::new();
    for key in KEYS {
        let value = given.get(key).cloned().unwrap_or(if key == "guaranteed" {
            Value::Bool(false)
        } else {
            Value::Null
        });
        if !value.is_null() {
            check_member(key, key, &value)?;
        }
        out.insert(key.to_string(), value);
    }
    Ok(Value::Object(out).to_string())
}

/// A subscription's `EffectiveDeliveryPolicy`: its policy, with the retry
/// and request policies it leaves out taken from its topic's effective
/// policy.
pub fn effective_subscription_policy(stored: Option<&str>, topic_effective: &str) -> String {
    let topic: Value = serde_json::from_str(topic_effective).unwrap_or(Value::Null);
    let topic_http = &topic["http"];
    let normalized = stored
        .and_then(|s| normalize_subscription_policy(s).ok())
        .unwrap_or_else(|| normalize_subscription_policy("{}").unwrap_or_else(|_| "{}".into()));
    let mut policy: Map<String, Value> = serde_json::from_str(&normalized).unwrap_or_default();
    for (own, from_topic) in [
        ("healthyRetryPolicy", "defaultHealthyRetryPolicy"),
        ("requestPolicy", "defaultRequestPolicy"),
    ] {
        if policy.get(own).is_none_or(Value::is_null) {
            policy.insert(own.into(), topic_http[from_topic].clone());
        } else if own == "healthyRetryPolicy"
            && let (Some(Value::Object(given)), Value::Object(defaults)) =
                (policy.get(own).cloned(), default_retry_policy())
        {
            let mut filled = defaults;
            for (k, v) in given {
                filled.insert(k, v);
            }
            policy.insert(own.into(), Value::Object(filled));
        }
    }
    Value::Object(policy).to_string()
}

fn parse(text: &str) -> Result<Value, PolicyError> {
    serde_json::from_str(text).map_err(|e| PolicyError(format!("failed to parse JSON. {e}")))
}

/// Checks one member of a policy; `path` names it in the refusal.
fn check_member(path: &str, key: &str, value: &Value) -> Result<(), PolicyError> {
    match key {
        "defaultHealthyRetryPolicy" | "healthyRetryPolicy" | "sicklyRetryPolicy" => {
            check_retry_policy(path, value)
        }
        "disableSubscriptionOverrides" | "guaranteed" => value
            .is_boolean()
            .then_some(())
            .ok_or_else(|| PolicyError(format!("{path} must be a boolean"))),
        "defaultThrottlePolicy" | "throttlePolicy" => {
            let rate = value.get("maxReceivesPerSecond").and_then(Value::as_u64);
            match rate {
                Some(r) if r >= 1 => Ok(()),
                _ => Err(PolicyError(format!(
                    "{path}.maxReceivesPerSecond must be greater than or equal to 1"
                ))),
            }
        }
        "defaultRequestPolicy" | "requestPolicy" => value
            .get("headerContentType")
            .is_none_or(Value::is_string)
            .then_some(())
            .ok_or_else(|| PolicyError(format!("{path}.headerContentType must be a string"))),
        _ => Ok(()),
    }
}

fn check_retry_policy(path: &str, value: &Value) -> Result<(), PolicyError> {
    let Value::Object(policy) = value else {
        return Err(PolicyError(format!("{path} must be a JSON object")));
    };
    let number = |key: &str| policy.get(key).and_then(Value::as_u64);
    for key in [
        "minDelayTarget",
        "maxDelayTarget",
        "numRetries",
        "numNoDelayRetries",
        "numMinDelayRetries",
        "numMaxDelayRetries",
    ] {
        if policy.get(key).is_some() && number(key).is_none() {
            return Err(PolicyError(format!(
                "{path}.{key} must be a non-negative integer"
            )));
        }
    }
    let retries = number("numRetries").unwrap_or(3);
    if retries > MAX_RETRIES {
        return Err(PolicyError(format!(
            "{path}.numRetries must be less than or equal to {MAX_RETRIES}"
        )));
    }
    let min = number("minDelayTarget").unwrap_or(20);
    let max = number("maxDelayTarget").unwrap_or(20);
    if min < 1 {
        return Err(PolicyError(format!(
            "{path}.minDelayTarget must be greater than or equal to 1"
        )));
    }
    if max > MAX_DELAY_SECS {
        return Err(PolicyError(format!(
            "{path}.maxDelayTarget must be less than or equal to {MAX_DELAY_SECS}"
        )));
    }
    if min > max {
        return Err(PolicyError(format!(
            "{path}.minDelayTarget must be less than or equal to maxDelayTarget"
        )));
    }
    let phases = number("numNoDelayRetries").unwrap_or(0)
        + number("numMinDelayRetries").unwrap_or(0)
        + number("numMaxDelayRetries").unwrap_or(0);
    if phases > retries {
        return Err(PolicyError(format!(
            "{path}.numRetries must be greater than or equal to the sum of numNoDelayRetries, numMinDelayRetries and numMaxDelayRetries"
        )));
    }
    if let Some(f) = policy.get("backoffFunction")
        && !matches!(
            f.as_str(),
            Some("linear" | "arithmetic" | "geometric" | "exponential")
        )
    {
        return Err(PolicyError(format!(
            "{path}.backoffFunction must be one of linear, arithmetic, geometric, exponential"
        )));
    }
    let schedule = RetrySchedule::from_value(value);
    if schedule.total() > Duration::from_secs(MAX_DELAY_SECS) {
        return Err(PolicyError(format!(
            "{path}: the retries together must take at most {MAX_DELAY_SECS} seconds"
        )));
    }
    Ok(())
}

/// How a failed delivery is retried: SNS's four phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySchedule {
    min: u64,
    max: u64,
    retries: u64,
    no_delay: u64,
    min_delay: u64,
    max_delay: u64,
    backoff: Backoff,
}

/// How the backoff phase's delays grow from the least to the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backoff {
    Linear,
    Arithmetic,
    Geometric,
    Exponential,
}

impl RetrySchedule {
    /// The schedule of a retry policy (an effective one: every field set;
    /// missing fields take SNS's defaults).
    pub fn from_value(policy: &Value) -> Self {
        let number =
            |key: &str, default: u64| policy.get(key).and_then(Value::as_u64).unwrap_or(default);
        RetrySchedule {
            min: number("minDelayTarget", 20),
            max: number("maxDelayTarget", 20),
            retries: number("numRetries", 3),
            no_delay: number("numNoDelayRetries", 0),
            min_delay: number("numMinDelayRetries", 0),
            max_delay: number("numMaxDelayRetries", 0),
            backoff: match policy.get("backoffFunction").and_then(Value::as_str) {
                Some("arithmetic") => Backoff::Arithmetic,
                Some("geometric") => Backoff::Geometric,
                Some("exponential") => Backoff::Exponential,
                _ => Backoff::Linear,
            },
        }
    }

    /// How many retries follow the first attempt.
    pub fn retries(&self) -> u64 {
        self.retries
    }

    /// The wait before retry `n` (1-based); `None` past the last retry.
    /// Immediate retries first, then `minDelayTarget` apart, then the
    /// backoff from `minDelayTarget` to `maxDelayTarget`, then
    /// `maxDelayTarget` apart.
    pub fn delay(&self, n: u64) -> Option<Duration> {
        if n == 0 || n > self.retries {
            return None;
        }
        let backoff_count = self.retries - self.no_delay - self.min_delay - self.max_delay;
        let secs = if n <= self.no_delay {
            0
        } else if n <= self.no_delay + self.min_delay {
            self.min
        } else if n <= self.no_delay + self.min_delay + backoff_count {
            let i = n - self.no_delay - self.min_delay;
            self.backoff_delay(i, backoff_count)
        } else {
            self.max
        };
        Some(Duration::from_secs(secs))
    }

    /// Delay `i` of `count` in the backoff phase (1-based).
    fn backoff_delay(&self, i: u64, count: u64) -> u64 {
        if count <= 1 || self.max == self.min {
            return self.min;
        }
        let (min, max) = (self.min as f64, self.max as f64);
        let t = (i - 1) as f64 / (count - 1) as f64;
        let secs = match self.backoff {
            Backoff::Linear => min + (max - min) * t,
            Backoff::Arithmetic => min + (max - min) * t * t,
            Backoff::Geometric => min * (max / min).powf(t),
            Backoff::Exponential => min + (max - min) * (2f64.powf(10.0 * t) - 1.0) / 1023.0,
        };
        secs.round().clamp(min, max) as u64
    }

    /// How long all retries together wait.
    pub fn total(&self) -> Duration {
        (1..=self.retries).filter_map(|n| self.delay(n)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N6: a topic's policy is kept with `disableSubscriptionOverrides`
    /// added, and its effective policy fills every field from SNS's
    /// defaults (recorded: LocalStack test_topic_delivery_policy_crud).
    #[test]
    fn n6_topic_policies_as_sns_keeps_and_shows_them() {
        let stored = normalize_topic_policy(
            r#"{"http":{"defaultRequestPolicy":{"headerContentType":"application/json"}}}"#,
        )
        .unwrap();
        assert_eq!(
            stored,
            r#"{"http":{"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"application/json"}}}"#
        );
        let stored = normalize_topic_policy(
            r#"{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1}}}"#,
        )
        .unwrap();
        assert_eq!(
            stored,
            r#"{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1},"disableSubscriptionOverrides":false}}"#
        );
        assert_eq!(
            effective_topic_policy(Some(&stored)),
            r#"{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}"#
        );
        assert_eq!(
            normalize_topic_policy(r#"{"http":{"defaultHealthyRetryPolicy":null}}"#).unwrap(),
            r#"{"http":{"disableSubscriptionOverrides":false}}"#
        );
        assert_eq!(
            effective_topic_policy(None),
            r#"{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}"#
        );
    }

    /// N6: more than 100 retries are refused in SNS's words (recorded:
    /// ballerina's SNS connector against AWS).
    #[test]
    fn n6_too_many_retries_are_refused() {
        let e =
            normalize_topic_policy(r#"{"http":{"defaultHealthyRetryPolicy":{"numRetries":300}}}"#)
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "http.defaultHealthyRetryPolicy.numRetries must be less than or equal to 100"
        );
        assert!(
            normalize_topic_policy("{nope")
                .unwrap_err()
                .0
                .starts_with("failed to parse JSON.")
        );
        assert!(normalize_topic_policy(r#"{"http":{"throttlePolicy":{}}}"#).is_err());
    }

    /// N6: a subscription's policy is kept with its five members, and its
    /// effective policy takes what it leaves out from the topic's
    /// (recorded: LocalStack test_subscribe_external_http_endpoint_content_type).
    #[test]
    fn n6_subscription_policies_as_sns_keeps_and_shows_them() {
        let stored =
            normalize_subscription_policy(r#"{"requestPolicy":{"headerContentType":"text/csv"}}"#)
                .unwrap();
        assert_eq!(
            stored,
            r#"{"healthyRetryPolicy":null,"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/csv"},"guaranteed":false}"#
        );
        assert_eq!(
            effective_subscription_policy(Some(&stored), &effective_topic_policy(None)),
            r#"{"healthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/csv"},"guaranteed":false}"#
        );
    }

    /// N6: SNS's default, 3 retries 20 s apart; the phases in order; the
    /// backoff from the least to the most delay.
    #[test]
    fn n6_retry_schedules() {
        let default = RetrySchedule::from_value(&default_retry_policy());
        let delays: Vec<_> = (1..=4).map(|n| default.delay(n)).collect();
        let s = |n| Some(Duration::from_secs(n));
        assert_eq!(delays, [s(20), s(20), s(20), None]);
        let doc = json!({"minDelayTarget":1,"maxDelayTarget":60,"numRetries":50,"numNoDelayRetries":3,
            "numMinDelayRetries":2,"numMaxDelayRetries":35,"backoffFunction":"exponential"});
        let schedule = RetrySchedule::from_value(&doc);
        assert_eq!(schedule.delay(1), s(0));
        assert_eq!(schedule.delay(3), s(0));
        assert_eq!(schedule.delay(4), s(1));
        assert_eq!(schedule.delay(6), s(1), "first of the backoff phase");
        assert_eq!(schedule.delay(15), s(60), "last of the backoff phase");
        assert_eq!(schedule.delay(50), s(60));
        assert_eq!(schedule.delay(51), None);
        let backoff: Vec<u64> = (6..=15)
            .map(|n| schedule.delay(n).unwrap().as_secs())
            .collect();
        assert!(backoff.windows(2).all(|w| w[0] <= w[1]), "{backoff:?}");
    }
}
