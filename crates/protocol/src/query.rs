//! AWS Query: form-encoded `Action=<Action>&…` in a POST body or a GET query
//! string, answered in XML. Both directions walk the Query API model.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use sluice_core::{ErrorCode, SqsError};

use crate::encoded::Encoded;
use crate::model::{self, Member};
use crate::request::Request;
use crate::xml::{self, XML_NAMESPACE};

/// The `Content-Type` of Query responses.
pub const CONTENT_TYPE: &str = "text/xml";

/// Parameters every Query request may carry that are not action input.
const ENVELOPE: &[&str] = &[
    "Action",
    "Version",
    "AWSAccessKeyId",
    "Signature",
    "SignatureMethod",
    "SignatureVersion",
    "Timestamp",
    "Expires",
    "SecurityToken",
];

/// Checks that `action` may be sent to a queue's URL: the actions that name
/// no queue (CreateQueue, ListQueues) are refused there as SQS refuses them
/// (rule W7).
pub fn check_queue_endpoint(action: &str) -> Result<(), SqsError> {
    if matches!(action, "CreateQueue" | "ListQueues") {
        return Err(SqsError::new(
            ErrorCode::InvalidAction,
            format!("The action {action} is not valid for this endpoint."),
        ));
    }
    Ok(())
}

pub use crate::form::{MAX_PARAMETERS, parameters};

/// Decodes form parameters (body and URL query already merged).
pub fn decode(params: &[(String, String)]) -> Result<Request, SqsError> {
    let map: BTreeMap<&str, &str> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let action = *map.get("Action").ok_or_else(|| {
        SqsError::new(
            ErrorCode::MissingAction,
            "The request must contain the parameter Action.",
        )
    })?;
    let op = model::operation(action).ok_or_else(|| {
        SqsError::new(
            ErrorCode::InvalidAction,
            format!("The action {action} is not valid for this endpoint."),
        )
    })?;
    let input_shape = op
        .get("input")
        .and_then(|i| i.get("shape"))
        .and_then(Value::as_str)
        .and_then(model::shape);
    let params: BTreeMap<&str, &str> = map
        .into_iter()
        .filter(|(k, _)| !ENVELOPE.contains(k) && !k.starts_with("X-Amz-"))
        .collect();
    let input = match input_shape {
        Some(shape) => decode_structure(&params, "", shape)?,
        None => Value::Object(Map::new()),
    };
    Ok(Request {
        action: action.to_string(),
        input: input.into(),
    })
}

fn decode_structure(
    params: &BTreeMap<&str, &str>,
    prefix: &str,
    shape: &'static Value,
) -> Result<Value, SqsError> {
    let mut out = Map::new();
    for member in model::members(shape) {
        if let Some(v) = decode_member(params, prefix, &member)? {
            out.insert(member.name.to_string(), v);
        }
    }
    Ok(Value::Object(out))
}

fn decode_member(
    params: &BTreeMap<&str, &str>,
    prefix: &str,
    member: &Member<'static>,
) -> Result<Option<Value>, SqsError> {
    let key = format!("{prefix}{}", member.wire_name);
    decode_value(params, &key, member.shape, member.flattened)
}

