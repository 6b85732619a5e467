//! SNS's words for what every SNS action may refuse: a parameter of the
//! wrong form, a required one missing, and an engine's error.

use sluice_broker::EngineError;
use sluice_core::SqsError;
use sluice_protocol::sns::SnsError;
use sluice_protocol::wire::DecodeError;

/// SNS's words for a parameter of the wrong form.
pub fn decode_error(e: DecodeError) -> SnsError {
    match e {
        DecodeError::Invalid { name, .. } => SnsError::invalid_parameter(name),
        DecodeError::Missing { name } => {
            SnsError::invalid_parameter(format!("{name} Reason: no value for required parameter"))
        }
    }
}

/// A required member, or SNS's words for its absence.
pub fn required<T>(value: Option<T>, name: &str) -> Result<T, SnsError> {
    value.ok_or_else(|| {
        SnsError::invalid_parameter(format!("{name} Reason: no value for required parameter"))
    })
}

/// The SNS error an engine's error is: a missing topic is `NotFound`;
/// storage errors keep their kind.
pub fn engine(e: EngineError) -> SnsError {
    match e {
        EngineError::TopicDoesNotExist => SnsError::not_found("Topic"),
        EngineError::SubscriptionDoesNotExist => SnsError::not_found("Subscription"),
        other => SnsError::from(SqsError::from(other)),
    }
}
