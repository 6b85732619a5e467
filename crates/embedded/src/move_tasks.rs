//! Message move tasks: StartMessageMoveTask's records (rule R7).

use sluice_broker::EngineError;
use sluice_broker::MoveTask;

use crate::change::Change;
use crate::engine::EmbeddedBroker;

/// Records a message move task, new or updated (rule R7).
pub(crate) async fn save_move_task(
    broker: &EmbeddedBroker,
    task: MoveTask,
) -> Result<(), EngineError> {
    let inner = &broker.inner;
    let ticket = {
        let mut tasks = inner.tasks.lock();
        let mut changes = Vec::new();
        if inner.journal.is_durable() {
            let record =
                serde_json::to_vec(&task).map_err(|e| EngineError::Storage(e.to_string()))?;
            changes.push(Change::PutTask {
                handle: task.handle.clone(),
                record,
            });
        }
        match tasks.iter_mut().find(|t| t.handle == task.handle) {
            Some(existing) => *existing = task,
            None => tasks.push(task),
        }
        inner.submit(changes)
    };
    ticket.wait().await
}

/// ListMessageMoveTasks: every task, newest first.
pub(crate) async fn move_tasks(broker: &EmbeddedBroker) -> Result<Vec<MoveTask>, EngineError> {
    let mut tasks = broker.inner.tasks.lock().clone();
    tasks.sort_by(|a, b| {
        b.started_at
            .cmp(&a.started_at)
            .then_with(|| b.handle.cmp(&a.handle))
    });
    Ok(tasks)
}
