//! Which API and operation a request is for: the JSON protocol's target
//! (`AmazonSQS.<Action>`, `Sluice.<Action>`), or the Query protocol's
//! `Action` looked up in each API's operations.
//!
//! SNS shares the Query protocol and two action names (AddPermission,
//! RemovePermission) with SQS, so an SNS request is told apart first by
//! what every SNS client sends: a SigV4 credential scoped to `sns`, or
//! SNS's API version (`Version=2010-03-31`). An unsigned request without
//! either (the `SubscribeURL` and `UnsubscribeURL` of a notification) is
//! SNS's when its action is SNS's alone.

use sluice_core::SqsError;
use sluice_protocol::decode::{invalid_action, missing_action};
use sluice_protocol::{Protocol, sluice, sns, sqs};

use crate::inbound::{Call, header};

/// SNS's API version, as SNS clients send it.
const SNS_VERSION: &str = "2010-03-31";

/// An API's operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// An SQS operation.
    Sqs(sqs::Operation),
    /// One of sluice's own.
    Sluice(sluice::Operation),
    /// An SNS operation.
    Sns(sns::Operation),
}

/// A request that names no operation this server serves: why, and whether
/// it is SNS's (answered in SNS's form) or SQS's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrouted {
    /// Why, in SQS's codes (SNS's are converted from them).
    pub error: SqsError,
    /// True when the request is an SNS request.
    pub sns: bool,
}

/// The operation `call` asks for, or the error for a request that names
/// none this server serves.
pub fn route(call: &Call<'_>) -> Result<Route, Unrouted> {
    let sns = is_sns(call);
    let unrouted = |error| Unrouted { error, sns };
    match call.protocol {
        Protocol::Json => json_route(call.target.unwrap_or("")).map_err(unrouted),
        Protocol::Query | Protocol::QueryJson => {
            let action = call
                .param("Action")
                .ok_or_else(|| unrouted(missing_action()))?;
            if sns {
                return sns::Operation::from_name(action)
                    .map(Route::Sns)
                    .ok_or_else(|| unrouted(invalid_action(action)));
            }
            if let Some(op) = sqs::Operation::from_name(action) {
                return Ok(Route::Sqs(op));
            }
            if let Some(op) = sluice::Operation::from_name(action) {
                return Ok(Route::Sluice(op));
            }
            sns::Operation::from_name(action)
                .map(Route::Sns)
                .ok_or_else(|| unrouted(invalid_action(action)))
        }
    }
}

/// True for a request SNS clients sent: signed for `sns`, or of SNS's API
/// version.
fn is_sns(call: &Call<'_>) -> bool {
    if call.protocol == Protocol::Json {
        return false;
    }
    if call.param("Version") == Some(SNS_VERSION) {
        return true;
    }
    let credential = header(&call.parts.headers, "authorization")
        .and_then(|h| h.split_once("Credential=").map(|(_, rest)| rest))
        .or_else(|| call.param("X-Amz-Credential"));
    credential.is_some_and(|c| scope_service(c) == Some("sns"))
}

/// The service a SigV4 credential (`AKID/date/region/service/aws4_request`)
/// is scoped to.
fn scope_service(credential: &str) -> Option<&str> {
    let credential = credential.split([',', ' ']).next()?;
    let mut parts = credential.rsplit('/');
    let _terminal = parts.next()?;
    parts.next()
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

    /// W1 (SNS): the credential scope's service is read from the
    /// Authorization header's or the presigned URL's credential.
    #[test]
    fn w1_the_scope_names_the_service() {
        assert_eq!(
            scope_service("AKID/20261203/us-east-1/sns/aws4_request, SignedHeaders=host"),
            Some("sns")
        );
        assert_eq!(
            scope_service("AKID/20261203/us-east-1/sqs/aws4_request"),
            Some("sqs")
        );
        assert_eq!(scope_service("nonsense"), None);
    }
}
