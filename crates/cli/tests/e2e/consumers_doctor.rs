//! The push consumers seen from outside (rule C8): Sluice.ListConsumers in
//! both protocols, and `sluice doctor` flagging a consumer's pitfalls, run
//! as the real binary against a server started with a config file.

use serde_json::Value;

use crate::cli_run::sluice;
use crate::common::SluiceProcess;

/// A consumer with every pitfall: visibility 60 s against a 30 s handler
/// (under 6 × 30), batches of 10 without item failures, no DLQ.
const RISKY: &str = r#"
[[queues]]
name = "jobs"
attributes = { VisibilityTimeout = 60 }

[[consumers]]
name = "jobs-worker"
queue = "jobs"
url = "http://127.0.0.1:9/"
batch_size = 10
max_concurrency = 4
timeout_seconds = 30
"#;

/// C8: ListConsumers lists the consumer's settings and state (JSON and
/// Query), and `doctor` reads it to flag the three pitfalls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c8_list_consumers_and_doctor_flags_consumer_pitfalls() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("risky.toml");
    std::fs::write(&config, RISKY).unwrap();
    let c = config.to_str().unwrap();
    let server = SluiceProcess::start(&["--in-memory", "--config", c]);
    let raw = server.raw();
    let (json, xml) = tokio::task::spawn_blocking(move || {
        (
            raw.json_target("Sluice.ListConsumers", "{}"),
            raw.query("/", &[("Action", "ListConsumers")]),
        )
    })
    .await
    .unwrap();
    assert_eq!(json.status, 200, "{}", json.body);
    let body: Value = serde_json::from_str(&json.body).unwrap();
    let w = &body["Consumers"][0];
    assert_eq!(w["Name"], "jobs-worker");
    assert_eq!(w["QueueName"], "jobs");
    assert_eq!(w["Url"], "http://127.0.0.1:9/");
    assert_eq!(w["BatchSize"], 10);
    assert_eq!(w["MaxConcurrency"], 4);
    assert_eq!(w["TimeoutSeconds"], 30);
    assert_eq!(w["ReportBatchItemFailures"], false);
    assert_eq!(w["State"], "running");
    assert_eq!(w["ConcurrencyLimit"], 1, "starts low (C7)");
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert!(
        xml.body
            .contains("<ListConsumersResult><Consumer><Name>jobs-worker</Name>"),
        "{}",
        xml.body
    );

    for (source, args) in [
        ("live", vec!["doctor", "--json"]),
        ("config", vec!["doctor", "--config", c, "--json"]),
    ] {
        let doc = sluice(&server.endpoint, &args).await.expect_code(1).json();
        let found: Vec<(String, String, String)> = doc["Findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let text = |k: &str| f[k].as_str().unwrap().to_string();
                (text("Check"), text("Severity"), text("Queue"))
            })
            .collect();
        for check in [
            "consumer-visibility",
            "consumer-batch-failures",
            "consumer-dlq",
        ] {
            assert!(
                found.contains(&(check.into(), "warning".into(), "jobs".into())),
                "{source}: {check} in {found:?}"
            );
        }
        let visibility = doc["Findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["Check"] == "consumer-visibility")
            .unwrap();
        assert_eq!(visibility["Fix"], "set VisibilityTimeout to at least 180");
    }
}
