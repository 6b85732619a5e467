//! StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask
//! (rule R7), and the background runner that moves the messages.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sluice_broker::{Broker, JobClaim, MoveTask, MoveTaskStatus, Redrive};
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::requests::{
    CancelMessageMoveTaskInput, ListMessageMoveTasksInput, StartMessageMoveTaskInput, required,
};

use super::in_range;
use crate::service::Service;

/// Messages moved per second when the task sets no rate.
const DEFAULT_RATE: u32 = 1_000;
/// Largest rate a task may ask for.
const MAX_RATE: i64 = 500;
/// Why an active task is failed when the server starts.
const RESTART_REASON: &str = "The server restarted while this task was running; start a new task to move the remaining messages.";

fn not_found(what: &str) -> SqsError {
    SqsError::new(
        ErrorCode::ResourceNotFoundException,
        format!("The resource that you specified for the {what} parameter doesn't exist."),
    )
}

/// StartMessageMoveTask: moves a DLQ's messages back to their sources, or
/// to a destination, at a bounded rate.
pub async fn start_message_move_task<B: Broker>(
    svc: &Service<B>,
    input: StartMessageMoveTaskInput,
) -> Result<Value, SqsError> {
    let source_arn = required(input.source_arn, "SourceArn")?;
    let source = svc
        .key_from_arn(&source_arn)
        .ok_or_else(|| not_found("SourceArn"))?;
    svc.broker
        .get_queue(&source)
        .await
        .map_err(|_| not_found("SourceArn"))?;
    let rate = input
        .max_number_of_messages_per_second
        .map(|r| in_range("MaxNumberOfMessagesPerSecond", r, 1, MAX_RATE))
        .transpose()?;
    let destination = match &input.destination_arn {
        Some(arn) => {
            let name = svc
                .key_from_arn(arn)
                .ok_or_else(|| not_found("DestinationArn"))?;
            svc.broker
                .get_queue(&name)
                .await
                .map_err(|_| not_found("DestinationArn"))?;
            if name == source {
                return Err(SqsError::invalid_parameter(
                    "The DestinationArn must differ from the SourceArn.",
                ));
            }
            Some(name.to_string())
        }
        None => None,
    };
    let mut is_dlq = false;
    for name in svc.broker.list_queues().await? {
        if let Ok(meta) = svc.broker.get_queue(&name).await
            && meta
                .config
                .redrive()
                .is_some_and(|p| p.dead_letter_target_arn == source_arn)
        {
            is_dlq = true;
            break;
        }
    }
    if !is_dlq {
        return Err(SqsError::invalid_parameter(
            "Source queue must be configured as a Dead Letter Queue.",
        ));
    }
    let existing = svc.broker.move_tasks().await?;
    if existing
        .iter()
        .any(|t| t.source_arn == source_arn && t.status.is_active())
    {
        // Shared storage also refuses a second active task at the save
        // below, with this error, when two nodes pass this check at once.
        return Err(sluice_broker::shared::move_task_already_running());
    }
    let to_move = svc.broker.queue_counts(&source).await?.visible;
    let task = MoveTask {
        handle: encode_handle(&uuid::Uuid::new_v4().to_string(), &source_arn),
        source_arn,
        destination_arn: input.destination_arn,
        max_per_second: rate,
        status: MoveTaskStatus::Running,
        moved: 0,
        to_move,
        failure_reason: None,
        started_at: svc.now(),
    };
    // Held while this node runs the task, so no other node sharing the
    // storage runs it too; a new handle is never held elsewhere.
    let claim = svc
        .broker
        .claim_job(&job_name(&task.handle))
        .await?
        .ok_or_else(|| SqsError::internal("The new move task is claimed elsewhere."))?;
    svc.broker.save_move_task(task.clone()).await?;
    let cancel = Arc::new(AtomicBool::new(false));
    svc.move_task_cancels()
        .insert(task.handle.clone(), cancel.clone());
    tracing::info!(task = %task.handle, source = %task.source_arn, to_move, "message move task started");
    let handle = task.handle.clone();
    tokio::spawn(run(
        svc.broker.clone(),
        task,
        source,
        destination,
        cancel,
        claim,
    ));
    Ok(json!({ "TaskHandle": handle }))
}

