//! Encryption at rest through the real binary (rules E1–E5): `sluice keys`
//! makes the keyring, `sluice serve --encryption-key-file` seals what SSE
//! queues store, and restarts, kill -9 and key rotations lose nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName as Attr;

use crate::common::{SluiceProcess, code};

const MARKER: &str = "IBAN-DE44500105175407324931-marker";

fn sluice(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .output()
        .expect("run sluice")
}

fn keys(args: &[&str]) {
    let out = sluice(&[&["keys"], args].concat());
    assert!(
        out.status.success(),
        "sluice keys {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

struct Dirs {
    _tmp: tempfile::TempDir,
    data: PathBuf,
    keyring: PathBuf,
    /// The database of a `--postgres` node; the data directory otherwise.
    postgres: Option<String>,
}

impl Dirs {
    fn new() -> Self {
        let tmp = tempfile::tempdir().expect("dir");
        let keyring = tmp.path().join("keyring.json");
        keys(&[
            "new",
            "--file",
            keyring.to_str().expect("path"),
            "--name",
            "k0",
        ]);
        Self {
            data: tmp.path().join("data"),
            keyring,
            _tmp: tmp,
            postgres: None,
        }
    }

    fn on_postgres(url: String) -> Self {
        Self {
            postgres: Some(url),
            ..Self::new()
        }
    }

    fn args(&self) -> Vec<&str> {
        let storage = match &self.postgres {
            Some(url) => ["--postgres", url.as_str()],
            None => ["--data-dir", self.data.to_str().expect("path")],
        };
        let mut args = storage.to_vec();
        args.extend([
            "--encryption-key-file",
            self.keyring.to_str().expect("path"),
        ]);
        args
    }

    fn start(&self) -> SluiceProcess {
        SluiceProcess::start(&self.args())
    }
}

/// Whether any file under `dir` holds `needle`, as `grep -r` would say.
fn on_disk(dir: &Path, needle: &str) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
            {
                return true;
            }
        }
    }
    false
}

async fn bodies(sqs: &aws_sdk_sqs::Client, url: &str) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        let got = sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .visibility_timeout(30)
            .send()
            .await
            .expect("receive");
        let messages = got.messages();
        if messages.is_empty() {
            break;
        }
        out.extend(messages.iter().filter_map(|m| m.body().map(str::to_string)));
    }
    out.sort();
    out
}

/// E1, E2: over plain HTTP, a queue created without attributes on a server
/// with a keyring says SqsManagedSseEnabled=true, and what it stores (sent
/// through the SDK's JSON protocol and through the Query protocol) is
/// nowhere in the data directory, before and after a kill -9, while
/// receives return it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e1_a_marker_sent_to_an_encrypted_queue_is_not_on_disk() {
    let dirs = Dirs::new();
    let server = dirs.start();
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("payments")
        .send()
        .await
        .expect("create")
        .queue_url
        .expect("url");
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::SqsManagedSseEnabled)
        .send()
        .await
        .expect("attributes");
    assert_eq!(
        attrs.attributes().expect("attributes")[&Attr::SqsManagedSseEnabled],
        "true"
    );
    sqs.send_message()
        .queue_url(&url)
        .message_body(format!("{MARKER} json"))
        .send()
        .await
        .expect("send");
    let query = server.raw().query(
        "/000000000000/payments",
        &[
            ("Action", "SendMessage"),
            ("MessageBody", &format!("{MARKER} query")),
        ],
    );
    assert_eq!(query.status, 200, "{}", query.body);
    assert!(
        !on_disk(&dirs.data, MARKER),
        "plaintext in the data directory"
    );
    server.kill_9();

    let server = dirs.start();
    let sqs = server.sdk();
    assert_eq!(
        bodies(&sqs, &url).await,
        vec![format!("{MARKER} json"), format!("{MARKER} query")]
    );
    assert!(!on_disk(&dirs.data, MARKER), "plaintext after the replay");
}

