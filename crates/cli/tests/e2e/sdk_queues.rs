//! Queue actions through the official Rust SDK (AWS JSON protocol).

use aws_sdk_sqs::types::QueueAttributeName as Attr;

use crate::common::{TestServer, code, create_queue};

/// W1, W3, V9: create, find, list, delete; URLs name the host the client used.
#[tokio::test]
async fn w3_create_get_list_delete() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "orders").await;
    assert_eq!(url, format!("{}/000000000000/orders", server.endpoint));
    let got = sqs
        .get_queue_url()
        .queue_name("orders")
        .send()
        .await
        .unwrap();
    assert_eq!(got.queue_url(), Some(url.as_str()));
    for name in ["orders-dlq", "payments"] {
        sqs.create_queue().queue_name(name).send().await.unwrap();
    }
    let all = sqs.list_queues().send().await.unwrap();
    assert_eq!(all.queue_urls().len(), 3);
    let some = sqs
        .list_queues()
        .queue_name_prefix("orders")
        .send()
        .await
        .unwrap();
    assert_eq!(
        some.queue_urls(),
        [
            url.clone(),
            format!("{}/000000000000/orders-dlq", server.endpoint)
        ]
    );
    sqs.delete_queue().queue_url(&url).send().await.unwrap();
    let e = sqs
        .get_queue_url()
        .queue_name("orders")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_queue_does_not_exist(), "{e:?}");
    assert_eq!(code(&e), "AWS.SimpleQueueService.NonExistentQueue");
}

/// W3: a URL with another host but the same account and name addresses the queue.
#[tokio::test]
async fn w3_host_of_queue_url_does_not_matter() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    sqs.create_queue().queue_name("q").send().await.unwrap();
    sqs.send_message()
        .queue_url("https://sqs.eu-west-1.amazonaws.com/000000000000/q")
        .message_body("x")
        .send()
        .await
        .unwrap();
    let a = sqs
        .get_queue_attributes()
        .queue_url(format!("{}/000000000000/q", server.endpoint))
        .attribute_names(Attr::ApproximateNumberOfMessages)
        .send()
        .await
        .unwrap();
    assert_eq!(
        a.attributes().unwrap()[&Attr::ApproximateNumberOfMessages],
        "1"
    );
}

/// ListQueues pages with MaxResults and NextToken.
#[tokio::test]
async fn v11_list_queues_pages() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    for i in 0..5 {
        sqs.create_queue()
            .queue_name(format!("q{i}"))
            .send()
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut token = None;
    loop {
        let page = sqs
            .list_queues()
            .max_results(2)
            .set_next_token(token)
            .send()
            .await
            .unwrap();
        assert!(page.queue_urls().len() <= 2);
        seen.extend(page.queue_urls().iter().cloned());
        token = page.next_token().map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    assert_eq!(seen.len(), 5);
    let e = sqs
        .list_queues()
        .max_results(1001)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
}

/// V9: same attributes return the queue; different ones are QueueAlreadyExists.
#[tokio::test]
async fn v9_create_queue_is_idempotent() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let a = sqs
        .create_queue()
        .queue_name("q")
        .attributes(Attr::VisibilityTimeout, "40")
        .send()
        .await
        .unwrap();
    let b = sqs
        .create_queue()
        .queue_name("q")
        .attributes(Attr::VisibilityTimeout, "40")
        .send()
        .await
        .unwrap();
    assert_eq!(a.queue_url(), b.queue_url());
    let e = sqs
        .create_queue()
        .queue_name("q")
        .attributes(Attr::VisibilityTimeout, "41")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_queue_name_exists(), "{e:?}");
    assert_eq!(code(&e), "QueueAlreadyExists");
}

/// L5: invalid names are rejected.
#[tokio::test]
async fn l5_invalid_queue_names() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    for name in ["", "a b", "x".repeat(81).as_str(), "bad.name"] {
        let e = sqs
            .create_queue()
            .queue_name(name)
            .send()
            .await
            .unwrap_err();
        assert_eq!(
            code(&e.into_service_error()),
            "InvalidParameterValue",
            "{name:?}"
        );
    }
    assert!(
        sqs.list_queues()
            .send()
            .await
            .unwrap()
            .queue_urls()
            .is_empty()
    );
}

