//! A decoded request: which protocol it came in, its action, and its input
//! in the JSON protocol's shape.

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