/// E3: a queue whose KmsMasterKeyId names no key of the keyring refuses
/// sends with SQS's KMS.NotFoundException, in both protocols (the code is
/// SQS's Smithy model's awsQueryError for KmsNotFound).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e3_an_unknown_kms_key_is_kms_not_found_in_both_protocols() {
    let dirs = Dirs::new();
    let server = dirs.start();
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("orphan")
        .attributes(Attr::KmsMasterKeyId, "alias/not-in-the-keyring")
        .send()
        .await
        .expect("create")
        .queue_url
        .expect("url");
    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .send()
        .await
        .expect_err("refused");
    assert_eq!(code(&e), "KMS.NotFoundException");
    let query = server.raw().query(
        "/000000000000/orphan",
        &[("Action", "SendMessage"), ("MessageBody", "x")],
    );
    assert_eq!(query.status, 400);
    assert_eq!(query.xml("Code").as_deref(), Some("KMS.NotFoundException"));
    let json = server.raw().json(
        "SendMessage",
        &format!(r#"{{"QueueUrl":"{url}","MessageBody":"x"}}"#),
    );
    assert_eq!(json.status, 400);
    assert!(json.body.contains("KmsNotFound"), "{}", json.body);
    assert!(bodies(&sqs, &url).await.is_empty());
}

/// E5: a start on encrypted data without the key that wraps it is refused,
/// naming the key; nothing is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_a_start_with_the_key_removed_is_refused_naming_it() {
    let dirs = Dirs::new();
    let server = dirs.start();
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("q")
        .send()
        .await
        .expect("create")
        .queue_url
        .expect("url");
    sqs.send_message()
        .queue_url(&url)
        .message_body(MARKER)
        .send()
        .await
        .expect("send");
    server.terminate();
    let other = dirs._tmp.path().join("other.json");
    keys(&[
        "new",
        "--file",
        other.to_str().expect("path"),
        "--name",
        "other",
    ]);
    let out = sluice(&[
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--data-dir",
        dirs.data.to_str().expect("path"),
        "--encryption-key-file",
        other.to_str().expect("path"),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"k0\""), "{stderr}");
}

/// E5: `sluice keys rotate` then SIGHUP re-wraps the data keys of the
/// server's key while serving, durably before the reload is reported: the
/// old key can then be retired (and its retirement reloaded too) without a
/// restart, and after a kill -9 and a start every message still reads. A
/// keyring that lacks a key stored data needs is refused by the reload,
/// which changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_a_rotation_reloaded_by_sighup_rewraps_while_serving() {
    rotation_reloaded_by_sighup(Dirs::new()).await;
}

/// E5: the same with a PostgreSQL node. Without PostgreSQL's binaries it
/// says SKIPPED, and fails instead with SLUICE_REQUIRE_POSTGRES=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_a_rotation_reloaded_by_sighup_rewraps_on_postgres() {
    let Some(cluster) = sluice_postgres::testing::cluster() else {
        return;
    };
    rotation_reloaded_by_sighup(Dirs::on_postgres(cluster.fresh_database().await)).await;
}

