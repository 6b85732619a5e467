//! Form parameters (`application/x-www-form-urlencoded`) decoded strictly:
//! a value whose percent-escapes are not UTF-8 is refused, never repaired
//! with U+FFFD, so a message is stored exactly as sent or not at all
//! (rule H4).

use std::borrow::Cow;

use percent_encoding::percent_decode;
use sluice_core::{ErrorCode, SqsError};

/// Most parameters a Query request may carry. The largest real request (a
/// SendMessageBatch of 10 entries with 10 attributes each) needs about 400;
/// the bound keeps a 4 MB body of empty parameters from costing hundreds of
/// MiB of pairs before it is refused.
pub const MAX_PARAMETERS: usize = 1000;

/// The text SQS gives for a body with characters it does not accept.
const INVALID_BODY: &str = "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF";

/// The form parameters of a request: those of its URL's query string, then
/// those of its form `body`. Refused with `MalformedQueryString` past
/// [`MAX_PARAMETERS`], counted before any more are decoded, and when a
/// name or value is not UTF-8 once decoded (`InvalidMessageContents` for a
/// message body, as SQS answers bytes it cannot accept in one).
pub fn parameters(
    url_query: &[u8],
    body: Option<&[u8]>,
) -> Result<Vec<(String, String)>, SqsError> {
    let segments = url_query
        .split(|&b| b == b'&')
        .chain(body.into_iter().flat_map(|b| b.split(|&c| c == b'&')))
        .filter(|s| !s.is_empty());
    let mut params = Vec::new();
    for segment in segments {
        if params.len() == MAX_PARAMETERS {
            return Err(SqsError::new(
                ErrorCode::MalformedQueryString,
                format!("The request has more than {MAX_PARAMETERS} parameters."),
            ));
        }
        let (name, value) = match segment.iter().position(|&b| b == b'=') {
            Some(i) => (&segment[..i], &segment[i + 1..]),
            None => (segment, &b""[..]),
        };
        let name = decode(name).map_err(|_| {
            SqsError::new(
                ErrorCode::MalformedQueryString,
                "A parameter name is not valid UTF-8.",
            )
        })?;
        let value = decode(value).map_err(|_| not_utf8(&name))?;
        params.push((name, value));
    }
    Ok(params)
}

/// One name or value: `+` is a space, then percent-escapes, then UTF-8.
fn decode(raw: &[u8]) -> Result<String, std::string::FromUtf8Error> {
    let plus_free: Cow<[u8]> = if raw.contains(&b'+') {
        Cow::Owned(
            raw.iter()
                .map(|&b| if b == b'+' { b' ' } else { b })
                .collect(),
        )
    } else {
        Cow::Borrowed(raw)
    };
    let bytes: Vec<u8> = percent_decode(&plus_free).collect();
    String::from_utf8(bytes)
}

/// The error for a value that is not UTF-8: a message body's is SQS's
/// invalid-contents error; any other parameter's is a malformed request.
fn not_utf8(name: &str) -> SqsError {
    if name == "MessageBody" || name.ends_with(".MessageBody") {
        SqsError::new(ErrorCode::InvalidMessageContents, INVALID_BODY)
    } else {
        SqsError::new(
            ErrorCode::MalformedQueryString,
            format!("The value of parameter {name} is not valid UTF-8."),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// L8: past 1,000 parameters a Query request is refused before more
    /// are decoded; the URL's and the body's parameters count together.
    #[test]
    fn l8_parameters_are_bounded() {
        let body = "a=&".repeat(MAX_PARAMETERS - 1);
        let params = parameters(b"Action=ListQueues", Some(body.as_bytes())).unwrap();
        assert_eq!(params.len(), MAX_PARAMETERS);
        assert_eq!(params[0], ("Action".into(), "ListQueues".into()));
        let over = "=&".repeat(200_000);
        let e = parameters(b"Action=ListQueues", Some(over.as_bytes())).unwrap_err();
        assert_eq!(e.code, ErrorCode::MalformedQueryString);
        assert_eq!(parameters(b"", None).unwrap(), vec![]);
    }

    /// Form decoding as browsers and SDKs encode: `+` is a space, escapes
    /// decode to UTF-8, empty segments are skipped, a bare name has an
    /// empty value, and an escaped `+`, `&` or `=` stays literal.
    #[test]
    fn decodes_as_form_encoding() {
        let params = parameters(
            b"Action=SendMessage&&MessageBody=a+b%2B%26%3D%C3%A9&Flag",
            None,
        )
        .unwrap();
        assert_eq!(
            params,
            vec![
                ("Action".into(), "SendMessage".into()),
                ("MessageBody".into(), "a b+&=é".into()),
                ("Flag".into(), String::new()),
            ]
        );
    }

    /// H4: a body whose escapes are not UTF-8 is refused as SQS refuses
    /// characters it cannot store, not stored with U+FFFD in their place;
    /// any other parameter's bad bytes make the request malformed.
    #[test]
    fn h4_bytes_that_are_not_utf8_are_refused() {
        let e = parameters(b"", Some(b"Action=SendMessage&MessageBody=ok%FF%FE")).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidMessageContents);
        assert_eq!(e.message, INVALID_BODY);
        let e =
            parameters(b"", Some(b"SendMessageBatchRequestEntry.1.MessageBody=%C3")).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidMessageContents);
        let e = parameters(b"QueueName=q%80", None).unwrap_err();
        assert_eq!(e.code, ErrorCode::MalformedQueryString);
        assert!(e.message.contains("QueueName"), "{}", e.message);
        let e = parameters(b"%FF=1", None).unwrap_err();
        assert_eq!(e.code, ErrorCode::MalformedQueryString);
    }
}
