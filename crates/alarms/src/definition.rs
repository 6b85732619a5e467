//! What an alarm is (rule M2): the queue metric it watches, how samples
//! become datapoints, what counts as breaching, and who is told. Validation
//! turns a PutAlarm input (or a config file entry) into a definition or the
//! SQS-style error a client expects.

use serde::{Deserialize, Serialize};
use sluice_core::SqsError;
use sluice_core::queue_name::Account;
use sluice_protocol::sluice::PutAlarmRequest as PutAlarmInput;

/// Longest alarm name.
pub const MAX_ALARM_NAME: usize = 255;
/// Longest description.
pub const MAX_DESCRIPTION: usize = 1024;
/// Most actions of one alarm.
pub const MAX_ACTIONS: usize = 5;
/// Longest evaluated range: one day, as CloudWatch.
pub const MAX_RANGE_SECS: u64 = 86_400;
/// Most evaluation periods.
pub const MAX_EVALUATION_PERIODS: u32 = 100;

/// The per-queue metrics an alarm can watch (rule M1): CloudWatch's SQS
/// metric names plus sluice's dead-letter, redrive and retention counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Metric {
    /// Messages available now (gauge).
    ApproximateNumberOfMessagesVisible,
    /// Messages in flight (gauge).
    ApproximateNumberOfMessagesNotVisible,
    /// Messages waiting for their delay (gauge).
    ApproximateNumberOfMessagesDelayed,
    /// Age of the oldest message, seconds (gauge).
    ApproximateAgeOfOldestMessage,
    /// Messages added since the previous sample.
    NumberOfMessagesSent,
    /// Messages delivered since the previous sample.
    NumberOfMessagesReceived,
    /// Messages deleted since the previous sample.
    NumberOfMessagesDeleted,
    /// Receives that returned nothing since the previous sample.
    NumberOfEmptyReceives,
    /// Average size in bytes of the messages sent since the previous sample
    /// (no datapoint when none was sent).
    SentMessageSize,
    /// Messages this queue moved to its DLQ since the previous sample.
    NumberOfMessagesDeadLettered,
    /// Messages redriven out of this queue since the previous sample.
    NumberOfMessagesRedriven,
    /// Messages deleted by retention since the previous sample.
    NumberOfMessagesExpired,
    /// Messages past retention waiting for the archive (gauge, rule X8):
    /// above 0 for long, the archive is failing.
    ApproximateNumberOfMessagesAwaitingArchive,
}

impl Metric {
    /// Every metric, in documentation order.
    pub const ALL: &'static [Metric] = &[
        Metric::ApproximateNumberOfMessagesVisible,
        Metric::ApproximateNumberOfMessagesNotVisible,
        Metric::ApproximateNumberOfMessagesDelayed,
        Metric::ApproximateAgeOfOldestMessage,
        Metric::NumberOfMessagesSent,
        Metric::NumberOfMessagesReceived,
        Metric::NumberOfMessagesDeleted,
        Metric::NumberOfEmptyReceives,
        Metric::SentMessageSize,
        Metric::NumberOfMessagesDeadLettered,
        Metric::NumberOfMessagesRedriven,
        Metric::NumberOfMessagesExpired,
        Metric::ApproximateNumberOfMessagesAwaitingArchive,
    ];

    /// The metric's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::ApproximateNumberOfMessagesVisible => "ApproximateNumberOfMessagesVisible",
            Metric::ApproximateNumberOfMessagesNotVisible => {
                "ApproximateNumberOfMessagesNotVisible"
            }
            Metric::ApproximateNumberOfMessagesDelayed => "ApproximateNumberOfMessagesDelayed",
            Metric::ApproximateAgeOfOldestMessage => "ApproximateAgeOfOldestMessage",
            Metric::NumberOfMessagesSent => "NumberOfMessagesSent",
            Metric::NumberOfMessagesReceived => "NumberOfMessagesReceived",
            Metric::NumberOfMessagesDeleted => "NumberOfMessagesDeleted",
            Metric::NumberOfEmptyReceives => "NumberOfEmptyReceives",
            Metric::SentMessageSize => "SentMessageSize",
            Metric::NumberOfMessagesDeadLettered => "NumberOfMessagesDeadLettered",
            Metric::NumberOfMessagesRedriven => "NumberOfMessagesRedriven",
            Metric::NumberOfMessagesExpired => "NumberOfMessagesExpired",
            Metric::ApproximateNumberOfMessagesAwaitingArchive => {
                "ApproximateNumberOfMessagesAwaitingArchive"
            }
        }
    }

    /// Parses a metric name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.as_str() == s)
    }
}

