// Shared by the request targets: what the server runs on a decoded
// request before its action, for every SQS operation.
#![allow(dead_code)]

use sluice_protocol::sqs::{Operation, Request};

/// The operation a target's input picks, by its first byte.
pub fn pick(byte: u8) -> Operation {
    Operation::ALL[byte as usize % Operation::ALL.len()]
}

/// Runs the message checks a send runs on what decoded.
pub fn check_typed(request: &Request) {
    match request {
        Request::SendMessage(send) => check_body(send.message_body.as_deref()),
        Request::SendMessageBatch(batch) => {
            for entry in batch.entries.iter().flatten() {
                check_body(entry.message_body.as_deref());
            }
        }
        _ => {}
    }
}

/// The body check, and the digest of a body.
fn check_body(body: Option<&str>) {
    if let Some(body) = body {
        let _ = sluice_core::message::validate_body(body);
        let _ = sluice_core::digest::md5_of_body(body);
    }
}
