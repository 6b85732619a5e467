//! The message filters of `dlq peek`, `redrive` and `export`: the filter
//! parameters of PeekMessages and RedriveMessages (rules X1, X3).

use clap::Args;

use crate::timefmt;
use sluice_client::Client;
use sluice_client::sluice::{PeekMessagesRequest, RedriveMessagesRequest};

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
    /// Only messages whose last failure was of this class (NackMessage's
    /// FailureClass; SluiceDeadLetterRoutes routes by it).
    #[arg(long, value_name = "CLASS")]
    pub class: Option<String>,
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
            && self.class.is_none()
            && self.body_contains.is_none()
            && self.source.is_none()
    }

    /// The filter as request members (the source queue resolved to its ARN).
    pub async fn to_input(&self, client: &Client) -> anyhow::Result<MessageFilter> {
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
        Ok(MessageFilter {
            sent_after: self.since.map(millis),
            sent_before: self.until.map(millis),
            body_contains: self.body_contains.clone(),
            attribute_name: self.attribute.as_ref().map(|(n, _)| n.clone()),
            attribute_value: self.attribute.as_ref().map(|(_, v)| v.clone()),
            source_queue_arn,
            failure_reason_contains: self.reason.clone(),
            failure_class: self.class.clone(),
        })
    }
}

/// A filter resolved into the members PeekMessages and RedriveMessages
/// share (same names and meaning in both); none set: every message.
#[derive(Debug, Clone, Default)]
pub struct MessageFilter {
    /// `SentAfter`, ms since the epoch.
    pub sent_after: Option<i64>,
    /// `SentBefore`, ms since the epoch.
    pub sent_before: Option<i64>,
    /// `BodyContains`.
    pub body_contains: Option<String>,
    /// `AttributeName`.
    pub attribute_name: Option<String>,
    /// `AttributeValue`.
    pub attribute_value: Option<String>,
    /// `SourceQueueArn`.
    pub source_queue_arn: Option<String>,
    /// `FailureReasonContains`.
    pub failure_reason_contains: Option<String>,
    /// `FailureClass`.
    pub failure_class: Option<String>,
}

impl MessageFilter {
    /// A PeekMessages request of the queue at `url` with this filter.
    pub fn peek(&self, url: &str) -> PeekMessagesRequest {
        let f = self.clone();
        PeekMessagesRequest {
            queue_url: Some(url.to_string()),
            sent_after: f.sent_after,
            sent_before: f.sent_before,
            body_contains: f.body_contains,
            attribute_name: f.attribute_name,
            attribute_value: f.attribute_value,
            source_queue_arn: f.source_queue_arn,
            failure_reason_contains: f.failure_reason_contains,
            failure_class: f.failure_class,
            ..Default::default()
        }
    }

    /// A RedriveMessages request of the queue at `url` with this filter.
    pub fn redrive(&self, url: &str) -> RedriveMessagesRequest {
        let f = self.clone();
        RedriveMessagesRequest {
            queue_url: Some(url.to_string()),
            sent_after: f.sent_after,
            sent_before: f.sent_before,
            body_contains: f.body_contains,
            attribute_name: f.attribute_name,
            attribute_value: f.attribute_value,
            source_queue_arn: f.source_queue_arn,
            failure_reason_contains: f.failure_reason_contains,
            failure_class: f.failure_class,
            ..Default::default()
        }
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

    #[test]
    fn the_filter_fills_both_requests_alike() {
        let filter = MessageFilter {
            sent_after: Some(1),
            sent_before: Some(2),
            body_contains: Some("b".into()),
            attribute_name: Some("n".into()),
            attribute_value: Some("v".into()),
            source_queue_arn: Some("arn".into()),
            failure_reason_contains: Some("r".into()),
            failure_class: Some("c".into()),
        };
        let peek = serde_json::to_value(filter.peek("u")).unwrap();
        let redrive = serde_json::to_value(filter.redrive("u")).unwrap();
        assert_eq!(peek, redrive);
        assert_eq!(peek.as_object().unwrap().len(), 9, "{peek}");
    }
}