/// How the samples of one period become its datapoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Statistic {
    /// Mean of the samples.
    Average,
    /// Sum of the samples.
    Sum,
    /// Smallest sample.
    Minimum,
    /// Largest sample.
    Maximum,
    /// Number of samples.
    SampleCount,
}

impl Statistic {
    const ALL: &'static [Statistic] = &[
        Statistic::Average,
        Statistic::Sum,
        Statistic::Minimum,
        Statistic::Maximum,
        Statistic::SampleCount,
    ];

    /// The statistic's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Statistic::Average => "Average",
            Statistic::Sum => "Sum",
            Statistic::Minimum => "Minimum",
            Statistic::Maximum => "Maximum",
            Statistic::SampleCount => "SampleCount",
        }
    }

    /// Parses a statistic name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.as_str() == s)
    }
}

/// How a datapoint is compared with the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Comparison {
    /// `value >= threshold` breaches.
    GreaterThanOrEqualToThreshold,
    /// `value > threshold` breaches.
    GreaterThanThreshold,
    /// `value < threshold` breaches.
    LessThanThreshold,
    /// `value <= threshold` breaches.
    LessThanOrEqualToThreshold,
}

impl Comparison {
    const ALL: &'static [Comparison] = &[
        Comparison::GreaterThanOrEqualToThreshold,
        Comparison::GreaterThanThreshold,
        Comparison::LessThanThreshold,
        Comparison::LessThanOrEqualToThreshold,
    ];

    /// The operator's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Comparison::GreaterThanOrEqualToThreshold => "GreaterThanOrEqualToThreshold",
            Comparison::GreaterThanThreshold => "GreaterThanThreshold",
            Comparison::LessThanThreshold => "LessThanThreshold",
            Comparison::LessThanOrEqualToThreshold => "LessThanOrEqualToThreshold",
        }
    }

    /// The operator as a human reads it in a reason.
    pub fn words(self) -> &'static str {
        match self {
            Comparison::GreaterThanOrEqualToThreshold => "greater than or equal to",
            Comparison::GreaterThanThreshold => "greater than",
            Comparison::LessThanThreshold => "less than",
            Comparison::LessThanOrEqualToThreshold => "less than or equal to",
        }
    }

    /// Parses an operator name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.as_str() == s)
    }

    /// Does `value` breach `threshold`?
    pub fn breaches(self, value: f64, threshold: f64) -> bool {
        match self {
            Comparison::GreaterThanOrEqualToThreshold => value >= threshold,
            Comparison::GreaterThanThreshold => value > threshold,
            Comparison::LessThanThreshold => value < threshold,
            Comparison::LessThanOrEqualToThreshold => value <= threshold,
        }
    }
}

/// What a period without samples means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TreatMissingData {
    /// Left out; with no datapoint at all the state is INSUFFICIENT_DATA.
    #[serde(rename = "missing")]
    Missing,
    /// Counts as within the threshold.
    #[serde(rename = "notBreaching")]
    NotBreaching,
    /// Counts as breaching.
    #[serde(rename = "breaching")]
    Breaching,
    /// Left out; with no datapoint at all the state stays as it is.
    #[serde(rename = "ignore")]
    Ignore,
}

impl TreatMissingData {
    const ALL: &'static [TreatMissingData] = &[
        TreatMissingData::Missing,
        TreatMissingData::NotBreaching,
        TreatMissingData::Breaching,
        TreatMissingData::Ignore,
    ];

    /// The treatment's name.
    pub fn as_str(self) -> &'static str {
        match self {
            TreatMissingData::Missing => "missing",
            TreatMissingData::NotBreaching => "notBreaching",
            TreatMissingData::Breaching => "breaching",
            TreatMissingData::Ignore => "ignore",
        }
    }

    /// Parses a treatment name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.as_str() == s)
    }
}