async fn rotation_reloaded_by_sighup(dirs: Dirs) {
    const RELOADED: &str = "reloaded the encryption keyring";
    let log = dirs.keyring.with_file_name("serve.log");
    let server = SluiceProcess::start_logging(&dirs.args(), &log);
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("rotated")
        .send()
        .await
        .expect("create")
        .queue_url
        .expect("url");
    let send = |n: u32| {
        sqs.send_message()
            .queue_url(&url)
            .message_body(format!("{MARKER} {n:02}"))
            .send()
    };
    for n in 0..10 {
        send(n).await.expect("send under k0");
    }
    let keyring = dirs.keyring.to_str().expect("path");
    keys(&["rotate", "--file", keyring, "--name", "k1"]);
    server.hang_up(&log, RELOADED);
    assert!(
        std::fs::read_to_string(&log)
            .expect("log")
            .contains("rewrapped=1"),
        "the queue's one data key follows the new active key"
    );
    for n in 10..20 {
        send(n).await.expect("send under k1");
    }

    // A keyring without k1 (which wraps the data keys now) is refused.
    let kept = std::fs::read(&dirs.keyring).expect("keyring");
    let stranger = dirs.keyring.with_file_name("stranger.json");
    let stranger_path = stranger.to_str().expect("path");
    keys(&["new", "--file", stranger_path, "--name", "other"]);
    std::fs::copy(&stranger, &dirs.keyring).expect("swap keyring");
    server.hang_up(&log, "the new keyring is not put in use");
    send(20).await.expect("the keyring in use is kept");
    std::fs::write(&dirs.keyring, kept).expect("restore keyring");

    keys(&["retire", "--file", keyring, "k0"]);
    server.hang_up(&log, RELOADED);
    server.kill_9();
    let server = dirs.start();
    let got = bodies(&server.sdk(), &url).await;
    let want: Vec<String> = (0..21).map(|n| format!("{MARKER} {n:02}")).collect();
    assert_eq!(got, want, "every message reads with k0 retired");
    if dirs.postgres.is_none() {
        assert!(!on_disk(&dirs.data, MARKER));
    }
}

/// E5: kill -9 at any moment of the starts that re-wrap data keys after a
/// rotation loses no message and leaves none undecryptable: after five
/// rotations, each followed by a start killed early, and one full start,
/// the old keys are retired and every message still reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_kill_9_during_rotations_loses_nothing() {
    kill_9_during_rotations(Dirs::new()).await;
}

/// E5: the same with a PostgreSQL node, whose start re-wraps the data keys
/// in the database. Without PostgreSQL's binaries it says SKIPPED, and
/// fails instead with SLUICE_REQUIRE_POSTGRES=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_kill_9_during_rotations_on_postgres_loses_nothing() {
    let Some(cluster) = sluice_postgres::testing::cluster() else {
        return;
    };
    kill_9_during_rotations(Dirs::on_postgres(cluster.fresh_database().await)).await;
}

async fn kill_9_during_rotations(dirs: Dirs) {
    let server = dirs.start();
    let sqs = server.sdk();
    let mut urls = Vec::new();
    for name in ["a", "b", "c"] {
        let url = sqs
            .create_queue()
            .queue_name(name)
            .attributes(Attr::KmsDataKeyReusePeriodSeconds, "60")
            .send()
            .await
            .expect("create")
            .queue_url
            .expect("url");
        for n in 0..20 {
            sqs.send_message()
                .queue_url(&url)
                .message_body(format!("{MARKER} {name} {n:02}"))
                .send()
                .await
                .expect("send");
        }
        urls.push(url);
    }
    server.kill_9();
    let keyring = dirs.keyring.to_str().expect("path");
    for round in 1..=5 {
        keys(&["rotate", "--file", keyring, "--name", &format!("k{round}")]);
        let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(dirs.args())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start");
        // Killed somewhere in its start: before, during or after the
        // re-wrap of the data keys.
        tokio::time::sleep(Duration::from_millis(15 * round)).await;
        let _ = child.kill();
        let _ = child.wait();
    }
    // A full start re-wraps whatever the killed ones did not.
    dirs.start().terminate();
    for round in 0..5 {
        keys(&["retire", "--file", keyring, &format!("k{round}")]);
    }
    let server = dirs.start();
    let sqs = server.sdk();
    for (url, name) in urls.iter().zip(["a", "b", "c"]) {
        let got = bodies(&sqs, url).await;
        let want: Vec<String> = (0..20).map(|n| format!("{MARKER} {name} {n:02}")).collect();
        assert_eq!(got, want, "queue {name} after the old keys are retired");
    }
    if dirs.postgres.is_none() {
        assert!(!on_disk(&dirs.data, MARKER));
    }
}
