//! `sluice backup` against the real binary (rules D7, D8): a backup taken
//! while a sender goes on restores every message acknowledged before it
//! began; a kill -9 in the middle of one leaves nothing that passes for a
//! backup; backups go only under the server's `--backup-dir`.

use std::collections::{BTreeSet, HashSet};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;

use crate::common::SluiceProcess;

/// A batch's ids and when it was acknowledged.
type Acked = (Instant, Vec<String>);

fn sluice(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .output()
        .expect("run sluice")
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Sends `count` messages in batches of 10; returns their ids.
async fn send(sqs: &aws_sdk_sqs::Client, url: &str, from: usize, count: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for start in (from..from + count).step_by(10) {
        let mut batch = sqs.send_message_batch().queue_url(url);
        for n in start..(start + 10).min(from + count) {
            batch = batch.entries(
                SendMessageBatchRequestEntry::builder()
                    .id(format!("m{n}"))
                    .message_body(format!("message {n} {}", "x".repeat(300)))
                    .build()
                    .unwrap(),
            );
        }
        let out = batch.send().await.expect("send");
        assert!(out.failed().is_empty(), "{:?}", out.failed());
        ids.extend(out.successful().iter().map(|s| s.message_id().to_string()));
    }
    ids
}

/// Every message id in the queue, received once each (and never twice).
async fn drain(sqs: &aws_sdk_sqs::Client, url: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    loop {
        let got = sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .visibility_timeout(600)
            .send()
            .await
            .expect("receive");
        let messages = got.messages();
        if messages.is_empty() {
            return ids;
        }
        for m in messages {
            assert!(
                ids.insert(m.message_id().unwrap().to_string()),
                "delivered twice"
            );
        }
    }
}

/// D7: `sluice backup` while a sender keeps sending; a second server
/// started on the backup has every message acknowledged before the backup
/// began, and nothing that was never sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d7_a_backup_under_load_restores_everything_acknowledged_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let root = dir.path().join("backups");
    let backup = root.join("backup");
    let server = SluiceProcess::start(&[
        "--data-dir",
        data.to_str().unwrap(),
        "--checkpoint-interval-ms",
        "20",
        "--backup-dir",
        root.to_str().unwrap(),
    ]);
    let sqs = server.sdk();
    let url = crate::common::create_queue(&sqs, "orders").await;
    let mut before: BTreeSet<String> = send(&sqs, &url, 0, 1000).await.into_iter().collect();

    // The sender records each batch's ids with the moment it was acknowledged.
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<Mutex<Vec<Acked>>> = Arc::default();
    let sender = {
        let (sqs, url, stop, acked) = (sqs.clone(), url.clone(), stop.clone(), acked.clone());
        tokio::spawn(async move {
            let mut n = 1000;
            while !stop.load(Ordering::Relaxed) {
                let ids = send(&sqs, &url, n, 10).await;
                acked.lock().unwrap().push((Instant::now(), ids));
                n += 10;
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let began = Instant::now();
    let out = {
        let endpoint = server.endpoint.clone();
        tokio::task::spawn_blocking(move || sluice(&["backup", "--endpoint", &endpoint, "backup"]))
            .await
            .unwrap()
    };
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("backup complete"),
        "{}",
        text(&out)
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, Ordering::Relaxed);
    sender.await.unwrap();
    let all: HashSet<String> = before
        .iter()
        .cloned()
        .chain(
            acked
                .lock()
                .unwrap()
                .iter()
                .flat_map(|(_, ids)| ids.clone()),
        )
        .collect();
    for (at, ids) in acked.lock().unwrap().iter() {
        if *at < began {
            before.extend(ids.iter().cloned());
        }
    }
    assert!(before.len() > 1000, "the sender ran before the backup");
    assert!(!backup.join("BACKUP-INCOMPLETE").exists());
    assert!(!root.join(".backup.partial").exists());
    // The source goes on; the backup is served by a server of its own.
    server.terminate();

    let restored = SluiceProcess::start(&["--data-dir", backup.to_str().unwrap()]);
    let sqs = restored.sdk();
    let url = sqs
        .get_queue_url()
        .queue_name("orders")
        .send()
        .await
        .expect("the queue is in the backup")
        .queue_url
        .unwrap();
    let got = drain(&sqs, &url).await;
    let missing: Vec<&String> = before.iter().filter(|id| !got.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged before the backup are missing",
        missing.len(),
        before.len()
    );
    assert!(got.iter().all(|id| all.contains(id)), "only messages sent");
}

/// D7: a kill -9 of the server in the middle of a backup leaves no
/// directory under the backup's name; what it left is marked unfinished,
/// and a server refuses to start on it. The source restarts with all its
/// messages, and the next backup to that name succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
// The pause that lets the kill land inside the copy is a hook of debug
// builds only.
#[cfg_attr(
    not(debug_assertions),
    ignore = "needs the debug binary's backup pause hook"
)]
async fn d7_a_backup_killed_midway_is_not_taken_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let root = dir.path().join("nightly");
    let backup = root.join("backup");
    let partial = root.join(".backup.partial");
    let data_arg = data.to_str().unwrap();
    let root_arg = root.to_str().unwrap();
    // The test hook pauses the copy after each step, so the kill lands
    // inside it.
    let server = SluiceProcess::start_with_env(
        &["--data-dir", data_arg, "--backup-dir", root_arg],
        &[("SLUICE_BACKUP_TEST_PAUSE_MS", "2000")],
    );
    let sqs = server.sdk();
    let url = crate::common::create_queue(&sqs, "orders").await;
    let sent: HashSet<String> = send(&sqs, &url, 0, 300).await.into_iter().collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["backup", "--endpoint", &server.endpoint, "backup"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !partial.join("sluice.redb").exists() {
        assert!(Instant::now() < deadline, "the backup never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill_9();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the backup cannot have finished");
    assert!(!backup.exists(), "no directory under the backup's name");
    assert!(partial.join("BACKUP-INCOMPLETE").exists());

    let refused = sluice(&[
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--data-dir",
        partial.to_str().unwrap(),
    ]);
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("unfinished backup"),
        "{}",
        text(&refused)
    );

    let server = SluiceProcess::start(&["--data-dir", data_arg, "--backup-dir", root_arg]);
    let sqs = server.sdk();
    let out = {
        let endpoint = server.endpoint.clone();
        tokio::task::spawn_blocking(move || {
            sluice(&["backup", "--endpoint", &endpoint, "--json", "backup"])
        })
        .await
        .unwrap()
    };
    assert!(out.status.success(), "{}", text(&out));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let canonical = std::fs::canonicalize(&root).unwrap().join("backup");
    assert_eq!(answer["Directory"], canonical.to_str().unwrap());
    assert!(!partial.exists(), "the unfinished one was replaced");
    assert_eq!(drain(&sqs, &url).await, sent, "the source restarted whole");
    server.terminate();
    assert!(backup.join("sluice.redb").is_file());
    assert!(backup.join("log").is_dir());
}

/// D7: an in-memory server refuses a backup, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d7_an_in_memory_server_refuses_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let server =
        SluiceProcess::start(&["--in-memory", "--backup-dir", dir.path().to_str().unwrap()]);
    let target = dir.path().join("b");
    let out = sluice(&["backup", "--endpoint", &server.endpoint, "b"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("UnsupportedOperation"), "{}", text(&out));
    assert!(stderr.contains("in memory"), "{}", text(&out));
    assert!(!target.exists());
}

/// D8: a server started without a backup directory refuses every backup,
/// saying how to allow them, and writes nothing (the path asked for is
/// one it could write).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d8_without_a_backup_directory_backups_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = SluiceProcess::start(&["--data-dir", data.to_str().unwrap()]);
    let target = dir.path().join("b");
    let out = sluice(&[
        "backup",
        "--endpoint",
        &server.endpoint,
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("UnsupportedOperation"), "{}", text(&out));
    assert!(stderr.contains("--backup-dir"), "{}", text(&out));
    assert!(stderr.contains("backup_dir"), "{}", text(&out));
    assert!(!target.exists());
    assert!(!dir.path().join(".b.partial").exists());
}

/// D8: paths that leave the backup directory are refused with
/// InvalidParameterValue and write nothing: an absolute path elsewhere,
/// `..`, and a symbolic link inside the directory pointing out of it.
/// A name inside it, absolute or relative to it, is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d8_backups_outside_the_backup_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let root = dir.path().join("backups");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let server = SluiceProcess::start(&[
        "--data-dir",
        data.to_str().unwrap(),
        "--backup-dir",
        root.to_str().unwrap(),
    ]);
    #[cfg(unix)]
    std::os::unix::fs::symlink(&elsewhere, root.join("link")).unwrap();
    let outside = elsewhere.join("b");
    let mut refused = vec![
        outside.to_str().unwrap().to_string(),
        "../elsewhere/b".to_string(),
        "../data/b".to_string(),
    ];
    if cfg!(unix) {
        refused.push("link/b".to_string());
    }
    for name in &refused {
        let out = sluice(&["backup", "--endpoint", &server.endpoint, name]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("InvalidParameterValue"),
            "{name}: {}",
            text(&out)
        );
    }
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written outside"
    );
    assert!(!data.join("b").exists() && !data.join(".b.partial").exists());

    // Inside: absolute, and relative to the backup directory.
    let absolute = root.join("first");
    let out = sluice(&[
        "backup",
        "--endpoint",
        &server.endpoint,
        absolute.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    std::fs::create_dir(root.join("nightly")).unwrap();
    let out = sluice(&["backup", "--endpoint", &server.endpoint, "nightly/second"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(absolute.join("sluice.redb").is_file());
    assert!(root.join("nightly/second/sluice.redb").is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&absolute).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "a backup is private to the server's user");
    }
}
