//! sluice's own actions (`Sluice.<Action>`): peek and selective redrive,
//! alarms, push consumers, depth history, backups.

use sluice_protocol::requests::{
    ConsumerInput, ConsumerNameInput, CreateBackupInput, DeleteAlarmsInput, DescribeAlarmsInput,
    GetDepthHistoryInput, ListConsumersInput, PeekMessagesInput, PutAlarmInput,
    RedriveMessagesInput,
};

use crate::client::Client;
use crate::error::ClientError;
use crate::responses::{
    CreateBackupOutput, DescribeAlarmsOutput, Empty, GetDepthHistoryOutput, ListConsumersOutput,
    PeekMessagesOutput, RedriveMessagesOutput,
};

impl Client {
    /// PeekMessages: one page, nothing received.
    pub async fn peek_messages(
        &self,
        input: &PeekMessagesInput,
    ) -> Result<PeekMessagesOutput, ClientError> {
        self.call("Sluice.PeekMessages", input).await
    }

    /// RedriveMessages: one selective redrive step.
    pub async fn redrive_messages(
        &self,
        input: &RedriveMessagesInput,
    ) -> Result<RedriveMessagesOutput, ClientError> {
        self.call("Sluice.RedriveMessages", input).await
    }

    /// PutAlarm.
    pub async fn put_alarm(&self, input: &PutAlarmInput) -> Result<(), ClientError> {
        self.call::<Empty>("Sluice.PutAlarm", input)
            .await
            .map(|_| ())
    }

    /// DescribeAlarms.
    pub async fn describe_alarms(
        &self,
        input: &DescribeAlarmsInput,
    ) -> Result<DescribeAlarmsOutput, ClientError> {
        self.call("Sluice.DescribeAlarms", input).await
    }

    /// DeleteAlarms.
    pub async fn delete_alarms(&self, input: &DeleteAlarmsInput) -> Result<(), ClientError> {
        self.call::<Empty>("Sluice.DeleteAlarms", input)
            .await
            .map(|_| ())
    }

    /// ListConsumers.
    pub async fn list_consumers(
        &self,
        input: &ListConsumersInput,
    ) -> Result<ListConsumersOutput, ClientError> {
        self.call("Sluice.ListConsumers", input).await
    }

    /// CreateConsumer.
    pub async fn create_consumer(&self, input: &ConsumerInput) -> Result<(), ClientError> {
        self.call::<Empty>("Sluice.CreateConsumer", input)
            .await
            .map(|_| ())
    }

    /// UpdateConsumer.
    pub async fn update_consumer(&self, input: &ConsumerInput) -> Result<(), ClientError> {
        self.call::<Empty>("Sluice.UpdateConsumer", input)
            .await
            .map(|_| ())
    }

    /// DeleteConsumer.
    pub async fn delete_consumer(&self, name: &str) -> Result<(), ClientError> {
        self.named_consumer("Sluice.DeleteConsumer", name).await
    }

    /// PauseConsumer.
    pub async fn pause_consumer(&self, name: &str) -> Result<(), ClientError> {
        self.named_consumer("Sluice.PauseConsumer", name).await
    }

    /// ResumeConsumer.
    pub async fn resume_consumer(&self, name: &str) -> Result<(), ClientError> {
        self.named_consumer("Sluice.ResumeConsumer", name).await
    }

    /// GetDepthHistory: the queues' depths over the last hour.
    pub async fn get_depth_history(
        &self,
        input: &GetDepthHistoryInput,
    ) -> Result<GetDepthHistoryOutput, ClientError> {
        self.call("Sluice.GetDepthHistory", input).await
    }

    /// CreateBackup: answers once the backup is complete.
    pub async fn create_backup(
        &self,
        input: &CreateBackupInput,
    ) -> Result<CreateBackupOutput, ClientError> {
        self.call("Sluice.CreateBackup", input).await
    }

    async fn named_consumer(&self, target: &'static str, name: &str) -> Result<(), ClientError> {
        let input = ConsumerNameInput {
            name: Some(name.to_string()),
        };
        self.call::<Empty>(target, &input).await.map(|_| ())
    }
}
