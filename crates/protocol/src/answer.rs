//! Answers and SQS errors encoded in the protocol their request came in:
//! the JSON protocol's body, the Query protocol's XML document, or that
//! document rendered in JSON (a Query request that accepts JSON).
//!
//! The answers are the generated `Response` enums of each API; this
//! module wraps them as each protocol wraps an answer (the Query
//! protocol's `<ActionResponse>`, result element and request id).

use sluice_core::{ErrorCode, SqsError};

use crate::request::Protocol;
use crate::wire::{JsonObject, JsonStyle};
use crate::xml;

/// The `Content-Type` of JSON-protocol answers.
pub const JSON_CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// The `Content-Type` of Query answers.
pub const XML_CONTENT_TYPE: &str = "text/xml";

/// The `Content-Type` of Query answers rendered in JSON.
pub const QUERY_JSON_CONTENT_TYPE: &str = "application/json";

/// A successful answer of an API, as its generated `Response` enums are.
pub trait Answer {
    /// The operation answered.
    fn operation_name(&self) -> &'static str;
    /// The Query protocol's result element, when the operation has output.
    fn result_wrapper(&self) -> Option<&'static str>;
    /// Appends the result element's members as XML.
    fn write_xml(&self, out: &mut String);
    /// Appends the answer as JSON in `style`.
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle);
}

/// An encoded response: status, content type, extra headers and body.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type` header.
    pub content_type: &'static str,
    /// Extra headers, such as `x-amzn-query-error`.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// Encodes a successful answer in `protocol`; `namespace` is the API's
/// XML namespace, `capacity` a guess at the body's size.
pub fn encode_answer<A: Answer>(
    protocol: Protocol,
    namespace: &str,
    answer: &A,
    request_id: &str,
    capacity: usize,
) -> Encoded {
    let (content_type, body) = match protocol {
        Protocol::Json => {
            let mut body = Vec::with_capacity(capacity);
            answer.write_json(&mut body, JsonStyle::Protocol);
            (JSON_CONTENT_TYPE, body)
        }
        Protocol::Query => (
            XML_CONTENT_TYPE,
            query_document(namespace, answer, request_id, capacity).into_bytes(),
        ),
        Protocol::QueryJson => (
            QUERY_JSON_CONTENT_TYPE,
            query_json_document(answer, request_id, capacity),
        ),
    };
    Encoded {
        status: 200,
        content_type,
        headers: Vec::new(),
        body,
    }
}

/// `<ActionResponse xmlns=…><ActionResult>…</ActionResult>
/// <ResponseMetadata><RequestId>…` as the Query protocol answers.
fn query_document<A: Answer>(
    namespace: &str,
    answer: &A,
    request_id: &str,
    capacity: usize,
) -> String {
    let action = answer.operation_name();
    let mut out = String::with_capacity(capacity + 256);
    out.push_str("<?xml version=\"1.0\"?><");
    out.push_str(action);
    out.push_str("Response xmlns=\"");
    out.push_str(namespace);
    out.push_str("\">");
    if let Some(wrapper) = answer.result_wrapper() {
        xml::open(&mut out, wrapper);
        let start = out.len();
        answer.write_xml(&mut out);
        if out.len() == start {
            // An empty result is one empty element (`<ReceiveMessageResult/>`),
            // as SQS writes it and as some clients match it.
            out.truncate(start - 1);
            out.push_str("/>");
        } else {
            xml::close(&mut out, wrapper);
        }
    }
    out.push_str("<ResponseMetadata>");
    xml::element(&mut out, "RequestId", request_id);
    out.push_str("</ResponseMetadata></");
    out.push_str(action);
    out.push_str("Response>");
    out
}

/// `{"<Action>Response": {"<Action>Result": …, "ResponseMetadata":
/// {"RequestId": …}}}`: the Query document's structure in JSON (rule W7).
fn query_json_document<A: Answer>(answer: &A, request_id: &str, capacity: usize) -> Vec<u8> {
    let action = answer.operation_name();
    let mut out = Vec::with_capacity(capacity + 128);
    let mut document = JsonObject::open(&mut out, JsonStyle::Query);
    document.member(
        &format!("{action}Response"),
        &QueryJsonResponse { answer, request_id },
    );
    document.close();
    out
}

/// The `<Action>Response` member of a Query answer rendered in JSON.
struct QueryJsonResponse<'a, A> {
    answer: &'a A,
    request_id: &'a str,
}

