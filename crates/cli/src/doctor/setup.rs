//! What `sluice doctor`'s checks look at: a snapshot of the queues, the
//! alarms, the push consumers and the topics, read from a running server
//! or from a config file.

use std::collections::BTreeMap;

/// One queue as the checks see it.
#[derive(Debug, Clone, Default)]
pub struct QueueSnapshot {
    /// Queue name.
    pub name: String,
    /// Queue ARN.
    pub arn: String,
    /// A FIFO queue.
    pub fifo: bool,
    /// MessageRetentionPeriod, seconds.
    pub retention_secs: u64,
    /// VisibilityTimeout, seconds.
    pub visibility_timeout_secs: u64,
    /// The RedrivePolicy: DLQ ARN and maxReceiveCount.
    pub redrive: Option<(String, u32)>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
    /// Its access policy (the `Policy` attribute), if any.
    pub policy: Option<String>,
    /// What only a running server knows.
    pub live: Option<LiveState>,
}

/// A queue's live state.
#[derive(Debug, Clone, Default)]
pub struct LiveState {
    /// ApproximateNumberOfMessagesNotVisible.
    pub in_flight: u64,
    /// For a DLQ: the start of the retention clock (ms since the epoch) of
    /// the message that expires first, among those looked at.
    pub first_expiry_start_ms: Option<u64>,
}

/// An alarm the server knows (Sluice.DescribeAlarms).
#[derive(Debug, Clone)]
pub struct AlarmInfo {
    /// Alarm name.
    pub name: String,
    /// The queue it watches (name).
    pub queue: String,
    /// The metric it watches.
    pub metric: String,
    /// Whether it notifies anyone.
    pub has_actions: bool,
}

/// What is known of alarms.
#[derive(Debug, Clone)]
pub enum Alarms {
    /// Nothing can be known: the alarm check is skipped, with this reason.
    Unknown(String),
    /// Every alarm of the server.
    Known(Vec<AlarmInfo>),
}

/// Everything the checks look at.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Every queue.
    pub queues: Vec<QueueSnapshot>,
    /// The alarms.
    pub alarms: Alarms,
    /// The push consumers.
    pub consumers: Consumers,
    /// The topics and their subscriptions.
    pub topics: Topics,
    /// Now, ms since the epoch (for expiry).
    pub now_ms: u64,
}

/// A push consumer as the checks see it (ListConsumers, or the config
/// file's `[[consumers]]`).
#[derive(Debug, Clone, Default)]
pub struct ConsumerInfo {
    /// Its name.
    pub name: String,
    /// The queue it reads (name).
    pub queue: String,
    /// Most messages per batch.
    pub batch_size: u64,
    /// Its batching window, seconds.
    pub batching_window_secs: u64,
    /// The handler's time limit, seconds.
    pub timeout_secs: u64,
    /// Whether `batchItemFailures` is read.
    pub report_batch_item_failures: bool,
}

/// What is known of consumers.
#[derive(Debug, Clone)]
pub enum Consumers {
    /// Nothing can be known: the consumer checks are skipped, with this reason.
    Unknown(String),
    /// Every consumer.
    Known(Vec<ConsumerInfo>),
}

/// A topic as the checks see it (Sluice.DescribeTopics).
#[derive(Debug, Clone, Default)]
pub struct TopicInfo {
    /// Its ARN.
    pub arn: String,
    /// Its subscriptions.
    pub subscriptions: Vec<SubscriptionInfo>,
}

/// A subscription as the checks see it.
#[derive(Debug, Clone, Default)]
pub struct SubscriptionInfo {
    /// `sqs`, `http`, `https`, …
    pub protocol: String,
    /// A queue's ARN, a URL.
    pub endpoint: String,
    /// Still waiting for its confirmation.
    pub pending: bool,
    /// Its filter policy, if any.
    pub filter_policy: Option<String>,
    /// The ARN of its dead-letter queue (its `RedrivePolicy`), if any.
    pub dead_letter_arn: Option<String>,
    /// Messages delivered to it, on the server's node since it started.
    pub delivered: u64,
    /// Messages its filter policy let pass by, likewise.
    pub filtered_out: u64,
}

/// What is known of topics.
#[derive(Debug, Clone)]
pub enum Topics {
    /// Nothing can be known: the subscription checks are skipped, with
    /// this reason.
    Unknown(String),
    /// Every topic of the account.
    Known(Vec<TopicInfo>),
}
