//! The SNS API (rules N1–N8): topics, their subscriptions, and publishing
//! to them, in the AWS Query protocol and SNS's errors. Find an operation
//! by its name:
//!
//! | operation | file |
//! |---|---|
//! | CreateTopic, DeleteTopic, GetTopicAttributes, SetTopicAttributes, ListTopics | `topics.rs` (attributes: `topic_attributes.rs`) |
//! | TagResource, UntagResource, ListTagsForResource | `tags.rs` |
//! | AddPermission, RemovePermission, Get/PutDataProtectionPolicy | `permissions.rs` |
//! | Subscribe, ConfirmSubscription, Unsubscribe | `subscriptions.rs` |
//! | ListSubscriptions, ListSubscriptionsByTopic, Get/SetSubscriptionAttributes | `subscription_reads.rs` (attributes: `subscription_attributes.rs`) |
//! | Publish, PublishBatch | `publish.rs` (checks: `message_checks.rs`; delivery: `fanout.rs`) |
//!
//! HTTP/S subscriptions' deliveries (rule N6) are stored in the outbox
//! (`outbox.rs`: publishes by `http_fanout.rs`, confirmations by
//! `confirmations.rs`) and made by `deliverer.rs` in the background.
//!
//! `arns.rs` reads topic and subscription ARNs with SNS's words,
//! `alarm_topics.rs` publishes alarm notifications to topics,
//! `errors.rs` words the common refusals, `queue_access.rs` says whether
//! a queue takes a topic's deliveries, `paging.rs`
//! pages lists by 100, `access.rs` is the access check.

mod access;
pub mod alarm_topics;
mod arns;
mod confirmations;
pub mod deliverer;
mod errors;
mod fanout;
mod http_fanout;
mod message_checks;
mod outbox;
mod outgoing;
mod paging;
mod permissions;
mod publish;
mod queue_access;
pub(crate) mod subscription_attributes;
mod subscription_reads;
mod subscriptions;
mod tags;
pub(crate) mod topic_attributes;
mod topics;

use sluice_broker::Broker;
use sluice_protocol::sns::{self, ErrorCode, Operation, Request, Response, SnsError};
use sluice_protocol::wire::Params;
use sluice_protocol::{Encoded, Protocol};

use super::{Api, ApiError, ServerFault};
use crate::auth::Principal;
use crate::inbound::Call;
use crate::service::{RequestContext, Service};

/// The SNS API's handler.
pub struct SnsApi;

impl<B: Broker> Api<B> for SnsApi {
    type Operation = Operation;
    type Request = Request;
    type Response = Response;
    type Error = SnsError;

    const NAMESPACE: &'static str = sns::NAMESPACE;

    const SERVICE: &'static str = "sns";

    fn name(op: Operation) -> &'static str {
        op.name()
    }

    /// Topics are regional, and every SNS request names one or lists a
    /// region's: each needs the region it was signed for.
    fn needs_signing_region(_op: Operation) -> bool {
        true
    }

    fn allows_unsigned(op: Operation) -> bool {
        op.allows_unsigned()
    }

    fn decode(op: Operation, call: &Call<'_>) -> Result<Request, SnsError> {
        if !op.is_served() {
            return Err(SnsError::new(
                ErrorCode::InvalidAction,
                format!(
                    "The action {} is not valid for this endpoint: sluice serves SNS's topics, subscriptions and publishing, not SMS or mobile push.",
                    op.name()
                ),
            ));
        }
        match call.protocol {
            Protocol::Json => Err(SnsError::new(
                ErrorCode::InvalidAction,
                "SNS is served in the AWS Query protocol only.",
            )),
            Protocol::Query | Protocol::QueryJson => {
                Request::from_query(op, &Params::new(&call.params)).map_err(errors::decode_error)
            }
        }
    }

    async fn authorize(
        svc: &Service<B>,
        ctx: &RequestContext,
        principal: &Principal,
        request: &Request,
    ) -> Result<(), SnsError> {
        access::authorize(svc, ctx, principal, request).await
    }

    async fn handle(
        svc: &Service<B>,
        ctx: &RequestContext,
        request: Request,
    ) -> Result<Response, SnsError> {
        dispatch(svc, ctx, request).await
    }
}

impl ApiError for SnsError {
    fn code(&self) -> &'static str {
        self.code.query_code()
    }

    fn message(&self) -> &str {
        &self.message
    }

    fn encode(&self, _protocol: Protocol, request_id: &str) -> Encoded {
        SnsError::encode(self, request_id)
    }

    fn server_fault(&self) -> Option<ServerFault> {
        match self.code {
            ErrorCode::InternalErrorException => Some(ServerFault::Internal),
            ErrorCode::ServiceUnavailable => Some(ServerFault::Unavailable),
            _ => None,
        }
    }
}

