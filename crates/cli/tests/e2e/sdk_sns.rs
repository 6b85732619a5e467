//! SNS through the official Rust SDK (aws-sdk-sns), as a Rust service
//! would run it, on each engine (in memory, durable, PostgreSQL): the
//! topic and subscription lifecycle, publishing single and batched, raw
//! and enveloped fan-out to queues, filter policies on attributes and on
//! the body, a FIFO topic into a FIFO queue, an HTTP subscription
//! confirmed with ConfirmSubscription, and the errors the SDK maps. With
//! authentication on, signed SNS calls and a queue's policy deciding
//! which deliveries it takes (N8), the refused ones caught by the
//! subscription's dead-letter queue (N5).
//!
//! Expected answers restate the recorded SNS cases the fidelity suite
//! holds (tests/clients/fidelity): `NotFound` "Topic does not exist" for a
//! publish to a deleted topic, `InvalidParameter` for CreateTopic with
//! other attributes, "Invalid parameter: Invalid parameter: Endpoint
//! Reason: FIFO SQS Queues can not be subscribed to standard SNS topics".

use std::sync::Arc;

use aws_sdk_sns::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sns::error::ProvideErrorMetadata;
use aws_sdk_sns::types::{MessageAttributeValue, PublishBatchRequestEntry, Tag};
use aws_sdk_sqs::types::{Message, QueueAttributeName};
use serde_json::{Value, json};

use crate::auth_access::{ACCOUNT_A, Server, TEAM_A, credential};
use crate::common::{SluiceProcess, code, sdk_client};
use crate::sns_http::Receiver;

/// aws-sdk-sns pointed at `endpoint`, signing with `key`/`secret`, no
/// retries (so a wrong answer is seen as it is).
fn sns_client(endpoint: &str, key: &str, secret: &str) -> aws_sdk_sns::Client {
    let config = aws_sdk_sns::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new(key, secret, None, None, "sluice-tests"))
        .http_client(aws_smithy_http_client::Builder::new().build_http())
        .retry_config(aws_sdk_sns::config::retry::RetryConfig::disabled())
        .build();
    aws_sdk_sns::Client::from_conf(config)
}

/// A queue and its ARN.
async fn queue(sqs: &aws_sdk_sqs::Client, name: &str, fifo: bool) -> (String, String) {
    let mut create = sqs.create_queue().queue_name(name);
    if fifo {
        create = create.attributes(QueueAttributeName::FifoQueue, "true");
    }
    let url = create
        .send()
        .await
        .expect("create queue")
        .queue_url
        .unwrap();
    let arn = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap()
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
        .expect("QueueArn");
    (url, arn)
}

/// Receives until `n` messages came (bounded), deleting each.
async fn drain(sqs: &aws_sdk_sqs::Client, url: &str, n: usize) -> Vec<Message> {
    let mut got = Vec::new();
    for _ in 0..20 {
        if got.len() >= n {
            break;
        }
        let out = sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .message_attribute_names("All")
            .wait_time_seconds(1)
            .send()
            .await
            .expect("receive");
        for m in out.messages() {
            sqs.delete_message()
                .queue_url(url)
                .receipt_handle(m.receipt_handle().unwrap())
                .send()
                .await
                .expect("delete");
            got.push(m.clone());
        }
    }
    got
}

/// What is left in a queue right now: nothing, once a test is done with it.
async fn nothing_more(sqs: &aws_sdk_sqs::Client, url: &str) {
    let out = sqs
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(10)
        .send()
        .await
        .expect("receive");
    assert!(out.messages().is_empty(), "{:?}", out.messages());
}

fn string(value: &str) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type("String")
        .string_value(value)
        .build()
        .unwrap()
}

fn body_json(m: &Message) -> Value {
    serde_json::from_str(m.body().unwrap_or_default()).unwrap_or(Value::Null)
}

