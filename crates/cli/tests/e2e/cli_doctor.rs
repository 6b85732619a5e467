//! `sluice doctor` (rule X5) run as the real binary: a config with
//! every pitfall gets every finding, live and offline; a clean config gets
//! none and exit 0.

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::Value;

use crate::cli_run::sluice;
use crate::common::SluiceProcess;

/// Every pitfall of the seeds, one queue each (comments say which).
const PITFALLS: &str = r#"
# dlq-retention (critical: 1 h against the source's 4 days) and, with a
# message in it, dlq-expiring.
[[queues]]
name = "short-dlq"
attributes = { MessageRetentionPeriod = 3600 }

# max-receive-count 1; visibility-timeout 30 s against a 10 s consumer (< 60).
[[queues]]
name = "orders"
attributes = { VisibilityTimeout = 30, RedrivePolicy = '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:short-dlq","maxReceiveCount":1}' }
tags = { "sluice:consumer-timeout-seconds" = "10" }

[[queues]]
name = "retries-dlq"
attributes = { MessageRetentionPeriod = 1209600 }

# max-receive-count above 10.
[[queues]]
name = "retries"
attributes = { RedrivePolicy = '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:retries-dlq","maxReceiveCount":50}' }

# redrive-policy: none.
[[queues]]
name = "emails"

[[queues]]
name = "events-dlq.fifo"
attributes = { FifoQueue = true, MessageRetentionPeriod = 1209600 }

# fifo-ordering.
[[queues]]
name = "events.fifo"
attributes = { FifoQueue = true, RedrivePolicy = '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:events-dlq.fifo","maxReceiveCount":5}' }

# The one DLQ that is watched: no dlq-alarm finding for it (the others,
# short-dlq and retries-dlq, get one).
[[alarms]]
name = "events-dlq-depth"
queue = "events-dlq.fifo"
metric = "ApproximateNumberOfMessagesVisible"
threshold = 1
comparison = "GreaterThanOrEqualToThreshold"
actions = ["http://127.0.0.1:9/on-call"]
"#;

/// The seeds' recommended setup: DLQ 14 days against 4, maxReceiveCount
/// 3–5, visibility 6× the consumer's timeout, no FIFO queue with a DLQ.
const CLEAN: &str = r#"
[[queues]]
name = "orders-dlq"
attributes = { MessageRetentionPeriod = 1209600 }

[[queues]]
name = "orders"
attributes = { VisibilityTimeout = 180, RedrivePolicy = '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":5}' }
tags = { "sluice:consumer-timeout-seconds" = "30" }

[[queues]]
name = "emails"
attributes = { RedrivePolicy = '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":3}' }

# Every DLQ gets a depth alarm that reaches a person.
[dlq_alarms]
actions = ["http://127.0.0.1:9/on-call"]
"#;

