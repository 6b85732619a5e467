//! Why a request failed, and the one reading of an SQS error answer.

use std::time::Duration;

use hyper::HeaderMap;
use serde_json::Value;

/// Why a client could not be made, or a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The endpoint is not a usable URL.
    #[error("--endpoint {0}")]
    Endpoint(String),
    /// The credentials, region or CA file cannot be used.
    #[error("{0}")]
    Config(String),
    /// The server could not be reached or the exchange broke.
    #[error("cannot reach the server at {endpoint}: {detail}")]
    Transport {
        /// The endpoint.
        endpoint: String,
        /// What went wrong.
        detail: String,
    },
    /// No complete answer in time.
    #[error("no answer from {endpoint} within {after:?}")]
    Timeout {
        /// The endpoint.
        endpoint: String,
        /// How long the client waited.
        after: Duration,
    },
    /// The server answered with an SQS error (or another non-2xx status).
    #[error("{code}: {message}")]
    Service {
        /// The HTTP status.
        status: u16,
        /// The error's name: SQS's own errors by their shape name, as the
        /// API reference names them (`QueueDoesNotExist`); AWS's common
        /// errors, whose JSON shapes end in `Exception`, by the Query code
        /// the SDKs report (`InvalidClientTokenId`, `AccessDenied`).
        code: String,
        /// The server's message.
        message: String,
    },
    /// A 2xx answer that is not what the action returns.
    #[error("unexpected answer to {action}: {detail}")]
    Decode {
        /// The action.
        action: String,
        /// What was wrong.
        detail: String,
    },
}

impl ClientError {
    /// The SQS error code, for a service error.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Service { code, .. } => Some(code),
            _ => None,
        }
    }

    /// Whether the server does not know the action (an older server, or an
    /// extension it does not have yet).
    pub fn is_unknown_action(&self) -> bool {
        matches!(
            self.code(),
            Some(
                "InvalidAction"
                    | "InvalidActionException"
                    | "UnsupportedOperation"
                    | "UnknownOperationException"
            )
        )
    }

    /// Whether the server refused the request's credentials or signature
    /// (as opposed to what it asked for).
    pub fn is_authentication(&self) -> bool {
        matches!(
            self.code(),
            Some(
                "MissingAuthenticationToken"
                    | "MissingAuthenticationTokenException"
                    | "InvalidClientTokenId"
                    | "UnrecognizedClientException"
                    | "SignatureDoesNotMatch"
                    | "InvalidSignatureException"
                    | "IncompleteSignature"
                    | "IncompleteSignatureException"
            )
        )
    }
}

/// The SQS error of a non-2xx answer: named by the `__type`'s shape name
/// when it is one of SQS's own, else by `x-amzn-query-error`'s code (see
/// [`ClientError::Service`]); the message from the body.
pub fn service_error(status: u16, headers: &HeaderMap, body: &[u8]) -> ClientError {
    let json: Value = serde_json::from_slice(body).unwrap_or_default();
    let from_header = headers
        .get("x-amzn-query-error")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let from_type = json
        .get("__type")
        .and_then(Value::as_str)
        .map(|t| t.rsplit('#').next().unwrap_or(t).to_string());
    let message = json
        .get("message")
        .or_else(|| json.get("Message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(200).collect());
    let code = match (from_type, from_header) {
        (Some(shape), _) if !shape.ends_with("Exception") => shape,
        (_, Some(query_code)) => query_code,
        (Some(shape), None) => shape,
        (None, None) => format!("HTTP {status}"),
    };
    ClientError::Service {
        status,
        code,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn sqs_errors_by_shape_common_errors_by_query_code() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-amzn-query-error",
            HeaderValue::from_static("AWS.SimpleQueueService.NonExistentQueue;Sender"),
        );
        let body = br#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"gone"}"#;
        let e = service_error(400, &headers, body);
        assert_eq!(e.to_string(), "QueueDoesNotExist: gone");
        let e = service_error(400, &headers, b"{}");
        assert_eq!(e.code(), Some("AWS.SimpleQueueService.NonExistentQueue"));
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-amzn-query-error",
            HeaderValue::from_static("InvalidClientTokenId;Sender"),
        );
        let body =
            br#"{"__type":"com.amazon.coral.service#UnrecognizedClientException","message":"bad"}"#;
        let e = service_error(403, &headers, body);
        assert_eq!(e.to_string(), "InvalidClientTokenId: bad");
        let e = service_error(
            400,
            &HeaderMap::new(),
            br#"{"__type":"com.amazonaws.sqs#InvalidAction","message":"no"}"#,
        );
        assert!(e.is_unknown_action());
        let e = service_error(502, &HeaderMap::new(), b"bad gateway");
        assert_eq!(e.to_string(), "HTTP 502: bad gateway");
    }

    #[test]
    fn refused_credentials_are_told_apart() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-amzn-query-error",
            HeaderValue::from_static("InvalidClientTokenId;Sender"),
        );
        let e = service_error(403, &headers, b"{}");
        assert!(e.is_authentication());
        let e = service_error(403, &HeaderMap::new(), br#"{"__type":"AccessDenied"}"#);
        assert!(!e.is_authentication());
    }
}
