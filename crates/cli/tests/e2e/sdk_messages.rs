//! Message actions through the official Rust SDK (AWS JSON protocol).

use std::time::{Duration, Instant};

use aws_sdk_sqs::primitives::Blob;
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry,
    MessageAttributeValue, MessageSystemAttributeName as Sys, MessageSystemAttributeNameForSends,
    MessageSystemAttributeValue, QueueAttributeName as Attr, SendMessageBatchRequestEntry,
};
use sluice_core::Clock;
use sluice_core::digest::{md5_of_attributes, md5_of_body};
use sluice_core::message::{AttributeValue, MessageAttributes};

use crate::common::{TestServer, code, create_queue};

fn string_attr(v: &str) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type("String")
        .string_value(v)
        .build()
        .unwrap()
}

async fn counts(server: &TestServer, url: &str) -> (String, String, String) {
    let a = server
        .sdk()
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(Attr::All)
        .send()
        .await
        .unwrap();
    let a = a.attributes().unwrap();
    (
        a[&Attr::ApproximateNumberOfMessages].clone(),
        a[&Attr::ApproximateNumberOfMessagesNotVisible].clone(),
        a[&Attr::ApproximateNumberOfMessagesDelayed].clone(),
    )
}

/// V1, V2, W4: a message comes back with its attributes, system attributes
/// and the digests SDKs verify.
#[tokio::test]
async fn v2_send_receive_with_attributes_and_digests() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&server.sdk(), "q").await;
    let sent = sqs
        .send_message()
        .queue_url(&url)
        .message_body("héllo")
        .message_attributes("color", string_attr("red"))
        .message_attributes(
            "count",
            MessageAttributeValue::builder()
                .data_type("Number.int")
                .string_value("42")
                .build()
                .unwrap(),
        )
        .message_attributes(
            "raw",
            MessageAttributeValue::builder()
                .data_type("Binary")
                .binary_value(Blob::new(vec![0, 1, 255]))
                .build()
                .unwrap(),
        )
        .message_system_attributes(
            MessageSystemAttributeNameForSends::AwsTraceHeader,
            MessageSystemAttributeValue::builder()
                .data_type("String")
                .string_value("Root=1-abc")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        sent.md5_of_message_body(),
        Some(md5_of_body("héllo").as_str())
    );
    let mut expected = MessageAttributes::new();
    for (n, t, v) in [
        ("color", "String", AttributeValue::String("red".into())),
        ("count", "Number.int", AttributeValue::String("42".into())),
        ("raw", "Binary", AttributeValue::Binary(vec![0, 1, 255])),
    ] {
        expected.insert(
            n.into(),
            sluice_core::message::MessageAttributeValue {
                data_type: t.into(),
                value: v,
            },
        );
    }
    assert_eq!(
        sent.md5_of_message_attributes(),
        md5_of_attributes(&expected).as_deref()
    );
    assert!(sent.md5_of_message_system_attributes().is_some());

    let got = sqs
        .receive_message()
        .queue_url(&url)
        .message_attribute_names("All")
        .message_system_attribute_names(Sys::All)
        .send()
        .await
        .unwrap();
    let m = &got.messages()[0];
    assert_eq!(m.message_id(), sent.message_id());
    assert_eq!(m.body(), Some("héllo"));
    assert_eq!(m.md5_of_body(), sent.md5_of_message_body());
    assert_eq!(
        m.md5_of_message_attributes(),
        sent.md5_of_message_attributes()
    );
    let attrs = m.message_attributes().unwrap();
    assert_eq!(attrs["color"].string_value(), Some("red"));
    assert_eq!(attrs["count"].data_type(), "Number.int");
    assert_eq!(attrs["raw"].binary_value().unwrap().as_ref(), &[0, 1, 255]);
    let sys = m.attributes().unwrap();
    let now = server.clock.now().to_string();
    assert_eq!(sys[&Sys::ApproximateReceiveCount], "1");
    assert_eq!(sys[&Sys::SentTimestamp], now);
    assert_eq!(sys[&Sys::ApproximateFirstReceiveTimestamp], now);
    assert_eq!(sys[&Sys::SenderId], "000000000000");
    assert_eq!(sys[&Sys::AwsTraceHeader], "Root=1-abc");
}

