//! What `sluice doctor`'s checks look at: a snapshot of the queues, the
//! alarms, the push consumers, the topics and the server's encryption at
//! rest, read from a running server or from a config file.

use std::collections::{BTreeMap, BTreeSet};

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
    /// The SluiceDeadLetterRoutes (rule X7): failure class and its DLQ ARN.
    pub routes: Vec<(String, String)>,
    /// SluiceArchiveExpired (rule X8): what its retention drops is archived.
    pub archive_expired: bool,
    /// Tags.
    pub tags: BTreeMap<String, String>,
    /// Its access policy (the `Policy` attribute), if any.
    pub policy: Option<String>,
    /// The server-side encryption its attributes ask for.
    pub sse: Sse,
    /// What only a running server knows.
    pub live: Option<LiveState>,
}

impl QueueSnapshot {
    /// The dead-letter queues it sends messages to: its RedrivePolicy's
    /// and its failure classes' (rule X7), each once.
    pub fn dead_letter_targets(&self) -> Vec<&str> {
        sluice_core::dead_letter_routes::dead_letter_targets(
            self.redrive.as_ref().map(|(arn, _)| arn.as_str()),
            self.routes.iter().map(|(_, arn)| arn.as_str()),
        )
    }
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
    /// Whether the server seals what queues with server-side encryption
    /// store.
    pub at_rest: AtRest,
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
    /// Its `skip_completed` key, if it skips completed work (rule I1).
    pub skip_completed: Option<String>,
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

/// The server-side encryption a queue's attributes ask for.
#[derive(Debug, Clone, Default)]
pub struct Sse {
    /// `SqsManagedSseEnabled` is `true`.
    pub sqs_managed: bool,
    /// Its `KmsMasterKeyId`, if set.
    pub kms_key_id: Option<String>,
}

impl Sse {
    /// Whether the attributes ask for encryption at all.
    pub fn asked(&self) -> bool {
        self.sqs_managed || self.kms_key_id.is_some()
    }

    /// The attributes that ask, as a finding quotes them.
    pub fn describe(&self) -> String {
        match &self.kms_key_id {
            Some(id) => format!("KmsMasterKeyId {id}"),
            None => "SqsManagedSseEnabled=true".to_string(),
        }
    }
}

/// What is known of the server's encryption at rest.
#[derive(Debug, Clone)]
pub enum AtRest {
    /// Nothing can be known: the checks that need it are skipped, with
    /// this reason, when a queue asks for encryption.
    Unknown(String),
    /// What the server says (its `/metrics`) or the config file shows.
    Known(Sealing),
}

/// The server's encryption at rest.
#[derive(Debug, Clone, Default)]
pub struct Sealing {
    /// Whether the messages of queues that ask for server-side encryption
    /// are sealed at rest (`sluice_encryption_at_rest` 1).
    pub seals: bool,
    /// The queues whose `KmsMasterKeyId` names no live key of the keyring
    /// (`sluice_queue_encryption_key_missing` 1); `None` when only a
    /// running server can tell (a config file).
    pub keys_missing: Option<BTreeSet<String>>,
}
