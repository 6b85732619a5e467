//! Cluster coordination on the shared database: every node sees the same
//! alarms, move task records and run-time consumers, a background job (a
//! move task, alarm evaluation) runs on the node holding its advisory
//! lock, and consumers' delivery slots are leased here.

use sluice_broker::EngineError;
use sluice_broker::{
    Coordination, JobClaim, MoveTask, QueueStats, SlotLease, StoredAlarm, StoredConsumer,
};
use tokio_postgres::types::Json;

use crate::engine::{PostgresBroker, execute, query};
use crate::{alarm_store, consumer_store, error};

impl Coordination for PostgresBroker {
    fn is_shared(&self) -> bool {
        true
    }

    async fn handle_secret(&self) -> Result<sluice_broker::HandleSecret, EngineError> {
        crate::secrets::handle_secret(&self.inner).await
    }

    async fn cluster_queue_stats(&self, name: &str) -> Result<QueueStats, EngineError> {
        self.cluster_stats(name).await
    }

    async fn stored_alarms(&self) -> Result<Vec<StoredAlarm>, EngineError> {
        alarm_store::all(&self.inner).await
    }

    async fn put_stored_alarm(
        &self,
        alarm: StoredAlarm,
        replaces: Vec<String>,
    ) -> Result<Option<String>, EngineError> {
        alarm_store::put(&self.inner, &alarm, &replaces).await
    }

    async fn delete_stored_alarms(&self, names: Vec<String>) -> Result<(), EngineError> {
        alarm_store::delete(&self.inner, &names).await
    }

    async fn save_alarm_state(
        &self,
        alarm: StoredAlarm,
        expected_state: String,
        expected_updated_at: u64,
    ) -> Result<bool, EngineError> {
        alarm_store::save_state(&self.inner, &alarm, &expected_state, expected_updated_at).await
    }

    async fn stored_consumers(&self) -> Result<Vec<StoredConsumer>, EngineError> {
        consumer_store::all(&self.inner).await
    }

    async fn insert_stored_consumer(&self, consumer: StoredConsumer) -> Result<bool, EngineError> {
        consumer_store::insert(&self.inner, &consumer).await
    }

    async fn update_stored_consumer(&self, consumer: StoredConsumer) -> Result<bool, EngineError> {
        consumer_store::update(&self.inner, &consumer).await
    }

    async fn delete_stored_consumer(&self, name: String) -> Result<bool, EngineError> {
        consumer_store::delete(&self.inner, &name).await
    }

    async fn claim_consumer_slot(
        &self,
        consumer: String,
        slots: u32,
        lease_ms: u64,
    ) -> Result<Option<SlotLease>, EngineError> {
        consumer_store::claim_slot(&self.inner, &consumer, slots, lease_ms).await
    }

    async fn renew_consumer_slot(
        &self,
        lease: SlotLease,
        lease_ms: u64,
    ) -> Result<bool, EngineError> {
        consumer_store::renew_slot(&self.inner, &lease, lease_ms).await
    }

    async fn release_consumer_slot(&self, lease: SlotLease) -> Result<(), EngineError> {
        consumer_store::release_slot(&self.inner, &lease).await
    }

    async fn claim_job(&self, name: &str) -> Result<Option<JobClaim>, EngineError> {
        Ok(self.try_claim(name).await?.map(JobClaim::holding))
    }

    async fn save_move_task(&self, task: MoveTask) -> Result<(), EngineError> {
        let mut client = self.inner.client().await?;
        let tx = client.transaction().await.map_err(error::db)?;
        // A task another node ended (cancelled, failed) stays ended: a
        // runner's late progress report must not bring it back.
        execute(
            &tx,
            "INSERT INTO sluice_move_tasks (handle, record, started_at) VALUES ($1, $2, $3)
             ON CONFLICT (handle) DO UPDATE SET record = EXCLUDED.record
             WHERE sluice_move_tasks.record->>'status' IN ('RUNNING', 'CANCELLING')
                OR EXCLUDED.record->>'status' NOT IN ('RUNNING', 'CANCELLING')",
            &[&task.handle, &Json(&task), &(task.started_at as i64)],
        )
        .await?;
        tx.commit().await.map_err(error::db)
    }

    async fn move_tasks(&self) -> Result<Vec<MoveTask>, EngineError> {
        let mut client = self.inner.client().await?;
        let tx = client.transaction().await.map_err(error::db)?;
        let rows = query(
            &tx,
            "SELECT record FROM sluice_move_tasks
             ORDER BY started_at DESC, handle COLLATE \"C\" DESC",
            &[],
        )
        .await?;
        rows.iter()
            .map(|r| {
                r.try_get::<_, Json<MoveTask>>(0)
                    .map(|Json(t)| t)
                    .map_err(error::db)
            })
            .collect()
    }
}