/// V2: MessageAttributeNames selects by name, `prefix.*` and `All`, and the
/// digest covers exactly what is returned.
#[tokio::test]
async fn v2_message_attribute_selection() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&server.sdk(), "q").await;
    sqs.send_message()
        .queue_url(&url)
        .message_body("b")
        .message_attributes("app.user", string_attr("u"))
        .message_attributes("app.trace", string_attr("t"))
        .message_attributes("other", string_attr("o"))
        .send()
        .await
        .unwrap();
    for (names, want) in [
        (vec![], vec![]),
        (vec!["other"], vec!["other"]),
        (vec!["app.*"], vec!["app.trace", "app.user"]),
        (vec![".*"], vec!["app.trace", "app.user", "other"]),
    ] {
        server.clock.advance_secs(30);
        let got = sqs
            .receive_message()
            .queue_url(&url)
            .set_message_attribute_names(Some(names.iter().map(|s| s.to_string()).collect()))
            .send()
            .await
            .unwrap();
        let m = &got.messages()[0];
        let mut keys: Vec<&str> = m
            .message_attributes()
            .map(|a| a.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort();
        assert_eq!(keys, want, "{names:?}");
        assert_eq!(m.md5_of_message_attributes().is_some(), !want.is_empty());
    }
}

/// V2, V3: hidden for the visibility timeout, then delivered again with a
/// higher receive count.
#[tokio::test]
async fn v3_redelivery_after_visibility_timeout() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&server.sdk(), "q").await;
    sqs.send_message()
        .queue_url(&url)
        .message_body("a")
        .send()
        .await
        .unwrap();
    let first = sqs
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(10)
        .send()
        .await
        .unwrap();
    assert_eq!(first.messages().len(), 1);
    assert_eq!(
        counts(&server, &url).await,
        ("0".into(), "1".into(), "0".into())
    );
    server.clock.advance_secs(9);
    assert!(
        sqs.receive_message()
            .queue_url(&url)
            .send()
            .await
            .unwrap()
            .messages()
            .is_empty()
    );
    server.clock.advance_secs(1);
    let second = sqs
        .receive_message()
        .queue_url(&url)
        .message_system_attribute_names(Sys::ApproximateReceiveCount)
        .send()
        .await
        .unwrap();
    assert_eq!(
        second.messages()[0].attributes().unwrap()[&Sys::ApproximateReceiveCount],
        "2"
    );
}

/// V1: queue and per-message delays.
#[tokio::test]
async fn v1_delays() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&server.sdk(), "q").await;
    sqs.send_message()
        .queue_url(&url)
        .message_body("later")
        .delay_seconds(5)
        .send()
        .await
        .unwrap();
    assert_eq!(
        counts(&server, &url).await,
        ("0".into(), "0".into(), "1".into())
    );
    assert!(
        sqs.receive_message()
            .queue_url(&url)
            .send()
            .await
            .unwrap()
            .messages()
            .is_empty()
    );
    server.clock.advance_secs(5);
    assert_eq!(
        sqs.receive_message()
            .queue_url(&url)
            .send()
            .await
            .unwrap()
            .messages()
            .len(),
        1
    );
    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .delay_seconds(901)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
}