/// Decodes the value at `key` of shape `shape`; `None` when absent.
fn decode_value(
    params: &BTreeMap<&str, &str>,
    key: &str,
    shape: &'static Value,
    flattened: bool,
) -> Result<Option<Value>, SqsError> {
    match model::shape_type(shape) {
        "structure" => {
            let prefix = format!("{key}.");
            if !has_prefix(params, &prefix) {
                return Ok(None);
            }
            decode_structure(params, &prefix, shape).map(Some)
        }
        "list" => {
            let Some((item_shape, item_name)) = model::list_member(shape) else {
                return Ok(None);
            };
            let list_prefix = if flattened {
                // A flattened list repeats the item's own name in place of the member's.
                match item_name {
                    Some(name) => replace_last_segment(key, name),
                    None => key.to_string(),
                }
            } else {
                format!("{key}.{}", item_name.unwrap_or("member"))
            };
            let mut items = Vec::new();
            for i in indices(params, &list_prefix) {
                let item_key = format!("{list_prefix}.{i}");
                if let Some(v) = decode_value(params, &item_key, item_shape, false)? {
                    items.push(v);
                }
            }
            Ok((!items.is_empty()).then_some(Value::Array(items)))
        }
        "map" => {
            let Some((key_shape, key_name, value_shape, value_name)) = model::map_parts(shape)
            else {
                return Ok(None);
            };
            let entry_prefix = if flattened {
                key.to_string()
            } else {
                format!("{key}.entry")
            };
            let mut out = Map::new();
            for i in indices(params, &entry_prefix) {
                let k = decode_value(
                    params,
                    &format!("{entry_prefix}.{i}.{key_name}"),
                    key_shape,
                    false,
                )?;
                let v = decode_value(
                    params,
                    &format!("{entry_prefix}.{i}.{value_name}"),
                    value_shape,
                    false,
                )?;
                match (k, v) {
                    (Some(Value::String(k)), Some(v)) => {
                        out.insert(k, v);
                    }
                    (Some(Value::String(k)), None) if value_name == "Value" => {
                        // `Attribute.1.Value=` with an empty value is an empty string.
                        out.insert(k, Value::String(String::new()));
                    }
                    (None, _) => {
                        return Err(SqsError::missing(&format!("{entry_prefix}.{i}.{key_name}")));
                    }
                    _ => {}
                }
            }
            Ok((!out.is_empty()).then_some(Value::Object(out)))
        }
        scalar => {
            let Some(raw) = params.get(key) else {
                return Ok(None);
            };
            scalar_value(key, raw, scalar).map(Some)
        }
    }
}

fn scalar_value(key: &str, raw: &str, ty: &str) -> Result<Value, SqsError> {
    let name = key.rsplit('.').next().unwrap_or(key);
    match ty {
        "integer" | "long" => raw
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| SqsError::invalid_value(name, raw, "Must be an integer.")),
        "double" | "float" => raw
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| SqsError::invalid_value(name, raw, "Must be a number.")),
        "boolean" => match raw {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(SqsError::invalid_value(name, raw, "Must be true or false.")),
        },
        _ => Ok(Value::String(raw.to_string())),
    }
}

fn has_prefix(params: &BTreeMap<&str, &str>, prefix: &str) -> bool {
    params
        .range(prefix..)
        .next()
        .is_some_and(|(k, _)| k.starts_with(prefix))
}

/// The 1-based indices present under `prefix.N…`, in numeric order.
fn indices(params: &BTreeMap<&str, &str>, prefix: &str) -> BTreeSet<u32> {
    let dotted = format!("{prefix}.");
    params
        .range(dotted.as_str()..)
        .take_while(|(k, _)| k.starts_with(&dotted))
        .filter_map(|(k, _)| k[dotted.len()..].split('.').next()?.parse::<u32>().ok())
        .filter(|&i| i >= 1)
        .collect()
}

fn replace_last_segment(key: &str, name: &str) -> String {
    match key.rsplit_once('.') {
        Some((head, _)) => format!("{head}.{name}"),
        None => name.to_string(),
    }
}

/// Encodes a successful response as `<ActionResponse>` with its result
/// wrapper and `ResponseMetadata`.
pub fn encode_response(action: &str, output: &Value, request_id: &str) -> Encoded {
    let mut out = String::with_capacity(512);
    out.push_str("<?xml version=\"1.0\"?>");
    out.push_str(&format!("<{action}Response xmlns=\"{XML_NAMESPACE}\">"));
    let op = model::operation(action);
    let output_def = op.and_then(|o| o.get("output"));
    if let Some(def) = output_def {
        let wrapper = def
            .get("resultWrapper")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{action}Result"));
        let shape = def
            .get("shape")
            .and_then(Value::as_str)
            .and_then(model::shape);
        xml::open(&mut out, &wrapper);
        let start = out.len();
        if let Some(shape) = shape {
            encode_members(&mut out, shape, output);
        }
        if out.len() == start {
            // An empty result is one empty element (`<ReceiveMessageResult/>`),
            // as SQS writes it and as some clients match it.
            out.truncate(start - 1);
            out.push_str("/>");
        } else {
            xml::close(&mut out, &wrapper);
        }
    }
    out.push_str("<ResponseMetadata>");
    xml::element(&mut out, "RequestId", request_id);
    out.push_str("</ResponseMetadata>");
    out.push_str(&format!("</{action}Response>"));
    Encoded {
        status: 200,
        content_type: CONTENT_TYPE,
        headers: Vec::new(),
        body: out.into_bytes(),
    }
}

