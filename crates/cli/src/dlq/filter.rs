//! The message filters of `dlq peek`, `redrive` and `export`: the filter
//! parameters of PeekMessages and RedriveMessages (rules X1, X3).

use clap::Args;
use serde_json::{Map, Value, json};

use crate::timefmt;
use sluice_client::Client;

/// Which messages a command looks at.
#[derive(Args, Debug, Default, Clone)]
pub struct FilterArgs {
    /// Only messages sent at or after TIME: RFC 3339 (2026-01-31T10:00:00Z),
    /// a date (2026-01-31), an age (30m, 2h, 7d: that long ago) or epoch ms.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub since: Option<u64>,
    /// Only messages sent before TIME (same forms as --since).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub until: Option<u64>,
    /// Only messages with this message attribute string value.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_attribute)]
    pub attribute: Option<(String, String)>,
    /// Only messages whose last failure reason (NackMessage) contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Only messages whose body contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub body_contains: Option<String>,
    /// Only messages dead-lettered from this queue (name, URL or ARN).
    #[arg(long, value_name = "QUEUE")]
    pub source: Option<String>,
}

fn parse_time(text: &str) -> Result<u64, String> {
    timefmt::parse_time_arg(text, timefmt::now_ms())
}

fn parse_attribute(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() && !value.is_empty() => {
            Ok((name.to_string(), value.to_string()))
        }
        _ => Err(format!("{text:?} is not NAME=VALUE")),
    }
}

impl FilterArgs {
    /// Whether no filter is given.
    pub fn is_empty(&self) -> bool {
        self.since.is_none()
            && self.until.is_none()
            && self.attribute.is_none()
            && self.reason.is_none()
            && self.body_contains.is_none()
            && self.source.is_none()
    }

    /// The filter as request parameters (the source queue resolved to its ARN).
    pub async fn to_params(&self, client: &Client) -> anyhow::Result<Map<String, Value>> {
        if let (Some(a), Some(b)) = (self.since, self.until)
            && a >= b
        {
            anyhow::bail!("--since must be before --until");
        }
        let mut p = Map::new();
        if let Some(t) = self.since {
            p.insert("SentAfter".into(), json!(t));
        }
        if let Some(t) = self.until {
            p.insert("SentBefore".into(), json!(t));
        }
        if let Some((n, v)) = &self.attribute {
            p.insert("AttributeName".into(), json!(n));
            p.insert("AttributeValue".into(), json!(v));
        }
        if let Some(r) = &self.reason {
            p.insert("FailureReasonContains".into(), json!(r));
        }
        if let Some(b) = &self.body_contains {
            p.insert("BodyContains".into(), json!(b));
        }
        if let Some(s) = &self.source {
            let arn = client
                .queue_arn(s)
                .await
                .map_err(|e| anyhow::anyhow!("--source {s}: {e}"))?;
            p.insert("SourceQueueArn".into(), json!(arn));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_name_equals_value() {
        assert_eq!(
            parse_attribute("tenant=acme=1"),
            Ok(("tenant".into(), "acme=1".into()))
        );
        assert!(parse_attribute("tenant").is_err());
        assert!(parse_attribute("=x").is_err());
        assert!(parse_attribute("x=").is_err());
    }
}