/// Runs `request`: an exhaustive match from operation to action. The
/// operations sluice does not serve were refused when decoded.
async fn dispatch<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    request: Request,
) -> Result<Response, SnsError> {
    Ok(match request {
        Request::CreateTopic(input) => {
            Response::CreateTopic(topics::create_topic(svc, ctx, input).await?)
        }
        Request::DeleteTopic(input) => {
            topics::delete_topic(svc, ctx, input).await?;
            Response::DeleteTopic
        }
        Request::GetTopicAttributes(input) => {
            Response::GetTopicAttributes(topics::get_topic_attributes(svc, ctx, input).await?)
        }
        Request::SetTopicAttributes(input) => {
            topics::set_topic_attributes(svc, ctx, input).await?;
            Response::SetTopicAttributes
        }
        Request::ListTopics(input) => {
            Response::ListTopics(topics::list_topics(svc, ctx, input).await?)
        }
        Request::TagResource(input) => {
            Response::TagResource(tags::tag_resource(svc, ctx, input).await?)
        }
        Request::UntagResource(input) => {
            Response::UntagResource(tags::untag_resource(svc, ctx, input).await?)
        }
        Request::ListTagsForResource(input) => {
            Response::ListTagsForResource(tags::list_tags_for_resource(svc, ctx, input).await?)
        }
        Request::AddPermission(input) => {
            permissions::add_permission(svc, ctx, input).await?;
            Response::AddPermission
        }
        Request::RemovePermission(input) => {
            permissions::remove_permission(svc, ctx, input).await?;
            Response::RemovePermission
        }
        Request::GetDataProtectionPolicy(input) => Response::GetDataProtectionPolicy(
            permissions::get_data_protection_policy(svc, ctx, input).await?,
        ),
        Request::PutDataProtectionPolicy(input) => {
            permissions::put_data_protection_policy(svc, ctx, input).await?;
            Response::PutDataProtectionPolicy
        }
        Request::Subscribe(input) => {
            Response::Subscribe(subscriptions::subscribe(svc, ctx, input).await?)
        }
        Request::ConfirmSubscription(input) => Response::ConfirmSubscription(
            subscriptions::confirm_subscription(svc, ctx, input).await?,
        ),
        Request::Unsubscribe(input) => {
            subscriptions::unsubscribe(svc, ctx, input).await?;
            Response::Unsubscribe
        }
        Request::ListSubscriptions(input) => Response::ListSubscriptions(
            subscription_reads::list_subscriptions(svc, ctx, input).await?,
        ),
        Request::ListSubscriptionsByTopic(input) => Response::ListSubscriptionsByTopic(
            subscription_reads::list_subscriptions_by_topic(svc, ctx, input).await?,
        ),
        Request::GetSubscriptionAttributes(input) => Response::GetSubscriptionAttributes(
            subscription_reads::get_subscription_attributes(svc, ctx, input).await?,
        ),
        Request::SetSubscriptionAttributes(input) => {
            subscription_reads::set_subscription_attributes(svc, ctx, input).await?;
            Response::SetSubscriptionAttributes
        }
        Request::Publish(input) => Response::Publish(publish::publish(svc, ctx, input).await?),
        Request::PublishBatch(input) => {
            Response::PublishBatch(publish::publish_batch(svc, ctx, input).await?)
        }
        Request::CheckIfPhoneNumberIsOptedOut(_)
        | Request::CreatePlatformApplication(_)
        | Request::CreatePlatformEndpoint(_)
        | Request::CreateSMSSandboxPhoneNumber(_)
        | Request::DeleteEndpoint(_)
        | Request::DeletePlatformApplication(_)
        | Request::DeleteSMSSandboxPhoneNumber(_)
        | Request::GetEndpointAttributes(_)
        | Request::GetPlatformApplicationAttributes(_)
        | Request::GetSMSAttributes(_)
        | Request::GetSMSSandboxAccountStatus(_)
        | Request::ListEndpointsByPlatformApplication(_)
        | Request::ListOriginationNumbers(_)
        | Request::ListPhoneNumbersOptedOut(_)
        | Request::ListPlatformApplications(_)
        | Request::ListSMSSandboxPhoneNumbers(_)
        | Request::OptInPhoneNumber(_)
        | Request::SetEndpointAttributes(_)
        | Request::SetPlatformApplicationAttributes(_)
        | Request::SetSMSAttributes(_)
        | Request::VerifySMSSandboxPhoneNumber(_) => {
            return Err(SnsError::internal(
                "an operation sluice does not serve reached its dispatch",
            ));
        }
    })
}
