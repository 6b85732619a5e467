//! FIFO queues through the official Rust SDK.

use aws_sdk_sqs::types::{
    MessageSystemAttributeName as Sys, QueueAttributeName as Attr, SendMessageBatchRequestEntry,
};

use crate::common::{TestServer, code, create_queue};

/// F1–F4 end to end: creation rules, group order, dedup, system attributes,
/// receive attempt ids.
#[tokio::test]
async fn f1_f4_fifo_through_the_sdk() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let e = sqs
        .create_queue()
        .queue_name("orders")
        .attributes(Attr::FifoQueue, "true")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "InvalidParameterValue",
        "FifoQueue needs the .fifo suffix"
    );
    let e = sqs
        .create_queue()
        .queue_name("orders.fifo")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "InvalidParameterValue",
        "a .fifo name needs FifoQueue=true"
    );
    let e = sqs
        .create_queue()
        .queue_name("orders.fifo")
        .attributes(Attr::FifoQueue, "true")
        .attributes(Attr::FifoThroughputLimit, "perMessageGroupId")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidAttributeValue");
    let url = sqs
        .create_queue()
        .queue_name("orders.fifo")
        .attributes(Attr::FifoQueue, "true")
        .attributes(Attr::ContentBasedDeduplication, "true")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::All)
        .send()
        .await
        .unwrap();
    let attrs = attrs.attributes().unwrap();
    assert_eq!(attrs[&Attr::FifoQueue], "true");
    assert_eq!(attrs[&Attr::ContentBasedDeduplication], "true");
    assert_eq!(attrs[&Attr::DeduplicationScope], "queue");
    assert_eq!(attrs[&Attr::FifoThroughputLimit], "perQueue");

    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "MissingParameter",
        "MessageGroupId is required"
    );
    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_group_id("g")
        .delay_seconds(5)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "InvalidParameterValue",
        "no per-message delay"
    );

    let a1 = sqs
        .send_message()
        .queue_url(&url)
        .message_body("a1")
        .message_group_id("a")
        .send()
        .await
        .unwrap();
    let dup = sqs
        .send_message()
        .queue_url(&url)
        .message_body("a1")
        .message_group_id("a")
        .send()
        .await
        .unwrap();
    assert_eq!(
        dup.message_id(),
        a1.message_id(),
        "content-based deduplication"
    );
    assert_eq!(dup.sequence_number(), a1.sequence_number());
    let batch = sqs
        .send_message_batch()
        .queue_url(&url)
        .entries(
            SendMessageBatchRequestEntry::builder()
                .id("1")
                .message_body("a2")
                .message_group_id("a")
                .build()
                .unwrap(),
        )
        .entries(
            SendMessageBatchRequestEntry::builder()
                .id("2")
                .message_body("b1")
                .message_group_id("b")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(batch.successful().len(), 2);
    assert!(
        batch
            .successful()
            .iter()
            .all(|s| s.sequence_number().is_some())
    );

    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(1)
        .message_system_attribute_names(Sys::All)
        .receive_request_attempt_id("try-1")
        .send()
        .await
        .unwrap();
    let m = &got.messages()[0];
    assert_eq!(m.body(), Some("a1"));
    let sys = m.attributes().unwrap();
    assert_eq!(sys[&Sys::MessageGroupId], "a");
    assert_eq!(sys[&Sys::SequenceNumber], a1.sequence_number().unwrap());
    assert_eq!(
        sys[&Sys::MessageDeduplicationId].len(),
        64,
        "SHA-256 of the body"
    );
    let retry = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(1)
        .receive_request_attempt_id("try-1")
        .send()
        .await
        .unwrap();
    assert_eq!(
        retry.messages()[0].receipt_handle(),
        m.receipt_handle(),
        "same handle on retry"
    );
    let rest = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap();
    let bodies: Vec<&str> = rest.messages().iter().filter_map(|m| m.body()).collect();
    assert_eq!(bodies, ["b1"], "group a waits for a1");
}

/// Standard queues accept MessageGroupId (fair queues) but not a dedup id.
#[tokio::test]
async fn f2_standard_queue_group_id_and_dedup_id() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "std").await;
    sqs.send_message()
        .queue_url(&url)
        .message_body("x")
        .message_group_id("tenant-1")
        .send()
        .await
        .unwrap();
    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_deduplication_id("d")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .message_system_attribute_names(Sys::MessageGroupId)
        .send()
        .await
        .unwrap();
    assert_eq!(
        got.messages()[0].attributes().unwrap()[&Sys::MessageGroupId],
        "tenant-1"
    );
}

/// F6–F9 through the SDK, as AWS answered them (AWS recorded answers,
/// LocalStack snapshot test_sqs.py: test_create_standard_queue_with_fifo_attribute_raises_error,
/// test_set_unsupported_attribute_fifo, test_send_message_with_delay_0_works_for_fifo,
/// test_send_batch_missing_message_group_id_for_fifo_queue,
/// test_send_batch_missing_deduplication_id_for_fifo_queue).
#[tokio::test]
async fn f6_f9_fifo_attribute_and_send_validation() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let e = sqs
        .create_queue()
        .queue_name("plain")
        .attributes(Attr::DeduplicationScope, "queue")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(code(&e), "InvalidAttributeName", "F6");
    assert_eq!(
        e.meta().message(),
        Some("You can specify the DeduplicationScope only when FifoQueue is set to true.")
    );
    let url = sqs
        .create_queue()
        .queue_name("jobs.fifo")
        .attributes(Attr::FifoQueue, "true")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let e = sqs
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(Attr::FifoQueue, "false")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidAttributeValue", "F7");
    sqs.send_message()
        .queue_url(&url)
        .message_body("first")
        .message_group_id("g")
        .message_deduplication_id("1")
        .delay_seconds(0)
        .send()
        .await
        .expect("F8: a per-message delay of 0 is accepted");
    let entry = |id: &str, group: Option<&str>, dedup: Option<&str>| {
        SendMessageBatchRequestEntry::builder()
            .id(id)
            .message_body(id)
            .set_message_group_id(group.map(String::from))
            .set_message_deduplication_id(dedup.map(String::from))
            .build()
            .unwrap()
    };
    for (missing, bad, message) in [
        (
            "group",
            entry("b", None, Some("3")),
            "The request must contain the parameter MessageGroupId.",
        ),
        (
            "dedup",
            entry("b", Some("g"), None),
            "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
        ),
    ] {
        let e = sqs
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("a", Some("g"), Some("2")))
            .entries(bad)
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(code(&e), "InvalidParameterValue", "F9: {missing}");
        assert_eq!(e.meta().message(), Some(message));
    }
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap();
    let bodies: Vec<&str> = got.messages().iter().filter_map(|m| m.body()).collect();
    assert_eq!(bodies, ["first"], "F9: the refused batches sent nothing");
}
