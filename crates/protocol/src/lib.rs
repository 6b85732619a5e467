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
mod xml;

pub use encode::{encode_error, encode_response};
pub use encoded::Encoded;
pub use model::{is_known_action, is_sluice_action, known_actions};
pub use output::Output;
pub use request::{Input, Protocol, Request};
pub use xml::XML_NAMESPACE;
