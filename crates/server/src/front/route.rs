//! Which API and operation a request is for: the JSON protocol's target
//! (`AmazonSQS.<Action>`, `Sluice.<Action>`), or the Query protocol's
//! `Action` looked up in each API's operations.

use sluice_core::SqsError;
use sluice_protocol::decode::{invalid_action, missing_action};
use sluice_protocol::{Protocol, sluice, sqs};

use crate::inbound::Call;

/// An API's operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// An SQS operation.
    Sqs(sqs::Operation),
    /// One of sluice's own.
    Sluice(sluice::Operation),
}

/// The operation `call` asks for, or SQS's error for a request that names
/// none this server serves.
pub fn route(call: &Call<'_>) -> Result<Route, SqsError> {
    match call.protocol {
        Protocol::Json => json_route(call.target.unwrap_or("")),
        Protocol::Query | Protocol::QueryJson => {
            let action = call.param("Action").ok_or_else(missing_action)?;
            if let Some(op) = sqs::Operation::from_name(action) {
                return Ok(Route::Sqs(op));
            }
            sluice::Operation::from_name(action)
                .map(Route::Sluice)
                .ok_or_else(|| invalid_action(action))
        }
    }
}

/// A JSON target: sluice's own actions under their prefix, SQS's under
/// `AmazonSQS.` (or none); each prefix names only its own API's actions.
fn json_route(target: &str) -> Result<Route, SqsError> {
    if let Some(action) = target.strip_prefix(sluice::Operation::TARGET_PREFIX) {
        return sluice::Operation::from_name(action)
            .map(Route::Sluice)
            .ok_or_else(|| invalid_action(action));
    }
    let action = target
        .strip_prefix(sqs::Operation::TARGET_PREFIX)
        .unwrap_or(target);
    sqs::Operation::from_name(action)
        .map(Route::Sqs)
        .ok_or_else(|| invalid_action(action))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_core::ErrorCode;

    /// W1: targets name their API's actions only.
    #[test]
    fn w1_json_targets() {
        assert_eq!(
            json_route("AmazonSQS.SendMessage"),
            Ok(Route::Sqs(sqs::Operation::SendMessage))
        );
        assert_eq!(
            json_route("Sluice.PeekMessages"),
            Ok(Route::Sluice(sluice::Operation::PeekMessages))
        );
        for wrong in [
            "AmazonSQS.PeekMessages",
            "Sluice.SendMessage",
            "AmazonSQS.Nope",
        ] {
            assert_eq!(
                json_route(wrong).unwrap_err().code,
                ErrorCode::InvalidAction,
                "{wrong}"
            );
        }
    }
}