/// ListMessageMoveTasks: a source's tasks, newest first.
pub async fn list_message_move_tasks<B: Broker>(
    svc: &Service<B>,
    input: ListMessageMoveTasksInput,
) -> Result<Value, SqsError> {
    let source_arn = required(input.source_arn, "SourceArn")?;
    let source = svc
        .key_from_arn(&source_arn)
        .ok_or_else(|| not_found("SourceArn"))?;
    svc.broker
        .get_queue(&source)
        .await
        .map_err(|_| not_found("SourceArn"))?;
    let max = match input.max_results {
        Some(m) => in_range("MaxResults", m, 1, 10)? as usize,
        None => 1,
    };
    let results: Vec<Value> = svc
        .broker
        .move_tasks()
        .await?
        .into_iter()
        .filter(|t| t.source_arn == source_arn)
        .take(max)
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
    // AWS reads the handle first, then the queue it names, then the task
    // (rule R9), each with its own answer.
    let (task_id, source_arn) = decode_handle(&handle)
        .ok_or_else(|| SqsError::invalid_parameter("Value for parameter TaskHandle is invalid."))?;
    let source = svc
        .key_from_arn(&source_arn)
        .ok_or_else(|| not_found("SourceArn"))?;
    svc.broker
        .get_queue(&source)
        .await
        .map_err(|_| not_found("SourceArn"))?;
    let mut task = svc
        .broker
        .move_tasks()
        .await?
        .into_iter()
        .find(|t| {
            t.source_arn == source_arn
                && decode_handle(&t.handle).is_some_and(|(id, _)| id == task_id)
        })
        .ok_or_else(|| {
            SqsError::new(ErrorCode::ResourceNotFoundException, "Task does not exist.")
        })?;
    if task.status != MoveTaskStatus::Running {
        return Err(SqsError::new(
            ErrorCode::UnsupportedOperation,
            format!(
                "Only a RUNNING task can be cancelled; this one is {}.",
                task.status.as_str()
            ),
        ));
    }
    let cancel = svc.move_task_cancels().get(&task.handle).cloned();
    match cancel {
        Some(flag) => {
            flag.store(true, Ordering::SeqCst);
            task.status = MoveTaskStatus::Cancelling;
        }
        // No runner here (it ended or lives elsewhere): nothing moves any more.
        None => task.status = MoveTaskStatus::Cancelled,
    }
    svc.broker.save_move_task(task.clone()).await?;
    Ok(json!({ "ApproximateNumberOfMessagesMoved": task.moved }))
}

/// Ends the tasks a previous run of the server left active, with a reason
/// (they never silently vanish).
pub async fn fail_interrupted_tasks<B: Broker>(broker: &B) -> Result<usize, SqsError> {
    let mut failed = 0;
    for mut task in broker.move_tasks().await? {
        if task.status.is_active() {
            task.status = MoveTaskStatus::Failed;
            task.failure_reason = Some(RESTART_REASON.into());
            broker.save_move_task(task).await?;
            failed += 1;
        }
    }
    Ok(failed)
}

/// A task handle as AWS makes it (rule R9): base64 of
/// `{"taskId":"<uuid>","sourceArn":"<arn>"}`, which clients may decode.
fn encode_handle(task_id: &str, source_arn: &str) -> String {
    let doc = json!({ "taskId": task_id, "sourceArn": source_arn }).to_string();
    STANDARD.encode(doc)
}

