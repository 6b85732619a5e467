//! A push consumer told `SkipCompleted` (rule I1) through the real binary,
//! on both engines: a message whose work was done, dead-lettered and then
//! replayed by a selective redrive (which keeps its message id) is deleted
//! without reaching the handler, while a message whose key is not
//! completed is delivered. The expected behaviour is sluice's own rule.

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::{Value, json};

use crate::alarms::{metrics, sluice};
use crate::common::{RawClient, SluiceProcess, on_durable, on_postgres, until};
use crate::consumers::{Handler, Reply, bodies};

/// I1, C13 on the durable engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i1_a_replayed_message_whose_work_is_completed_is_not_delivered() {
    on_durable(replayed_and_skipped).await;
}

/// I1, C13 on a PostgreSQL node. Without PostgreSQL's binaries it says
/// SKIPPED, and fails instead with SLUICE_REQUIRE_POSTGRES=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i1_a_replayed_message_whose_work_is_completed_is_not_delivered_on_postgres() {
    on_postgres(replayed_and_skipped).await;
}

async fn ok(raw: RawClient, action: &str, body: Value) -> Value {
    let (status, v, r) = sluice(raw, action, body).await;
    assert_eq!(status, 200, "{action}: {}", r.body);
    v
}

async fn replayed_and_skipped(args: &[&str]) {
    let node = SluiceProcess::start(args);
    let sqs = node.sdk();
    let dlq = sqs
        .create_queue()
        .queue_name("skip-dlq")
        .send()
        .await
        .expect("dlq");
    let dlq = dlq.queue_url.expect("url");
    let src = sqs
        .create_queue()
        .queue_name("skip-src")
        .attributes(
            Attr::RedrivePolicy,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:skip-dlq","maxReceiveCount":5}"#,
        )
        .send()
        .await
        .expect("src")
        .queue_url
        .expect("url");
    // "charged" was processed (its key completed) but its consumer crashed
    // before the delete and the message ended in the DLQ; "fresh" was not.
    for body in ["charged", "fresh"] {
        sqs.send_message()
            .queue_url(&src)
            .message_body(body)
            .send()
            .await
            .expect("send");
    }
    let got = sqs
        .receive_message()
        .queue_url(&src)
        .max_number_of_messages(10)
        .visibility_timeout(30)
        .send()
        .await
        .expect("receive");
    assert_eq!(got.messages().len(), 2);
    let charged = got
        .messages()
        .iter()
        .find(|m| m.body() == Some("charged"))
        .expect("charged");
    let fresh = got
        .messages()
        .iter()
        .find(|m| m.body() == Some("fresh"))
        .expect("fresh");
    let charged_id = charged.message_id().expect("id").to_string();
    let raw = node.raw();
    let claimed = ok(
        raw,
        "ClaimIdempotencyKey",
        json!({"Key": charged_id, "TtlSeconds": 3600}),
    )
    .await;
    assert_eq!(claimed["Status"], "CLAIMED");
    ok(
        raw,
        "CompleteIdempotencyKey",
        json!({"Key": charged_id, "Result": "ch_42"}),
    )
    .await;
    ok(
        raw,
        "NackMessage",
        json!({"QueueUrl": src, "ReceiptHandle": charged.receipt_handle(), "Permanent": true}),
    )
    .await;
    sqs.change_message_visibility()
        .queue_url(&src)
        .receipt_handle(fresh.receipt_handle().expect("handle"))
        .visibility_timeout(0)
        .send()
        .await
        .expect("release fresh");
    let moved = ok(raw, "RedriveMessages", json!({"QueueUrl": dlq})).await;
    assert_eq!(moved["Moved"], 1, "{moved}");

    let handler = Handler::start(Arc::new(|_, _| Reply::ok(""))).await;
    ok(
        raw,
        "CreateConsumer",
        json!({"Name": "skipper", "QueueUrl": src, "Url": handler.url, "SkipCompleted": "message_id"}),
    )
    .await;
    let listed = ok(raw, "ListConsumers", json!({})).await;
    assert_eq!(listed["Consumers"][0]["SkipCompleted"], "message_id");
    let empty = async || {
        let a = sqs
            .get_queue_attributes()
            .queue_url(&src)
            .attribute_names(Attr::All)
            .send()
            .await
            .expect("attributes");
        let a = a.attributes().expect("map");
        a[&Attr::ApproximateNumberOfMessages] == "0"
            && a[&Attr::ApproximateNumberOfMessagesNotVisible] == "0"
    };
    assert!(until(Duration::from_secs(10), empty).await, "both handled");
    let delivered: Vec<String> = handler.events().iter().flat_map(bodies).collect();
    assert_eq!(
        delivered,
        ["fresh"],
        "the completed one never reached the handler"
    );
    let skipped = metrics(raw).await;
    let line = r#"sluice_consumer_skipped_completed_messages_total{consumer="skipper"} 1"#;
    assert!(skipped.contains(line), "{line} in\n{skipped}");

    // A key that is not a message id's, or a bad one, is refused.
    let (status, _, r) = sluice(
        raw,
        "CreateConsumer",
        json!({"Name": "bad", "QueueUrl": src, "Url": handler.url, "SkipCompleted": "order.id"}),
    )
    .await;
    assert_eq!(status, 400, "{}", r.body);
}
