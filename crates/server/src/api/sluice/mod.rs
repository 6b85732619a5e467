//! sluice's own actions (`Sluice.<Action>` in the JSON protocol, by name
//! in the Query protocol), served in SQS's protocols and errors. Find an
//! operation by its name:
//!
//! | operation | file |
//! |---|---|
//! | NackMessage, PeekMessages, RedriveMessages | `messages.rs` |
//! | PutAlarm, DescribeAlarms, DeleteAlarms | `alarms.rs` |
//! | ListConsumers, CreateConsumer, UpdateConsumer, DeleteConsumer, PauseConsumer, ResumeConsumer | `consumers.rs` |
//! | GetDepthHistory | `depth_history.rs` |
//! | CreateBackup | `backup.rs` |
//! | DescribeTopics | `topics.rs` |
//! | ClaimIdempotencyKey, CompleteIdempotencyKey, ReleaseIdempotencyKey | `idempotency.rs` |
//! | ListArchivedMessages, RestoreArchivedMessages | `archive.rs` |
//!
//! `named.rs` holds what each request names for the access check.

mod alarms;
mod archive;
mod backup;
mod consumers;
mod depth_history;
mod idempotency;
mod messages;
mod named;
mod topics;

use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_protocol::decode::{json_body, json_error, query_error};
use sluice_protocol::sluice::{Operation, Request, Response};
use sluice_protocol::wire::Params;
use sluice_protocol::{Protocol, XML_NAMESPACE};

use super::Api;
use crate::auth::Principal;
use crate::authorize::{Asked, authorize};
use crate::inbound::Call;
use crate::service::{RequestContext, Service};

/// The handler of sluice's own actions.
pub struct SluiceApi;

impl<B: Broker> Api<B> for SluiceApi {
    type Operation = Operation;
    type Request = Request;
    type Response = Response;
    type Error = SqsError;

    /// Answered in SQS's namespace: they extend its API.
    const NAMESPACE: &'static str = XML_NAMESPACE;

    /// Signed as SQS requests, for the same reason.
    const SERVICE: &'static str = "sqs";

    fn name(op: Operation) -> &'static str {
        op.name()
    }

    fn needs_signing_region(_op: Operation) -> bool {
        false
    }

    fn decode(op: Operation, call: &Call<'_>) -> Result<Request, SqsError> {
        match call.protocol {
            Protocol::Json => Request::from_json(op, json_body(call.body)?).map_err(json_error),
            Protocol::Query | Protocol::QueryJson => {
                let mut params = Params::new(&call.params);
                // Sent to a queue's URL, a request names that queue.
                if let Some(path) = call.queue_path() {
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
}

/// Runs `request`: an exhaustive match from operation to action.
async fn dispatch<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    request: Request,
) -> Result<Response, SqsError> {
    Ok(match request {
        Request::ListConsumers(input) => {
            Response::ListConsumers(consumers::list_consumers(svc, ctx, input).await?)
        }
        Request::CreateConsumer(input) => {
            consumers::create_consumer(svc, input).await?;
            Response::CreateConsumer
        }
        Request::UpdateConsumer(input) => {
            consumers::update_consumer(svc, input).await?;
            Response::UpdateConsumer
        }
        Request::DeleteConsumer(input) => {
            consumers::delete_consumer(svc, input.name).await?;
            Response::DeleteConsumer
        }
        Request::PauseConsumer(input) => {
            consumers::set_consumer_stopped(svc, input.name, true).await?;
            Response::PauseConsumer
        }
        Request::ResumeConsumer(input) => {
            consumers::set_consumer_stopped(svc, input.name, false).await?;
            Response::ResumeConsumer
        }
        Request::NackMessage(input) => {
            messages::nack_message(svc, input).await?;
            Response::NackMessage
        }
        Request::PeekMessages(input) => {
            Response::PeekMessages(messages::peek_messages(svc, input).await?)
        }
        Request::RedriveMessages(input) => {
            Response::RedriveMessages(messages::redrive_messages(svc, input).await?)
        }
        Request::PutAlarm(input) => {
            alarms::put_alarm(svc, input).await?;
            Response::PutAlarm
        }
        Request::DescribeAlarms(input) => {
            Response::DescribeAlarms(alarms::describe_alarms(svc, ctx, input).await?)
        }
        Request::DeleteAlarms(input) => {
            alarms::delete_alarms(svc, input).await?;
            Response::DeleteAlarms
        }
        Request::GetDepthHistory(input) => {
            Response::GetDepthHistory(depth_history::get_depth_history(svc, ctx, input).await?)
        }
        Request::CreateBackup(input) => {
            Response::CreateBackup(backup::create_backup(svc, input).await?)
        }
        Request::DescribeTopics(input) => {
            Response::DescribeTopics(topics::describe_topics(svc, ctx, input).await?)
        }
        Request::ClaimIdempotencyKey(input) => Response::ClaimIdempotencyKey(
            idempotency::claim_idempotency_key(svc, ctx, input).await?,
        ),
        Request::CompleteIdempotencyKey(input) => {
            idempotency::complete_idempotency_key(svc, ctx, input).await?;
            Response::CompleteIdempotencyKey
        }
        Request::ReleaseIdempotencyKey(input) => {
            idempotency::release_idempotency_key(svc, ctx, input).await?;
            Response::ReleaseIdempotencyKey
        }
        Request::ListArchivedMessages(input) => {
            Response::ListArchivedMessages(archive::list_archived_messages(svc, input).await?)
        }
        Request::RestoreArchivedMessages(input) => {
            Response::RestoreArchivedMessages(archive::restore_archived_messages(svc, input).await?)
        }
    })
}