/// V11: attributes read as SQS shows them, set all or nothing.
#[tokio::test]
async fn v11_get_and_set_attributes() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("q")
        .attributes(Attr::DelaySeconds, "5")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let all = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::All)
        .send()
        .await
        .unwrap();
    let attrs = all.attributes().unwrap();
    assert_eq!(attrs[&Attr::DelaySeconds], "5");
    assert_eq!(attrs[&Attr::VisibilityTimeout], "30");
    assert_eq!(attrs[&Attr::MessageRetentionPeriod], "345600");
    assert_eq!(attrs[&Attr::MaximumMessageSize], "1048576");
    assert_eq!(attrs[&Attr::ReceiveMessageWaitTimeSeconds], "0");
    assert_eq!(
        attrs[&Attr::QueueArn],
        "arn:aws:sqs:us-east-1:000000000000:q"
    );
    assert_eq!(attrs[&Attr::ApproximateNumberOfMessages], "0");
    let created: u64 = attrs[&Attr::CreatedTimestamp].parse().unwrap();
    assert_eq!(created, server.clock_secs());
    assert!(!attrs.contains_key(&Attr::FifoQueue));

    sqs.set_queue_attributes()
        .queue_url(&url)
        .attributes(Attr::VisibilityTimeout, "60")
        .attributes(Attr::Policy, r#"{"Version":"2012-10-17","Statement":[]}"#)
        .send()
        .await
        .unwrap();
    let e = sqs
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(Attr::DelaySeconds, "1")
        .attributes(Attr::MessageRetentionPeriod, "30")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidAttributeValue");
    let e = sqs
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(Attr::from("Bogus"), "1")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidAttributeName");
    let some = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::VisibilityTimeout)
        .attribute_names(Attr::DelaySeconds)
        .send()
        .await
        .unwrap();
    let some = some.attributes().unwrap();
    assert_eq!(some.len(), 2);
    assert_eq!(some[&Attr::VisibilityTimeout], "60");
    assert_eq!(
        some[&Attr::DelaySeconds],
        "5",
        "the rejected change left nothing behind"
    );
    let e = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::from("Nope"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidAttributeName");
}

/// Tags: add, replace, remove, list.
#[tokio::test]
async fn tags_round_trip() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("q")
        .tags("team", "core")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    sqs.tag_queue()
        .queue_url(&url)
        .tags("env", "dev")
        .tags("team", "dlq")
        .send()
        .await
        .unwrap();
    sqs.untag_queue()
        .queue_url(&url)
        .tag_keys("env")
        .send()
        .await
        .unwrap();
    let tags = sqs.list_queue_tags().queue_url(&url).send().await.unwrap();
    let tags = tags.tags().unwrap();
    assert_eq!(tags.len(), 1);
    assert_eq!(tags["team"], "dlq");
}

/// AddPermission/RemovePermission edit the queue's Policy.
#[tokio::test]
async fn permissions_edit_the_policy() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "q").await;
    sqs.add_permission()
        .queue_url(&url)
        .label("producers")
        .aws_account_ids("111122223333")
        .actions("SendMessage")
        .send()
        .await
        .unwrap();
    let policy = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::Policy)
        .send()
        .await
        .unwrap();
    let policy: serde_json::Value =
        serde_json::from_str(&policy.attributes().unwrap()[&Attr::Policy]).unwrap();
    assert_eq!(policy["Statement"][0]["Sid"], "producers");
    // V15: one action and one principal are strings, as AWS writes them
    // (recorded answer, LocalStack snapshot test_sqs_permission_lifecycle).
    assert_eq!(policy["Version"], "2008-10-17");
    assert_eq!(policy["Statement"][0]["Action"], "SQS:SendMessage");
    assert_eq!(
        policy["Statement"][0]["Principal"]["AWS"],
        "arn:aws:iam::111122223333:root"
    );
    let e = sqs
        .add_permission()
        .queue_url(&url)
        .label("producers")
        .aws_account_ids("1")
        .actions("SendMessage")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
    sqs.remove_permission()
        .queue_url(&url)
        .label("producers")
        .send()
        .await
        .unwrap();
    let after = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::All)
        .send()
        .await
        .unwrap();
    assert!(!after.attributes().unwrap().contains_key(&Attr::Policy));
    let e = sqs
        .remove_permission()
        .queue_url(&url)
        .label("producers")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
}