/// An alarm's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AlarmState {
    /// The metric is within the threshold.
    #[serde(rename = "OK")]
    Ok,
    /// The metric breaches the threshold.
    #[serde(rename = "ALARM")]
    Alarm,
    /// Not enough data to tell (also the state of a new alarm).
    #[serde(rename = "INSUFFICIENT_DATA")]
    InsufficientData,
}

impl AlarmState {
    /// The state's name.
    pub fn as_str(self) -> &'static str {
        match self {
            AlarmState::Ok => "OK",
            AlarmState::Alarm => "ALARM",
            AlarmState::InsufficientData => "INSUFFICIENT_DATA",
        }
    }

    /// Parses a state name.
    pub fn parse(s: &str) -> Option<Self> {
        [
            AlarmState::Ok,
            AlarmState::Alarm,
            AlarmState::InsufficientData,
        ]
        .into_iter()
        .find(|m| m.as_str() == s)
    }
}

/// Where an alarm was defined; only API alarms can be changed by the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AlarmSource {
    /// PutAlarm.
    #[serde(rename = "api")]
    Api,
    /// The `[[alarms]]` of the config file.
    #[serde(rename = "config")]
    Config,
    /// The `dlq_alarms` setting, for a queue some RedrivePolicy targets.
    #[serde(rename = "dlq_alarms")]
    DlqAlarms,
}

impl AlarmSource {
    /// The source's name.
    pub fn as_str(self) -> &'static str {
        match self {
            AlarmSource::Api => "api",
            AlarmSource::Config => "config",
            AlarmSource::DlqAlarms => "dlq_alarms",
        }
    }
}

/// Where a notification goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlarmAction {
    /// POST the notification as JSON to this `http://` or `https://` URL.
    Webhook(String),
    /// Send the notification as a message to this queue (by name).
    Queue(String),
    /// Publish the notification to this topic (by key), which fans it out
    /// to its subscriptions: the on-call endpoint, a chat hook, queues.
    Topic(String),
}

impl AlarmAction {
    /// Parses an action: an `http://` or `https://` URL, or a queue or
    /// topic ARN of this account.
    pub fn parse(raw: &str, account: &Account) -> Result<Self, SqsError> {
        if raw.starts_with("http://") || raw.starts_with("https://") {
            let uri: http::Uri = raw
                .parse()
                .map_err(|_| SqsError::invalid_value("Actions", raw, "Not a valid URL."))?;
            if uri.host().is_none_or(str::is_empty) {
                return Err(SqsError::invalid_value(
                    "Actions",
                    raw,
                    "The URL has no host.",
                ));
            }
            return Ok(AlarmAction::Webhook(raw.to_string()));
        }
        if sluice_core::topic_name::sns_arn_parts(raw).is_some() {
            let key = account
                .topic_key_from_arn(raw)
                .filter(|key| account.owner_of(key) == account.id)
                .ok_or_else(|| {
                    SqsError::invalid_value("Actions", raw, "Not a topic ARN of this server.")
                })?;
            return Ok(AlarmAction::Topic(key));
        }
        if raw.starts_with("arn:") {
            let key = account.key_from_arn(raw).ok_or_else(|| {
                SqsError::invalid_value("Actions", raw, "Not a queue ARN of this server.")
            })?;
            return Ok(AlarmAction::Queue(key));
        }
        Err(SqsError::invalid_value(
            "Actions",
            raw,
            "An action is an http:// or https:// webhook URL, a queue ARN or a topic ARN.",
        ))
    }
}

/// A validated alarm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlarmDefinition {
    /// Unique name.
    pub name: String,
    /// The queue watched.
    pub queue: String,
    /// The metric watched.
    pub metric: Metric,
    /// How a period's samples become its datapoint.
    pub statistic: Statistic,
    /// Seconds per period.
    pub period_secs: u32,
    /// How many recent periods are evaluated.
    pub evaluation_periods: u32,
    /// How many of them must breach to alarm.
    pub datapoints_to_alarm: u32,
    /// The value compared with.
    pub threshold: f64,
    /// How it is compared.
    pub comparison: Comparison,
    /// What a period without samples means.
    pub treat_missing: TreatMissingData,
    /// Webhook URLs and queue ARNs, as given.
    pub actions: Vec<String>,
    /// Free text.
    pub description: Option<String>,
}