/// The task id and source ARN of a handle; `None` when it is not one.
pub(crate) fn decode_handle(handle: &str) -> Option<(String, String)> {
    let bytes = STANDARD.decode(handle.trim()).ok()?;
    let doc: Value = serde_json::from_slice(&bytes).ok()?;
    let task_id = doc.get("taskId")?.as_str()?;
    let source_arn = doc.get("sourceArn")?.as_str()?;
    Some((task_id.to_string(), source_arn.to_string()))
}

/// The background job name of a move task, claimed by the node running it.
fn job_name(handle: &str) -> String {
    format!("move-task:{handle}")
}

/// How often a node looks for move tasks whose node died (shared storage).
const ADOPT_INTERVAL: Duration = Duration::from_secs(2);

/// With storage shared by several nodes: resumes the active move tasks no
/// live node runs (their node died: its claim went with it), so a task is
/// never silently lost and never run twice. Runs until the service is
/// dropped.
pub fn spawn_move_task_adopter<B: Broker>(svc: &Arc<Service<B>>) -> tokio::task::JoinHandle<()> {
    let weak = Arc::downgrade(svc);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(ADOPT_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(svc) = weak.upgrade() else { break };
            if let Err(e) = adopt_orphans(&svc).await {
                tracing::warn!(error = %e, "could not look for orphaned move tasks");
            }
        }
    })
}

async fn adopt_orphans<B: Broker>(svc: &Service<B>) -> Result<(), SqsError> {
    for task in svc.broker.move_tasks().await? {
        // A task this node runs is claimed through a session of its own,
        // so the claim below fails for it as for any live node's task.
        if !task.status.is_active() {
            continue;
        }
        let Some(claim) = svc.broker.claim_job(&job_name(&task.handle)).await? else {
            continue; // A live node runs it.
        };
        // It may have ended between the listing and the claim.
        let Some(mut task) = svc
            .broker
            .move_tasks()
            .await?
            .into_iter()
            .find(|t| t.handle == task.handle && t.status.is_active())
        else {
            continue;
        };
        let source = svc.key_from_arn(&task.source_arn);
        let destination = match &task.destination_arn {
            Some(arn) => svc.key_from_arn(arn).map(Some),
            None => Some(None),
        };
        let (Some(source), Some(destination), MoveTaskStatus::Running) =
            (source, destination, task.status)
        else {
            // Cancelling when its node died, or unreadable: end it here.
            task.status = if task.status == MoveTaskStatus::Cancelling {
                MoveTaskStatus::Cancelled
            } else {
                task.failure_reason = Some(ADOPT_REASON.into());
                MoveTaskStatus::Failed
            };
            svc.broker.save_move_task(task).await?;
            continue;
        };
        tracing::warn!(task = %task.handle, moved = task.moved, "resuming a message move task whose node stopped");
        let cancel = Arc::new(AtomicBool::new(false));
        svc.move_task_cancels()
            .insert(task.handle.clone(), cancel.clone());
        tokio::spawn(run(
            svc.broker.clone(),
            task,
            source,
            destination,
            cancel,
            claim,
        ));
    }
    Ok(())
}

/// Why an orphaned task that cannot be resumed is failed.
const ADOPT_REASON: &str =
    "The node running this task stopped and its queues could not be resolved to resume it.";

/// The task as stored now, when a node other than its runner ended it.
async fn ended_elsewhere<B: Broker>(broker: &B, handle: &str) -> Option<MoveTask> {
    let tasks = broker.move_tasks().await.ok()?;
    tasks
        .into_iter()
        .find(|t| t.handle == handle && !t.status.is_active())
}

