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