impl<A: Answer> crate::wire::ToJson for QueryJsonResponse<'_, A> {
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle) {
        let mut response = JsonObject::open(out, style);
        if let Some(wrapper) = self.answer.result_wrapper() {
            response.member(wrapper, &ResultOf(self.answer));
        }
        response.member("ResponseMetadata", &RequestIdOf(self.request_id));
        response.close();
    }
}

struct ResultOf<'a, A>(&'a A);

impl<A: Answer> crate::wire::ToJson for ResultOf<'_, A> {
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle) {
        self.0.write_json(out, style);
    }
}

struct RequestIdOf<'a>(&'a str);

impl crate::wire::ToJson for RequestIdOf<'_> {
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle) {
        let mut metadata = JsonObject::open(out, style);
        metadata.member("RequestId", self.0);
        metadata.close();
    }
}

/// Encodes an SQS error in `protocol` (rule W2): in JSON, the shape's
/// `__type` and `x-amzn-query-error` with the Query code, which SDKs in
/// query-compatible mode read; in Query, `<ErrorResponse>`; rendered in
/// JSON, that document's structure.
pub fn encode_error(protocol: Protocol, error: &SqsError, request_id: &str) -> Encoded {
    match protocol {
        Protocol::Json => json_error(error),
        Protocol::Query => query_error(error, request_id),
        // A request that names no action is answered in XML whatever it
        // accepts (AWS recorded answer).
        Protocol::QueryJson if error.code == ErrorCode::MissingAction => {
            query_error(error, request_id)
        }
        Protocol::QueryJson => query_json_error(error, request_id),
    }
}

fn fault(code: ErrorCode) -> &'static str {
    if code.is_sender_fault() {
        "Sender"
    } else {
        "Receiver"
    }
}

fn json_error(error: &SqsError) -> Encoded {
    let code = error.code;
    let mut body = Vec::with_capacity(96 + error.message.len());
    let mut object = JsonObject::open(&mut body, JsonStyle::Protocol);
    object.member(
        "__type",
        &format!("com.amazonaws.sqs#{}", code.json_shape()),
    );
    object.member("message", error.message.as_str());
    object.close();
    Encoded {
        status: code.http_status(),
        content_type: JSON_CONTENT_TYPE,
        headers: vec![(
            "x-amzn-query-error",
            format!("{};{}", code.query_code(), fault(code)),
        )],
        body,
    }
}

/// `<ErrorResponse>` (rule W2). A request without an action is answered as
/// SQS does: 404 and an `<UnknownOperationException/>` document (rule W7).
fn query_error(error: &SqsError, request_id: &str) -> Encoded {
    let code = error.code;
    if code == ErrorCode::MissingAction {
        return Encoded {
            status: 404,
            content_type: XML_CONTENT_TYPE,
            headers: Vec::new(),
            body: b"<?xml version=\"1.0\"?><UnknownOperationException/>".to_vec(),
        };
    }
    let body = error_document(
        xml::XML_NAMESPACE,
        fault(code),
        code.query_code(),
        error.query_message(),
        request_id,
        true,
    );
    Encoded {
        status: code.http_status(),
        content_type: XML_CONTENT_TYPE,
        headers: Vec::new(),
        body: body.into_bytes(),
    }
}

/// An `<ErrorResponse>` document of the Query protocol, in `namespace`;
/// `detail` adds SQS's empty `<Detail/>`.
pub fn error_document(
    namespace: &str,
    fault: &str,
    code: &str,
    message: &str,
    request_id: &str,
    detail: bool,
) -> String {
    let mut out = String::with_capacity(256 + message.len());
    out.push_str("<?xml version=\"1.0\"?><ErrorResponse xmlns=\"");
    out.push_str(namespace);
    out.push_str("\"><Error>");
    xml::element(&mut out, "Type", fault);
    xml::element(&mut out, "Code", code);
    xml::element(&mut out, "Message", message);
    if detail {
        out.push_str("<Detail/>");
    }
    out.push_str("</Error>");
    xml::element(&mut out, "RequestId", request_id);
    out.push_str("</ErrorResponse>");
    out
}

/// `{"Error": {"Type", "Code", "Message"}, "RequestId"}`.
fn query_json_error(error: &SqsError, request_id: &str) -> Encoded {
    let code = error.code;
    let mut body = Vec::with_capacity(128 + error.message.len());
    let mut object = JsonObject::open(&mut body, JsonStyle::Query);
    object.member("Error", &ErrorMembers(error));
    object.member("RequestId", request_id);
    object.close();
    Encoded {
        status: code.http_status(),
        content_type: QUERY_JSON_CONTENT_TYPE,
        headers: Vec::new(),
        body,
    }
}

