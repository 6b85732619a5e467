//! The APIs the front serves, one handler each (as Garage's `ApiHandler`):
//! [`sqs`] and [`sluice`] (sluice's own actions, in SQS's protocols). An
//! API supplies its operation enum, generated from its model, and says
//! how one of its requests is decoded, checked and run; the front does the
//! rest once for all (`crate::front`).
//!
//! Each API's folder holds its dispatch (`mod.rs`: an exhaustive match
//! from operation to action), what its requests name for the access check
//! (`named.rs`), and one file per family of actions.

pub mod sluice;
pub mod sqs;

use std::future::Future;

use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_protocol::Answer;

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

    /// The API's XML namespace in Query answers.
    const NAMESPACE: &'static str;

    /// The operation's name, for logs and metrics.
    fn name(op: Self::Operation) -> &'static str;

    /// True when running `op` needs the region the request was signed
    /// for.
    fn needs_signing_region(op: Self::Operation) -> bool;

    /// Decodes the request for `op` from what arrived.
    fn decode(op: Self::Operation, call: &Call<'_>) -> Result<Self::Request, SqsError>;

    /// The access check of an authenticated request (rule A2).
    fn authorize(
        svc: &Service<B>,
        ctx: &RequestContext,
        principal: &Principal,
        request: &Self::Request,
    ) -> impl Future<Output = Result<(), SqsError>> + Send;

    /// Runs the request.
    fn handle(
        svc: &Service<B>,
        ctx: &RequestContext,
        request: Self::Request,
    ) -> impl Future<Output = Result<Self::Response, SqsError>> + Send;

    /// About how many bytes the answer takes, to write it into one
    /// allocation.
    fn capacity(_answer: &Self::Response) -> usize {
        256
    }
}
