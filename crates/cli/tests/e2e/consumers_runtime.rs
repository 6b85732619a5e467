//! Consumers managed at run time (rules C9, C10): CreateConsumer,
//! UpdateConsumer, DeleteConsumer, PauseConsumer and ResumeConsumer on the
//! real binary, in both protocols, checked as the config file's consumers
//! are, and saved across a restart; config-file consumers stay as declared.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::alarms::sluice;
use crate::cli_run::sluice as cli;
use crate::common::{RawClient, SluiceProcess, TestServer, create_queue};
use crate::consumers::{Handler, Reply, until};

const CONFIG: &str = r#"
[[queues]]
name = "jobs"
attributes = { VisibilityTimeout = 10 }

[[queues]]
name = "mail"

[[consumers]]
name = "file-worker"
queue = "mail"
url = "http://127.0.0.1:9/"
"#;

async fn list(raw: RawClient) -> Vec<Value> {
    let (status, v, r) = sluice(raw, "ListConsumers", json!({})).await;
    assert_eq!(status, 200, "{}", r.body);
    v["Consumers"].as_array().cloned().unwrap_or_default()
}

async fn consumer(raw: RawClient, name: &str) -> Value {
    list(raw)
        .await
        .into_iter()
        .find(|c| c["Name"] == name)
        .unwrap_or(Value::Null)
}

/// Sends `body` to `jobs` and waits up to 5 s for the handler to see it.
async fn delivered(server: &SluiceProcess, handler: &Handler, body: &str, wait: Duration) -> bool {
    server
        .sdk()
        .send_message()
        .queue_url(format!("{}/000000000000/jobs", server.endpoint))
        .message_body(body)
        .send()
        .await
        .unwrap();
    until(wait, async || {
        handler
            .events()
            .iter()
            .any(|e| e["Records"][0]["body"] == body)
    })
    .await
}

