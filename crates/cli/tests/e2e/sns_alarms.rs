//! An alarm whose action is a topic ARN publishes its notification to the
//! topic, which fans it out: the seeds' recipe of a DLQ-depth alarm → a
//! topic → the on-call endpoint (here a queue subscribed to the topic).

use aws_sdk_sqs::types::MessageSystemAttributeName;
use serde_json::{Value, json};

use crate::alarms::{arm_dlq_alarm, metrics, sluice};
use crate::common::{RawClient, TestServer, create_queue};

/// An SNS Query request (unsigned: authentication is off), off the async
/// runtime.
async fn sns(raw: RawClient, params: &[(&str, &str)]) -> crate::common::RawResponse {
    let mut p: Vec<(String, String)> = vec![("Version".into(), "2010-03-31".into())];
    p.extend(params.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    tokio::task::spawn_blocking(move || {
        let p: Vec<(&str, &str)> = p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        raw.query("/", &p)
    })
    .await
    .unwrap()
}

/// M2, N2: a DLQ's depth alarm publishes each change into ALARM to its
/// topic; the queue subscribed to the topic gets the notification in
/// SNS's envelope, its subject naming the state and the alarm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_an_alarm_publishes_to_its_topic() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let raw = server.raw();
    let oncall = create_queue(&sqs, "oncall").await;
    let created = sns(raw, &[("Action", "CreateTopic"), ("Name", "oncall-alerts")]).await;
    assert_eq!(created.status, 200, "{}", created.body);
    let topic = created.xml("TopicArn").unwrap();
    let subscribed = sns(
        raw,
        &[
            ("Action", "Subscribe"),
            ("TopicArn", &topic),
            ("Protocol", "sqs"),
            ("Endpoint", "arn:aws:sqs:us-east-1:000000000000:oncall"),
        ],
    )
    .await;
    assert_eq!(subscribed.status, 200, "{}", subscribed.body);

    arm_dlq_alarm(&server, &topic).await;
    let changes = server.service.alarm_tick().await;
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].1.new.as_str(), "ALARM");

    let got = sqs
        .receive_message()
        .queue_url(&oncall)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .unwrap();
    let messages = got.messages();
    assert_eq!(messages.len(), 1, "one notification");
    let envelope: Value = serde_json::from_str(messages[0].body().unwrap()).unwrap();
    assert_eq!(envelope["Type"], "Notification");
    assert_eq!(envelope["TopicArn"], topic.as_str());
    assert_eq!(envelope["Subject"], "ALARM: \"dlq-not-empty\"");
    let notification: Value = serde_json::from_str(envelope["Message"].as_str().unwrap()).unwrap();
    assert_eq!(
        notification["alarm_name"], "dlq-not-empty",
        "{notification}"
    );
    assert_eq!(notification["new_state"], "ALARM", "{notification}");
    assert!(
        metrics(raw)
            .await
            .contains("sluice_alarm_notifications_total{outcome=\"delivered\"} 1"),
        "counted as delivered"
    );
}

/// M2: a topic action must name an existing topic of this server's
/// account, as a queue action must name an existing queue.
#[tokio::test]
async fn m2_a_topic_action_names_an_existing_topic_of_this_account() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let q = create_queue(&sqs, "watched").await;
    for (action, why) in [
        (
            "arn:aws:sns:us-east-1:000000000000:nope",
            "The topic does not exist.",
        ),
        (
            "arn:aws:sns:us-east-1:111111111111:theirs",
            "Not a topic ARN of this server.",
        ),
    ] {
        let (status, v, r) = sluice(
            server.raw(),
            "PutAlarm",
            json!({"AlarmName": "a", "QueueUrl": q,
                   "MetricName": "ApproximateNumberOfMessagesVisible", "Period": 10,
                   "Threshold": 1, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                   "Actions": [action]}),
        )
        .await;
        assert_eq!(status, 400, "{}", r.body);
        assert!(
            v["message"].as_str().unwrap_or_default().contains(why),
            "{action}: {}",
            r.body
        );
    }
}
