//! StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask
//! (rule R7): requests read and answered here; the tasks themselves are
//! the `move_tasks` component's (`crate::move_tasks`).

use sluice_broker::{Broker, MoveTaskStatus};
use sluice_core::SqsError;
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{
    CancelMessageMoveTaskRequest, CancelMessageMoveTaskResult, ListMessageMoveTasksRequest,
    ListMessageMoveTasksResult, ListMessageMoveTasksResultEntry, StartMessageMoveTaskRequest,
    StartMessageMoveTaskResult,
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
    input: StartMessageMoveTaskRequest,
) -> Result<StartMessageMoveTaskResult, SqsError> {
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
            if name.key == source.key {
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
    Ok(StartMessageMoveTaskResult {
        task_handle: Some(handle),
    })
}

/// ListMessageMoveTasks: a source's tasks, newest first.
pub async fn list_message_move_tasks<B: Broker>(
    svc: &Service<B>,
    input: ListMessageMoveTasksRequest,
) -> Result<ListMessageMoveTasksResult, SqsError> {
    let source_arn = required(input.source_arn, "SourceArn")?;
    svc.move_tasks.resolve(&source_arn, "SourceArn").await?;
    let max = match input.max_results {
        Some(m) => in_range("MaxResults", m, 1, 10)? as usize,
        None => 1,
    };
    let results = svc
        .move_tasks
        .list(&source_arn, max)
        .await?
        .into_iter()
        .map(|t| ListMessageMoveTasksResultEntry {
            task_handle: (t.status == MoveTaskStatus::Running).then_some(t.handle),
            status: Some(t.status.as_str().to_string()),
            source_arn: Some(t.source_arn),
            destination_arn: t.destination_arn,
            max_number_of_messages_per_second: t.max_per_second.map(i64::from),
            approximate_number_of_messages_moved: Some(t.moved as i64),
            approximate_number_of_messages_to_move: Some(t.to_move as i64),
            failure_reason: t.failure_reason,
            started_timestamp: Some(t.started_at as i64),
        })
        .collect();
    Ok(ListMessageMoveTasksResult { results })
}

/// CancelMessageMoveTask: stops a running task; moved messages stay moved.
pub async fn cancel_message_move_task<B: Broker>(
    svc: &Service<B>,
    input: CancelMessageMoveTaskRequest,
) -> Result<CancelMessageMoveTaskResult, SqsError> {
    let handle = required(input.task_handle, "TaskHandle")?;
    let moved = svc.move_tasks.cancel(&handle).await?;
    Ok(CancelMessageMoveTaskResult {
        approximate_number_of_messages_moved: Some(moved as i64),
    })
}
