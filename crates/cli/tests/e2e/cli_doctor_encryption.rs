//! `sluice doctor`'s encryption checks (rule X5) through the real binary:
//! queues that ask for encryption on a server that does not seal, a key
//! the keyring lacks, and the AWS managed key on a queue that AWS services
//! deliver to; live and from a config file.

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::Value;

use crate::cli_run::{Run, sluice};
use crate::common::SluiceProcess;
use crate::encryption_metrics::{keyring, scrape};

/// A Policy that lets `service` send.
fn service_policy(service: &str) -> String {
    serde_json::json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Principal": {"Service": service}, "Action": "sqs:SendMessage"}]})
    .to_string()
}

/// The `sse-*` findings: (check, severity, queue), sorted.
fn sse_findings(doc: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<_> = doc["Findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["Check"].as_str().is_some_and(|c| c.starts_with("sse-")))
        .map(|f| {
            let s = |k: &str| f[k].as_str().expect(k).to_string();
            (s("Check"), s("Severity"), s("Queue"))
        })
        .collect();
    out.sort();
    out
}

fn skipped(doc: &Value) -> Vec<String> {
    (doc["Skipped"].as_array().expect("skipped").iter())
        .map(|s| s["Check"].as_str().expect("check").to_string())
        .collect()
}

fn finding(check: &str, severity: &str, queue: &str) -> (String, String, String) {
    (check.into(), severity.into(), queue.into())
}

/// `sluice doctor --json` against `endpoint` (a usage or connection
/// error fails the test).
async fn doctor(endpoint: &str, extra: &[&str]) -> (Run, Value) {
    let args = [&["doctor", "--json"], extra].concat();
    let run = sluice(endpoint, &args).await;
    assert_ne!(run.code, 2, "{run:?}");
    let doc = run.json();
    (run, doc)
}

async fn create(sqs: &aws_sdk_sqs::Client, name: &str, attrs: &[(Attr, &str)]) {
    let mut req = sqs.create_queue().queue_name(name);
    for (k, v) in attrs {
        req = req.attributes(k.clone(), *v);
    }
    req.send().await.expect("create");
}

/// X5: on a server without a keyring, the queues whose attributes ask for
/// encryption (SSE-SQS, or a KMS key) are flagged, and the clear one is
/// not; the same queues on a server with a keyring are not, but a queue
/// whose key the keyring lacks is, as critical.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x5_doctor_flags_sse_a_server_does_not_honour() {
    let dir = tempfile::tempdir().expect("dir");
    let plain = SluiceProcess::start(&["--data-dir", dir.path().join("plain").to_str().unwrap()]);
    let sqs = plain.sdk();
    create(&sqs, "asks-sse", &[(Attr::SqsManagedSseEnabled, "true")]).await;
    create(
        &sqs,
        "asks-kms",
        &[(Attr::KmsMasterKeyId, "alias/payments")],
    )
    .await;
    create(&sqs, "clear", &[]).await;
    let (_, doc) = doctor(&plain.endpoint, &[]).await;
    assert_eq!(
        sse_findings(&doc),
        [
            finding("sse-unsealed", "warning", "asks-kms"),
            finding("sse-unsealed", "warning", "asks-sse"),
        ],
        "{doc}"
    );
    assert!(
        skipped(&doc).iter().all(|s| !s.starts_with("sse-")),
        "{doc}"
    );
    drop(plain);

    let keyring = keyring(dir.path(), &["payments"]);
    let sealing = SluiceProcess::start(&[
        "--data-dir",
        dir.path().join("sealed").to_str().unwrap(),
        "--encryption-key-file",
        keyring.to_str().unwrap(),
    ]);
    let sqs = sealing.sdk();
    create(&sqs, "asks-sse", &[(Attr::SqsManagedSseEnabled, "true")]).await;
    create(
        &sqs,
        "asks-kms",
        &[(Attr::KmsMasterKeyId, "alias/payments")],
    )
    .await;
    create(&sqs, "clear", &[(Attr::SqsManagedSseEnabled, "false")]).await;
    let (_, doc) = doctor(&sealing.endpoint, &[]).await;
    assert_eq!(sse_findings(&doc), [], "{doc}");
    sluice(&sealing.endpoint, &["doctor", "--fail-on", "critical"])
        .await
        .expect_code(0);

    create(&sqs, "orphan", &[(Attr::KmsMasterKeyId, "alias/nowhere")]).await;
    let (_, doc) = doctor(&sealing.endpoint, &[]).await;
    assert_eq!(
        sse_findings(&doc),
        [finding("sse-key-missing", "critical", "orphan")],
        "{doc}"
    );
    let run = sluice(&sealing.endpoint, &["doctor", "--fail-on", "critical"])
        .await
        .expect_code(1);
    assert!(
        run.stdout.contains("CRITICAL  orphan  [sse-key-missing]"),
        "{}",
        run.stdout
    );
    // What the doctor read: the page names the key, never its material.
    let text = scrape(&sealing).await;
    assert!(text.contains("sluice_encryption_at_rest 1"), "{text}");
}

