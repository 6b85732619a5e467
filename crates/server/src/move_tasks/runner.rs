//! The background side of message move tasks: the runner that moves a
//! task's messages step by step, the adopter that resumes tasks whose node
//! died, and the failing of tasks a previous run of the server left active.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sluice_broker::{Broker, Coordination, JobClaim, MoveTask, MoveTaskStatus, Redrive};
use sluice_core::SqsError;
use sluice_core::clock::Clock;

use super::state::MoveTasks;

/// Messages moved per second when the task sets no rate.
const DEFAULT_RATE: u32 = 1_000;
/// How long a task may run (rule R16), milliseconds: 36 hours.
pub const MAX_TASK_MS: u64 = 36 * 3600 * 1000;
/// Why a task that ran for [`MAX_TASK_MS`] is failed.
const TOO_LONG_REASON: &str = "The task ran for 36 hours, the longest a message move task may run; start a new task to move the remaining messages.";
/// Why an active task is failed when the server starts.
const RESTART_REASON: &str = "The server restarted while this task was running; start a new task to move the remaining messages.";

/// Ends the tasks a previous run of the server left active, with a reason
/// (they never silently vanish).
pub async fn fail_interrupted_tasks<C: Coordination>(broker: &C) -> Result<usize, SqsError> {
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

/// The background job name of a move task, claimed by the node running it.
pub(super) fn job_name(handle: &str) -> String {
    format!("move-task:{handle}")
}

/// How often a node looks for move tasks whose node died (shared storage).
const ADOPT_INTERVAL: Duration = Duration::from_secs(2);

/// With storage shared by several nodes: resumes the active move tasks no
/// live node runs (their node died: its claim went with it), so a task is
/// never silently lost and never run twice. Runs until the service is
/// dropped.
pub fn spawn_move_task_adopter<B: Broker>(
    tasks: &Arc<MoveTasks<B>>,
) -> tokio::task::JoinHandle<()> {
    let weak = Arc::downgrade(tasks);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(ADOPT_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(tasks) = weak.upgrade() else { break };
            if let Err(e) = adopt_orphans(&tasks).await {
                tracing::warn!(error = %e, "could not look for orphaned move tasks");
            }
        }
    })
}

async fn adopt_orphans<B: Broker>(tasks: &MoveTasks<B>) -> Result<(), SqsError> {
    for task in tasks.broker.move_tasks().await? {
        // A task this node runs is claimed through a session of its own,
        // so the claim below fails for it as for any live node's task.
        if !task.status.is_active() {
            continue;
        }
        let Some(claim) = tasks.broker.claim_job(&job_name(&task.handle)).await? else {
            continue; // A live node runs it.
        };
        // It may have ended between the listing and the claim.
        let Some(mut task) = tasks
            .broker
            .move_tasks()
            .await?
            .into_iter()
            .find(|t| t.handle == task.handle && t.status.is_active())
        else {
            continue;
        };
        let account = &tasks.account;
        let source = account.key_from_any_arn(&task.source_arn);
        let destination = match &task.destination_arn {
            Some(arn) => account.key_from_any_arn(arn).map(Some),
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
            tasks.broker.save_move_task(task).await?;
            continue;
        };
        tracing::warn!(task = %task.handle, moved = task.moved, "resuming a message move task whose node stopped");
        let cancel = Arc::new(AtomicBool::new(false));
        tasks.cancels().insert(task.handle.clone(), cancel.clone());
        tokio::spawn(run(
            tasks.broker.clone(),
            tasks.clock.clone(),
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
async fn ended_elsewhere<C: Coordination>(broker: &C, handle: &str) -> Option<MoveTask> {
    let tasks = broker.move_tasks().await.ok()?;
    tasks
        .into_iter()
        .find(|t| t.handle == handle && !t.status.is_active())
}

/// Moves a task's messages, one step per second at its rate, until every
/// message counted at the start is handled, the DLQ is empty, the task is
/// cancelled (here, or through another node), a message cannot be moved,
/// or it has run for 36 hours. Holds `claim` until it ends.
pub(super) async fn run<B: Broker>(
    broker: B,
    clock: Arc<dyn Clock>,
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
        if clock.now().saturating_sub(task.started_at) >= MAX_TASK_MS {
            task.status = MoveTaskStatus::Failed;
            task.failure_reason = Some(TOO_LONG_REASON.into());
            break;
        }
        let remaining = task.to_move.saturating_sub(task.moved);
        if remaining == 0 {
            task.status = MoveTaskStatus::Completed;
            break;
        }
        let wanted = remaining.min(rate);
        let step = Redrive {
            destination: destination.clone(),
            max: wanted as usize,
            ..Default::default()
        };
        match broker.redrive_messages(&source, &step).await {
            Err(e) => {
                // AWS names the failure by its error code alone (rule R10).
                task.status = MoveTaskStatus::Failed;
                task.failure_reason = Some(e.to_sqs().code.query_code().to_string());
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
                // Every counted message moved, or fewer receivable than
                // asked for (the rest was received or deleted meanwhile):
                // the DLQ is drained, and the task says COMPLETED with the
                // count that drained it, never RUNNING with it (rule R7).
                if task.moved >= task.to_move || step.moved < wanted {
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