impl AlarmDefinition {
    /// Validates an input whose queue (already resolved from `QueueUrl`)
    /// is `queue`. Errors are the SQS codes a client expects.
    pub fn from_input(
        input: PutAlarmInput,
        queue: &str,
        account: &Account,
    ) -> Result<Self, SqsError> {
        let name = sluice_protocol::decode::required(input.alarm_name, "AlarmName")?;
        validate_name(&name)?;
        let metric_name = sluice_protocol::decode::required(input.metric_name, "MetricName")?;
        let metric = Metric::parse(&metric_name).ok_or_else(|| {
            SqsError::invalid_value("MetricName", &metric_name, "Not a queue metric.")
        })?;
        let statistic = match input.statistic {
            Some(s) => Statistic::parse(&s).ok_or_else(|| {
                SqsError::invalid_value(
                    "Statistic",
                    &s,
                    "Must be Average, Sum, Minimum, Maximum or SampleCount.",
                )
            })?,
            None => Statistic::Maximum,
        };
        let period_secs = match input.period {
            Some(p) => validate_period(p)?,
            None => 60,
        };
        let evaluation_periods = match input.evaluation_periods {
            Some(n) => sluice_core::limits::in_range(
                "EvaluationPeriods",
                n,
                1,
                i64::from(MAX_EVALUATION_PERIODS),
            )?,
            None => 1,
        };
        if u64::from(period_secs) * u64::from(evaluation_periods) > MAX_RANGE_SECS {
            return Err(SqsError::invalid_parameter(format!(
                "Period times EvaluationPeriods must be at most {MAX_RANGE_SECS} seconds (one day)."
            )));
        }
        let datapoints_to_alarm = match input.datapoints_to_alarm {
            Some(m) => sluice_core::limits::in_range(
                "DatapointsToAlarm",
                m,
                1,
                i64::from(evaluation_periods),
            )?,
            None => evaluation_periods,
        };
        let threshold = sluice_protocol::decode::required(input.threshold, "Threshold")?;
        if !threshold.is_finite() {
            return Err(SqsError::invalid_value(
                "Threshold",
                threshold,
                "Must be a finite number.",
            ));
        }
        let op =
            sluice_protocol::decode::required(input.comparison_operator, "ComparisonOperator")?;
        let comparison = Comparison::parse(&op).ok_or_else(|| {
            SqsError::invalid_value(
                "ComparisonOperator",
                &op,
                "Must be GreaterThanOrEqualToThreshold, GreaterThanThreshold, \
                 LessThanThreshold or LessThanOrEqualToThreshold.",
            )
        })?;
        let treat_missing = match input.treat_missing_data {
            Some(t) => TreatMissingData::parse(&t).ok_or_else(|| {
                SqsError::invalid_value(
                    "TreatMissingData",
                    &t,
                    "Must be missing, notBreaching, breaching or ignore.",
                )
            })?,
            None => TreatMissingData::Missing,
        };
        let actions = input.actions.unwrap_or_default();
        if actions.len() > MAX_ACTIONS {
            return Err(SqsError::invalid_parameter(format!(
                "An alarm has at most {MAX_ACTIONS} actions."
            )));
        }
        for a in &actions {
            AlarmAction::parse(a, account)?;
        }
        if let Some(d) = &input.alarm_description
            && d.chars().count() > MAX_DESCRIPTION
        {
            return Err(SqsError::invalid_parameter(format!(
                "AlarmDescription must be at most {MAX_DESCRIPTION} characters."
            )));
        }
        Ok(Self {
            name,
            queue: queue.to_string(),
            metric,
            statistic,
            period_secs,
            evaluation_periods,
            datapoints_to_alarm,
            threshold,
            comparison,
            treat_missing,
            actions,
            description: input.alarm_description,
        })
    }

    /// How far back this alarm reads samples, ms.
    pub fn range_ms(&self) -> u64 {
        u64::from(self.period_secs) * u64::from(self.evaluation_periods) * 1000
    }

    /// The actions, parsed (invalid ones, which validation keeps out, are skipped).
    pub fn parsed_actions(&self, account: &Account) -> Vec<AlarmAction> {
        self.actions
            .iter()
            .filter_map(|a| AlarmAction::parse(a, account).ok())
            .collect()
    }
}

