//! A publish answered is in every subscribed queue, durably: kill -9 of
//! sluice right after the answers loses none of the queues' copies.

use serde_json::Value;

use crate::common::{RawClient, RawResponse, SluiceProcess};

/// An SNS Query request (authentication off) that must succeed.
async fn sns(raw: RawClient, params: &[(&str, &str)]) -> RawResponse {
    let mut p: Vec<(String, String)> = vec![("Version".into(), "2010-03-31".into())];
    p.extend(params.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let response = tokio::task::spawn_blocking(move || {
        let p: Vec<(&str, &str)> = p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        raw.query("/", &p)
    })
    .await
    .unwrap();
    assert_eq!(response.status, 200, "{}", response.body);
    response
}

/// N2: fifty publishes answered, then kill -9; after a restart on the
/// same data directory each subscribed queue holds all fifty, raw and in
/// the envelope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n2_answered_publishes_survive_kill_9_in_every_queue() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = SluiceProcess::start(&["--data-dir", data]);
    let sqs = server.sdk();
    let raw = server.raw();
    for q in ["raw-copy", "enveloped-copy"] {
        sqs.create_queue().queue_name(q).send().await.unwrap();
    }
    let topic = sns(raw, &[("Action", "CreateTopic"), ("Name", "kept")])
        .await
        .xml("TopicArn")
        .unwrap();
    for (queue, raw_delivery) in [("raw-copy", "true"), ("enveloped-copy", "false")] {
        let endpoint = format!("arn:aws:sqs:us-east-1:000000000000:{queue}");
        sns(
            raw,
            &[
                ("Action", "Subscribe"),
                ("TopicArn", &topic),
                ("Protocol", "sqs"),
                ("Endpoint", &endpoint),
                ("Attributes.entry.1.key", "RawMessageDelivery"),
                ("Attributes.entry.1.value", raw_delivery),
            ],
        )
        .await;
    }
    for i in 0..50 {
        let message = format!("m{i}");
        sns(
            raw,
            &[
                ("Action", "Publish"),
                ("TopicArn", &topic),
                ("Message", &message),
            ],
        )
        .await;
    }
    server.kill_9();

    let server = SluiceProcess::start(&["--data-dir", data]);
    let sqs = server.sdk();
    for queue in ["raw-copy", "enveloped-copy"] {
        let url = sqs
            .get_queue_url()
            .queue_name(queue)
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let mut bodies = Vec::new();
        while bodies.len() < 50 {
            let got = sqs
                .receive_message()
                .queue_url(&url)
                .max_number_of_messages(10)
                .wait_time_seconds(1)
                .send()
                .await
                .unwrap();
            let messages = got.messages();
            assert!(!messages.is_empty(), "{queue}: only {} of 50", bodies.len());
            for m in messages {
                let body = m.body().unwrap();
                let message = if queue == "raw-copy" {
                    body.to_string()
                } else {
                    let envelope: Value = serde_json::from_str(body).unwrap();
                    envelope["Message"].as_str().unwrap().to_string()
                };
                bodies.push(message);
            }
        }
        bodies.sort_unstable();
        bodies.dedup();
        assert_eq!(bodies.len(), 50, "{queue}: every publish once");
    }
}
