//! The inputs of sluice's own actions (`Sluice.<Action>`): nack, peek,
//! redrive, alarms, depth history, backups.

use serde::{Deserialize, Serialize};

/// NackMessage (sluice's own action).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NackMessageInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required: the delivery that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt_handle: Option<String>,
    /// Why it failed, up to 1,024 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Deterministic failure: to the DLQ now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permanent: Option<bool>,
    /// Retry no sooner than this, 0–43,200 s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<i64>,
}

/// PeekMessages (sluice's own action).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PeekMessagesInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// 1–100, default 10.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_results: Option<i64>,
    /// From a previous page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
    /// Which messages.
    #[serde(flatten)]
    pub filter: FilterInput,
}

/// The message filter of PeekMessages and RedriveMessages.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FilterInput {
    /// Sent at or after, ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_after: Option<i64>,
    /// Sent before, ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_before: Option<i64>,
    /// The body contains this text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_contains: Option<String>,
    /// With `AttributeValue`: a message attribute's string value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribute_name: Option<String>,
    /// See `AttributeName`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribute_value: Option<String>,
    /// Dead-lettered from this queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_queue_arn: Option<String>,
    /// The last failure reason contains this text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason_contains: Option<String>,
}

/// RedriveMessages (sluice's own action).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RedriveMessagesInput {
    /// Required: the dead-letter queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Where to; each message's source when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination_arn: Option<String>,
    /// 1–1,000, default 100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_messages: Option<i64>,
    /// Report what would move; move nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// Refuse messages already replayed this many times (default 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_replays: Option<i64>,
    /// Which messages.
    #[serde(flatten)]
    pub filter: FilterInput,
}

/// PutAlarm (sluice's own action): create or replace an alarm on a queue
/// metric (rule M2).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutAlarmInput {
    /// Required: unique name; an existing alarm of this name is replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alarm_name: Option<String>,
    /// Required: the queue whose metric is watched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required: a CloudWatch SQS metric name, or one of sluice's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_name: Option<String>,
    /// Average, Sum, Minimum, Maximum or SampleCount (default Maximum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statistic: Option<String>,
    /// Seconds per period (default 60).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<i64>,
    /// How many recent periods are evaluated (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluation_periods: Option<i64>,
    /// How many of them must breach to alarm (default: all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datapoints_to_alarm: Option<i64>,
    /// Required: the value compared with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Required: GreaterThanOrEqualToThreshold, GreaterThanThreshold,
    /// LessThanThreshold or LessThanOrEqualToThreshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison_operator: Option<String>,
    /// missing (default), notBreaching, breaching or ignore.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub treat_missing_data: Option<String>,
    /// Webhook URLs and queue ARNs notified on state changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<String>>,
    /// Free text for the people who get the notification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alarm_description: Option<String>,
}

/// DescribeAlarms (sluice's own action).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAlarmsInput {
    /// Only these alarms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alarm_names: Option<Vec<String>>,
    /// Only alarms on this queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Only alarms in this state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_value: Option<String>,
}

/// DeleteAlarms (sluice's own action).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteAlarmsInput {
    /// Required: the alarms to delete; unknown names are ignored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alarm_names: Option<Vec<String>>,
}

/// GetDepthHistory's input: optionally one queue only.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetDepthHistoryInput {
    /// The queue's URL; without it, every queue the request may list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
}

/// CreateBackup's input.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateBackupInput {
    /// Required: the new directory, relative to the server's backup
    /// directory (or absolute inside it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
}
