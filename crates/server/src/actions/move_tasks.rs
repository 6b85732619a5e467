//! StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask
//! (rule R7): requests read and answered here; the tasks themselves are
//! the `move_tasks` component's (`crate::move_tasks`).

use serde_json::{Value, json};
use sluice_broker::{Broker, MoveTaskStatus};
use sluice_core::SqsError;
use sluice_protocol::requests::{
    CancelMessageMoveTaskInput, ListMessageMoveTasksInput, StartMessageMoveTaskInput, required,
};

use crate::move_tasks::NewMoveTask;
use crate::service::Service;
use sluice_core::limits::in_range;

/// Largest rate a task may ask for.
const MAX_RATE: i64 = 500;

/// StartMessageMoveTask: moves a DLQ's messages back to their sources, or
/// to a destination, at a bounded rate.
pub async fn start_message_move_task<B: Broker>(
    svc: &Service<B>,
    input: StartMessageMoveTaskInput,
) -> Result<Value, SqsError> {
    let tasks = &svc.move_tasks;
    let source_arn = required(input.source_arn, "SourceArn")?;
    let source = tasks.resolve(&source_arn, "SourceArn").await?;
    let max_per_second = input
        .max_number_of_messages_per_second
        .map(|r| in_range("MaxNumberOfMessagesPerSecond", r, 1, MAX_RATE))
        .transpose()?;
    let destination = match &input.destination_arn {
        Some(arn) => {
            let name = tasks.resolve(arn, "DestinationArn").await?;
            if name == source {
                return Err(SqsError::invalid_parameter(
                    "The DestinationArn must differ from the SourceArn.",
                ));
            }
            Some(name)
        }
        None => None,
    };
    let handle = tasks
        .start(NewMoveTask {
            source_arn,
            source,
            destination_arn: input.destination_arn,
            destination,
            max_per_second,
        })
        .await?;
    Ok(json!({ "TaskHandle": handle }))
}

/// ListMessageMoveTasks: a source's tasks, newest first.
pub async fn list_message_move_tasks<B: Broker>(
    svc: &Service<B>,
    input: ListMessageMoveTasksInput,
) -> Result<Value, SqsError> {
    let source_arn = required(input.source_arn, "SourceArn")?;
    svc.move_tasks.resolve(&source_arn, "SourceArn").await?;
    let max = match input.max_results {
        Some(m) => in_range("MaxResults", m, 1, 10)? as usize,
        None => 1,
    };
    let results: Vec<Value> = svc
        .move_tasks
        .list(&source_arn, max)
        .await?
        .into_iter()
        .map(|t| {
            let mut entry = json!({
                "Status": t.status.as_str(),
                "SourceArn": t.source_arn,
                "ApproximateNumberOfMessagesMoved": t.moved,
                "ApproximateNumberOfMessagesToMove": t.to_move,
                "StartedTimestamp": t.started_at,
            });
            if t.status == MoveTaskStatus::Running {
                entry["TaskHandle"] = json!(t.handle);
            }
            if let Some(d) = t.destination_arn {
                entry["DestinationArn"] = json!(d);
            }
            if let Some(r) = t.max_per_second {
                entry["MaxNumberOfMessagesPerSecond"] = json!(r);
            }
            if let Some(f) = t.failure_reason {
                entry["FailureReason"] = json!(f);
            }
            entry
        })
        .collect();
    Ok(json!({ "Results": results }))
}

/// CancelMessageMoveTask: stops a running task; moved messages stay moved.
pub async fn cancel_message_move_task<B: Broker>(
    svc: &Service<B>,
    input: CancelMessageMoveTaskInput,
) -> Result<Value, SqsError> {
    let handle = required(input.task_handle, "TaskHandle")?;
    let moved = svc.move_tasks.cancel(&handle).await?;
    Ok(json!({ "ApproximateNumberOfMessagesMoved": moved }))
}