/// An SNS Query request to `server`.
async fn sns(server: &SluiceProcess, params: &[(&str, &str)]) {
    let raw = server.raw();
    let mut p: Vec<(String, String)> = vec![("Version".into(), "2010-03-31".into())];
    p.extend(params.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let response = tokio::task::spawn_blocking(move || {
        let p: Vec<(&str, &str)> = p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        raw.query("/", &p)
    })
    .await
    .expect("join");
    assert_eq!(response.status, 200, "{}", response.body);
}

/// X5: a queue encrypted with alias/aws/sqs whose Policy lets EventBridge
/// or S3 send, or that is subscribed to a topic, is flagged with the
/// customer managed key as the fix; one without such a sender, or with a
/// key of its own, is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x5_doctor_flags_the_aws_managed_key_where_services_deliver() {
    let dir = tempfile::tempdir().expect("dir");
    let keyring = keyring(dir.path(), &["orders-key"]);
    let server = SluiceProcess::start(&[
        "--data-dir",
        dir.path().join("data").to_str().unwrap(),
        "--encryption-key-file",
        keyring.to_str().unwrap(),
    ]);
    let sqs = server.sdk();
    let managed = || (Attr::KmsMasterKeyId, "alias/aws/sqs");
    let events = service_policy("events.amazonaws.com");
    let s3 = service_policy("s3.amazonaws.com");
    let sns_policy = service_policy("sns.amazonaws.com");
    create(&sqs, "from-events", &[managed(), (Attr::Policy, &events)]).await;
    create(&sqs, "from-s3", &[managed(), (Attr::Policy, &s3)]).await;
    create(&sqs, "from-topic", &[managed()]).await;
    create(&sqs, "no-sender", &[managed()]).await;
    create(
        &sqs,
        "own-key",
        &[
            (Attr::KmsMasterKeyId, "alias/orders-key"),
            (Attr::Policy, &sns_policy),
        ],
    )
    .await;
    let topic = "arn:aws:sns:us-east-1:000000000000:shop";
    sns(&server, &[("Action", "CreateTopic"), ("Name", "shop")]).await;
    for q in ["from-topic", "own-key"] {
        let endpoint = format!("arn:aws:sqs:us-east-1:000000000000:{q}");
        sns(
            &server,
            &[
                ("Action", "Subscribe"),
                ("TopicArn", topic),
                ("Protocol", "sqs"),
                ("Endpoint", &endpoint),
            ],
        )
        .await;
    }
    let (_, doc) = doctor(&server.endpoint, &[]).await;
    assert_eq!(
        sse_findings(&doc),
        [
            finding("sse-aws-managed-key", "warning", "from-events"),
            finding("sse-aws-managed-key", "warning", "from-s3"),
            finding("sse-aws-managed-key", "warning", "from-topic"),
        ],
        "{doc}"
    );
    let from_topic = (doc["Findings"].as_array().unwrap().iter())
        .find(|f| f["Check"] == "sse-aws-managed-key" && f["Queue"] == "from-topic")
        .unwrap();
    let problem = from_topic["Problem"].as_str().unwrap();
    assert!(problem.contains(topic), "{problem}");
    let fix = from_topic["Fix"].as_str().unwrap();
    assert!(
        fix.contains("customer managed key") && fix.contains("sns.amazonaws.com"),
        "{fix}"
    );
}

/// X5, from a config file: the AWS managed key with a delivering service
/// is flagged offline too; whether the server seals is known only with
/// `[encryption]`, so without it the checks that need it are skipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x5_doctor_config_encryption_checks() {
    let dir = tempfile::tempdir().expect("dir");
    let queues = format!(
        "[[queues]]\nname = \"events-target\"\n\
         attributes = {{ KmsMasterKeyId = \"alias/aws/sqs\", Policy = '{}' }}\n",
        service_policy("events.amazonaws.com")
    );
    let without = dir.path().join("without.toml");
    std::fs::write(&without, &queues).unwrap();
    let (_, doc) = doctor(
        "http://127.0.0.1:1",
        &["--config", without.to_str().unwrap()],
    )
    .await;
    assert_eq!(
        sse_findings(&doc),
        [finding("sse-aws-managed-key", "warning", "events-target")],
        "{doc}"
    );
    let skips = skipped(&doc);
    assert!(
        skips.contains(&"sse-unsealed".to_string())
            && skips.contains(&"sse-key-missing".to_string()),
        "{doc}"
    );

    let with = dir.path().join("with.toml");
    std::fs::write(
        &with,
        format!("[encryption]\nkey_file = \"/etc/sluice/keyring.json\"\n\n{queues}"),
    )
    .unwrap();
    let (_, doc) = doctor("http://127.0.0.1:1", &["--config", with.to_str().unwrap()]).await;
    assert_eq!(
        sse_findings(&doc),
        [finding("sse-aws-managed-key", "warning", "events-target")],
        "{doc}"
    );
    let skips = skipped(&doc);
    assert!(!skips.contains(&"sse-unsealed".to_string()), "{doc}");
    assert!(skips.contains(&"sse-key-missing".to_string()), "{doc}");
}
