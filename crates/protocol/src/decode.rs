//! Decoding a request of the SQS protocols into an API's typed request,
//! with SQS's errors: a JSON body parsed straight into the operation's
//! input (no intermediate `serde_json::Value`), Query parameters walked as
//! the model lays them out.

use sluice_core::{ErrorCode, SqsError};

use crate::wire::{DecodeError, TOO_MANY_ENTRIES};

/// The text of a JSON-protocol body to parse: an empty body is an empty
/// input; anything but an object is refused.
pub fn json_body(body: &[u8]) -> Result<&[u8], SqsError> {
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        None => Ok(b"{}"),
        Some(b'{') => Ok(body),
        Some(_) => Err(SqsError::new(
            ErrorCode::SerializationException,
            "The request body must be a JSON object.",
        )),
    }
}

/// SQS's error for a JSON input that does not parse into its operation's
/// input.
pub fn json_error(e: serde_json::Error) -> SqsError {
    // A batch refused while it was parsed (rule L8).
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

/// SQS's error for Query parameters that do not decode.
pub fn query_error(e: DecodeError) -> SqsError {
    match e {
        DecodeError::Invalid {
            name,
            value,
            reason,
        } => SqsError::invalid_value(&name, value, reason),
        DecodeError::Missing { name } => SqsError::missing(&name),
    }
}

/// `InvalidAction`: an action this endpoint does not serve, worded as SQS
/// words it.
pub fn invalid_action(action: &str) -> SqsError {
    SqsError::new(
        ErrorCode::InvalidAction,
        format!("The action {action} is not valid for this endpoint."),
    )
}

/// `MissingAction`: a Query request that names no action.
pub fn missing_action() -> SqsError {
    SqsError::new(
        ErrorCode::MissingAction,
        "The request must contain the parameter Action.",
    )
}

/// Returns a required member or `MissingParameter`.
pub fn required<T>(value: Option<T>, name: &str) -> Result<T, SqsError> {
    value.ok_or_else(|| SqsError::missing(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqs::{Operation, Request};
    use crate::wire::Params;

    fn json(op: Operation, body: &str) -> Result<Request, SqsError> {
        Request::from_json(op, json_body(body.as_bytes())?).map_err(json_error)
    }

    fn query(op: Operation, pairs: &[(&str, &str)]) -> Result<Request, SqsError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Request::from_query(op, &Params::new(&pairs)).map_err(query_error)
    }

    /// W1: a JSON body decodes into the operation's typed input; an empty
    /// body is an empty input.
    #[test]
    fn w1_json_bodies_decode_into_typed_inputs() {
        let Request::SendMessage(input) = json(
            Operation::SendMessage,
            r#"{"QueueUrl":"u","MessageBody":"b","DelaySeconds":5}"#,
        )
        .unwrap() else {
            panic!("not a SendMessage")
        };
        assert_eq!(input.message_body.as_deref(), Some("b"));
        assert_eq!(input.delay_seconds, Some(5));
        let Request::ListQueues(empty) = json(Operation::ListQueues, " ").unwrap() else {
            panic!("not a ListQueues")
        };
        assert_eq!(empty, Default::default());
    }

    /// W2: bad JSON, a body that is no object and members of the wrong type
    /// are SerializationException.
    #[test]
    fn w2_bad_json_input() {
        for body in ["{not json", "[1]", r#"{"QueueNamePrefix": 5}"#] {
            assert_eq!(
                json(Operation::ListQueues, body).unwrap_err().code,
                ErrorCode::SerializationException,
                "{body}"
            );
        }
    }

    /// L8: a JSON batch of more than 10 entries is refused while parsing
    /// with SQS's code and count; 10 entries parse; none is no list.
    #[test]
    fn l8_batches_are_refused_while_parsed() {
        let batch = |n: usize| {
            let entries = vec!["{}"; n].join(",");
            format!(r#"{{"QueueUrl":"u","Entries":[{entries}]}}"#)
        };
        let Request::SendMessageBatch(ten) = json(Operation::SendMessageBatch, &batch(10)).unwrap()
        else {
            panic!("not a batch")
        };
        assert_eq!(ten.entries.unwrap().len(), 10);
        let e = json(Operation::DeleteMessageBatch, &batch(100_000)).unwrap_err();
        assert_eq!(e.code, ErrorCode::TooManyEntriesInBatchRequest);
        assert_eq!(
            e.message,
            "Maximum number of entries per request are 10. You have sent 100000."
        );
        let Request::DeleteMessageBatch(none) = json(
            Operation::DeleteMessageBatch,
            r#"{"QueueUrl":"u","Entries":null}"#,
        )
        .unwrap() else {
            panic!("not a batch")
        };
        assert!(none.entries.is_none());
    }

    /// W1: Query parameters decode flattened lists in numeric order, maps
    /// and nested structures, as the model lays them out.
    #[test]
    fn w1_query_decodes_maps_lists_and_nested_structures() {
        let Request::SendMessageBatch(input) = query(
            Operation::SendMessageBatch,
            &[
                ("Action", "SendMessageBatch"),
                ("Version", "2012-11-05"),
                ("QueueUrl", "http://h/000000000000/q"),
                ("SendMessageBatchRequestEntry.2.Id", "b"),
                ("SendMessageBatchRequestEntry.2.MessageBody", "two"),
                ("SendMessageBatchRequestEntry.10.Id", "c"),
                ("SendMessageBatchRequestEntry.10.MessageBody", "ten"),
                ("SendMessageBatchRequestEntry.1.Id", "a"),
                ("SendMessageBatchRequestEntry.1.MessageBody", "one"),
                ("SendMessageBatchRequestEntry.1.DelaySeconds", "5"),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Name",
                    "color",
                ),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType",
                    "String",
                ),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue",
                    "red",
                ),
            ],
        )
        .unwrap() else {
            panic!("not a batch")
        };
        let entries = input.entries.unwrap();
        let ids: Vec<_> = entries.iter().map(|e| e.id.as_deref().unwrap()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(entries[0].delay_seconds, Some(5));
        let color = &entries[0].message_attributes.as_ref().unwrap()["color"];
        assert_eq!(color.data_type.as_deref(), Some("String"));
        assert_eq!(color.string_value.as_deref(), Some("red"));
    }

    /// W1: attribute maps, tags (`tags` in JSON, `Tag` in Query) and name
    /// lists.
    #[test]
    fn w1_query_decodes_attribute_maps_and_name_lists() {
        let Request::CreateQueue(input) = query(
            Operation::CreateQueue,
            &[
                ("QueueName", "q"),
                ("Attribute.1.Name", "VisibilityTimeout"),
                ("Attribute.1.Value", "40"),
                ("Tag.1.Key", "team"),
                ("Tag.1.Value", "a"),
            ],
        )
        .unwrap() else {
            panic!("not a CreateQueue")
        };
        assert_eq!(input.attributes.unwrap()["VisibilityTimeout"], "40");
        assert_eq!(input.tags.unwrap()["team"], "a");
        let Request::ReceiveMessage(input) = query(
            Operation::ReceiveMessage,
            &[
                ("QueueUrl", "u"),
                ("AttributeName.1", "All"),
                ("MessageAttributeName.1", "foo.*"),
                ("MaxNumberOfMessages", "10"),
            ],
        )
        .unwrap() else {
            panic!("not a ReceiveMessage")
        };
        assert_eq!(input.attribute_names.unwrap(), ["All"]);
        // The Query model names both lists `AttributeName`.
        assert_eq!(input.message_system_attribute_names.unwrap(), ["All"]);
        assert_eq!(input.message_attribute_names.unwrap(), ["foo.*"]);
        assert_eq!(input.max_number_of_messages, Some(10));
    }

    /// W2: a value of the wrong type is InvalidParameterValue, naming it.
    #[test]
    fn w2_query_bad_input() {
        let e = query(Operation::ReceiveMessage, &[("MaxNumberOfMessages", "x")]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParameterValue);
        assert_eq!(
            e.message,
            "Value x for parameter MaxNumberOfMessages is invalid. Reason: Must be an integer."
        );
    }

    /// M2: the alarm extensions travel in Query too: a double threshold,
    /// flattened action and name lists.
    #[test]
    fn m2_alarm_actions_in_query() {
        use crate::sluice;
        let pairs: Vec<(String, String)> = [
            ("AlarmName", "dlq"),
            ("QueueUrl", "http://h/000000000000/q"),
            ("Threshold", "0.5"),
            ("Period", "60"),
            ("AlarmAction.1", "http://hooks.test/a"),
            ("AlarmAction.2", "arn:aws:sqs:us-east-1:000000000000:ops"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let sluice::Request::PutAlarm(input) =
            sluice::Request::from_query(sluice::Operation::PutAlarm, &Params::new(&pairs)).unwrap()
        else {
            panic!("not a PutAlarm")
        };
        assert_eq!(input.threshold, Some(0.5));
        assert_eq!(input.period, Some(60));
        assert_eq!(
            input.actions.unwrap(),
            [
                "http://hooks.test/a",
                "arn:aws:sqs:us-east-1:000000000000:ops"
            ]
        );
    }
}
