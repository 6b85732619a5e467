//! Which wire protocol a request came in, and so its answer goes out in.

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
