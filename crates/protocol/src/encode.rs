//! Encoding an action's answer or an error in the protocol its request
//! came in.

use sluice_core::SqsError;

use crate::encoded::Encoded;
use crate::output::Output;
use crate::request::Protocol;
use crate::{json, query, query_json};

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