/// 1–255 characters, no control characters.
pub fn validate_name(name: &str) -> Result<(), SqsError> {
    if name.is_empty()
        || name.chars().count() > MAX_ALARM_NAME
        || name.chars().any(char::is_control)
    {
        return Err(SqsError::invalid_value(
            "AlarmName",
            name,
            "Must be 1 to 255 characters without control characters.",
        ));
    }
    Ok(())
}

/// 10, 30, or a multiple of 60 up to a day, as CloudWatch.
fn validate_period(p: i64) -> Result<u32, SqsError> {
    let ok = p == 10 || p == 30 || (p > 0 && p % 60 == 0 && p <= MAX_RANGE_SECS as i64);
    if ok {
        Ok(p as u32)
    } else {
        Err(SqsError::invalid_value(
            "Period",
            p,
            "Must be 10, 30 or a multiple of 60 up to 86400.",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_core::ErrorCode;

    fn input() -> PutAlarmInput {
        PutAlarmInput {
            alarm_name: Some("a".into()),
            metric_name: Some("ApproximateNumberOfMessagesVisible".into()),
            threshold: Some(1.0),
            comparison_operator: Some("GreaterThanOrEqualToThreshold".into()),
            ..Default::default()
        }
    }

    fn code(i: PutAlarmInput) -> ErrorCode {
        AlarmDefinition::from_input(i, "q", &Account::default())
            .unwrap_err()
            .code
    }

    /// M2: defaults, and each bad parameter gets its SQS error code.
    #[test]
    fn m2_validation_defaults_and_errors() {
        let d = AlarmDefinition::from_input(input(), "q", &Account::default()).unwrap();
        assert_eq!(
            (d.statistic, d.period_secs, d.evaluation_periods),
            (Statistic::Maximum, 60, 1)
        );
        assert_eq!(d.datapoints_to_alarm, 1);
        assert_eq!(d.treat_missing, TreatMissingData::Missing);
        use ErrorCode::*;
        for (field, expected) in [
            ("AlarmName", MissingParameter),
            ("MetricName", MissingParameter),
            ("Threshold", MissingParameter),
            ("ComparisonOperator", MissingParameter),
        ] {
            let mut i = input();
            match field {
                "AlarmName" => i.alarm_name = None,
                "MetricName" => i.metric_name = None,
                "Threshold" => i.threshold = None,
                _ => i.comparison_operator = None,
            }
            assert_eq!(code(i), expected, "{field}");
        }
        let bad: &[fn(&mut PutAlarmInput)] = &[
            |i| i.alarm_name = Some(String::new()),
            |i| i.metric_name = Some("CPUUtilization".into()),
            |i| i.statistic = Some("p99".into()),
            |i| i.period = Some(45),
            |i| i.period = Some(0),
            |i| i.evaluation_periods = Some(0),
            |i| {
                i.period = Some(3600);
                i.evaluation_periods = Some(25)
            },
            |i| {
                i.evaluation_periods = Some(3);
                i.datapoints_to_alarm = Some(4)
            },
            |i| i.comparison_operator = Some(">=".into()),
            |i| i.treat_missing_data = Some("Missing".into()),
            |i| i.actions = Some(vec!["mailto:ops@example.com".into()]),
            |i| i.actions = Some(vec!["https:///no-host".into()]),
            // A queue of another account (a queue of another region is one
            // of this server's own: rule W3).
            |i| i.actions = Some(vec!["arn:aws:sqs:us-east-1:111111111111:q".into()]),
            |i| i.actions = Some(vec!["http://h/".into(); 6]),
            |i| i.alarm_description = Some("x".repeat(1025)),
        ];
        for (n, change) in bad.iter().enumerate() {
            let mut i = input();
            change(&mut i);
            assert_eq!(code(i), InvalidParameterValue, "case {n}");
        }
        let mut i = input();
        i.actions = Some(vec![
            "http://127.0.0.1:9/hook".into(),
            "https://hooks.slack.com/services/T0/B0/x".into(),
            "arn:aws:sqs:us-east-1:000000000000:ops".into(),
        ]);
        let d = AlarmDefinition::from_input(i, "q", &Account::default()).unwrap();
        assert_eq!(
            d.parsed_actions(&Account::default()),
            vec![
                AlarmAction::Webhook("http://127.0.0.1:9/hook".into()),
                AlarmAction::Webhook("https://hooks.slack.com/services/T0/B0/x".into()),
                AlarmAction::Queue("ops".into())
            ]
        );
    }
}