fn encode_members(out: &mut String, shape: &'static Value, value: &Value) {
    for member in model::members(shape) {
        if let Some(v) = value.get(member.name) {
            encode_value(out, member.wire_name, member.shape, member.flattened, v);
        }
    }
}

fn encode_value(
    out: &mut String,
    name: &str,
    shape: &'static Value,
    flattened: bool,
    value: &Value,
) {
    match model::shape_type(shape) {
        "structure" => {
            xml::open(out, name);
            encode_members(out, shape, value);
            xml::close(out, name);
        }
        "list" => {
            let Some(items) = value.as_array() else {
                return;
            };
            let Some((item_shape, item_name)) = model::list_member(shape) else {
                return;
            };
            if flattened {
                let item_name = item_name.unwrap_or(name);
                for item in items {
                    encode_value(out, item_name, item_shape, false, item);
                }
            } else {
                xml::open(out, name);
                for item in items {
                    encode_value(out, item_name.unwrap_or("member"), item_shape, false, item);
                }
                xml::close(out, name);
            }
        }
        "map" => {
            let Some(entries) = value.as_object() else {
                return;
            };
            let Some((key_shape, key_name, value_shape, value_name)) = model::map_parts(shape)
            else {
                return;
            };
            if !flattened {
                xml::open(out, name);
            }
            let entry_name = if flattened { name } else { "entry" };
            for (k, v) in entries {
                xml::open(out, entry_name);
                encode_value(out, key_name, key_shape, false, &Value::String(k.clone()));
                encode_value(out, value_name, value_shape, false, v);
                xml::close(out, entry_name);
            }
            if !flattened {
                xml::close(out, name);
            }
        }
        _ => {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Null => return,
                other => other.to_string(),
            };
            xml::element(out, name, &text);
        }
    }
}

