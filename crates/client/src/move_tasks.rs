//! The message move task actions (`dlq redrive --task`, `dlq tasks`,
//! `dlq cancel`).

use sluice_protocol::requests::{
    CancelMessageMoveTaskInput, ListMessageMoveTasksInput, StartMessageMoveTaskInput,
};

use crate::client::Client;
use crate::error::ClientError;
use crate::responses::{
    CancelMessageMoveTaskOutput, ListMessageMoveTasksOutput, StartMessageMoveTaskOutput,
};

impl Client {
    /// StartMessageMoveTask.
    pub async fn start_message_move_task(
        &self,
        input: &StartMessageMoveTaskInput,
    ) -> Result<StartMessageMoveTaskOutput, ClientError> {
        self.call("AmazonSQS.StartMessageMoveTask", input).await
    }

    /// ListMessageMoveTasks.
    pub async fn list_message_move_tasks(
        &self,
        input: &ListMessageMoveTasksInput,
    ) -> Result<ListMessageMoveTasksOutput, ClientError> {
        self.call("AmazonSQS.ListMessageMoveTasks", input).await
    }

    /// CancelMessageMoveTask.
    pub async fn cancel_message_move_task(
        &self,
        input: &CancelMessageMoveTaskInput,
    ) -> Result<CancelMessageMoveTaskOutput, ClientError> {
        self.call("AmazonSQS.CancelMessageMoveTask", input).await
    }
}
