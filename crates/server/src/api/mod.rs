//! The APIs the front serves, one handler each (as Garage's `ApiHandler`):
//! [`sqs`], [`sluice`] (sluice's own actions, in SQS's protocols) and
//! [`sns`] (topics, in SNS's Query protocol). An
//! API supplies its operation enum, generated from its model, and says
//! how one of its requests is decoded, checked and run; the front does the
//! rest once for all (`crate::front`).
//!
//! Each API's folder holds its dispatch (`mod.rs`: an exhaustive match
//! from operation to action), what its requests name for the access check
//! (`named.rs`), and one file per family of actions.

pub mod sluice;
pub mod sns;
pub mod sqs;

use std::future::Future;

use sluice_broker::Broker;
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::{Answer, Encoded, Protocol, encode_error};

use crate::auth::Principal;
use crate::inbound::Call;
use crate::service::{RequestContext, Service};

/// One API: its operations, how a request of one is decoded, checked and
/// run, and what its answer is.
pub trait Api<B: Broker> {
    /// Its operations (the model's generated enum).
    type Operation: Copy + Send + Sync + 'static;
    /// A decoded request: an operation with its typed input.
    type Request: Send + Sync;
    /// A successful answer: an operation's typed output.
    type Response: Answer + Send;
    /// Its errors: SQS's, or the API's own; the common stages'
    /// (authentication, the form, the storage) convert into them.
    type Error: ApiError;

    /// The API's XML namespace in Query answers.
    const NAMESPACE: &'static str;

    /// The service its SigV4 credential scopes name (`sqs`, `sns`).
    const SERVICE: &'static str;

    /// The operation's name, for logs and metrics.
    fn name(op: Self::Operation) -> &'static str;

    /// True when running `op` needs the region the request was signed
    /// for.
    fn needs_signing_region(op: Self::Operation) -> bool;

    /// True for an operation anyone may ask for unsigned while
    /// authentication is on (SNS's ConfirmSubscription and Unsubscribe,
    /// whose token or ARN is the credential); one that is signed is still
    /// verified.
    fn allows_unsigned(_op: Self::Operation) -> bool {
        false
    }

    /// Decodes the request for `op` from what arrived.
    fn decode(op: Self::Operation, call: &Call<'_>) -> Result<Self::Request, Self::Error>;

    /// The access check of an authenticated request (rule A2).
    fn authorize(
        svc: &Service<B>,
        ctx: &RequestContext,
        principal: &Principal,
        request: &Self::Request,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Runs the request.
    fn handle(
        svc: &Service<B>,
        ctx: &RequestContext,
        request: Self::Request,
    ) -> impl Future<Output = Result<Self::Response, Self::Error>> + Send;

    /// About how many bytes the answer takes, to write it into one
    /// allocation.
    fn capacity(_answer: &Self::Response) -> usize {
        256
    }
}

/// What the front needs of an API's errors: their code for metrics and
/// logs, their answer, and whether the server is at fault.
pub trait ApiError: From<SqsError> + Send {
    /// The Query code (`AWS.SimpleQueueService.NonExistentQueue`,
    /// `NotFound`, …).
    fn code(&self) -> &'static str;
    /// The message.
    fn message(&self) -> &str;
    /// The answer in `protocol`.
    fn encode(&self, protocol: Protocol, request_id: &str) -> Encoded;
    /// How the server is at fault, for the log; `None` for the caller's.
    fn server_fault(&self) -> Option<ServerFault>;
}

/// A server error, as the log tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerFault {
    /// A fault of ours: logged every time.
    Internal,
    /// The storage or the database out of reach: every request fails
    /// alike while it lasts, so it is logged at most once a second.
    Unavailable,
}

impl ApiError for SqsError {
    fn code(&self) -> &'static str {
        self.code.query_code()
    }

    fn message(&self) -> &str {
        &self.message
    }

    fn encode(&self, protocol: Protocol, request_id: &str) -> Encoded {
        encode_error(protocol, self, request_id)
    }

    fn server_fault(&self) -> Option<ServerFault> {
        match self.code {
            ErrorCode::InternalFailure => Some(ServerFault::Internal),
            ErrorCode::ServiceUnavailable => Some(ServerFault::Unavailable),
            _ => None,
        }
    }
}
