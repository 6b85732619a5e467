//! One function per SQS action. Find an action by its name:
//!
//! | action | file |
//! |---|---|
//! | CreateQueue, GetQueueUrl, ListQueues, DeleteQueue, PurgeQueue | `queues.rs` |
//! | GetQueueAttributes, SetQueueAttributes | `attributes.rs` |
//! | TagQueue, UntagQueue, ListQueueTags | `tags.rs` |
//! | AddPermission, RemovePermission | `permissions.rs` |
//! | SendMessage, SendMessageBatch | `send.rs` |
//! | ReceiveMessage | `receive.rs` |
//! | DeleteMessage, DeleteMessageBatch | `delete.rs` |
//! | ChangeMessageVisibility, ChangeMessageVisibilityBatch | `visibility.rs` |
//! | ListDeadLetterSourceQueues | `dead_letter.rs` |
//! | StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask | `move_tasks.rs` |
//! | NackMessage, PeekMessages, RedriveMessages (sluice's own) | `extensions.rs` |
//! | PutAlarm, DescribeAlarms, DeleteAlarms (sluice's own) | `alarms.rs` |
//! | CreateBackup (sluice's own) | `backup.rs` |
//! | ListConsumers, CreateConsumer, UpdateConsumer, DeleteConsumer, PauseConsumer, ResumeConsumer (sluice's own) | `consumers.rs` |
//! | GetDepthHistory (sluice's own) | `depth_history.rs` |
//!
//! `batch.rs` holds the rules every batch action shares (rule L2),
//! `by_handle.rs` the steps of the actions that name messages by receipt
//! handle.

mod alarms;
mod attributes;
mod backup;
mod batch;
mod by_handle;
mod consumers;
mod dead_letter;
mod delete;
mod depth_history;
mod extensions;
mod move_tasks;
mod permissions;
mod queues;
mod receive;
mod send;
mod tags;
mod visibility;

use sluice_broker::Broker;
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::requests::parse;
use sluice_protocol::{Output, Request};

use crate::service::{RequestContext, Service};

impl<B: Broker> Service<B> {
    /// Runs one decoded request and returns its output. (Here rather than
    /// in `service.rs`: the service holds the components, the actions call
    /// them, and the service does not import the actions.)
    pub async fn handle(&self, request: Request, ctx: &RequestContext) -> Result<Output, SqsError> {
        dispatch(self, request, ctx).await
    }
}

/// Runs `request` against the service.
pub async fn dispatch<B: Broker>(
    svc: &Service<B>,
    request: Request,
    ctx: &RequestContext,
) -> Result<Output, SqsError> {
    let input = request.input;
    let output = match request.action.as_str() {
        "ReceiveMessage" => {
            return receive::receive_message(svc, parse(input)?)
                .await
                .map(Output::Messages);
        }
        "CreateQueue" => queues::create_queue(svc, ctx, parse(input)?).await,
        "GetQueueUrl" => queues::get_queue_url(svc, ctx, parse(input)?).await,
        "ListQueues" => queues::list_queues(svc, ctx, parse(input)?).await,
        "DeleteQueue" => queues::delete_queue(svc, parse(input)?).await,
        "PurgeQueue" => queues::purge_queue(svc, parse(input)?).await,
        "GetQueueAttributes" => attributes::get_queue_attributes(svc, parse(input)?).await,
        "SetQueueAttributes" => attributes::set_queue_attributes(svc, parse(input)?).await,
        "TagQueue" => tags::tag_queue(svc, parse(input)?).await,
        "UntagQueue" => tags::untag_queue(svc, parse(input)?).await,
        "ListQueueTags" => tags::list_queue_tags(svc, parse(input)?).await,
        "AddPermission" => permissions::add_permission(svc, parse(input)?).await,
        "RemovePermission" => permissions::remove_permission(svc, parse(input)?).await,
        "SendMessage" => send::send_message(svc, ctx, parse(input)?).await,
        "SendMessageBatch" => {
            return send::send_message_batch(svc, ctx, parse(input)?)
                .await
                .map(Output::Batch);
        }
        "DeleteMessage" => delete::delete_message(svc, parse(input)?).await,
        "DeleteMessageBatch" => {
            return delete::delete_message_batch(svc, parse(input)?)
                .await
                .map(Output::Batch);
        }
        "ChangeMessageVisibility" => {
            visibility::change_message_visibility(svc, parse(input)?).await
        }
        "ChangeMessageVisibilityBatch" => {
            return visibility::change_message_visibility_batch(svc, parse(input)?)
                .await
                .map(Output::Batch);
        }
        "ListDeadLetterSourceQueues" => {
            dead_letter::list_dead_letter_source_queues(svc, ctx, parse(input)?).await
        }
        "StartMessageMoveTask" => move_tasks::start_message_move_task(svc, parse(input)?).await,
        "ListMessageMoveTasks" => move_tasks::list_message_move_tasks(svc, parse(input)?).await,
        "CancelMessageMoveTask" => move_tasks::cancel_message_move_task(svc, parse(input)?).await,
        "NackMessage" => extensions::nack_message(svc, parse(input)?).await,
        "PeekMessages" => extensions::peek_messages(svc, parse(input)?).await,
        "RedriveMessages" => extensions::redrive_messages(svc, parse(input)?).await,
        "PutAlarm" => alarms::put_alarm(svc, parse(input)?).await,
        "DescribeAlarms" => alarms::describe_alarms(svc, ctx, parse(input)?).await,
        "DeleteAlarms" => alarms::delete_alarms(svc, parse(input)?).await,
        "CreateBackup" => backup::create_backup(svc, parse(input)?).await,
        "ListConsumers" => consumers::list_consumers(svc, ctx, parse(input)?).await,
        "CreateConsumer" => consumers::create_consumer(svc, parse(input)?).await,
        "UpdateConsumer" => consumers::update_consumer(svc, parse(input)?).await,
        "DeleteConsumer" => consumers::delete_consumer(svc, parse(input)?).await,
        "PauseConsumer" => consumers::set_consumer_stopped(svc, parse(input)?, true).await,
        "ResumeConsumer" => consumers::set_consumer_stopped(svc, parse(input)?, false).await,
        "GetDepthHistory" => depth_history::get_depth_history(svc, ctx, parse(input)?).await,
        other => Err(SqsError::new(
            ErrorCode::UnsupportedOperation,
            format!("{other} is not supported by this server yet."),
        )),
    };
    output.map(Output::Value)
}