struct ErrorMembers<'a>(&'a SqsError);

impl crate::wire::ToJson for ErrorMembers<'_> {
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle) {
        let mut object = JsonObject::open(out, style);
        object.member("Type", fault(self.0.code));
        object.member("Code", self.0.code.query_code());
        object.member("Message", self.0.message.as_str());
        object.close();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::sqs::{self, Response};

    fn text(e: &Encoded) -> String {
        String::from_utf8(e.body.clone()).unwrap()
    }

    fn received() -> Response {
        Response::ReceiveMessage(sqs::ReceiveMessageResult {
            messages: vec![sqs::Message {
                message_id: Some("m".into()),
                receipt_handle: Some("r".into()),
                md5_of_body: Some("x".into()),
                body: Some("a<b>&\r".into()),
                attributes: BTreeMap::from([("SenderId".into(), "s".into())]),
                md5_of_message_attributes: None,
                message_attributes: BTreeMap::from([(
                    "c".into(),
                    sqs::MessageAttributeValue {
                        data_type: Some("String".into()),
                        string_value: Some("red".into()),
                        ..Default::default()
                    },
                )]),
            }],
        })
    }

    /// W1: the Query answer lays out flattened lists and maps as the model
    /// does, escapes text, and ends with the request id.
    #[test]
    fn w1_query_answers_follow_the_model() {
        let e = encode_answer(Protocol::Query, XML_NAMESPACE_SQS, &received(), "req-1", 0);
        let body = text(&e);
        assert!(body.contains("<ReceiveMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><ReceiveMessageResult><Message><MessageId>m</MessageId>"));
        assert!(body.contains("<Body>a&lt;b&gt;&amp;&#xD;</Body>"));
        assert!(body.contains("<Attribute><Name>SenderId</Name><Value>s</Value></Attribute>"));
        assert!(body.contains("<MessageAttribute><Name>c</Name><Value><StringValue>red</StringValue><DataType>String</DataType></Value></MessageAttribute>"));
        assert!(body.ends_with("<ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata></ReceiveMessageResponse>"));
        let list = Response::ListQueues(sqs::ListQueuesResult {
            queue_urls: vec!["a".into(), "b".into()],
            next_token: None,
        });
        let body = text(&encode_answer(
            Protocol::Query,
            XML_NAMESPACE_SQS,
            &list,
            "r",
            0,
        ));
        assert!(body.contains(
            "<ListQueuesResult><QueueUrl>a</QueueUrl><QueueUrl>b</QueueUrl></ListQueuesResult>"
        ));
        let deleted = encode_answer(
            Protocol::Query,
            XML_NAMESPACE_SQS,
            &Response::DeleteMessage,
            "r",
            0,
        );
        assert_eq!(
            text(&deleted),
            "<?xml version=\"1.0\"?><DeleteMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DeleteMessageResponse>"
        );
    }

    /// W7: an empty result is one empty element (AWS recorded answers,
    /// LocalStack test_sqs.py::TestSqsQueryApi).
    #[test]
    fn w7_an_empty_result_is_one_empty_element() {
        let empty = Response::ReceiveMessage(Default::default());
        let body = text(&encode_answer(
            Protocol::Query,
            XML_NAMESPACE_SQS,
            &empty,
            "rid",
            0,
        ));
        assert!(
            body.contains("<ReceiveMessageResult/><ResponseMetadata>"),
            "{body}"
        );
        let json = encode_answer(Protocol::Json, XML_NAMESPACE_SQS, &empty, "rid", 0);
        assert_eq!(text(&json), "{}");
    }

    /// W1: the JSON protocol's answer carries maps as objects and leaves
    /// out what is absent or empty (rule V23).
    #[test]
    fn w1_json_answers_follow_the_model() {
        let e = encode_answer(Protocol::Json, XML_NAMESPACE_SQS, &received(), "rid", 0);
        assert_eq!(e.content_type, JSON_CONTENT_TYPE);
        assert_eq!(
            text(&e),
            r#"{"Messages":[{"MessageId":"m","ReceiptHandle":"r","MD5OfBody":"x","Body":"a<b>&\r","Attributes":{"SenderId":"s"},"MessageAttributes":{"c":{"StringValue":"red","DataType":"String"}}}]}"#
        );
        let batch = Response::DeleteMessageBatch(sqs::DeleteMessageBatchResult {
            successful: vec![sqs::DeleteMessageBatchResultEntry { id: "1".into() }],
            failed: vec![],
        });
        let e = encode_answer(Protocol::Json, XML_NAMESPACE_SQS, &batch, "rid", 0);
        assert_eq!(text(&e), r#"{"Successful":[{"Id":"1"}]}"#);
    }

    /// W7: a Query answer rendered in JSON keeps the XML document's
    /// structure, maps as Name/Value entries (AWS recorded answer,
    /// LocalStack test_sqs.py::TestSqsQueryApi::test_get_queue_attributes_json_format).
    #[test]
    fn w7_query_json_keeps_the_xml_structure() {
        let attributes = Response::GetQueueAttributes(sqs::GetQueueAttributesResult {
            attributes: BTreeMap::from([(
                "QueueArn".into(),
                "arn:aws:sqs:us-east-1:000000000000:q".into(),
            )]),
        });
        let e = encode_answer(
            Protocol::QueryJson,
            XML_NAMESPACE_SQS,
            &attributes,
            "rid",
            0,
        );
        let doc: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
        assert_eq!(
            doc["GetQueueAttributesResponse"]["GetQueueAttributesResult"]["Attributes"],
            serde_json::json!([{"Name": "QueueArn", "Value": "arn:aws:sqs:us-east-1:000000000000:q"}])
        );
        assert_eq!(
            doc["GetQueueAttributesResponse"]["ResponseMetadata"]["RequestId"],
            "rid"
        );
    }

    /// W9: ReceiveMessage's list is `messages` in the JSON rendering, its
    /// entries keep their model names (AWS-validated assertion, LocalStack
    /// test_sqs.py::test_marker_serialization_json_protocol).
    #[test]
    fn w9_query_json_receive_names_its_list_messages() {
        let e = encode_answer(
            Protocol::QueryJson,
            XML_NAMESPACE_SQS,
            &received(),
            "rid",
            0,
        );
        let doc: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
        let result = &doc["ReceiveMessageResponse"]["ReceiveMessageResult"];
        assert_eq!(result["messages"][0]["Body"], "a<b>&\r");
        assert!(result.get("Messages").is_none());
    }

    /// W2: errors in each protocol: JSON's `__type` and query-error
    /// header, Query's ErrorResponse with the Query wording of a missing
    /// queue (W7, AWS recorded answer), the JSON rendering's Error member.
    #[test]
    fn w2_errors_in_each_protocol() {
        let e = encode_error(Protocol::Json, &SqsError::no_queue(), "r");
        assert_eq!(e.status, 400);
        assert_eq!(
            e.headers,
            vec![(
                "x-amzn-query-error",
                "AWS.SimpleQueueService.NonExistentQueue;Sender".to_string()
            )]
        );
        let body: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
        assert_eq!(body["__type"], "com.amazonaws.sqs#QueueDoesNotExist");
        assert_eq!(body["message"], "The specified queue does not exist.");

        let e = encode_error(Protocol::Query, &SqsError::no_queue(), "r");
        let body = text(&e);
        assert!(
            body.contains(
                "<Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>"
            )
        );
        assert!(body.contains(
            "<Message>The specified queue does not exist for this wsdl version.</Message>"
        ));
        assert!(body.contains("<RequestId>r</RequestId></ErrorResponse>"));

        let invalid = crate::decode::invalid_action("ListQueues");
        let e = encode_error(Protocol::QueryJson, &invalid, "rid");
        assert_eq!(e.status, 400);
        let doc: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
        assert_eq!(doc["Error"]["Code"], "InvalidAction");
        assert_eq!(
            doc["Error"]["Message"],
            "The action ListQueues is not valid for this endpoint."
        );
    }

    /// W7: a request without an action is 404 `<UnknownOperationException/>`,
    /// in XML whatever it accepts (AWS recorded answer).
    #[test]
    fn w7_a_request_without_an_action() {
        for protocol in [Protocol::Query, Protocol::QueryJson] {
            let e = encode_error(protocol, &crate::decode::missing_action(), "rid");
            assert_eq!(e.status, 404);
            assert!(text(&e).contains("<UnknownOperationException/>"));
        }
    }

    const XML_NAMESPACE_SQS: &str = crate::xml::XML_NAMESPACE;
}
