//! The SQS wire: AWS JSON 1.0 and AWS Query, decoded into one JSON-shaped
//! request and encoded back from one JSON-shaped response (rule W1, W2).
//!
//! An action is written once against the JSON shapes of the API model. The
//! JSON protocol needs no translation; the Query protocol is translated in
//! both directions by walking the Query API model (`model/`), so every
//! flattened list, map and location name is exactly the one SDKs use.

pub mod batch_result;
mod encode;
mod encoded;
pub mod form;
pub mod json;
pub mod json_writer;
mod model;
pub mod output;
pub mod query;
pub mod query_json;
mod request;
pub mod requests;
pub mod sluice;
pub mod sns;
pub mod sqs;
pub mod wire;
mod xml;

pub use encode::{encode_error, encode_response};
pub use encoded::Encoded;
pub use model::{is_known_action, is_sluice_action, known_actions};
pub use output::Output;
pub use request::{Input, Protocol, Request};
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
