//! Dead-letter queues through the official Rust SDK.

use aws_sdk_sqs::types::{MessageSystemAttributeName as Sys, QueueAttributeName as Attr};

use crate::common::{TestServer, create_queue};

/// R2, R4, R6: a poison message leaves its source after maxReceiveCount
/// receives; the healthy one is processed; the DLQ holds the poison one with
/// its receive count and source ARN.
#[tokio::test]
async fn r2_poison_message_is_dead_lettered() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let dlq = create_queue(&sqs, "orders-dlq").await;
    let src = sqs
        .create_queue()
        .queue_name("orders")
        .attributes(
            Attr::RedrivePolicy,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":"3"}"#,
        )
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    sqs.send_message()
        .queue_url(&src)
        .message_body("poison")
        .send()
        .await
        .unwrap();
    sqs.send_message()
        .queue_url(&src)
        .message_body("healthy")
        .send()
        .await
        .unwrap();
    let mut processed = Vec::new();
    for _ in 0..5 {
        let got = sqs
            .receive_message()
            .queue_url(&src)
            .max_number_of_messages(10)
            .visibility_timeout(30)
            .send()
            .await
            .unwrap();
        for m in got.messages() {
            if m.body() == Some("healthy") {
                sqs.delete_message()
                    .queue_url(&src)
                    .receipt_handle(m.receipt_handle().unwrap())
                    .send()
                    .await
                    .unwrap();
                processed.push("healthy");
            }
            // The poison one fails: not deleted, comes back after 30 s.
        }
        server.clock.advance_secs(30);
    }
    assert_eq!(processed, ["healthy"]);
    let got = sqs
        .receive_message()
        .queue_url(&dlq)
        .message_system_attribute_names(Sys::All)
        .send()
        .await
        .unwrap();
    let m = &got.messages()[0];
    assert_eq!(m.body(), Some("poison"));
    let attrs = m.attributes().unwrap();
    assert_eq!(
        attrs[&Sys::DeadLetterQueueSourceArn],
        "arn:aws:sqs:us-east-1:000000000000:orders"
    );
    assert_eq!(
        attrs[&Sys::ApproximateReceiveCount],
        "4",
        "three in the source, one here"
    );
    let sources = sqs
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .unwrap();
    assert_eq!(sources.queue_urls(), std::slice::from_ref(&src));
    // R12: AWS accepts a queue naming itself as its dead-letter queue.
    sqs.set_queue_attributes()
        .queue_url(&src)
        .attributes(
            Attr::RedrivePolicy,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders","maxReceiveCount":3}"#,
        )
        .send()
        .await
        .expect("a queue may be its own DLQ");
    let sources = sqs
        .list_dead_letter_source_queues()
        .queue_url(&src)
        .send()
        .await
        .unwrap();
    assert_eq!(sources.queue_urls(), std::slice::from_ref(&src));
}
