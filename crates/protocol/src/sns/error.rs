//! An SNS error: its code and message, and its answer, the Query
//! protocol's `<ErrorResponse>` in SNS's namespace.

use sluice_core::SqsError;

use super::codes::ErrorCode;
use crate::answer::{Encoded, XML_CONTENT_TYPE, error_document};

/// The XML namespace of SNS answers.
pub const NAMESPACE: &str = "http://sns.amazonaws.com/doc/2010-03-31/";

/// An error SNS answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnsError {
    /// Its code.
    pub code: ErrorCode,
    /// Its message.
    pub message: String,
}

impl std::fmt::Display for SnsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.query_code(), self.message)
    }
}

impl std::error::Error for SnsError {}

impl SnsError {
    /// An error of `code`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        SnsError {
            code,
            message: message.into(),
        }
    }

    /// `InvalidParameter`, worded as SNS words it: `Invalid parameter: …`.
    pub fn invalid_parameter(what: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::InvalidParameterException,
            format!("Invalid parameter: {what}"),
        )
    }

    /// `NotFound`: `Topic does not exist`, `Subscription does not exist`.
    pub fn not_found(what: &str) -> Self {
        Self::new(
            ErrorCode::NotFoundException,
            format!("{what} does not exist"),
        )
    }

    /// `InternalError`: the server failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InternalErrorException, message)
    }

    /// The answer: `<ErrorResponse>` with SNS's code, 4xx or 5xx.
    pub fn encode(&self, request_id: &str) -> Encoded {
        let fault = if self.code.is_sender_fault() {
            "Sender"
        } else {
            "Receiver"
        };
        let body = error_document(
            NAMESPACE,
            fault,
            self.code.query_code(),
            &self.message,
            request_id,
            false,
        );
        Encoded {
            status: self.code.http_status(),
            content_type: XML_CONTENT_TYPE,
            headers: Vec::new(),
            body: body.into_bytes(),
        }
    }
}

/// An error of the request's common stages (authentication, the form, the
/// storage), in SNS's codes: the same code where SNS has it, SNS's
/// counterpart where it names it otherwise.
impl From<SqsError> for SnsError {
    fn from(e: SqsError) -> Self {
        use sluice_core::ErrorCode as Sqs;
        let code = match e.code {
            Sqs::AccessDenied => ErrorCode::AuthorizationErrorException,
            Sqs::InternalFailure => ErrorCode::InternalErrorException,
            Sqs::RequestThrottled => ErrorCode::Throttling,
            Sqs::InvalidParameterValue | Sqs::MissingParameter => {
                ErrorCode::InvalidParameterException
            }
            other => ErrorCode::from_query_code(other.query_code())
                .unwrap_or(ErrorCode::InvalidParameterException),
        };
        SnsError::new(code, e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// W2 (SNS): `<ErrorResponse>` in SNS's namespace, without SQS's
    /// `<Detail/>`, with the model's code and status (recorded form:
    /// LocalStack snapshot test_sns.py, "broken-topic-arn-confirm").
    #[test]
    fn w2_sns_errors_are_answered_in_snss_namespace() {
        let e = SnsError::not_found("Topic").encode("rid");
        assert_eq!(e.status, 404);
        let body = String::from_utf8(e.body).unwrap();
        assert_eq!(
            body,
            "<?xml version=\"1.0\"?><ErrorResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\"><Error><Type>Sender</Type><Code>NotFound</Code><Message>Topic does not exist</Message></Error><RequestId>rid</RequestId></ErrorResponse>"
        );
        let e = SnsError::internal("x").encode("rid");
        assert_eq!(e.status, 500);
        assert!(
            String::from_utf8(e.body)
                .unwrap()
                .contains("<Type>Receiver</Type><Code>InternalError</Code>")
        );
    }

    /// A1 (SNS): the authentication refusals keep their codes; SQS's
    /// AccessDenied is SNS's AuthorizationError.
    #[test]
    fn a1_common_refusals_in_snss_codes() {
        let e = SnsError::from(SqsError::new(
            sluice_core::ErrorCode::SignatureDoesNotMatch,
            "no",
        ));
        assert_eq!(
            (e.code.query_code(), e.code.http_status()),
            ("SignatureDoesNotMatch", 403)
        );
        let e = SnsError::from(SqsError::new(sluice_core::ErrorCode::AccessDenied, "no"));
        assert_eq!(
            (e.code.query_code(), e.code.http_status()),
            ("AuthorizationError", 403)
        );
    }
}
