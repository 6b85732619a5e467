//! Filter criteria (rule C13) on the real binary: a config file's
//! consumer with two patterns delivers only what one of them admits to a
//! real handler and deletes the rest, counted in `/metrics`; patterns are
//! given and shown through CreateConsumer (both protocols), the CLI and
//! ListConsumers, and a bad one is refused with InvalidParameterValue.

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::types::MessageAttributeValue;
use serde_json::{Value, json};

use crate::alarms::sluice;
use crate::cli_run::sluice as cli;
use crate::common::{SluiceProcess, messages_in};
use crate::consumers::{Handler, Reply, bodies, until};

/// C13: of four messages, the JSON order (first pattern) and the refund
/// with a `priority` attribute starting with "high" (second pattern)
/// reach the handler; a plain refund and a body that is not JSON are
/// deleted without delivery, and counted as filtered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c13_filter_delivers_matching_messages_and_deletes_the_rest() {
    let handler = Handler::start(Arc::new(|_, _| Reply::ok(""))).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sluice.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[[queues]]
name = "orders"
attributes = {{ VisibilityTimeout = 30 }}

[[consumers]]
name = "typed"
queue = "orders"
url = "{}"
filter = ['{{"body": {{"type": ["order"]}}}}', '{{"messageAttributes": {{"priority": {{"stringValue": [{{"prefix": "high"}}]}}}}}}']
"#,
            handler.url
        ),
    )
    .unwrap();
    let server = SluiceProcess::start(&["--in-memory", "--config", config.to_str().unwrap()]);
    let sqs = server.sdk();
    let url = format!("{}/000000000000/orders", server.endpoint);
    for body in [
        r#"{"type": "order", "n": 1}"#,
        r#"{"type": "refund", "n": 2}"#,
        "type=order",
    ] {
        sqs.send_message()
            .queue_url(&url)
            .message_body(body)
            .send()
            .await
            .unwrap();
    }
    sqs.send_message()
        .queue_url(&url)
        .message_body(r#"{"type": "refund", "n": 3}"#)
        .message_attributes(
            "priority",
            MessageAttributeValue::builder()
                .data_type("String")
                .string_value("high-1")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert!(
        until(Duration::from_secs(10), async || {
            messages_in(&sqs, &url).await == 0
        })
        .await,
        "every message handled or filtered out"
    );
    let mut delivered: Vec<String> = handler.events().iter().flat_map(bodies).collect();
    delivered.sort();
    assert_eq!(
        delivered,
        [
            r#"{"type": "order", "n": 1}"#,
            r#"{"type": "refund", "n": 3}"#
        ]
    );
    let raw = server.raw();
    let metrics =
        tokio::task::spawn_blocking(move || raw.request("GET", "/metrics", &[], b"").body)
            .await
            .unwrap();
    let line = r#"sluice_consumer_filtered_messages_total{consumer="typed"} 2"#;
    assert!(metrics.contains(line), "{line} in\n{metrics}");

    // ListConsumers shows the patterns as given.
    let (status, v, _) = sluice(server.raw(), "ListConsumers", json!({})).await;
    assert_eq!(status, 200);
    let typed = &v["Consumers"][0];
    assert_eq!(
        typed["Filters"][0], r#"{"body": {"type": ["order"]}}"#,
        "{v}"
    );
    assert_eq!(typed["Filters"].as_array().map(Vec::len), Some(2));
}

/// C13: CreateConsumer refuses a pattern Lambda would refuse with
/// InvalidParameterValue and the reason; patterns given in JSON, in Query
/// (`Filter.N`) and by `sluice consumers create --filter` are listed; an
/// update with `--no-filter` removes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c13_filter_patterns_through_the_api_and_the_cli() {
    let server = SluiceProcess::start(&["--in-memory"]);
    let raw = server.raw();
    server
        .sdk()
        .create_queue()
        .queue_name("jobs")
        .send()
        .await
        .unwrap();
    let jobs = format!("{}/000000000000/jobs", server.endpoint);
    let handler = "http://127.0.0.1:9/";

    let (status, v, _) = sluice(
        raw,
        "CreateConsumer",
        json!({"Name": "bad", "QueueUrl": jobs, "Url": handler,
               "Filters": [r#"{"Body": {"type": ["order"]}}"#]}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        v["__type"]
            .as_str()
            .is_some_and(|t| t.ends_with("InvalidParameterValueException")),
        "{v}"
    );
    let message = v["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(r#"consumer bad: filter pattern 1: unknown field "Body""#),
        "{message}"
    );
    let six = vec![r#"{"body": {"a": ["x"]}}"#; 6];
    let (status, v, _) = sluice(
        raw,
        "CreateConsumer",
        json!({"Name": "bad", "QueueUrl": jobs, "Url": handler, "Filters": six}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        v["message"],
        "consumer bad: filter has 6 patterns; at most 5 are allowed"
    );

    let query = {
        let jobs = jobs.clone();
        tokio::task::spawn_blocking(move || {
            raw.query(
                "/",
                &[
                    ("Action", "CreateConsumer"),
                    ("Name", "q"),
                    ("QueueUrl", &jobs),
                    ("Url", handler),
                    ("Filter.1", r#"{"body": [{"prefix": "Result: "}]}"#),
                    (
                        "Filter.2",
                        r#"{"attributes": {"SenderId": [{"exists": true}]}}"#,
                    ),
                ],
            )
        })
        .await
        .unwrap()
    };
    assert_eq!(query.status, 200, "{}", query.body);
    let run = cli(
        &server.endpoint,
        &[
            "consumers",
            "create",
            "c",
            "--queue",
            "jobs",
            "--url",
            handler,
            "--filter",
            r#"{"body": {"n": [{"numeric": [">", 0]}]}}"#,
        ],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let listed = cli(&server.endpoint, &["consumers", "list", "--json"]).await;
    let v: Value = serde_json::from_str(&listed.stdout).unwrap();
    let filters = |name: &str| {
        v["Consumers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["Name"] == name)
            .map(|c| c["Filters"].clone())
    };
    assert_eq!(
        filters("q"),
        Some(json!([
            r#"{"body": [{"prefix": "Result: "}]}"#,
            r#"{"attributes": {"SenderId": [{"exists": true}]}}"#
        ]))
    );
    assert_eq!(
        filters("c"),
        Some(json!([r#"{"body": {"n": [{"numeric": [">", 0]}]}}"#]))
    );
    let table = cli(&server.endpoint, &["consumers"]).await;
    assert!(table.stdout.contains("FILTERS"), "{}", table.stdout);

    let bad = cli(
        &server.endpoint,
        &[
            "consumers",
            "update",
            "c",
            "--filter",
            r#"{"body": {"n": [{"numeric": ["<", 5, ">", 1]}]}}"#,
        ],
    )
    .await;
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("InvalidParameterValue"),
        "{}",
        bad.stderr
    );
    let cleared = cli(
        &server.endpoint,
        &["consumers", "update", "c", "--no-filter"],
    )
    .await;
    assert_eq!(cleared.code, 0, "{}", cleared.stderr);
    let listed = cli(&server.endpoint, &["consumers", "list", "--json"]).await;
    let v: Value = serde_json::from_str(&listed.stdout).unwrap();
    let c = v["Consumers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["Name"] == "c")
        .cloned()
        .unwrap();
    assert_eq!(c["Filters"], json!([]), "{c}");
}
