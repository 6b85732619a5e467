//! Retry backoff as a queue policy (sluice's `SluiceRetryBackoff` attribute).
//!
//! Seed 000 explains why backoff written inside a consumer fails: the
//! consumer sleeps while holding the message, its visibility timeout runs out
//! and another consumer gets the message anyway. Here the queue itself makes
//! each failed attempt wait longer before the message is visible again: a
//! message received for the n-th time stays hidden for the visibility timeout
//! plus `min(max, initial × 2^(n-1))`, with "equal jitter" (a uniform draw in
//! the upper half of that delay) so that messages failed together do not
//! come back together. A successful consumer never sees the difference:
//! it deletes the message before the visibility timeout ends.

use crate::error::{ErrorCode, SqsError};
use crate::limits::MAX_VISIBILITY_TIMEOUT;

/// The queue attribute that holds the policy.
pub const ATTRIBUTE: &str = "SluiceRetryBackoff";

/// A parsed retry backoff policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryBackoff {
    /// Delay after the first failed attempt, seconds (1–43,200).
    pub initial_delay_seconds: u32,
    /// Cap on the delay, seconds (initial–43,200).
    pub max_delay_seconds: u32,
    /// Spread each delay over its upper half at random.
    pub jitter: bool,
}

impl RetryBackoff {
    /// Parses and checks a policy document:
    /// `{"initialDelaySeconds": 2, "maxDelaySeconds": 300, "jitter": true}`
    /// (`jitter` defaults to true).
    pub fn parse(doc: &str) -> Result<Self, SqsError> {
        let bad = |why: &str| {
            SqsError::new(
                ErrorCode::InvalidAttributeValue,
                format!("Value {doc} for parameter {ATTRIBUTE} is invalid. Reason: {why}"),
            )
        };
        let value: serde_json::Value =
            serde_json::from_str(doc).map_err(|_| bad("It is not a valid JSON map."))?;
        let obj = value
            .as_object()
            .ok_or_else(|| bad("It is not a valid JSON map."))?;
        for key in obj.keys() {
            if !matches!(
                key.as_str(),
                "initialDelaySeconds" | "maxDelaySeconds" | "jitter"
            ) {
                return Err(bad(&format!(
                    "Only following attributes are supported: [initialDelaySeconds, maxDelaySeconds, jitter]. Found {key}"
                )));
            }
        }
        let seconds = |key: &str, min: u32| -> Result<u32, SqsError> {
            let n = match obj.get(key) {
                Some(serde_json::Value::Number(n)) => n.as_u64(),
                Some(serde_json::Value::String(s)) => s.parse::<u64>().ok(),
                None => {
                    return Err(bad(&format!(
                        "It does not contain mandatory attribute: {key}."
                    )));
                }
                _ => None,
            };
            n.filter(|n| (u64::from(min)..=u64::from(MAX_VISIBILITY_TIMEOUT)).contains(n))
                .map(|n| n as u32)
                .ok_or_else(|| {
                    bad(&format!(
                        "{key} must be an integer from {min} to {MAX_VISIBILITY_TIMEOUT}."
                    ))
                })
        };
        let initial_delay_seconds = seconds("initialDelaySeconds", 1)?;
        let max_delay_seconds = seconds("maxDelaySeconds", initial_delay_seconds)?;
        let jitter = match obj.get("jitter") {
            None => true,
            Some(serde_json::Value::Bool(b)) => *b,
            Some(serde_json::Value::String(s)) if s == "true" || s == "false" => s == "true",
            Some(_) => return Err(bad("jitter must be true or false.")),
        };
        Ok(Self {
            initial_delay_seconds,
            max_delay_seconds,
            jitter,
        })
    }

    /// The normalised document, as GetQueueAttributes shows it.
    pub fn to_document(&self) -> String {
        serde_json::json!({
            "initialDelaySeconds": self.initial_delay_seconds,
            "maxDelaySeconds": self.max_delay_seconds,
            "jitter": self.jitter,
        })
        .to_string()
    }

    /// The longest delay for the attempt that is the `receive_count`-th
    /// receive of a message (1 for the first), in milliseconds.
    pub fn ceiling_ms(&self, receive_count: u32) -> u64 {
        let doublings = receive_count.saturating_sub(1).min(32);
        let delay = u64::from(self.initial_delay_seconds).saturating_mul(1u64 << doublings);
        delay.min(u64::from(self.max_delay_seconds)) * 1000
    }

    /// The delay for the `receive_count`-th attempt of the message at
    /// position `seq`, received at `now`: the jitter is drawn from those, so
    /// a given history always gives the same delays (engines and tests stay
    /// deterministic) while messages failed together still spread out.
    pub fn delay_for(&self, receive_count: u32, seq: u64, now: u64) -> u64 {
        self.delay_ms(
            receive_count,
            spread(seq ^ now.rotate_left(17) ^ u64::from(receive_count)),
        )
    }

    /// The delay for that attempt, in milliseconds. `draw` is a uniform
    /// random number the caller supplies (any `u64`), so the rule stays pure
    /// and each engine may draw it its own way.
    pub fn delay_ms(&self, receive_count: u32, draw: u64) -> u64 {
        let ceiling = self.ceiling_ms(receive_count);
        if !self.jitter {
            return ceiling;
        }
        let half = ceiling / 2;
        ceiling - half + draw % (half + 1)
    }
}

/// A cheap, well-spread hash (splitmix64).
fn spread(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_backoff_doubles_up_to_the_cap() {
        let p =
            RetryBackoff::parse(r#"{"initialDelaySeconds":2,"maxDelaySeconds":30,"jitter":false}"#)
                .unwrap();
        let delays: Vec<u64> = (1..=6).map(|n| p.delay_ms(n, 12345)).collect();
        assert_eq!(delays, [2000, 4000, 8000, 16000, 30000, 30000]);
        assert_eq!(p.delay_ms(u32::MAX, 0), 30000);
    }

    #[test]
    fn x_backoff_jitter_stays_in_the_upper_half() {
        let p = RetryBackoff::parse(r#"{"initialDelaySeconds":10,"maxDelaySeconds":10}"#).unwrap();
        assert!(p.jitter);
        let mut seen = std::collections::BTreeSet::new();
        for draw in 0..20_000u64 {
            let d = p.delay_ms(1, draw.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            assert!((5000..=10000).contains(&d), "{d}");
            seen.insert(d / 1000);
        }
        assert!(seen.len() > 3, "jitter spreads the delays: {seen:?}");
    }

    #[test]
    fn x_backoff_document_is_checked_and_normalised() {
        let p = RetryBackoff::parse(r#"{"initialDelaySeconds":"3","maxDelaySeconds":60}"#).unwrap();
        assert_eq!(
            p.to_document(),
            r#"{"initialDelaySeconds":3,"maxDelaySeconds":60,"jitter":true}"#
        );
        for bad in [
            "nope",
            "[]",
            r#"{"maxDelaySeconds":60}"#,
            r#"{"initialDelaySeconds":0,"maxDelaySeconds":60}"#,
            r#"{"initialDelaySeconds":10,"maxDelaySeconds":5}"#,
            r#"{"initialDelaySeconds":1,"maxDelaySeconds":43201}"#,
            r#"{"initialDelaySeconds":1,"maxDelaySeconds":2,"jitter":"sometimes"}"#,
            r#"{"initialDelaySeconds":1,"maxDelaySeconds":2,"factor":3}"#,
        ] {
            assert_eq!(
                RetryBackoff::parse(bad).unwrap_err().code,
                ErrorCode::InvalidAttributeValue,
                "{bad}"
            );
        }
    }
}