/// V8: PurgeQueue, and PurgeQueueInProgress within 60 s.
#[tokio::test]
async fn v8_purge() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "q").await;
    sqs.send_message()
        .queue_url(&url)
        .message_body("a")
        .send()
        .await
        .unwrap();
    sqs.purge_queue().queue_url(&url).send().await.unwrap();
    let e = sqs
        .purge_queue()
        .queue_url(&url)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_purge_queue_in_progress(), "{e:?}");
    assert!(
        sqs.receive_message()
            .queue_url(&url)
            .send()
            .await
            .unwrap()
            .messages()
            .is_empty()
    );
    server.clock.advance_secs(60);
    sqs.purge_queue().queue_url(&url).send().await.unwrap();
}

/// R1, R5, R6: a redrive policy needs an existing DLQ that allows the
/// source; ListDeadLetterSourceQueues lists the sources.
#[tokio::test]
async fn r1_r6_redrive_policy_and_sources() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let dlq = create_queue(&sqs, "dlq").await;
    let policy =
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"3"}"#;
    let missing =
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:nope","maxReceiveCount":3}"#;
    let e = sqs
        .create_queue()
        .queue_name("bad")
        .attributes(Attr::RedrivePolicy, missing)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
    let src = sqs
        .create_queue()
        .queue_name("src")
        .attributes(Attr::RedrivePolicy, policy)
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let shown = sqs
        .get_queue_attributes()
        .queue_url(&src)
        .attribute_names(Attr::RedrivePolicy)
        .send()
        .await
        .unwrap();
    let shown: serde_json::Value =
        serde_json::from_str(&shown.attributes().unwrap()[&Attr::RedrivePolicy]).unwrap();
    assert_eq!(shown["maxReceiveCount"], 3);
    let sources = sqs
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .unwrap();
    assert_eq!(sources.queue_urls(), std::slice::from_ref(&src));

    sqs.set_queue_attributes()
        .queue_url(&dlq)
        .attributes(
            Attr::RedriveAllowPolicy,
            r#"{"redrivePermission":"denyAll"}"#,
        )
        .send()
        .await
        .unwrap();
    let e = sqs
        .create_queue()
        .queue_name("src2")
        .attributes(Attr::RedrivePolicy, policy)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidParameterValue");
}

impl TestServer {
    fn clock_secs(&self) -> u64 {
        use sluice_core::Clock;
        self.clock.now() / 1000
    }
}

/// V24: an untagged queue's ListQueueTags and a GetQueueAttributes whose
/// named attributes the queue lacks leave the member out of the JSON body
/// (2024 AWS recorded answers, LocalStack snapshot test_sqs.py::
/// test_tag_untag_queue "get-tag-after-untag" and
/// test_sqs_permission_lifecycle "get-queue-policy-attribute-after-removal").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v24_empty_tags_and_attributes_are_left_out() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "bare").await;
    let raw = server.raw();
    tokio::task::spawn_blocking(move || {
        let tags = raw.json("ListQueueTags", &format!(r#"{{"QueueUrl":"{url}"}}"#));
        assert_eq!(tags.status, 200);
        assert_eq!(tags.body.trim(), "{}");
        let policy = raw.json(
            "GetQueueAttributes",
            &format!(r#"{{"QueueUrl":"{url}","AttributeNames":["Policy"]}}"#),
        );
        assert_eq!(policy.status, 200);
        assert_eq!(policy.body.trim(), "{}");
        let arn = raw.json(
            "GetQueueAttributes",
            &format!(r#"{{"QueueUrl":"{url}","AttributeNames":["QueueArn"]}}"#),
        );
        assert!(
            arn.body.contains(r#""Attributes":{"QueueArn":"#),
            "{}",
            arn.body
        );
    })
    .await
    .unwrap();
}
