//! An answer as it goes out: status, headers and body.

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
