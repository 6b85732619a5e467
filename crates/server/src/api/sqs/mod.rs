//! The SQS API: its requests decoded in either protocol, checked, and run
//! by one function per operation. Find an operation by its name:
//!
//! | operation | file |
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
//!
//! `batch.rs` holds the rules every batch action shares (rule L2),
//! `by_handle.rs` the steps of the actions that name messages by receipt
//! handle, `named.rs` what each request names for the access check.

mod attributes;
pub(crate) mod batch;
pub(crate) mod by_handle;
mod dead_letter;
mod delete;
mod move_tasks;
mod named;
mod permissions;
mod queues;
mod receive;
pub(crate) mod send;
mod tags;
mod visibility;

use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_protocol::decode::{invalid_action, json_body, json_error, query_error};
use sluice_protocol::sqs::{Operation, Request, Response};
use sluice_protocol::wire::Params;
use sluice_protocol::{Protocol, XML_NAMESPACE};

use super::Api;
use crate::auth::Principal;
use crate::authorize::{Asked, authorize};
use crate::inbound::Call;
use crate::service::{RequestContext, Service};

/// The SQS API's handler.
pub struct SqsApi;

impl<B: Broker> Api<B> for SqsApi {
    type Operation = Operation;
    type Request = Request;
    type Response = Response;
    type Error = SqsError;

    const NAMESPACE: &'static str = XML_NAMESPACE;

    const SERVICE: &'static str = "sqs";

    fn name(op: Operation) -> &'static str {
        op.name()
    }

    fn needs_signing_region(op: Operation) -> bool {
        op.needs_signing_region()
    }

    fn decode(op: Operation, call: &Call<'_>) -> Result<Request, SqsError> {
        match call.protocol {
            Protocol::Json => Request::from_json(op, json_body(call.body)?).map_err(json_error),
            Protocol::Query | Protocol::QueryJson => {
                let mut params = Params::new(&call.params);
                // A Query request sent to a queue's URL names the queue by
                // its path, unless it names one itself; the operations that
                // name no queue are refused there (rule W7).
                if let Some(path) = call.queue_path() {
                    if !op.allowed_at_queue_url() {
                        return Err(invalid_action(op.name()));
                    }
                    params.set_if_absent("QueueUrl", path);
                }
                Request::from_query(op, &params).map_err(query_error)
            }
        }
    }

    async fn authorize(
        svc: &Service<B>,
        ctx: &RequestContext,
        principal: &Principal,
        request: &Request,
    ) -> Result<(), SqsError> {
        let op = request.operation();
        let asked = Asked {
            iam: op.iam_action(),
            action: op.name(),
            named: named::named(request),
        };
        authorize(svc, ctx, principal, asked).await
    }

    async fn handle(
        svc: &Service<B>,
        ctx: &RequestContext,
        request: Request,
    ) -> Result<Response, SqsError> {
        dispatch(svc, ctx, request).await
    }

    fn capacity(answer: &Response) -> usize {
        match answer {
            // The bodies are most of a receive's answer.
            Response::ReceiveMessage(result) => {
                (result.messages.iter())
                    .map(|m| m.body.as_ref().map_or(0, String::len) + 512)
                    .sum::<usize>()
                    + 64
            }
            _ => 256,
        }
    }
}

/// Runs `request`: an exhaustive match from operation to action.
async fn dispatch<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    request: Request,
) -> Result<Response, SqsError> {
    Ok(match request {
        Request::AddPermission(input) => {
            permissions::add_permission(svc, input).await?;
            Response::AddPermission
        }
        Request::CancelMessageMoveTask(input) => {
            Response::CancelMessageMoveTask(move_tasks::cancel_message_move_task(svc, input).await?)
        }
        Request::ChangeMessageVisibility(input) => {
            visibility::change_message_visibility(svc, input).await?;
            Response::ChangeMessageVisibility
        }
        Request::ChangeMessageVisibilityBatch(input) => Response::ChangeMessageVisibilityBatch(
            visibility::change_message_visibility_batch(svc, input).await?,
        ),
        Request::CreateQueue(input) => {
            Response::CreateQueue(queues::create_queue(svc, ctx, input).await?)
        }
        Request::DeleteMessage(input) => {
            delete::delete_message(svc, input).await?;
            Response::DeleteMessage
        }
        Request::DeleteMessageBatch(input) => {
            Response::DeleteMessageBatch(delete::delete_message_batch(svc, input).await?)
        }
        Request::DeleteQueue(input) => {
            queues::delete_queue(svc, input).await?;
            Response::DeleteQueue
        }
        Request::GetQueueAttributes(input) => {
            Response::GetQueueAttributes(attributes::get_queue_attributes(svc, input).await?)
        }
        Request::GetQueueUrl(input) => {
            Response::GetQueueUrl(queues::get_queue_url(svc, ctx, input).await?)
        }
        Request::ListDeadLetterSourceQueues(input) => Response::ListDeadLetterSourceQueues(
            dead_letter::list_dead_letter_source_queues(svc, ctx, input).await?,
        ),
        Request::ListMessageMoveTasks(input) => {
            Response::ListMessageMoveTasks(move_tasks::list_message_move_tasks(svc, input).await?)
        }
        Request::ListQueueTags(input) => {
            Response::ListQueueTags(tags::list_queue_tags(svc, input).await?)
        }
        Request::ListQueues(input) => {
            Response::ListQueues(queues::list_queues(svc, ctx, input).await?)
        }
        Request::PurgeQueue(input) => {
            queues::purge_queue(svc, input).await?;
            Response::PurgeQueue
        }
        Request::ReceiveMessage(input) => {
            Response::ReceiveMessage(receive::receive_message(svc, input).await?)
        }
        Request::RemovePermission(input) => {
            permissions::remove_permission(svc, input).await?;
            Response::RemovePermission
        }
        Request::SendMessage(input) => {
            Response::SendMessage(send::send_message(svc, ctx, input).await?)
        }
        Request::SendMessageBatch(input) => {
            Response::SendMessageBatch(send::send_message_batch(svc, ctx, input).await?)
        }
        Request::SetQueueAttributes(input) => {
            attributes::set_queue_attributes(svc, input).await?;
            Response::SetQueueAttributes
        }
        Request::StartMessageMoveTask(input) => {
            Response::StartMessageMoveTask(move_tasks::start_message_move_task(svc, input).await?)
        }
        Request::TagQueue(input) => {
            tags::tag_queue(svc, input).await?;
            Response::TagQueue
        }
        Request::UntagQueue(input) => {
            tags::untag_queue(svc, input).await?;
            Response::UntagQueue
        }
    })
}
