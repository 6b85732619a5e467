//! Encryption at rest on `/metrics`, through the real binary: whether the
//! server seals, the data keys it made, and the keyring key each queue
//! seals with, by name; the keys' material never appears.

use std::path::{Path, PathBuf};
use std::process::Command;

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use base64::Engine as _;

use crate::common::SluiceProcess;

fn keys(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .arg("keys")
        .args(args)
        .output()
        .expect("run sluice keys");
    assert!(
        out.status.success(),
        "sluice keys {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A keyring file holding `names`, the last one active, in `dir`.
pub fn keyring(dir: &Path, names: &[&str]) -> PathBuf {
    let path = dir.join("keyring.json");
    let file = path.to_str().expect("path");
    keys(&["new", "--file", file, "--name", names[0]]);
    for name in &names[1..] {
        keys(&["rotate", "--file", file, "--name", name]);
    }
    path
}

/// The material of every key of a keyring file, as the file holds it
/// (base64) and as hex.
fn materials(keyring: &Path) -> Vec<String> {
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(keyring).expect("read keyring")).expect("JSON");
    let mut out = Vec::new();
    for k in file["keys"].as_array().expect("keys") {
        let b64 = k["material"].as_str().expect("material").to_string();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&b64)
            .expect("base64");
        out.push(bytes.iter().map(|b| format!("{b:02x}")).collect());
        out.push(b64);
    }
    assert!(out.len() >= 4, "{out:?}");
    out
}

/// The server's `/metrics` page.
pub async fn scrape(server: &SluiceProcess) -> String {
    let raw = server.raw();
    let page = tokio::task::spawn_blocking(move || raw.request("GET", "/metrics", &[], b""))
        .await
        .expect("join");
    assert_eq!(page.status, 200);
    page.body
}

/// The value of the sample line `series value`, if there is one.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.trim().parse().expect("a number"))
}

async fn create(sqs: &aws_sdk_sqs::Client, name: &str, attrs: &[(Attr, &str)]) -> String {
    let mut req = sqs.create_queue().queue_name(name);
    for (k, v) in attrs {
        req = req.attributes(k.clone(), *v);
    }
    req.send().await.expect("create").queue_url.expect("url")
}

async fn send(sqs: &aws_sdk_sqs::Client, url: &str) {
    sqs.send_message()
        .queue_url(url)
        .message_body("sealed")
        .send()
        .await
        .expect("send");
}

/// E4, M1: each queue with server-side encryption is listed with the name
/// of the key that seals it (the active one for SSE-SQS and
/// alias/aws/sqs, its own for a named key, none when the keyring lacks
/// it), data keys are counted as sends and a change of key make them, and
/// neither key's material is anywhere on the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e4_metrics_name_each_queues_key_and_never_its_material() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().join("data");
    metrics_name_each_queues_key(&dir, &["--data-dir", data.to_str().expect("path")]).await;
}

/// E4, M1: the same on a PostgreSQL node, whose queues' attributes are in
/// the database. Without PostgreSQL's binaries it says SKIPPED, and fails
/// instead with SLUICE_REQUIRE_POSTGRES=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e4_metrics_name_each_queues_key_on_postgres() {
    let Some(cluster) = sluice_postgres::testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let dir = tempfile::tempdir().expect("dir");
    metrics_name_each_queues_key(&dir, &["--postgres", &url]).await;
}

async fn metrics_name_each_queues_key(dir: &tempfile::TempDir, storage: &[&str]) {
    let keyring = keyring(dir.path(), &["k0", "k1"]);
    let mut args = storage.to_vec();
    args.extend(["--encryption-key-file", keyring.to_str().expect("path")]);
    let server = SluiceProcess::start(&args);
    let sqs = server.sdk();
    let follows = create(&sqs, "follows", &[]).await;
    let pinned = create(&sqs, "pinned", &[(Attr::KmsMasterKeyId, "alias/k0")]).await;
    create(&sqs, "managed", &[(Attr::KmsMasterKeyId, "alias/aws/sqs")]).await;
    create(
        &sqs,
        "orphan",
        &[(Attr::KmsMasterKeyId, "alias/not-in-the-keyring")],
    )
    .await;
    create(&sqs, "clear", &[(Attr::SqsManagedSseEnabled, "false")]).await;

    let text = scrape(&server).await;
    assert_eq!(value(&text, "sluice_encryption_at_rest"), Some(1.0));
    assert_eq!(value(&text, "sluice_data_keys_generated_total"), Some(0.0));
    let key =
        |q: &str, k: &str| format!("sluice_queue_encryption_key{{queue=\"{q}\",key=\"{k}\"}}");
    let missing = |q: &str| format!("sluice_queue_encryption_key_missing{{queue=\"{q}\"}}");
    for (q, k) in [("follows", "k1"), ("pinned", "k0"), ("managed", "k1")] {
        assert_eq!(value(&text, &key(q, k)), Some(1.0), "{q}: {text}");
        assert_eq!(value(&text, &missing(q)), Some(0.0), "{q}: {text}");
    }
    assert_eq!(value(&text, &missing("orphan")), Some(1.0), "{text}");
    assert!(!text.contains("queue=\"orphan\",key="), "{text}");
    assert_eq!(value(&text, &missing("clear")), None, "{text}");
    assert!(
        !text.contains("sluice_queue_encryption_key{queue=\"clear\""),
        "{text}"
    );

    send(&sqs, &follows).await;
    send(&sqs, &pinned).await;
    send(&sqs, &pinned).await;
    let text = scrape(&server).await;
    assert_eq!(value(&text, "sluice_data_keys_generated_total"), Some(2.0));
    // A new key for the queue: a new data key, and the new name.
    sqs.set_queue_attributes()
        .queue_url(&pinned)
        .attributes(Attr::KmsMasterKeyId, "k1")
        .send()
        .await
        .expect("set key");
    send(&sqs, &pinned).await;
    let text = scrape(&server).await;
    assert_eq!(value(&text, "sluice_data_keys_generated_total"), Some(3.0));
    assert_eq!(value(&text, &key("pinned", "k1")), Some(1.0), "{text}");
    assert_eq!(value(&text, &key("pinned", "k0")), None, "{text}");
    for m in materials(&keyring) {
        assert!(!text.contains(&m), "key material on /metrics");
    }
}

/// M1: a server without a keyring says it does not seal, made no data
/// key, and lists no queue's key, even for a queue that asks for
/// encryption.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_without_a_keyring_nothing_is_sealed() {
    let dir = tempfile::tempdir().expect("dir");
    let server = SluiceProcess::start(&["--data-dir", dir.path().to_str().expect("path")]);
    let sqs = server.sdk();
    let url = create(&sqs, "asks", &[(Attr::SqsManagedSseEnabled, "true")]).await;
    send(&sqs, &url).await;
    let text = scrape(&server).await;
    assert_eq!(value(&text, "sluice_encryption_at_rest"), Some(0.0));
    assert_eq!(value(&text, "sluice_data_keys_generated_total"), Some(0.0));
    assert!(!text.contains("sluice_queue_encryption_key{"), "{text}");
    assert!(
        !text.contains("sluice_queue_encryption_key_missing{"),
        "{text}"
    );
}
