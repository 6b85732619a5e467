//! The inputs of the message move task actions.

use serde::{Deserialize, Serialize};

/// StartMessageMoveTask.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct StartMessageMoveTaskInput {
    /// Required: the dead-letter queue's ARN.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_arn: Option<String>,
    /// Where to move; each message's source when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination_arn: Option<String>,
    /// 1–500.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_number_of_messages_per_second: Option<i64>,
}

/// ListMessageMoveTasks.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListMessageMoveTasksInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_arn: Option<String>,
    /// 1–10, default 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_results: Option<i64>,
}

/// CancelMessageMoveTask.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CancelMessageMoveTaskInput {
    /// Required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_handle: Option<String>,
}
