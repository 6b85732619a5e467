//! The inputs of the queue actions: create, find, list, attributes, tags,
//! permissions, dead-letter sources.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// CreateQueue.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateQueueInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_name: Option<String>,
    /// Queue attributes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<BTreeMap<String, String>>,
    /// Tags (lower-case `tags` in the model).
    #[serde(rename = "tags")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

/// GetQueueUrl.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetQueueUrlInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_name: Option<String>,
    /// Must be this server's account when given.
    #[serde(rename = "QueueOwnerAWSAccountId")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_owner_aws_account_id: Option<String>,
}

/// ListQueues.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListQueuesInput {
    /// Only names starting with this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_name_prefix: Option<String>,
    /// Continuation from a previous page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
    /// Page size, 1–1000.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_results: Option<i64>,
}

/// Actions that take only a queue URL (DeleteQueue, PurgeQueue, ListQueueTags).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct QueueUrlInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
}

/// GetQueueAttributes.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetQueueAttributesInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Names, or `All`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribute_names: Option<Vec<String>>,
}

/// SetQueueAttributes.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SetQueueAttributesInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<BTreeMap<String, String>>,
}

/// TagQueue.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TagQueueInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

/// UntagQueue.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct UntagQueueInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag_keys: Option<Vec<String>>,
}

/// AddPermission.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AddPermissionInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required: the statement id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Required: principals.
    #[serde(rename = "AWSAccountIds")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aws_account_ids: Option<Vec<String>>,
    /// Required: action names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<String>>,
}

/// RemovePermission.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RemovePermissionInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// ListDeadLetterSourceQueues.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListDeadLetterSourceQueuesInput {
    /// Required: the dead-letter queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Continuation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
    /// 1–1000.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_results: Option<i64>,
}
