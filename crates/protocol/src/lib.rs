//! The wire of the APIs sluice serves, described once, from their models:
//! SQS (AWS JSON 1.0 and AWS Query), sluice's own actions (the same two
//! protocols) and SNS (AWS Query).
//!
//! Each API's module ([`sqs`], [`sluice`], [`sns`]) is generated at build
//! time from its model in `models/` by `crates/codegen`: an `Operation`
//! enum, a `Request` enum of typed inputs, a `Response` enum of typed
//! outputs, and their codecs; beside it, hand-written, what is true of
//! each operation (its IAM action, …) as exhaustive matches. [`wire`] is
//! the runtime the generated codecs call; [`decode`] and [`answer`] turn
//! a request's bytes into a typed request and a typed answer into a
//! response, with SQS's errors (rules W1, W2).

pub mod answer;
pub mod decode;
pub mod form;
pub mod json_writer;
mod request;
pub mod sluice;
pub mod sns;
pub mod sqs;
pub mod wire;
mod xml;

pub use answer::{Answer, Encoded, encode_answer, encode_error};
pub use request::Protocol;
pub use xml::XML_NAMESPACE;

/// An operation's input, as a client sends it in the JSON protocol: the
/// generated input types implement it, naming their target and output.
pub trait Call: serde::Serialize {
    /// What the operation answers.
    type Output: serde::de::DeserializeOwned + Default;
    /// The `X-Amz-Target` header: the API's prefix and the operation.
    const TARGET: &'static str;
}

/// The input or output of an operation that has none.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Empty {}

impl wire::FromQuery for Empty {
    fn from_query(
        _params: &wire::Params<'_>,
        _key: &str,
    ) -> Result<Option<Self>, wire::DecodeError> {
        Ok(Some(Empty {}))
    }
}