/// Encodes an error as `<ErrorResponse>` (rule W2). A request without an
/// action is answered as SQS does: 404 and an `<UnknownOperationException/>`
/// document (rule W7).
pub fn encode_error(error: &SqsError, request_id: &str) -> Encoded {
    let code = error.code;
    if code == ErrorCode::MissingAction {
        return Encoded {
            status: 404,
            content_type: CONTENT_TYPE,
            headers: Vec::new(),
            body: b"<?xml version=\"1.0\"?><UnknownOperationException/>".to_vec(),
        };
    }
    let mut out = String::with_capacity(256);
    out.push_str("<?xml version=\"1.0\"?>");
    out.push_str(&format!("<ErrorResponse xmlns=\"{XML_NAMESPACE}\"><Error>"));
    xml::element(
        &mut out,
        "Type",
        if code.is_sender_fault() {
            "Sender"
        } else {
            "Receiver"
        },
    );
    xml::element(&mut out, "Code", code.query_code());
    xml::element(&mut out, "Message", error.query_message());
    out.push_str("<Detail/></Error>");
    xml::element(&mut out, "RequestId", request_id);
    out.push_str("</ErrorResponse>");
    Encoded {
        status: code.http_status(),
        content_type: CONTENT_TYPE,
        headers: Vec::new(),
        body: out.into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn w1_decodes_maps_lists_and_nested_structures() {
        let r = decode(&params(&[
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
        ]))
        .unwrap();
        assert_eq!(r.action, "SendMessageBatch");
        assert_eq!(
            crate::requests::parse::<Value>(r.input).unwrap(),
            json!({
                "QueueUrl": "http://h/000000000000/q",
                "Entries": [
                    {"Id": "a", "MessageBody": "one", "DelaySeconds": 5,
                     "MessageAttributes": {"color": {"DataType": "String", "StringValue": "red"}}},
                    {"Id": "b", "MessageBody": "two"},
                    {"Id": "c", "MessageBody": "ten"},
                ]
            })
        );
    }

    #[test]
    fn w1_decodes_attribute_maps_and_name_lists() {
        let r = decode(&params(&[
            ("Action", "CreateQueue"),
            ("QueueName", "q"),
            ("Attribute.1.Name", "VisibilityTimeout"),
            ("Attribute.1.Value", "40"),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", "a"),
        ]))
        .unwrap();
        assert_eq!(
            crate::requests::parse::<Value>(r.input).unwrap(),
            json!({"QueueName": "q", "Attributes": {"VisibilityTimeout": "40"}, "tags": {"team": "a"}})
        );
        let r = decode(&params(&[
            ("Action", "ReceiveMessage"),
            ("QueueUrl", "u"),
            ("AttributeName.1", "All"),
            ("MessageAttributeName.1", "foo.*"),
            ("MaxNumberOfMessages", "10"),
        ]))
        .unwrap();
        assert_eq!(
            crate::requests::parse::<Value>(r.input).unwrap(),
            json!({"QueueUrl": "u", "AttributeNames": ["All"], "MessageSystemAttributeNames": ["All"],
                "MessageAttributeNames": ["foo.*"], "MaxNumberOfMessages": 10})
        );
    }

    #[test]
    fn w2_query_bad_input() {
        assert_eq!(
            decode(&params(&[("QueueUrl", "u")])).unwrap_err().code,
            ErrorCode::MissingAction
        );
        assert_eq!(
            decode(&params(&[("Action", "Nope")])).unwrap_err().code,
            ErrorCode::InvalidAction
        );
        assert_eq!(
            decode(&params(&[
                ("Action", "ReceiveMessage"),
                ("MaxNumberOfMessages", "x")
            ]))
            .unwrap_err()
            .code,
            ErrorCode::InvalidParameterValue
        );
    }

    #[test]
    fn w1_encodes_flattened_lists_and_maps() {
        let out = json!({"Messages": [{
            "MessageId": "m", "ReceiptHandle": "r", "MD5OfBody": "x", "Body": "a<b>&\r",
            "Attributes": {"SenderId": "s"},
            "MessageAttributes": {"c": {"DataType": "String", "StringValue": "red"}}
        }]});
        let e = encode_response("ReceiveMessage", &out, "req-1");
        let body = String::from_utf8(e.body).unwrap();
        assert!(body.contains("<ReceiveMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><ReceiveMessageResult><Message><MessageId>m</MessageId>"));
        assert!(body.contains("<Body>a&lt;b&gt;&amp;&#xD;</Body>"));
        assert!(body.contains("<Attribute><Name>SenderId</Name><Value>s</Value></Attribute>"));
        assert!(body.contains("<MessageAttribute><Name>c</Name><Value><StringValue>red</StringValue><DataType>String</DataType></Value></MessageAttribute>"));
        assert!(body.ends_with("<ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata></ReceiveMessageResponse>"));
        let e = encode_response("ListQueues", &json!({"QueueUrls": ["a", "b"]}), "r");
        let body = String::from_utf8(e.body).unwrap();
        assert!(body.contains(
            "<ListQueuesResult><QueueUrl>a</QueueUrl><QueueUrl>b</QueueUrl></ListQueuesResult>"
        ));
        let e = encode_response("DeleteMessage", &json!({}), "r");
        assert_eq!(
            String::from_utf8(e.body).unwrap(),
            "<?xml version=\"1.0\"?><DeleteMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DeleteMessageResponse>"
        );
    }

    #[test]
    fn w2_query_error() {
        let e = encode_error(&SqsError::no_queue(), "r");
        assert_eq!(e.status, 400);
        let body = String::from_utf8(e.body).unwrap();
        assert!(
            body.contains(
                "<Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>"
            )
        );
        assert!(body.contains("<RequestId>r</RequestId></ErrorResponse>"));
        // W7: the Query wording of a missing queue (AWS recorded answer).
        assert!(body.contains(
            "<Message>The specified queue does not exist for this wsdl version.</Message>"
        ));
    }

    /// M2: the alarm extensions travel in Query too: a double threshold,
    /// flattened action and name lists, and nested history in the answer.
    #[test]
    fn m2_alarm_actions_in_query() {
        let r = decode(&params(&[
            ("Action", "PutAlarm"),
            ("AlarmName", "dlq"),
            ("QueueUrl", "http://h/000000000000/q"),
            ("Threshold", "0.5"),
            ("Period", "60"),
            ("AlarmAction.1", "http://hooks.test/a"),
            ("AlarmAction.2", "arn:aws:sqs:us-east-1:000000000000:ops"),
        ]))
        .unwrap();
        assert_eq!(r.action, "PutAlarm");
        let input = crate::requests::parse::<Value>(r.input).unwrap();
        assert_eq!(input["Threshold"], json!(0.5));
        assert_eq!(input["Period"], json!(60));
        assert_eq!(
            input["Actions"],
            json!([
                "http://hooks.test/a",
                "arn:aws:sqs:us-east-1:000000000000:ops"
            ])
        );
        let bad = decode(&params(&[("Action", "PutAlarm"), ("Threshold", "lots")]));
        assert_eq!(bad.unwrap_err().code, ErrorCode::InvalidParameterValue);
        let r = decode(&params(&[
            ("Action", "DeleteAlarms"),
            ("AlarmName.1", "a"),
            ("AlarmName.2", "b"),
        ]))
        .unwrap();
        assert_eq!(
            crate::requests::parse::<Value>(r.input).unwrap()["AlarmNames"],
            json!(["a", "b"])
        );
        let e = encode_response(
            "DescribeAlarms",
            &json!({"Alarms": [{"AlarmName": "dlq", "Threshold": 1.0, "StateValue": "ALARM",
                "Actions": ["http://h/"],
                "History": [{"Timestamp": 5, "OldState": "OK", "NewState": "ALARM", "Reason": "r"}]}]}),
            "r",
        );
        let body = String::from_utf8(e.body).unwrap();
        assert!(body.contains("<DescribeAlarmsResult><Alarm><AlarmName>dlq</AlarmName><Threshold>1.0</Threshold><AlarmAction>http://h/</AlarmAction><StateValue>ALARM</StateValue><HistoryItem><Timestamp>5</Timestamp><OldState>OK</OldState><NewState>ALARM</NewState><Reason>r</Reason></HistoryItem></Alarm></DescribeAlarmsResult>"), "{body}");
    }

    /// W7: a request without an action is 404 `<UnknownOperationException/>`;
    /// CreateQueue and ListQueues are not valid on a queue's URL; an empty
    /// result is one empty element (AWS recorded answers, LocalStack
    /// test_sqs.py::TestSqsQueryApi).
    #[test]
    fn w7_query_api_edges() {
        let e = decode(&params(&[])).unwrap_err();
        let enc = encode_error(&e, "rid");
        assert_eq!(enc.status, 404);
        assert!(String::from_utf8_lossy(&enc.body).contains("<UnknownOperationException/>"));
        for action in ["CreateQueue", "ListQueues"] {
            let e = check_queue_endpoint(action).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidAction);
            assert_eq!(
                e.message,
                format!("The action {action} is not valid for this endpoint.")
            );
        }
        assert!(check_queue_endpoint("GetQueueUrl").is_ok());
        let enc = encode_response("ReceiveMessage", &json!({}), "rid");
        let text = String::from_utf8(enc.body).unwrap();
        assert!(
            text.contains("<ReceiveMessageResult/><ResponseMetadata>"),
            "{text}"
        );
    }
}