fn findings(doc: &Value) -> Vec<(String, String, String)> {
    doc["Findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["Check"].as_str().unwrap().to_string(),
                f["Severity"].as_str().unwrap().to_string(),
                f["Queue"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn skipped(doc: &Value) -> Vec<String> {
    doc["Skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["Check"].as_str().unwrap().to_string())
        .collect()
}

fn has(found: &[(String, String, String)], check: &str, severity: &str, queue: &str) -> bool {
    found
        .iter()
        .any(|(c, s, q)| c == check && s == severity && q == queue)
}

/// The findings every pitfall config gets, live or offline.
fn assert_static_pitfalls(doc: &Value) {
    let found = findings(doc);
    for (check, severity, queue) in [
        ("dlq-retention", "critical", "short-dlq"),
        ("max-receive-count", "warning", "orders"),
        ("max-receive-count", "warning", "retries"),
        ("visibility-timeout", "warning", "orders"),
        ("redrive-policy", "warning", "emails"),
        ("fifo-ordering", "info", "events.fifo"),
    ] {
        assert!(
            has(&found, check, severity, queue),
            "{check} {severity} {queue} in {found:?}"
        );
    }
    // DLQs are not asked for a RedrivePolicy of their own.
    assert!(
        !found
            .iter()
            .any(|(c, _, q)| c == "redrive-policy" && q.contains("dlq")),
        "{found:?}"
    );
    let problem = doc["Findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["Check"] == "dlq-retention")
        .unwrap()["Problem"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        problem.contains("1h − 4d = -3d23h"),
        "the arithmetic: {problem}"
    );
}

/// Exactly the unwatched DLQs of the pitfall config have an alarm finding.
fn assert_alarm_check(doc: &Value) {
    assert!(!skipped(doc).iter().any(|s| s == "dlq-alarm"), "{doc}");
    let found = findings(doc);
    let mut alarmed: Vec<&str> = found
        .iter()
        .filter(|(c, _, _)| c == "dlq-alarm")
        .map(|(_, s, q)| {
            assert_eq!(s, "warning");
            q.as_str()
        })
        .collect();
    alarmed.sort_unstable();
    assert_eq!(alarmed, ["retries-dlq", "short-dlq"], "{found:?}");
}

/// X5: offline, from the config file: the static checks find every
/// pitfall; the live ones are skipped; exit 1 at the default --fail-on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x5_doctor_config_finds_every_static_pitfall() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("pitfalls.toml");
    std::fs::write(&config, PITFALLS).unwrap();
    let c = config.to_str().unwrap();
    let doc = sluice("http://127.0.0.1:1", &["doctor", "--config", c, "--json"])
        .await
        .expect_code(1)
        .json();
    assert_eq!(doc["QueuesChecked"], 7);
    assert_static_pitfalls(&doc);
    assert_alarm_check(&doc);
    // Topics live in the server only: their checks need it.
    assert_eq!(
        skipped(&doc),
        [
            "subscription-queue-policy",
            "subscription-dlq",
            "subscription-dlq-mistaken",
            "subscription-unconfirmed",
            "subscription-filter",
            "dlq-expiring",
            "inflight-limit"
        ]
    );
    let text = sluice("http://127.0.0.1:1", &["doctor", "--config", c])
        .await
        .expect_code(1);
    assert!(
        text.stdout.contains("CRITICAL  short-dlq  [dlq-retention]"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("fix: set MaxReceiveCount")
            || text.stdout.contains("fix: set maxReceiveCount"),
        "{}",
        text.stdout
    );

    // --fail-on: only a warning (emails), so critical passes, warning fails.
    let only_warning = dir.path().join("warning.toml");
    std::fs::write(&only_warning, "[[queues]]\nname = \"emails\"\n").unwrap();
    let w = only_warning.to_str().unwrap();
    sluice(
        "http://127.0.0.1:1",
        &["doctor", "--config", w, "--fail-on", "critical"],
    )
    .await
    .expect_code(0);
    sluice("http://127.0.0.1:1", &["doctor", "--config", w])
        .await
        .expect_code(1);
    let fifo = dir.path().join("fifo.toml");
    std::fs::write(
        &fifo,
        &PITFALLS[PITFALLS
            .find("[[queues]]\nname = \"events-dlq.fifo\"")
            .unwrap()..],
    )
    .unwrap();
    let f = fifo.to_str().unwrap();
    sluice("http://127.0.0.1:1", &["doctor", "--config", f])
        .await
        .expect_code(0);
    sluice(
        "http://127.0.0.1:1",
        &["doctor", "--config", f, "--fail-on", "info"],
    )
    .await
    .expect_code(1);

    // Usage and connection errors exit 2.
    let r = sluice(
        "http://127.0.0.1:1",
        &["doctor", "--config", "/no/such.toml"],
    )
    .await
    .expect_code(2);
    assert!(r.stderr.contains("cannot read config file"), "{r:?}");
    let r = sluice("http://127.0.0.1:1", &["doctor"])
        .await
        .expect_code(2);
    assert!(r.stderr.contains("cannot reach the server"), "{r:?}");
    sluice("http://127.0.0.1:1", &["doctor", "--fail-on", "sometimes"])
        .await
        .expect_code(2);
}

/// X5: live, against the real binary serving the pitfall config, with a
/// message in the short DLQ: every pitfall, and the message about to expire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x5_doctor_live_finds_every_pitfall() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("pitfalls.toml");
    std::fs::write(&config, PITFALLS).unwrap();
    let server = SluiceProcess::start(&["--in-memory", "--config", config.to_str().unwrap()]);
    let sqs = server.sdk();
    let dlq = sqs
        .get_queue_url()
        .queue_name("short-dlq")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    sqs.send_message()
        .queue_url(&dlq)
        .message_body("evidence")
        .send()
        .await
        .unwrap();
    let doc = sluice(&server.endpoint, &["doctor", "--json"])
        .await
        .expect_code(1)
        .json();
    assert_eq!(doc["QueuesChecked"], 7);
    assert_static_pitfalls(&doc);
    let found = findings(&doc);
    assert!(
        has(&found, "dlq-expiring", "critical", "short-dlq"),
        "{found:?}"
    );
    assert!(
        !found
            .iter()
            .any(|(c, _, q)| c == "dlq-expiring" && q != "short-dlq"),
        "{found:?}"
    );
    assert_alarm_check(&doc);
    assert!(!skipped(&doc).contains(&"dlq-expiring".to_string()));
    // The same config with retention set right: the retention finding goes.
    sqs.set_queue_attributes()
        .queue_url(&dlq)
        .attributes(Attr::MessageRetentionPeriod, "1209600")
        .send()
        .await
        .unwrap();
    let doc = sluice(&server.endpoint, &["doctor", "--json"])
        .await
        .expect_code(1)
        .json();
    let found = findings(&doc);
    assert!(
        !found
            .iter()
            .any(|(c, _, _)| c == "dlq-retention" || c == "dlq-expiring"),
        "{found:?}"
    );
}

/// X5: a clean setup (with `[dlq_alarms]`) has no findings, offline and
/// live, and exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x5_doctor_clean_setup_has_no_findings() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("clean.toml");
    std::fs::write(&config, CLEAN).unwrap();
    let c = config.to_str().unwrap();
    let doc = sluice(
        "http://127.0.0.1:1",
        &["doctor", "--config", c, "--json", "--fail-on", "info"],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(findings(&doc), vec![]);
    assert_eq!(doc["Failed"], false);

    // Live, the [dlq_alarms] setting has given orders-dlq its alarm.
    let server = SluiceProcess::start(&["--in-memory", "--config", c]);
    let sqs = server.sdk();
    let dlq = sqs
        .get_queue_url()
        .queue_name("orders-dlq")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    sqs.send_message()
        .queue_url(&dlq)
        .message_body("fresh")
        .send()
        .await
        .unwrap();
    let doc = sluice(&server.endpoint, &["doctor", "--json", "--fail-on", "info"])
        .await
        .expect_code(0)
        .json();
    assert_eq!(findings(&doc), vec![], "{doc}");
    assert!(!skipped(&doc).contains(&"dlq-alarm".to_string()), "{doc}");
    let text = sluice(&server.endpoint, &["doctor"]).await.expect_code(0);
    assert!(text.stdout.contains("0 finding(s)"), "{}", text.stdout);
}

/// An SNS Query request to `server`, off the async runtime.
async fn sns(server: &SluiceProcess, params: &[(&str, &str)]) -> String {
    let raw = server.raw();
    let mut p: Vec<(String, String)> = vec![("Version".into(), "2010-03-31".into())];
    p.extend(params.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let response = tokio::task::spawn_blocking(move || {
        let p: Vec<(&str, &str)> = p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        raw.query("/", &p)
    })
    .await
    .unwrap();
    assert_eq!(response.status, 200, "{}", response.body);
    response.body
}

/// N5, N8: live, the doctor reads the topics and flags each subscription
/// pitfall on the queue (or endpoint) it concerns: a queue whose policy
/// does not let its topic send, a subscription without a dead-letter
/// queue, a subscription DLQ on a queue that has no RedrivePolicy of its
/// own, an HTTP subscription never confirmed, a filter that let nothing
/// through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n5_doctor_live_flags_subscription_pitfalls() {
    let server = SluiceProcess::start(&["--in-memory"]);
    let sqs = server.sdk();
    for name in ["orders", "orders-undeliverable", "audit"] {
        sqs.create_queue().queue_name(name).send().await.unwrap();
    }
    let arn = |q: &str| format!("arn:aws:sqs:us-east-1:000000000000:{q}");
    let created = sns(&server, &[("Action", "CreateTopic"), ("Name", "shop")]).await;
    let topic = "arn:aws:sns:us-east-1:000000000000:shop";
    assert!(created.contains(topic), "{created}");
    let redrive = format!(
        "{{\"deadLetterTargetArn\":\"{}\"}}",
        arn("orders-undeliverable")
    );
    let orders = arn("orders");
    sns(
        &server,
        &[
            ("Action", "Subscribe"),
            ("TopicArn", topic),
            ("Protocol", "sqs"),
            ("Endpoint", &orders),
            ("Attributes.entry.1.key", "RedrivePolicy"),
            ("Attributes.entry.1.value", &redrive),
        ],
    )
    .await;
    let audit = arn("audit");
    sns(
        &server,
        &[
            ("Action", "Subscribe"),
            ("TopicArn", topic),
            ("Protocol", "sqs"),
            ("Endpoint", &audit),
            ("Attributes.entry.1.key", "FilterPolicy"),
            ("Attributes.entry.1.value", "{\"kind\":[\"never-sent\"]}"),
        ],
    )
    .await;
    sns(
        &server,
        &[
            ("Action", "Subscribe"),
            ("TopicArn", topic),
            ("Protocol", "http"),
            ("Endpoint", "http://127.0.0.1:1/hook"),
        ],
    )
    .await;
    sns(
        &server,
        &[
            ("Action", "Publish"),
            ("TopicArn", topic),
            ("Message", "an order"),
        ],
    )
    .await;

    let doc = sluice(&server.endpoint, &["doctor", "--json"])
        .await
        .expect_code(1)
        .json();
    let found = findings(&doc);
    for (check, severity, subject) in [
        ("subscription-queue-policy", "warning", "orders"),
        ("subscription-queue-policy", "warning", "audit"),
        ("subscription-dlq-mistaken", "warning", "orders"),
        ("subscription-dlq", "warning", "audit"),
        ("subscription-dlq", "warning", "http://127.0.0.1:1/hook"),
        (
            "subscription-unconfirmed",
            "warning",
            "http://127.0.0.1:1/hook",
        ),
        ("subscription-filter", "warning", "audit"),
    ] {
        assert!(
            has(&found, check, severity, subject),
            "{check} {subject}: {found:?}"
        );
    }
    assert!(
        !has(&found, "subscription-dlq", "warning", "orders"),
        "orders' subscription has a DLQ: {found:?}"
    );
    assert!(
        !has(&found, "subscription-filter", "warning", "orders"),
        "orders has no filter: {found:?}"
    );
}
