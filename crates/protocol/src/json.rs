//! AWS JSON 1.0: `POST /` with `X-Amz-Target: AmazonSQS.<Action>`.

use bytes::Bytes;
use serde_json::Value;
use sluice_core::{ErrorCode, SqsError};

use crate::encoded::Encoded;
use crate::request::{Input, Request};

/// The `Content-Type` of JSON requests and responses.
pub const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// The target prefix of SQS actions.
pub const TARGET_PREFIX: &str = "AmazonSQS.";

/// The target prefix of sluice's own actions.
pub const EXTENSION_PREFIX: &str = "Sluice.";

/// Decodes a JSON-protocol request from its target header and body.
pub fn decode(target: &str, body: Bytes) -> Result<Request, SqsError> {
    let (action, known) = match target.strip_prefix(EXTENSION_PREFIX) {
        Some(action) => (action, crate::model::extension_operation(action).is_some()),
        None => {
            let action = target.strip_prefix(TARGET_PREFIX).unwrap_or(target);
            (
                action,
                crate::model::extension_operation(action).is_none()
                    && crate::model::is_known_action(action),
            )
        }
    };
    if !known {
        return Err(SqsError::new(
            ErrorCode::InvalidAction,
            format!("The action {action} is not valid for this endpoint."),
        ));
    }
    // The body is parsed once, into the action's typed input; here only
    // its outer shape is checked. Bad JSON inside is reported by
    // `requests::parse` with the same code.
    let input = match body.iter().find(|b| !b.is_ascii_whitespace()) {
        None => Input::Value(Value::Object(Default::default())),
        Some(b'{') => Input::Json(body),
        Some(_) => {
            return Err(SqsError::new(
                ErrorCode::SerializationException,
                "The request body must be a JSON object.",
            ));
        }
    };
    Ok(Request {
        action: action.to_string(),
        input,
    })
}

/// Encodes a successful response.
pub fn encode_response(output: &crate::output::Output) -> Encoded {
    Encoded {
        status: 200,
        content_type: CONTENT_TYPE,
        headers: Vec::new(),
        body: {
            let mut body = Vec::with_capacity(256);
            output.write_json(&mut body);
            body
        },
    }
}

/// Encodes an error: the `__type` of the shape plus `x-amzn-query-error`
/// with the Query code, which SDKs in query-compatible mode read (rule W2).
pub fn encode_error(error: &SqsError) -> Encoded {
    let code = error.code;
    let fault = if code.is_sender_fault() {
        "Sender"
    } else {
        "Receiver"
    };
    let body = serde_json::json!({
        "__type": format!("com.amazonaws.sqs#{}", code.json_shape()),
        "message": error.message,
    });
    Encoded {
        status: code.http_status(),
        content_type: CONTENT_TYPE,
        headers: vec![(
            "x-amzn-query-error",
            format!("{};{fault}", code.query_code()),
        )],
        body: serde_json::to_vec(&body).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn w1_decodes_target_and_body() {
        let r = decode(
            "AmazonSQS.SendMessage",
            Bytes::from_static(br#"{"QueueUrl":"u","MessageBody":"b"}"#),
        )
        .unwrap();
        assert_eq!(r.action, "SendMessage");
        let input: Value = crate::requests::parse(r.input).unwrap();
        assert_eq!(input["MessageBody"], "b");
        let empty: Value = crate::requests::parse(
            decode("AmazonSQS.ListQueues", Bytes::from_static(b" "))
                .unwrap()
                .input,
        )
        .unwrap();
        assert!(empty.is_object());
        assert_eq!(
            decode("Sluice.PeekMessages", Bytes::from_static(b"{}"))
                .unwrap()
                .action,
            "PeekMessages"
        );
        assert!(
            decode("AmazonSQS.PeekMessages", Bytes::from_static(b"{}")).is_err(),
            "extensions use their own prefix"
        );
        assert!(decode("Sluice.SendMessage", Bytes::from_static(b"{}")).is_err());
    }

    #[test]
    fn w2_bad_input_codes() {
        assert_eq!(
            decode("AmazonSQS.Nope", Bytes::from_static(b"{}"))
                .unwrap_err()
                .code,
            ErrorCode::InvalidAction
        );
        let bad = decode("AmazonSQS.ListQueues", Bytes::from_static(b"{not json"))
            .unwrap()
            .input;
        assert_eq!(
            crate::requests::parse::<Value>(bad).unwrap_err().code,
            ErrorCode::SerializationException
        );
        assert_eq!(
            decode("AmazonSQS.ListQueues", Bytes::from_static(b"[1]"))
                .unwrap_err()
                .code,
            ErrorCode::SerializationException
        );
    }

    #[test]
    fn w2_error_shape_and_header() {
        let e = encode_error(&SqsError::no_queue());
        assert_eq!(e.status, 400);
        assert_eq!(
            e.headers,
            vec![(
                "x-amzn-query-error",
                "AWS.SimpleQueueService.NonExistentQueue;Sender".to_string()
            )]
        );
        let body: Value = serde_json::from_slice(&e.body).unwrap();
        assert_eq!(body["__type"], "com.amazonaws.sqs#QueueDoesNotExist");
        assert_eq!(body["message"], "The specified queue does not exist.");
    }
}
