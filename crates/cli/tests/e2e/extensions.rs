//! sluice's own actions, NackMessage (X2) and PeekMessages (X1), in both
//! protocols, next to real SDK traffic.

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::{Value, json};

use crate::common::{TestServer, create_queue, xml_values};

/// X1, X2, W1: a consumer nacks a poison message permanently with a reason;
/// the DLQ shows it by peeking, with provenance, in JSON and in Query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x1_x2_nack_then_peek_in_both_protocols() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let dlq = create_queue(&sqs, "orders-dlq").await;
    let src = sqs
        .create_queue()
        .queue_name("orders")
        .attributes(
            Attr::RedrivePolicy,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":5}"#,
        )
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    sqs.send_message()
        .queue_url(&src)
        .message_body(r#"{"order": "not json"#)
        .send()
        .await
        .unwrap();
    let got = sqs.receive_message().queue_url(&src).send().await.unwrap();
    let handle = got.messages()[0].receipt_handle().unwrap().to_string();
    let raw = server.raw();
    let (src2, dlq2) = (src.clone(), dlq.clone());
    let (peek_json, peek_xml) = tokio::task::spawn_blocking(move || {
        let both = json!({"QueueUrl": src2, "ReceiptHandle": handle, "Permanent": true, "RetryAfterSeconds": 5}).to_string();
        let r = raw.json_target("Sluice.NackMessage", &both);
        assert_eq!(r.status, 400);
        assert_eq!(r.header("x-amzn-query-error"), Some("InvalidParameterCombination;Sender"));
        let nack = json!({"QueueUrl": src2, "ReceiptHandle": handle, "Permanent": true, "Reason": "invalid JSON in body"}).to_string();
        let r = raw.json_target("Sluice.NackMessage", &nack);
        assert_eq!(r.status, 200, "{}", r.body);
        let r = raw.json_target("AmazonSQS.PeekMessages", &json!({"QueueUrl": dlq2}).to_string());
        assert_eq!(r.status, 400, "extensions are not in the AmazonSQS namespace");
        let peek_json = raw.json_target("Sluice.PeekMessages", &json!({"QueueUrl": dlq2, "FailureReasonContains": "JSON"}).to_string());
        let peek_xml = raw.query("/000000000000/orders-dlq", &[("Action", "PeekMessages"), ("MaxResults", "5")]);
        (peek_json, peek_xml)
    })
    .await
    .unwrap();
    assert_eq!(peek_json.status, 200, "{}", peek_json.body);
    let body: Value = serde_json::from_str(&peek_json.body).unwrap();
    let m = &body["Messages"][0];
    assert_eq!(m["Body"], r#"{"order": "not json"#);
    assert_eq!(m["FailureReason"], "invalid JSON in body");
    assert_eq!(m["ReceiveCount"], 1);
    assert_eq!(m["State"], "visible");
    assert_eq!(
        m["Attributes"]["DeadLetterQueueSourceArn"],
        "arn:aws:sqs:us-east-1:000000000000:orders"
    );
    assert!(m["Attributes"]["Sluice.MovedAt"].is_string());
    assert_eq!(peek_xml.status, 200, "{}", peek_xml.body);
    assert!(
        peek_xml.body.contains("<PeekMessagesResponse"),
        "{}",
        peek_xml.body
    );
    assert_eq!(
        xml_values(&peek_xml.body, "FailureReason"),
        ["invalid JSON in body"]
    );
    assert_eq!(xml_values(&peek_xml.body, "ReceiveCount"), ["1"]);
    // Peeking changed nothing: the DLQ message is still there, never received.
    let a = sqs
        .get_queue_attributes()
        .queue_url(&dlq)
        .attribute_names(Attr::All)
        .send()
        .await
        .unwrap();
    assert_eq!(
        a.attributes().unwrap()[&Attr::ApproximateNumberOfMessages],
        "1"
    );
    assert_eq!(
        a.attributes().unwrap()[&Attr::ApproximateNumberOfMessagesNotVisible],
        "0"
    );
}

/// X3, W1: a selective redrive in JSON (dry run, then for real) and in
/// Query; the replayed message carries its replay count, which the SDK sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x3_selective_redrive_marks_replays() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    sqs.create_queue().queue_name("dlq").send().await.unwrap();
    let src = sqs
        .create_queue()
        .queue_name("src")
        .attributes(Attr::RedrivePolicy, r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#)
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    for body in ["bug-1 a", "bug-2 b", "bug-1 c"] {
        sqs.send_message()
            .queue_url(&src)
            .message_body(body)
            .send()
            .await
            .unwrap();
    }
    sqs.receive_message()
        .queue_url(&src)
        .max_number_of_messages(10)
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    sqs.receive_message()
        .queue_url(&src)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap();
    let raw = server.raw();
    let (dry, real, query) = tokio::task::spawn_blocking(move || {
        let req = |dry: bool| {
            json!({"QueueUrl": "http://x/000000000000/dlq", "BodyContains": "bug-1", "DryRun": dry})
                .to_string()
        };
        let dry = raw.json_target("Sluice.RedriveMessages", &req(true));
        let real = raw.json_target("Sluice.RedriveMessages", &req(false));
        let query = raw.query(
            "/000000000000/dlq",
            &[
                ("Action", "RedriveMessages"),
                ("BodyContains", "nothing matches"),
            ],
        );
        (dry, real, query)
    })
    .await
    .unwrap();
    let dry: Value = serde_json::from_str(&dry.body).unwrap();
    assert_eq!(
        (dry["Moved"].as_u64(), dry["DryRun"].as_bool()),
        (Some(2), Some(true)),
        "{dry}"
    );
    let real: Value = serde_json::from_str(&real.body).unwrap();
    assert_eq!(real["Moved"], 2, "{real}");
    assert_eq!(real["MessageIds"], dry["MessageIds"]);
    assert_eq!(query.status, 200, "{}", query.body);
    assert_eq!(xml_values(&query.body, "Moved"), ["0"]);
    let got = sqs
        .receive_message()
        .queue_url(&src)
        .max_number_of_messages(10)
        .message_attribute_names("All")
        .send()
        .await
        .unwrap();
    let mut bodies: Vec<&str> = got.messages().iter().filter_map(|m| m.body()).collect();
    bodies.sort();
    assert_eq!(bodies, ["bug-1 a", "bug-1 c"]);
    for m in got.messages() {
        let count = &m.message_attributes().unwrap()["sluice.replay-count"];
        assert_eq!(
            (count.data_type(), count.string_value()),
            ("Number", Some("1"))
        );
    }
}
