//! Decoding an action's input into its typed form, with SQS's errors.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use sluice_core::{ErrorCode, SqsError};

use super::bounded::TOO_MANY_ENTRIES;
use crate::request::Input;

/// Parses an action's input into its typed form.
pub fn parse<T: DeserializeOwned>(input: Input) -> Result<T, SqsError> {
    let parsed = match input {
        Input::Json(body) => serde_json::from_slice(&body),
        Input::Value(value) => serde_json::from_value(value),
    };
    parsed.map_err(input_error)
}

/// Parses an input, still held by the request, into a view that may
/// borrow its text: nothing is copied or cloned (a second reader of the
/// input, such as the access check, pays no more than the parse). Errors
/// as [`parse`]'s.
pub fn parse_borrowed<'a, T: Deserialize<'a>>(input: &'a Input) -> Result<T, SqsError> {
    let parsed = match input {
        Input::Json(body) => serde_json::from_slice(body),
        Input::Value(value) => T::deserialize(value),
    };
    parsed.map_err(input_error)
}

/// SQS's error for an input that does not parse.
fn input_error(e: serde_json::Error) -> SqsError {
    // A batch refused while it was parsed (see `bounded_entries`).
    let text = e.to_string();
    if text.starts_with(TOO_MANY_ENTRIES) {
        let message = text.split(" at line ").next().unwrap_or(&text);
        return SqsError::new(ErrorCode::TooManyEntriesInBatchRequest, message);
    }
    let why = if e.is_syntax() || e.is_eof() {
        "The request body is not valid JSON"
    } else {
        "The request does not match the action's input"
    };
    SqsError::new(ErrorCode::SerializationException, format!("{why}: {e}"))
}

/// Returns a required member or `MissingParameter`.
pub fn required<T>(value: Option<T>, name: &str) -> Result<T, SqsError> {
    value.ok_or_else(|| SqsError::missing(name))
}
