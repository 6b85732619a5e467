//! The SQS wire: AWS JSON 1.0 and AWS Query, decoded into one JSON-shaped
//! request and encoded back from one JSON-shaped response (rule W1, W2).
//!
//! An action is written once against the JSON shapes of the API model. The
//! JSON protocol needs no translation; the Query protocol is translated in
//! both directions by walking the Query API model (`model/`), so every
//! flattened list, map and location name is exactly the one SDKs use.

pub mod batch_result;
pub mod form;
pub mod json;
pub mod json_writer;
mod model;
pub mod output;
pub mod query;
pub mod query_json;
pub mod requests;
mod xml;

pub use output::Output;
use sluice_core::SqsError;

/// The XML namespace of Query responses.
pub const XML_NAMESPACE: &str = "http://queue.amazonaws.com/doc/2012-11-05/";

/// Which wire protocol a request came in, and so its response goes out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// AWS JSON 1.0 (`X-Amz-Target: AmazonSQS.<Action>`).
    Json,
    /// AWS Query (form-encoded `Action=<Action>`), XML responses.
    Query,
    /// AWS Query from a client that sent `Accept: application/json`: the
    /// same requests, answered with the XML document's structure in JSON.
    QueryJson,
}

impl Protocol {
    /// Lowercase name, for logs and metrics labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Json => "json",
            Protocol::Query => "query",
            Protocol::QueryJson => "query-json",
        }
    }
}

/// A decoded request: the action and its input in the JSON protocol's shape.
#[derive(Debug, Clone)]
pub struct Request {
    /// The SQS action name, e.g. `SendMessage`.
    pub action: String,
    /// The input, as the JSON protocol would carry it.
    pub input: Input,
}

/// An action's input, in the JSON protocol's shape.
#[derive(Debug, Clone)]
pub enum Input {
    /// A JSON-protocol body (a JSON object), parsed straight into the
    /// action's typed input by [`requests::parse`]: no intermediate
    /// `serde_json::Value`, whose allocations cost a fifth of a busy
    /// server's time. The request's own bytes, shared, not copied.
    Json(bytes::Bytes),
    /// An input built as a value: the Query protocol's translation, and
    /// requests made inside the server.
    Value(serde_json::Value),
}

impl From<serde_json::Value> for Input {
    fn from(value: serde_json::Value) -> Self {
        Input::Value(value)
    }
}

/// An encoded response: status, content type, extra headers and body.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type` header.
    pub content_type: &'static str,
    /// Extra headers, such as `x-amzn-query-error`.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// Encodes a successful response in `protocol`.
pub fn encode_response(
    protocol: Protocol,
    action: &str,
    output: Output,
    request_id: &str,
) -> Encoded {
    match protocol {
        Protocol::Json => json::encode_response(&output),
        Protocol::Query => query::encode_response(action, &output.into_value(), request_id),
        Protocol::QueryJson => {
            query_json::encode_response(action, &output.into_value(), request_id)
        }
    }
}

/// Encodes an error in `protocol`.
pub fn encode_error(protocol: Protocol, error: &SqsError, request_id: &str) -> Encoded {
    match protocol {
        Protocol::Json => json::encode_error(error),
        Protocol::Query => query::encode_error(error, request_id),
        // A request that names no action is answered in XML whatever it
        // accepts (AWS recorded answer).
        Protocol::QueryJson if error.code == sluice_core::ErrorCode::MissingAction => {
            query::encode_error(error, request_id)
        }
        Protocol::QueryJson => query_json::encode_error(error, request_id),
    }
}

/// True when `action` is an SQS action of the API model.
pub fn is_known_action(action: &str) -> bool {
    model::operation(action).is_some()
}

/// Every action [`is_known_action`] knows, SQS's and sluice's own.
pub fn known_actions() -> impl Iterator<Item = &'static str> {
    model::operation_names()
}

/// True for one of sluice's own actions (NackMessage, PeekMessages, …),
/// which access rules name `sluice:<Action>`.
pub fn is_sluice_action(action: &str) -> bool {
    model::extension_operation(action).is_some()
}
