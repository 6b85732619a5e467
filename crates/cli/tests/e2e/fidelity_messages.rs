//! Message-level answers that AWS's recordings fix and that only the wire
//! shows (rules V22, V23): the members a JSON answer leaves out, and a
//! request header that becomes a system attribute.

use serde_json::{Value, json};

use crate::common::{RawClient, TestServer};

fn call(raw: &RawClient, action: &str, body: Value) -> Value {
    let r = raw.json(action, &body.to_string());
    assert_eq!(r.status, 200, "{action}: {}", r.body);
    serde_json::from_str(&r.body).expect("a JSON answer")
}

fn queue(raw: &RawClient, name: &str) -> String {
    let out = call(raw, "CreateQueue", json!({ "QueueName": name }));
    out["QueueUrl"].as_str().expect("QueueUrl").to_string()
}

/// V22: a send's `X-Amzn-Trace-Id` header is kept as the message's
/// `AWSTraceHeader` system attribute (AWS recorded answer, LocalStack
/// snapshot test_sqs.py::test_aws_trace_header_propagation); a send without
/// it has none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v22_trace_header_becomes_aws_trace_header() {
    let server = TestServer::start().await;
    let raw = server.raw();
    let url = queue(&raw, "traced");
    let trace = "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1";
    let body = json!({ "QueueUrl": url, "MessageBody": "test" }).to_string();
    let r = raw.request(
        "POST",
        "/",
        &[
            ("Content-Type", "application/x-amz-json-1.0"),
            ("X-Amz-Target", "AmazonSQS.SendMessage"),
            ("X-Amzn-Trace-Id", trace),
        ],
        body.as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    call(
        &raw,
        "SendMessage",
        json!({ "QueueUrl": url, "MessageBody": "plain" }),
    );
    let out = call(
        &raw,
        "ReceiveMessage",
        json!({ "QueueUrl": url, "MaxNumberOfMessages": 10,
                "MessageSystemAttributeNames": ["AWSTraceHeader", "SentTimestamp"] }),
    );
    let messages = out["Messages"].as_array().expect("Messages");
    assert_eq!(messages.len(), 2);
    for m in messages {
        let attrs = &m["Attributes"];
        assert!(attrs["SentTimestamp"].is_string());
        match m["Body"].as_str() {
            Some("test") => assert_eq!(attrs["AWSTraceHeader"], trace),
            _ => assert!(attrs.get("AWSTraceHeader").is_none(), "{m}"),
        }
    }
}

/// V23: a batch answer leaves out a list with no entry (AWS recorded
/// answer, LocalStack snapshot
/// test_send_message_batch_with_oversized_contents_with_updated_maximum_message_size[sqs]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v23_batch_answers_leave_out_empty_lists() {
    let server = TestServer::start().await;
    let raw = server.raw();
    let url = queue(&raw, "batches");
    let sent = call(
        &raw,
        "SendMessageBatch",
        json!({ "QueueUrl": url, "Entries": [{ "Id": "1", "MessageBody": "a" }] }),
    );
    assert_eq!(sent["Successful"].as_array().map(Vec::len), Some(1));
    assert!(sent.get("Failed").is_none(), "{sent}");
    let deleted = call(
        &raw,
        "DeleteMessageBatch",
        json!({ "QueueUrl": url, "Entries": [{ "Id": "x", "ReceiptHandle": "garbage" }] }),
    );
    assert!(deleted.get("Successful").is_none(), "{deleted}");
    assert_eq!(deleted["Failed"][0]["Code"], "ReceiptHandleIsInvalid");
}
