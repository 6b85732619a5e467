//! The inputs of the push consumers' actions (sluice's own, docs/consumers.md).

use serde::{Deserialize, Serialize};

/// ListConsumers' input: optionally only the consumers of one queue.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListConsumersInput {
    /// The queue's URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
}

/// CreateConsumer's and UpdateConsumer's input: the config file's
/// `[[consumers]]` fields. Left out, a setting takes the config file's
/// default (CreateConsumer) or keeps its value (UpdateConsumer).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ConsumerInput {
    /// Required: the consumer's unique name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The queue read (required by CreateConsumer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// The handler's `http://` URL (required by CreateConsumer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Most messages per batch (default 10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u32>,
    /// Seconds to gather a batch (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batching_window_seconds: Option<u64>,
    /// Batches in flight at once (default 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// The handler's time limit in seconds (default 30).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// Read `batchItemFailures` (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_batch_item_failures: Option<bool>,
    /// Filter patterns (default none; an empty list removes them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<String>>,
}

/// The input of the actions that name one consumer.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ConsumerNameInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
