//! The message filters of `dlq peek`, `redrive` and `export`: the filter
//! parameters of PeekMessages and RedriveMessages (rules X1, X3).

use clap::Args;

use crate::timefmt;
use sluice_client::Client;
use sluice_client::requests::FilterInput;

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

    /// The filter as request members (the source queue resolved to its ARN).
    pub async fn to_input(&self, client: &Client) -> anyhow::Result<FilterInput> {
        if let (Some(a), Some(b)) = (self.since, self.until)
            && a >= b
        {
            anyhow::bail!("--since must be before --until");
        }
        let source_queue_arn = match &self.source {
            Some(s) => Some(
                client
                    .queue_arn(s)
                    .await
                    .map_err(|e| anyhow::anyhow!("--source {s}: {e}"))?,
            ),
            None => None,
        };
        let millis = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
        Ok(FilterInput {
            sent_after: self.since.map(millis),
            sent_before: self.until.map(millis),
            body_contains: self.body_contains.clone(),
            attribute_name: self.attribute.as_ref().map(|(n, _)| n.clone()),
            attribute_value: self.attribute.as_ref().map(|(_, v)| v.clone()),
            source_queue_arn,
            failure_reason_contains: self.reason.clone(),
        })
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