/// C9, C10: run-time consumers are checked with the config file's limits
/// and messages, run, survive a restart (stopped or not, with their
/// changed settings), and are deleted for good; config-file ones refuse
/// change and deletion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c9_c10_consumers_managed_at_run_time_survive_a_restart() {
    let handler = Handler::start(Arc::new(|_, _| Reply::ok(""))).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sluice.toml");
    let data = dir.path().join("data");
    std::fs::write(
        &config,
        format!("data_dir = \"{}\"\n{CONFIG}", data.display()),
    )
    .unwrap();
    let cfg = config.to_str().unwrap();
    let server = SluiceProcess::start(&["--config", cfg]);
    let raw = server.raw();
    let jobs = format!("{}/000000000000/jobs", server.endpoint);

    // The config file's checks, with its messages.
    let (status, v, _) = sluice(
        raw,
        "CreateConsumer",
        json!({"Name": "w", "QueueUrl": jobs, "Url": handler.url, "BatchSize": 11}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        v["__type"]
            .as_str()
            .is_some_and(|t| t.ends_with("InvalidParameterValueException")),
        "{v}"
    );
    assert_eq!(
        v["message"],
        "consumer w: batch_size 11 above 10 needs batching_window_seconds of at least 1"
    );
    let (status, v, _) = sluice(
        raw,
        "CreateConsumer",
        json!({"Name": "w", "QueueUrl": jobs, "Url": handler.url, "TimeoutSeconds": 11}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.contains("exceeds the visibility timeout of queue jobs (10 s)")),
        "{v}"
    );
    let (status, v, _) = sluice(
        raw,
        "CreateConsumer",
        json!({"Name": "w", "QueueUrl": format!("{}/000000000000/nope", server.endpoint), "Url": handler.url}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        v["__type"]
            .as_str()
            .is_some_and(|t| t.ends_with("QueueDoesNotExist")),
        "{v}"
    );

    // Created in the Query protocol; the name is then taken.
    let created = {
        let (raw, jobs, url) = (raw, jobs.clone(), handler.url.clone());
        tokio::task::spawn_blocking(move || {
            raw.query(
                "/",
                &[
                    ("Action", "CreateConsumer"),
                    ("Name", "w"),
                    ("QueueUrl", &jobs),
                    ("Url", &url),
                    ("BatchSize", "5"),
                    ("TimeoutSeconds", "5"),
                    ("ReportBatchItemFailures", "true"),
                ],
            )
        })
        .await
        .unwrap()
    };
    assert_eq!(created.status, 200, "{}", created.body);
    let (status, v, _) = sluice(
        raw,
        "CreateConsumer",
        json!({"Name": "w", "QueueUrl": jobs, "Url": handler.url}),
    )
    .await;
    assert_eq!(
        (status, v["message"].as_str()),
        (400, Some("consumer w already exists"))
    );
    let w = consumer(raw, "w").await;
    assert_eq!(
        (
            &w["Source"],
            &w["BatchSize"],
            &w["ReportBatchItemFailures"],
            &w["State"]
        ),
        (&json!("api"), &json!(5), &json!(true), &json!("running")),
        "{w}"
    );
    assert!(delivered(&server, &handler, "first", Duration::from_secs(5)).await);

    // Config-file consumers are changed in the file only.
    for action in ["DeleteConsumer", "UpdateConsumer"] {
        let (status, v, _) = sluice(raw, action, json!({"Name": "file-worker"})).await;
        assert_eq!(status, 400, "{action}");
        assert!(
            v["message"]
                .as_str()
                .is_some_and(|m| m.contains("declared in the config file")),
            "{action}: {v}"
        );
    }
    let (status, v, _) = sluice(raw, "DeleteConsumer", json!({"Name": "ghost"})).await;
    assert_eq!(status, 404);
    assert!(
        v["__type"]
            .as_str()
            .is_some_and(|t| t.ends_with("ResourceNotFoundException")),
        "{v}"
    );

    // Changed, checked again, and stopped: nothing is delivered.
    let (status, v, _) = sluice(
        raw,
        "UpdateConsumer",
        json!({"Name": "w", "MaxConcurrency": 1}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        v["message"],
        "consumer w: max_concurrency must be 2 to 1000, got 1"
    );
    let (status, _, r) = sluice(
        raw,
        "UpdateConsumer",
        json!({"Name": "w", "MaxConcurrency": 3}),
    )
    .await;
    assert_eq!(status, 200, "{}", r.body);
    let (status, _, r) = sluice(raw, "PauseConsumer", json!({"Name": "w"})).await;
    assert_eq!(status, 200, "{}", r.body);
    assert_eq!(consumer(raw, "w").await["State"], "stopped");
    assert!(
        !delivered(
            &server,
            &handler,
            "while stopped",
            Duration::from_millis(1500)
        )
        .await
    );
    assert!(server.terminate().success());

    // After a restart: still there, still stopped, with its new settings.
    let server = SluiceProcess::start(&["--config", cfg]);
    let raw = server.raw();
    let w = consumer(raw, "w").await;
    assert_eq!(
        (
            &w["Source"],
            &w["State"],
            &w["MaxConcurrency"],
            &w["BatchSize"]
        ),
        (&json!("api"), &json!("stopped"), &json!(3), &json!(5)),
        "{w}"
    );
    assert_eq!(consumer(raw, "file-worker").await["Source"], "config");
    let (status, _, r) = sluice(raw, "ResumeConsumer", json!({"Name": "w"})).await;
    assert_eq!(status, 200, "{}", r.body);
    // A batch received during the pause was held in flight and comes back
    // after its visibility timeout (10 s) at most.
    let resumed = until(Duration::from_secs(15), async || {
        handler
            .events()
            .iter()
            .any(|e| e["Records"][0]["body"] == "while stopped")
    })
    .await;
    assert!(
        resumed,
        "the message sent while stopped is delivered on resume"
    );

    // Deleted for good.
    let (status, _, r) = sluice(raw, "DeleteConsumer", json!({"Name": "w"})).await;
    assert_eq!(status, 200, "{}", r.body);
    assert!(consumer(raw, "w").await.is_null());
    assert!(server.terminate().success());
    let server = SluiceProcess::start(&["--config", cfg]);
    let names: Vec<Value> = list(server.raw())
        .await
        .iter()
        .map(|c| c["Name"].clone())
        .collect();
    assert_eq!(names, vec![json!("file-worker")]);
}

/// C8, C9, C10: `sluice consumers` creates, lists (a table with state,
/// batches in flight and settings), updates, pauses, resumes and deletes a
/// consumer; a refused setting exits 1 with the server's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c9_consumers_command_manages_consumers() {
    let handler = Handler::start(Arc::new(|_, _| Reply::ok(""))).await;
    let server = TestServer::start_real_time().await;
    let sqs = server.sdk();
    create_queue(&sqs, "jobs").await;
    let ep = server.endpoint.as_str();
    let url = handler.url.as_str();

    cli(ep, &["consumers", "list"]).await.expect_code(0);
    let run = cli(
        ep,
        &[
            "consumers",
            "create",
            "w",
            "--queue",
            "jobs",
            "--url",
            url,
            "--timeout",
            "5",
            "--batch-size",
            "4",
            "--report-batch-item-failures",
        ],
    )
    .await
    .expect_code(0);
    assert!(run.stdout.contains("consumer w created"), "{run:?}");
    let run = cli(ep, &["consumers"]).await.expect_code(0);
    let header = run.stdout.lines().next().unwrap_or_default().to_string();
    for column in [
        "CONSUMER",
        "QUEUE",
        "STATE",
        "IN FLIGHT",
        "BATCH",
        "MAX CONC",
        "SOURCE",
    ] {
        assert!(header.contains(column), "{run:?}");
    }
    let row = run.stdout.lines().nth(1).unwrap_or_default().to_string();
    for cell in ["w", "jobs", "running", "4", "5 s", "yes", "api", url] {
        assert!(row.contains(cell), "{cell}: {run:?}");
    }

    let run = cli(ep, &["consumers", "update", "w", "--batch-size", "11"])
        .await
        .expect_code(1);
    assert!(
        run.stderr
            .contains("batch_size 11 above 10 needs batching_window_seconds of at least 1"),
        "{run:?}"
    );
    cli(ep, &["consumers", "update", "w", "--max-concurrency", "7"])
        .await
        .expect_code(0);
    cli(ep, &["consumers", "pause", "w"]).await.expect_code(0);
    let listed = cli(ep, &["consumers", "list", "--queue", "jobs", "--json"])
        .await
        .expect_code(0)
        .json();
    let w = &listed["Consumers"][0];
    assert_eq!(
        (&w["State"], &w["MaxConcurrency"]),
        (&json!("stopped"), &json!(7)),
        "{listed}"
    );
    cli(ep, &["consumers", "resume", "w"]).await.expect_code(0);
    let listed = cli(ep, &["consumers", "list", "--json"])
        .await
        .expect_code(0)
        .json();
    assert_eq!(listed["Consumers"][0]["State"], "running");
    cli(ep, &["consumers", "delete", "w"]).await.expect_code(0);
    let run = cli(ep, &["consumers", "list"]).await.expect_code(0);
    assert_eq!(run.stdout.trim(), "no consumers");
    let run = cli(ep, &["consumers", "delete", "w"]).await.expect_code(1);
    assert!(run.stderr.contains("consumer w does not exist"), "{run:?}");
}