/// V4, V5, V20: delete and visibility changes, single and batch, with per-entry results.
#[tokio::test]
async fn v4_v5_delete_and_change_visibility_batches() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&server.sdk(), "q").await;
    for b in ["a", "b", "c"] {
        sqs.send_message()
            .queue_url(&url)
            .message_body(b)
            .send()
            .await
            .unwrap();
    }
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap();
    let handles: Vec<String> = got
        .messages()
        .iter()
        .map(|m| m.receipt_handle().unwrap().to_string())
        .collect();
    assert_eq!(handles.len(), 3);

    let r = sqs
        .change_message_visibility_batch()
        .queue_url(&url)
        .entries(
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id("zero")
                .receipt_handle(&handles[0])
                .visibility_timeout(0)
                .build()
                .unwrap(),
        )
        .entries(
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id("long")
                .receipt_handle(&handles[1])
                .visibility_timeout(300)
                .build()
                .unwrap(),
        )
        .entries(
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id("bad")
                .receipt_handle("nonsense")
                .visibility_timeout(5)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.successful().len(), 2);
    assert_eq!(r.failed()[0].id(), "bad");
    assert_eq!(r.failed()[0].code(), "ReceiptHandleIsInvalid");
    assert!(r.failed()[0].sender_fault());
    assert_eq!(
        counts(&server, &url).await,
        ("1".into(), "2".into(), "0".into())
    );

    sqs.change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&handles[2])
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    // V20: the latest handle still changes the visibility once it ended
    // (AWS recorded answer, LocalStack snapshot
    // test_change_message_visibility_after_visibility_timeout_expiration).
    for timeout in [10, 0] {
        sqs.change_message_visibility()
            .queue_url(&url)
            .receipt_handle(&handles[2])
            .visibility_timeout(timeout)
            .send()
            .await
            .unwrap();
    }

    let r = sqs
        .delete_message_batch()
        .queue_url(&url)
        .entries(
            DeleteMessageBatchRequestEntry::builder()
                .id("a")
                .receipt_handle(&handles[1])
                .build()
                .unwrap(),
        )
        .entries(
            DeleteMessageBatchRequestEntry::builder()
                .id("b")
                .receipt_handle("garbage")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.successful().len(), 1);
    assert_eq!(r.failed()[0].code(), "ReceiptHandleIsInvalid");
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(&handles[0])
        .send()
        .await
        .unwrap();
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(&handles[0])
        .send()
        .await
        .unwrap();
    let e = sqs
        .delete_message()
        .queue_url(&url)
        .receipt_handle("garbage")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_receipt_handle_is_invalid(), "{e:?}");
    assert_eq!(
        counts(&server, &url).await,
        ("1".into(), "0".into(), "0".into())
    );
}

/// L2: batch size and id rules, and per-entry failures for bad messages.
#[tokio::test]
async fn l2_send_message_batch_rules() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&server.sdk(), "q").await;
    let entry = |id: &str, body: &str| {
        SendMessageBatchRequestEntry::builder()
            .id(id)
            .message_body(body)
            .build()
            .unwrap()
    };
    let r = sqs
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("ok1", "one"))
        .entries(entry("bad", "\u{1}"))
        .entries(
            SendMessageBatchRequestEntry::builder()
                .id("ok2")
                .message_body("two")
                .message_attributes("k", string_attr("v"))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.successful().len(), 2);
    assert_eq!(r.successful()[1].id(), "ok2");
    assert_eq!(r.successful()[1].md5_of_message_body(), md5_of_body("two"));
    assert!(r.successful()[1].md5_of_message_attributes().is_some());
    assert_eq!(r.failed().len(), 1);
    assert_eq!(r.failed()[0].id(), "bad");
    assert_eq!(r.failed()[0].code(), "InvalidMessageContents");

    let eleven: Vec<_> = (0..11).map(|i| entry(&format!("e{i}"), "x")).collect();
    let e = sqs
        .send_message_batch()
        .queue_url(&url)
        .set_entries(Some(eleven))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_too_many_entries_in_batch_request(), "{e:?}");
    let e = sqs
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("same", "x"))
        .entries(entry("same", "y"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_batch_entry_ids_not_distinct(), "{e:?}");
    let e = sqs
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("bad id!", "x"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_invalid_batch_entry_id(), "{e:?}");
    let e = sqs
        .send_message_batch()
        .queue_url(&url)
        .set_entries(Some(vec![]))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_empty_batch_request(), "{e:?}");
    let big = "x".repeat(600_000);
    let e = sqs
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("a", &big))
        .entries(entry("b", &big))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_batch_request_too_long(), "{e:?}");
    assert_eq!(
        counts(&server, &url).await.0,
        "2",
        "rejected batches stored nothing"
    );
}

