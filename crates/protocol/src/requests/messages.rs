//! The inputs of the message actions: send, receive, delete, visibility.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bounded::bounded_entries;

/// A message attribute value as it travels (binary values base64-encoded).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct WireAttributeValue {
    /// `String`, `Number`, `Binary`, with an optional `.custom` suffix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_type: Option<String>,
    /// For String and Number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub string_value: Option<String>,
    /// For Binary, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary_value: Option<String>,
    /// Reserved by SQS, not implemented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub string_list_values: Option<Vec<String>>,
    /// Reserved by SQS, not implemented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary_list_values: Option<Vec<String>>,
}

/// Attributes by name as they travel.
pub type WireAttributes = BTreeMap<String, WireAttributeValue>;

/// The message part of SendMessage and of each SendMessageBatch entry.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MessageInput {
    /// Batch entry id (batch only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_body: Option<String>,
    /// 0–900.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_seconds: Option<i64>,
    /// User attributes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_attributes: Option<WireAttributes>,
    /// System attributes (`AWSTraceHeader`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_system_attributes: Option<WireAttributes>,
    /// FIFO deduplication id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_deduplication_id: Option<String>,
    /// Message group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_group_id: Option<String>,
}

/// SendMessage.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SendMessageInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// The message.
    #[serde(flatten)]
    pub message: MessageInput,
}

/// SendMessageBatch.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SendMessageBatchInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required, 1–10; more are refused while parsing.
    #[serde(default, deserialize_with = "bounded_entries")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<MessageInput>>,
}

/// ReceiveMessage.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReceiveMessageInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// System attributes to return (deprecated name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribute_names: Option<Vec<String>>,
    /// System attributes to return.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_system_attribute_names: Option<Vec<String>>,
    /// User attributes to return: names, `All`, `prefix.*`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_attribute_names: Option<Vec<String>>,
    /// 1–10, default 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_number_of_messages: Option<i64>,
    /// Overrides the queue's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility_timeout: Option<i64>,
    /// 0–20; the queue's when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_time_seconds: Option<i64>,
    /// FIFO retry id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive_request_attempt_id: Option<String>,
}

/// DeleteMessage.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteMessageInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt_handle: Option<String>,
}

/// A DeleteMessageBatch or ChangeMessageVisibilityBatch entry.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct HandleEntry {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt_handle: Option<String>,
    /// Required for visibility changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility_timeout: Option<i64>,
}

/// DeleteMessageBatch and ChangeMessageVisibilityBatch.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct HandleBatchInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required, 1–10; more are refused while parsing.
    #[serde(default, deserialize_with = "bounded_entries")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<HandleEntry>>,
}

/// ChangeMessageVisibility.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ChangeMessageVisibilityInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_url: Option<String>,
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt_handle: Option<String>,
    /// Required, 0–43200.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility_timeout: Option<i64>,
}