/// Moves a task's messages, one step per second at its rate, until every
/// message counted at the start is handled, the DLQ is empty, the task is
/// cancelled (here, or through another node), or a message cannot be moved.
/// Holds `claim` until it ends.
async fn run<B: Broker>(
    broker: B,
    mut task: MoveTask,
    source: String,
    destination: Option<String>,
    cancel: Arc<AtomicBool>,
    claim: JobClaim,
) {
    let rate = task.max_per_second.unwrap_or(DEFAULT_RATE) as u64;
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    loop {
        ticks.tick().await;
        if !claim.is_held() {
            // Its lock went with its database session: another node may
            // resume the task now; this runner stops without a word more.
            tracing::warn!(task = %task.handle, "lost the claim on a move task; leaving it to the node that resumes it");
            return;
        }
        if cancel.load(Ordering::SeqCst) {
            task.status = MoveTaskStatus::Cancelled;
            break;
        }
        if let Some(stored) = ended_elsewhere(&broker, &task.handle).await {
            task.status = stored.status;
            task.failure_reason = stored.failure_reason;
            break;
        }
        let remaining = task.to_move.saturating_sub(task.moved);
        if remaining == 0 {
            task.status = MoveTaskStatus::Completed;
            break;
        }
        let step = Redrive {
            destination: destination.clone(),
            max: remaining.min(rate) as usize,
            ..Default::default()
        };
        match broker.redrive_messages(&source, &step).await {
            Err(e) => {
                // AWS names the failure by its error code alone (rule R10).
                task.status = MoveTaskStatus::Failed;
                task.failure_reason = Some(e.code.query_code().to_string());
                break;
            }
            Ok(step) => {
                if step.moved > 0 {
                    tracing::info!(
                        target: "sluice::audit",
                        task = %task.handle,
                        queue = %source,
                        destination = destination.as_deref().unwrap_or("each message's source"),
                        moved = step.moved,
                        message_ids = ?step.message_ids,
                        "message move task step"
                    );
                }
                task.moved += step.moved;
                if step.unmovable > 0 {
                    task.status = MoveTaskStatus::Failed;
                    task.failure_reason = step.reason;
                    break;
                }
                if step.moved == 0 {
                    // Nothing receivable is left (the rest was received or deleted meanwhile).
                    task.status = MoveTaskStatus::Completed;
                    break;
                }
                if let Err(e) = broker.save_move_task(task.clone()).await {
                    tracing::warn!(task = %task.handle, error = %e, "could not record move task progress");
                }
            }
        }
    }
    // A cancel that raced the last step still ends the task as cancelled.
    if cancel.load(Ordering::SeqCst) && task.status == MoveTaskStatus::Completed {
        task.status = MoveTaskStatus::Cancelled;
    }
    tracing::info!(task = %task.handle, status = task.status.as_str(), moved = task.moved, "message move task ended");
    if let Err(e) = broker.save_move_task(task).await {
        tracing::error!(error = %e, "could not record the end of a move task");
    }
    drop(claim);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R9 (AWS recorded answer, LocalStack snapshot test_sqs_move_task.py::
    /// test_basic_move_task_workflow): the handle is base64 of a JSON
    /// document with the task id and the source ARN, in that order.
    #[test]
    fn r9_handle_is_base64_json_with_task_id_and_source_arn() {
        let arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
        let handle = encode_handle("10f57157-fc38-4da9-a113-4de7e12d05dd", arn);
        let doc = String::from_utf8(STANDARD.decode(&handle).unwrap()).unwrap();
        assert_eq!(
            doc,
            format!(r#"{{"taskId":"10f57157-fc38-4da9-a113-4de7e12d05dd","sourceArn":"{arn}"}}"#)
        );
        assert_eq!(
            decode_handle(&handle),
            Some(("10f57157-fc38-4da9-a113-4de7e12d05dd".into(), arn.into()))
        );
    }

    /// R9 (LocalStack snapshot test_cancel_with_invalid_task_handle): what
    /// is not such a document is no handle.
    #[test]
    fn r9_other_strings_are_no_handle() {
        assert_eq!(decode_handle("foobared"), None);
        assert_eq!(decode_handle(&STANDARD.encode(r#"{"taskId":"x"}"#)), None);
        assert_eq!(decode_handle("10f57157-fc38-4da9-a113-4de7e12d05dd"), None);
    }
}