/// L1, L3: size limit, body characters, attribute rules, receive parameters.
#[tokio::test]
async fn l1_l3_bad_messages_and_parameters() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("small")
        .attributes(Attr::MaximumMessageSize, "1024")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    sqs.send_message()
        .queue_url(&url)
        .message_body("x".repeat(1024))
        .send()
        .await
        .unwrap();
    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("x".repeat(1025))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("bad\u{FFFF}")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidMessageContents");
    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_attributes("AWS.reserved", string_attr("v"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_attributes(
            "n",
            MessageAttributeValue::builder()
                .data_type("Number")
                .string_value("1e")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
    for e in [
        sqs.receive_message()
            .queue_url(&url)
            .max_number_of_messages(11)
            .send()
            .await
            .unwrap_err(),
        sqs.receive_message()
            .queue_url(&url)
            .max_number_of_messages(0)
            .send()
            .await
            .unwrap_err(),
        sqs.receive_message()
            .queue_url(&url)
            .wait_time_seconds(21)
            .send()
            .await
            .unwrap_err(),
        sqs.receive_message()
            .queue_url(&url)
            .visibility_timeout(43_201)
            .send()
            .await
            .unwrap_err(),
    ] {
        assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
    }
    assert_eq!(counts(&server, &url).await.0, "1");
}

/// V6: a long poll returns as soon as a message is sent (real time, short).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v6_long_poll_wakes_on_send_real_time() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&server.sdk(), "q").await;
    let started = Instant::now();
    let poll = {
        let (sqs, url) = (sqs.clone(), url.clone());
        tokio::spawn(async move {
            sqs.receive_message()
                .queue_url(url)
                .wait_time_seconds(10)
                .send()
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    sqs.send_message()
        .queue_url(&url)
        .message_body("wake")
        .send()
        .await
        .unwrap();
    let got = poll.await.unwrap().unwrap();
    assert_eq!(got.messages()[0].body(), Some("wake"));
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "woke before the deadline"
    );
}

/// V6: the queue's ReceiveMessageWaitTimeSeconds applies when the request
/// has none; an empty long poll ends at its deadline (real time, 1 s).
#[tokio::test]
async fn v6_queue_wait_time_applies_real_time() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("q")
        .attributes(Attr::ReceiveMessageWaitTimeSeconds, "1")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let started = Instant::now();
    let got = sqs.receive_message().queue_url(&url).send().await.unwrap();
    assert!(got.messages().is_empty());
    assert!(started.elapsed() >= Duration::from_secs(1));
    let started = Instant::now();
    sqs.receive_message()
        .queue_url(&url)
        .wait_time_seconds(0)
        .send()
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "WaitTimeSeconds=0 overrides the queue's"
    );
}

/// V7: retention removes old messages, received or not.
#[tokio::test]
async fn v7_retention() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("q")
        .attributes(Attr::MessageRetentionPeriod, "60")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    sqs.send_message()
        .queue_url(&url)
        .message_body("old")
        .send()
        .await
        .unwrap();
    server.clock.advance_secs(59);
    assert_eq!(counts(&server, &url).await.0, "1");
    server.clock.advance_secs(1);
    assert_eq!(counts(&server, &url).await.0, "0");
    assert!(
        sqs.receive_message()
            .queue_url(&url)
            .send()
            .await
            .unwrap()
            .messages()
            .is_empty()
    );
}