/// The whole user story on one server, whatever its engine.
async fn lifecycle(endpoint: &str) {
    let sns = sns_client(endpoint, "test", "test");
    let sqs = sdk_client(endpoint);

    // N1: create is idempotent for the same attributes and tags, refused
    // for others; attributes and tags read back.
    let tag = Tag::builder().key("team").value("orders").build().unwrap();
    let topic = sns
        .create_topic()
        .name("orders")
        .attributes("DisplayName", "Orders")
        .tags(tag.clone())
        .send()
        .await
        .expect("CreateTopic")
        .topic_arn
        .expect("TopicArn");
    assert_eq!(topic, "arn:aws:sns:us-east-1:000000000000:orders");
    let again = sns
        .create_topic()
        .name("orders")
        .attributes("DisplayName", "Orders")
        .tags(tag)
        .send()
        .await
        .expect("the same CreateTopic again");
    assert_eq!(again.topic_arn(), Some(topic.as_str()));
    let e = sns
        .create_topic()
        .name("orders")
        .attributes("DisplayName", "Other")
        .send()
        .await
        .expect_err("other attributes");
    assert_eq!(code(&e), "InvalidParameter");
    assert_eq!(
        e.message(),
        Some(
            "Invalid parameter: Attributes Reason: Topic already exists with different attributes"
        )
    );
    sns.set_topic_attributes()
        .topic_arn(&topic)
        .attribute_name("DisplayName")
        .attribute_value("Orders!")
        .send()
        .await
        .expect("SetTopicAttributes");
    let attributes = sns
        .get_topic_attributes()
        .topic_arn(&topic)
        .send()
        .await
        .expect("GetTopicAttributes")
        .attributes
        .unwrap_or_default();
    assert_eq!(attributes["DisplayName"], "Orders!");
    assert_eq!(attributes["TopicArn"], topic);
    assert_eq!(attributes["SubscriptionsConfirmed"], "0");
    let listed = sns.list_topics().send().await.expect("ListTopics");
    let arns: Vec<&str> = listed
        .topics()
        .iter()
        .filter_map(|t| t.topic_arn())
        .collect();
    assert_eq!(arns, [topic.as_str()]);
    sns.tag_resource()
        .resource_arn(&topic)
        .tags(Tag::builder().key("tier").value("1").build().unwrap())
        .send()
        .await
        .expect("TagResource");
    sns.untag_resource()
        .resource_arn(&topic)
        .tag_keys("team")
        .send()
        .await
        .expect("UntagResource");
    let tags = sns
        .list_tags_for_resource()
        .resource_arn(&topic)
        .send()
        .await
        .expect("ListTagsForResource");
    let tags: Vec<(&str, &str)> = tags.tags().iter().map(|t| (t.key(), t.value())).collect();
    assert_eq!(tags, [("tier", "1")]);

    // N2, N3, N4: three queues subscribed, raw, enveloped and filtered.
    let (raw_url, raw_arn) = queue(&sqs, "billing", false).await;
    let (env_url, env_arn) = queue(&sqs, "audit", false).await;
    let (red_url, red_arn) = queue(&sqs, "red-only", false).await;
    let (big_url, big_arn) = queue(&sqs, "big-orders", false).await;
    let subscribe = |arn: &str| {
        sns.subscribe()
            .topic_arn(&topic)
            .protocol("sqs")
            .endpoint(arn)
            .return_subscription_arn(true)
    };
    let raw_sub = subscribe(&raw_arn)
        .attributes("RawMessageDelivery", "true")
        .send()
        .await
        .expect("Subscribe raw")
        .subscription_arn
        .expect("SubscriptionArn");
    subscribe(&env_arn)
        .send()
        .await
        .expect("Subscribe envelope");
    subscribe(&red_arn)
        .attributes("FilterPolicy", r#"{"color":["red"]}"#)
        .attributes("RawMessageDelivery", "true")
        .send()
        .await
        .expect("Subscribe filtered");
    let big_sub = subscribe(&big_arn)
        .send()
        .await
        .expect("Subscribe by body")
        .subscription_arn
        .unwrap();
    sns.set_subscription_attributes()
        .subscription_arn(&big_sub)
        .attribute_name("FilterPolicyScope")
        .attribute_value("MessageBody")
        .send()
        .await
        .expect("FilterPolicyScope");
    sns.set_subscription_attributes()
        .subscription_arn(&big_sub)
        .attribute_name("FilterPolicy")
        .attribute_value(r#"{"order":{"total":[{"numeric":[">",100]}]}}"#)
        .send()
        .await
        .expect("FilterPolicy on the body");
    let sub_attrs = sns
        .get_subscription_attributes()
        .subscription_arn(&raw_sub)
        .send()
        .await
        .expect("GetSubscriptionAttributes")
        .attributes
        .unwrap_or_default();
    assert_eq!(sub_attrs["RawMessageDelivery"], "true");
    assert_eq!(sub_attrs["Endpoint"], raw_arn);
    assert_eq!(sub_attrs["PendingConfirmation"], "false");
    let subs = sns
        .list_subscriptions_by_topic()
        .topic_arn(&topic)
        .send()
        .await
        .expect("ListSubscriptionsByTopic");
    assert_eq!(subs.subscriptions().len(), 4);
    assert!(
        subs.subscriptions()
            .iter()
            .all(|s| s.protocol() == Some("sqs") && s.topic_arn() == Some(topic.as_str()))
    );
    assert_eq!(
        sns.list_subscriptions()
            .send()
            .await
            .expect("ListSubscriptions")
            .subscriptions()
            .len(),
        4
    );

    let published = sns
        .publish()
        .topic_arn(&topic)
        .message(r#"{"order":{"total":250}}"#)
        .subject("new order")
        .message_attributes("color", string("red"))
        .send()
        .await
        .expect("Publish");
    let message_id = published.message_id().expect("MessageId").to_string();
    let batch = sns
        .publish_batch()
        .topic_arn(&topic)
        .publish_batch_request_entries(
            PublishBatchRequestEntry::builder()
                .id("small")
                .message(r#"{"order":{"total":5}}"#)
                .message_attributes("color", string("blue"))
                .build()
                .unwrap(),
        )
        .publish_batch_request_entries(
            PublishBatchRequestEntry::builder()
                .id("plain")
                .message("not json")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("PublishBatch");
    let mut ids: Vec<&str> = batch.successful().iter().filter_map(|s| s.id()).collect();
    ids.sort();
    assert_eq!(ids, ["plain", "small"]);
    assert!(batch.failed().is_empty(), "{:?}", batch.failed());

    // Raw: the bodies as published, the attribute as an SQS one.
    let raw = drain(&sqs, &raw_url, 3).await;
    let mut bodies: Vec<&str> = raw.iter().filter_map(|m| m.body()).collect();
    bodies.sort();
    assert_eq!(
        bodies,
        [
            "not json",
            r#"{"order":{"total":250}}"#,
            r#"{"order":{"total":5}}"#
        ]
    );
    let red = raw
        .iter()
        .find(|m| m.body() == Some(r#"{"order":{"total":250}}"#))
        .unwrap();
    let color = &red.message_attributes().unwrap()["color"];
    assert_eq!(color.data_type(), "String");
    assert_eq!(color.string_value(), Some("red"));

    // Enveloped: SNS's JSON with the fields signature verifiers read.
    let enveloped = drain(&sqs, &env_url, 3).await;
    assert_eq!(enveloped.len(), 3);
    let first = enveloped
        .iter()
        .map(body_json)
        .find(|doc| doc["MessageId"] == message_id.as_str())
        .expect("the single publish, enveloped");
    assert_eq!(first["Type"], "Notification");
    assert_eq!(first["TopicArn"], topic.as_str());
    assert_eq!(first["Subject"], "new order");
    assert_eq!(first["Message"], r#"{"order":{"total":250}}"#);
    assert_eq!(
        first["MessageAttributes"],
        json!({"color": {"Type": "String", "Value": "red"}})
    );
    assert_eq!(first["SignatureVersion"], "1");
    for field in ["Timestamp", "Signature", "SigningCertURL", "UnsubscribeURL"] {
        assert!(first[field].is_string(), "{field} in {first}");
    }

    // Filtered: only what matches arrived; nothing else is waiting.
    let red_only = drain(&sqs, &red_url, 1).await;
    assert_eq!(red_only.len(), 1);
    assert_eq!(red_only[0].body(), Some(r#"{"order":{"total":250}}"#));
    nothing_more(&sqs, &red_url).await;
    let big = drain(&sqs, &big_url, 1).await;
    assert_eq!(big.len(), 1);
    assert_eq!(body_json(&big[0])["MessageId"], message_id.as_str());
    nothing_more(&sqs, &big_url).await;

    // N7: a FIFO topic keeps a group's order into a FIFO queue and drops
    // a duplicate; a FIFO queue cannot follow a standard topic.
    let fifo_topic = sns
        .create_topic()
        .name("ledger.fifo")
        .attributes("FifoTopic", "true")
        .attributes("ContentBasedDeduplication", "true")
        .send()
        .await
        .expect("CreateTopic FIFO")
        .topic_arn
        .unwrap();
    let (ledger_url, ledger_arn) = queue(&sqs, "ledger.fifo", true).await;
    let e = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint(&ledger_arn)
        .send()
        .await
        .expect_err("a FIFO queue on a standard topic");
    assert_eq!(code(&e), "InvalidParameter");
    assert_eq!(
        e.message(),
        Some(
            "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics"
        )
    );
    sns.subscribe()
        .topic_arn(&fifo_topic)
        .protocol("sqs")
        .endpoint(&ledger_arn)
        .attributes("RawMessageDelivery", "true")
        .send()
        .await
        .expect("Subscribe FIFO");
    let e = sns
        .publish()
        .topic_arn(&fifo_topic)
        .message("no group")
        .send()
        .await
        .expect_err("a FIFO publish without a group");
    assert_eq!(code(&e), "InvalidParameter");
    let mut sequence = Vec::new();
    for body in ["debit 1", "debit 2", "debit 1", "debit 3"] {
        let out = sns
            .publish()
            .topic_arn(&fifo_topic)
            .message(body)
            .message_group_id("account-7")
            .send()
            .await
            .expect("Publish FIFO");
        sequence.push(out.sequence_number().expect("SequenceNumber").to_string());
    }
    // The duplicate is answered with the first one's sequence number.
    assert_eq!(sequence[2], sequence[0]);
    assert!(sequence[1] > sequence[0] && sequence[3] > sequence[1]);
    let ledger = drain(&sqs, &ledger_url, 3).await;
    let bodies: Vec<&str> = ledger.iter().filter_map(|m| m.body()).collect();
    assert_eq!(bodies, ["debit 1", "debit 2", "debit 3"]);
    nothing_more(&sqs, &ledger_url).await;

    // N6: an HTTP endpoint confirmed with ConfirmSubscription and the
    // token it was sent, then notified.
    let receiver = Receiver::start(Arc::new(|_| 200)).await;
    let pending = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("http")
        .endpoint(&receiver.url)
        .send()
        .await
        .expect("Subscribe http");
    assert_eq!(pending.subscription_arn(), Some("pending confirmation"));
    let confirmation = receiver.wait_for("SubscriptionConfirmation", 1).await;
    let token = confirmation[0].json()["Token"]
        .as_str()
        .expect("Token")
        .to_string();
    let confirmed = sns
        .confirm_subscription()
        .topic_arn(&topic)
        .token(&token)
        .send()
        .await
        .expect("ConfirmSubscription")
        .subscription_arn
        .expect("SubscriptionArn");
    assert!(confirmed.starts_with(&format!("{topic}:")), "{confirmed}");
    sns.publish()
        .topic_arn(&topic)
        .message("to the endpoint too")
        .send()
        .await
        .expect("Publish");
    let notified = receiver.wait_for("Notification", 1).await;
    assert_eq!(notified[0].json()["Message"], "to the endpoint too");
    assert_eq!(notified[0].header("x-amz-sns-subscription-arn"), confirmed);
    receiver.stop().await;

    // Unsubscribe (five subscriptions become four), then delete: a
    // publish to a deleted topic is NotFound.
    sns.unsubscribe()
        .subscription_arn(&raw_sub)
        .send()
        .await
        .expect("Unsubscribe");
    let subs = sns
        .list_subscriptions_by_topic()
        .topic_arn(&topic)
        .send()
        .await
        .unwrap();
    assert_eq!(subs.subscriptions().len(), 4);
    sns.delete_topic()
        .topic_arn(&topic)
        .send()
        .await
        .expect("DeleteTopic");
    let e = sns
        .publish()
        .topic_arn(&topic)
        .message("gone")
        .send()
        .await
        .expect_err("a deleted topic");
    assert_eq!(code(&e), "NotFound");
    assert_eq!(e.message(), Some("Topic does not exist"));
    assert_eq!(e.raw_response().map(|r| r.status().as_u16()), Some(404));
    sns.delete_topic()
        .topic_arn(&topic)
        .send()
        .await
        .expect("deleting a deleted topic succeeds");
}

/// N1–N7 in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_the_rust_sdk_runs_topics_in_memory() {
    let server = SluiceProcess::start(&["--in-memory"]);
    lifecycle(&server.endpoint).await;
}

/// N1–N7 on the durable embedded engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_the_rust_sdk_runs_topics_durably() {
    let dir = tempfile::tempdir().unwrap();
    let server = SluiceProcess::start(&["--data-dir", dir.path().to_str().unwrap()]);
    lifecycle(&server.endpoint).await;
}

/// N1–N7 on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_the_rust_sdk_runs_topics_on_postgres() {
    let cluster = sluice_postgres::testing::cluster().expect("PostgreSQL for this test");
    let url = cluster.fresh_database().await;
    let server = SluiceProcess::start(&["--postgres", url.as_str()]);
    lifecycle(&server.endpoint).await;
}

/// N8, N5 with authentication on: every call signed (SNS's scope), a
/// queue whose policy lets `sns.amazonaws.com` send for this topic gets
/// the message; one without a policy, and one whose policy names another
/// topic, refuse it, and the subscriptions' dead-letter queue (whose
/// policy lets the topic send) holds those two copies. The publish is
/// answered as a success all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n8_a_queue_policy_decides_which_deliveries_a_queue_takes() {
    let server = Server::start(vec![credential(TEAM_A, ACCOUNT_A, None, None)]).await;
    let secret = format!("{TEAM_A}-secret");
    let sns = sns_client(&server.endpoint(), TEAM_A, &secret);
    let sqs = server.sdk(TEAM_A);
    let topic = sns
        .create_topic()
        .name("payments")
        .send()
        .await
        .expect("signed CreateTopic")
        .topic_arn
        .unwrap();
    assert_eq!(topic, format!("arn:aws:sns:us-east-1:{ACCOUNT_A}:payments"));
    let allow_from = |queue_arn: &str, source: &str| {
        json!({
            "Version": "2012-10-17",
            "Statement": [{
                "Effect": "Allow",
                "Principal": {"Service": "sns.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": source}},
            }],
        })
        .to_string()
    };
    let (open_url, open_arn) = queue(&sqs, "allowed", false).await;
    let (closed_url, closed_arn) = queue(&sqs, "no-policy", false).await;
    let (other_url, other_arn) = queue(&sqs, "other-topic-only", false).await;
    let (dlq_url, dlq_arn) = queue(&sqs, "payments-undelivered", false).await;
    let elsewhere = format!("arn:aws:sns:us-east-1:{ACCOUNT_A}:elsewhere");
    for (url, policy) in [
        (&open_url, allow_from(&open_arn, &topic)),
        (&other_url, allow_from(&other_arn, &elsewhere)),
        (&dlq_url, allow_from(&dlq_arn, &topic)),
    ] {
        sqs.set_queue_attributes()
            .queue_url(url)
            .attributes(QueueAttributeName::Policy, policy)
            .send()
            .await
            .expect("set the policy");
    }
    let redrive = json!({"deadLetterTargetArn": dlq_arn}).to_string();
    for arn in [&open_arn, &closed_arn, &other_arn] {
        sns.subscribe()
            .topic_arn(&topic)
            .protocol("sqs")
            .endpoint(arn)
            .attributes("RawMessageDelivery", "true")
            .attributes("RedrivePolicy", &redrive)
            .send()
            .await
            .expect("signed Subscribe");
    }
    sns.publish()
        .topic_arn(&topic)
        .message("charge 42")
        .send()
        .await
        .expect("the publish is answered");

    let delivered = drain(&sqs, &open_url, 1).await;
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].body(), Some("charge 42"));
    nothing_more(&sqs, &closed_url).await;
    nothing_more(&sqs, &other_url).await;
    let dead = drain(&sqs, &dlq_url, 2).await;
    assert_eq!(dead.len(), 2, "{dead:?}");
    assert!(
        dead.iter().all(|m| m.body() == Some("charge 42")),
        "{dead:?}"
    );

    // An unsigned SNS call is refused as SNS refuses one.
    let anonymous = server.raw();
    let refused = tokio::task::spawn_blocking(move || {
        anonymous.query("/", &[("Action", "ListTopics"), ("Version", "2010-03-31")])
    })
    .await
    .unwrap();
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.xml("Code").as_deref(),
        Some("MissingAuthenticationToken")
    );
}
