//! Message move tasks (rule R7): a dead-letter queue's messages moved back
//! to their sources, or to a destination, at a bounded rate, in the
//! background.
//!
//! - `state.rs`: [`MoveTasks`], the component the service holds: the
//!   broker and the cancel flags of the tasks this process runs;
//! - this file: its operations: it starts, lists and cancels tasks;
//! - [`runner`]: the loop that moves a task's messages, the adopter that
//!   resumes tasks whose node died (shared storage), and the failing of
//!   tasks a previous run left active.
//!
//! The actions in `actions/move_tasks.rs` read requests and answer them;
//! this component does not know about requests.

pub mod runner;
mod state;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sluice_broker::{Broker, Coordination, MoveTask, MoveTaskStatus};
use sluice_core::{ErrorCode, SqsError};

pub use runner::{fail_interrupted_tasks, spawn_move_task_adopter};
pub use state::MoveTasks;

/// Most move tasks an account may have active at a time (rule R16).
pub const MAX_ACTIVE_TASKS_PER_ACCOUNT: usize = 100;

/// The account id in a queue ARN; empty when it is not one.
fn account_of(arn: &str) -> &str {
    sluice_core::queue_name::arn_parts(arn).map_or("", |(_, account, _)| account)
}

/// A task to start, its queues resolved and checked by the caller.
#[derive(Debug, Clone)]
pub struct NewMoveTask {
    /// The ARN of the dead-letter queue to empty.
    pub source_arn: String,
    /// Its key, and whether it is a FIFO queue.
    pub source: Resolved,
    /// Where its messages go, when not back to their sources.
    pub destination_arn: Option<String>,
    /// Its key, and whether it is a FIFO queue.
    pub destination: Option<Resolved>,
    /// Messages moved per second, when the caller set a rate.
    pub max_per_second: Option<u32>,
}

/// A queue an ARN of a request names, as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Its key.
    pub key: String,
    /// Whether it is a FIFO queue.
    pub fifo: bool,
}

/// `ResourceNotFoundException` for the queue parameter `what`.
pub fn not_found(what: &str) -> SqsError {
    SqsError::new(
        ErrorCode::ResourceNotFoundException,
        format!("The resource that you specified for the {what} parameter doesn't exist."),
    )
}

impl<B: Coordination> MoveTasks<B> {
    /// The tasks of the queue `source_arn`, newest first, at most `max`.
    pub async fn list(&self, source_arn: &str, max: usize) -> Result<Vec<MoveTask>, SqsError> {
        Ok(self
            .broker
            .move_tasks()
            .await?
            .into_iter()
            .filter(|t| t.source_arn == source_arn)
            .take(max)
            .collect())
    }
}

impl<B: Broker> MoveTasks<B> {
    /// The existing queue `arn` names, or `ResourceNotFoundException` for
    /// the parameter `what`.
    pub async fn resolve(&self, arn: &str, what: &str) -> Result<Resolved, SqsError> {
        // Any account's queue: whether the request may touch it is the
        // access check's to say (rule A2); an unknown one does not exist.
        let key = self
            .account
            .key_from_any_arn(arn)
            .ok_or_else(|| not_found(what))?;
        let meta = self
            .broker
            .get_queue(&key)
            .await
            .map_err(|_| not_found(what))?;
        Ok(Resolved {
            key,
            fifo: meta.config.fifo,
        })
    }

    /// Starts moving a dead-letter queue's messages; the new task's handle.
    pub async fn start(&self, new: NewMoveTask) -> Result<String, SqsError> {
        let NewMoveTask {
            source_arn,
            source,
            destination_arn,
            destination,
            max_per_second,
        } = new;
        let mut is_dlq = false;
        for name in self.broker.list_queues().await? {
            if let Ok(meta) = self.broker.get_queue(&name).await
                && meta.config.dead_letter_targets().contains(&source_arn)
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
        // A FIFO DLQ redrives only into a FIFO queue, a standard one only
        // into a standard queue (rule R16); back to their sources they
        // always match, as a RedrivePolicy names a DLQ of its own type.
        if let Some(destination) = &destination
            && source.fifo != destination.fifo
        {
            return Err(SqsError::invalid_parameter(
                "The destination queue must be of the same type as the source queue: \
                 both standard or both FIFO.",
            ));
        }
        let existing = self.broker.move_tasks().await?;
        if existing
            .iter()
            .any(|t| t.source_arn == source_arn && t.status.is_active())
        {
            // Shared storage also refuses a second active task at the save
            // below, with this error, when two nodes pass this check at once.
            return Err(sluice_broker::EngineError::MoveTaskAlreadyRunning.into());
        }
        let account = account_of(&source_arn);
        let active_in_account = existing
            .iter()
            .filter(|t| t.status.is_active() && account_of(&t.source_arn) == account)
            .count();
        if active_in_account >= MAX_ACTIVE_TASKS_PER_ACCOUNT {
            return Err(SqsError::new(
                ErrorCode::OverLimit,
                format!(
                    "There are already {MAX_ACTIVE_TASKS_PER_ACCOUNT} active message move tasks \
                     in this account, the most it may have at a time."
                ),
            ));
        }
        let to_move = self.broker.queue_counts(&source.key).await?.visible;
        let task = MoveTask {
            handle: encode_handle(&uuid::Uuid::new_v4().to_string(), &source_arn),
            source_arn,
            destination_arn,
            max_per_second,
            status: MoveTaskStatus::Running,
            moved: 0,
            to_move,
            failure_reason: None,
            started_at: self.clock.now(),
        };
        // Held while this node runs the task, so no other node sharing the
        // storage runs it too; a new handle is never held elsewhere.
        let claim = self
            .broker
            .claim_job(&runner::job_name(&task.handle))
            .await?
            .ok_or_else(|| SqsError::internal("The new move task is claimed elsewhere."))?;
        self.broker.save_move_task(task.clone()).await?;
        let cancel = Arc::new(AtomicBool::new(false));
        self.cancels().insert(task.handle.clone(), cancel.clone());
        tracing::info!(task = %task.handle, source = %task.source_arn, to_move, "message move task started");
        let handle = task.handle.clone();
        tokio::spawn(runner::run(
            self.broker.clone(),
            self.clock.clone(),
            task,
            source.key,
            destination.map(|d| d.key),
            cancel,
            claim,
        ));
        Ok(handle)
    }

    /// Stops the running task `handle`; the messages it moved so far.
    pub async fn cancel(&self, handle: &str) -> Result<u64, SqsError> {
        // AWS reads the handle first, then the queue it names, then the task
        // (rule R9), each with its own answer.
        let (task_id, source_arn) = decode_handle(handle).ok_or_else(|| {
            SqsError::invalid_parameter("Value for parameter TaskHandle is invalid.")
        })?;
        self.resolve(&source_arn, "SourceArn").await?;
        let mut task = self
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
        let cancel = self.cancels().get(&task.handle).cloned();
        match cancel {
            Some(flag) => {
                flag.store(true, Ordering::SeqCst);
                task.status = MoveTaskStatus::Cancelling;
            }
            // No runner here (it ended or lives elsewhere): nothing moves any more.
            None => task.status = MoveTaskStatus::Cancelled,
        }
        self.broker.save_move_task(task.clone()).await?;
        Ok(task.moved)
    }
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
