//! Crashes around the write-ahead log (rule D1): what a send or a delete
//! acknowledged survives a kill at any point, nothing is replayed twice,
//! and a torn or garbage tail of the log is the normal end of it.
//!
//! A crash is a child process (this test binary, re-run on one test) that
//! exits without closing anything, or is killed with SIGKILL.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, CreateQueue, MessageFilter, NewMessage, ReceiveOptions};
use sluice_core::ManualClock;
use sluice_core::SystemClock;
use sluice_core::attributes::QueueConfig;
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions, RecoveryStats, newest_log_segment};

const CHILD_MODE: &str = "SLUICE_WAL_CRASH_MODE";
const CHILD_DIR: &str = "SLUICE_WAL_CRASH_DIR";
const CHILD_SEED: &str = "SLUICE_WAL_CRASH_SEED";

/// Batches the `batches` child sends before it exits.
const BATCHES: usize = 5;

fn open(dir: &Path, checkpoint_interval: Duration, body_cache_bytes: usize) -> EmbeddedBroker {
    open_reporting(dir, checkpoint_interval, body_cache_bytes).0
}

/// [`open`], with what recovery found.
fn open_reporting(
    dir: &Path,
    checkpoint_interval: Duration,
    body_cache_bytes: usize,
) -> (EmbeddedBroker, RecoveryStats) {
    let options = EmbeddedOptions {
        checkpoint_interval,
        body_cache_bytes,
        ..Default::default()
    };
    EmbeddedBroker::open_with(dir, Arc::new(SystemClock), options).expect("open")
}

async fn create(b: &EmbeddedBroker, name: &str) {
    let requested = BTreeMap::new();
    b.create_queue(CreateQueue {
        name: name.into(),
        config: QueueConfig::for_create(name, &requested).unwrap(),
        requested,
        tags: BTreeMap::new(),
    })
    .await
    .unwrap();
}

fn bodies(prefix: &str, n: usize) -> Vec<NewMessage> {
    (0..n)
        .map(|j| NewMessage {
            body: format!("{prefix}-{j}"),
            ..Default::default()
        })
        .collect()
}

/// Every body in queue `q`, in queue order.
async fn stored(b: &EmbeddedBroker) -> Vec<String> {
    let mut out = Vec::new();
    let mut after = None;
    loop {
        let page = b
            .peek_messages("q", &MessageFilter::default(), after, 1000)
            .await
            .unwrap();
        out.extend(page.messages.into_iter().map(|m| m.body));
        match page.next {
            Some(next) => after = Some(next),
            None => return out,
        }
    }
}

/// Runs this binary's `crash_child` test in a child process.
fn child(mode: &str, dir: &Path, seed: u64) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_MODE, mode)
        .env(CHILD_DIR, dir)
        .env(CHILD_SEED, seed.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The lines the child printed after an acknowledgement ("acked ...").
fn acked_lines(output: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(output)
        .lines()
        .filter_map(|l| l.strip_prefix("acked ").map(str::to_string))
        .collect()
}

/// Where the log's records end: its format is an 8-byte magic, then
/// records of a 16-byte header (checksum, payload length, LSN) and the
/// payload.
fn records_end(log: &[u8]) -> u64 {
    let mut at = 8;
    while at + 16 <= log.len() && log[at..at + 16] != [0; 16] {
        let len = u32::from_le_bytes(log[at + 4..at + 8].try_into().unwrap()) as usize;
        at += 16 + len;
    }
    at as u64
}

/// Sends BATCHES batches of 10 and exits without closing anything: no
/// checkpoint ever ran, so only the log holds them.
fn run_batches(dir: &Path) -> Vec<String> {
    let out = child("batches", dir, 0).wait_with_output().unwrap();
    assert!(out.status.success());
    let acked = acked_lines(&out.stdout);
    assert_eq!(acked.len(), BATCHES);
    acked
}

/// The child side; does nothing unless run by [`child`].
#[test]
fn crash_child() {
    let Ok(mode) = std::env::var(CHILD_MODE) else {
        return;
    };
    let dir = std::path::PathBuf::from(std::env::var(CHILD_DIR).unwrap());
    let seed: u64 = std::env::var(CHILD_SEED).unwrap().parse().unwrap();
    // Ends libtest's "test crash_child ... " line, so every line the
    // parent reads is one of ours.
    println!();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        match mode.as_str() {
            "batches" => {
                let b = open(&dir, Duration::from_secs(3600), 64 << 20);
                create(&b, "q").await;
                for i in 0..BATCHES {
                    b.send_messages("q", bodies(&format!("b{i}"), 10))
                        .await
                        .unwrap();
                    println!("acked b{i}");
                }
                std::io::stdout().flush().unwrap();
                // A crash: no destructor runs, redb is never closed.
                std::process::exit(0);
            }
            "random" => random_child(&dir, seed).await,
            other => panic!("unknown mode {other}"),
        }
    });
}

/// D1: changes acknowledged but not checkpointed are in the log only; a
/// restart replays them, and a restart after a clean stop replays nothing.
#[tokio::test]
async fn d1_acknowledged_changes_in_the_log_are_replayed_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    run_batches(dir.path());
    let (b, stats) = EmbeddedBroker::open(dir.path(), Arc::new(ManualClock::default())).unwrap();
    // The queue's creation and each batch: one record each.
    assert_eq!(stats.log_records, 1 + BATCHES);
    // The store's last durable commit saved redb's allocator state, so
    // the crash did not cost a walk of the whole file.
    assert!(!stats.store_repaired);
    assert_eq!((stats.queues, stats.messages), (1, BATCHES * 10));
    let mut got = stored(&b).await;
    got.sort();
    let mut want: Vec<String> = (0..BATCHES)
        .flat_map(|i| (0..10).map(move |j| format!("b{i}-{j}")))
        .collect();
    want.sort();
    assert_eq!(got, want);
    drop(b);
    // Replay checkpointed them: nothing is applied twice.
    let (b, stats) = EmbeddedBroker::open(dir.path(), Arc::new(ManualClock::default())).unwrap();
    assert_eq!(stats.log_records, 0);
    assert_eq!(stored(&b).await.len(), BATCHES * 10);
}

/// D1: a record torn by the crash (never synced, never acknowledged) ends
/// the log; every record before it is replayed.
#[tokio::test]
async fn d1_a_torn_tail_record_ends_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    run_batches(dir.path());
    let log = newest_log_segment(dir.path()).unwrap().unwrap();
    let end = records_end(&std::fs::read(&log).unwrap());
    let file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    file.set_len(end - 3).unwrap();
    drop(file);
    let (b, stats) = EmbeddedBroker::open(dir.path(), Arc::new(ManualClock::default())).unwrap();
    assert_eq!(stats.log_records, BATCHES);
    let got = stored(&b).await;
    assert_eq!(got.len(), (BATCHES - 1) * 10);
    let last = format!("b{}-", BATCHES - 1);
    assert!(got.iter().all(|body| !body.starts_with(&last)));
}

/// D1: garbage after the last record is not an error and not replayed.
#[tokio::test]
async fn d1_garbage_after_the_log_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    run_batches(dir.path());
    let log = newest_log_segment(dir.path()).unwrap().unwrap();
    let mut bytes = std::fs::read(&log).unwrap();
    let end = records_end(&bytes) as usize;
    bytes.truncate(end);
    bytes.extend((0..300u32).map(|i| (i * 7919 % 253) as u8));
    std::fs::write(&log, &bytes).unwrap();
    let (b, stats) = EmbeddedBroker::open(dir.path(), Arc::new(ManualClock::default())).unwrap();
    assert_eq!(stats.log_records, 1 + BATCHES);
    assert_eq!(stored(&b).await.len(), BATCHES * 10);
}

/// Bodies applied to redb without durability (not checkpointed yet) are
/// readable at once, with no body cache to answer from.
#[tokio::test]
async fn bodies_not_yet_checkpointed_are_readable() {
    let dir = tempfile::tempdir().unwrap();
    let b = open(dir.path(), Duration::from_secs(3600), 0);
    create(&b, "q").await;
    b.send_messages("q", bodies("m", 20)).await.unwrap();
    assert_eq!(b.cached_body_bytes(), 0);
    let mut got = stored(&b).await;
    got.sort();
    let mut want: Vec<String> = (0..20).map(|j| format!("m-{j}")).collect();
    want.sort();
    assert_eq!(got, want);
    let received = b
        .receive_messages(
            "q",
            ReceiveOptions {
                max_messages: 10,
                visibility_timeout: Some(30),
                wait: Duration::ZERO,
                attempt_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(received.len(), 10);
    assert!(received.iter().all(|m| m.body.starts_with("m-")));
}

/// A small deterministic generator for the random child.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Sends and deletes at random, checkpointing every 2 ms so that kills
/// land before, during and after checkpoints and log rewinds. Prints
/// "trying <bodies>" before a send, "deleting <bodies>" before a delete,
/// "acked sent <bodies>" and "acked deleted <bodies>" after an
/// acknowledgement.
async fn random_child(dir: &Path, seed: u64) {
    let b = open(dir, Duration::from_millis(2), 64 << 20);
    if b.get_queue("q").await.is_err() {
        create(&b, "q").await;
    }
    let mut rng = XorShift(seed | 1);
    let mut out = std::io::stdout();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    for i in 0.. {
        if rng.below(3) > 0 {
            let n = 1 + rng.below(10) as usize;
            let batch = bodies(&format!("s{seed}-{i}"), n);
            let names: Vec<&str> = batch.iter().map(|m| m.body.as_str()).collect();
            writeln!(out, "trying {}", names.join(" ")).unwrap();
            out.flush().unwrap();
            let names = names.join(" ");
            b.send_messages("q", batch).await.unwrap();
            writeln!(out, "acked sent {names}").unwrap();
        } else {
            let got = b
                .receive_messages(
                    "q",
                    ReceiveOptions {
                        max_messages: 10,
                        visibility_timeout: Some(600),
                        wait: Duration::ZERO,
                        attempt_id: None,
                    },
                )
                .await
                .unwrap();
            let chosen: Vec<_> = got.into_iter().filter(|_| rng.below(2) == 0).collect();
            let names: Vec<&str> = chosen.iter().map(|m| m.body.as_str()).collect();
            writeln!(out, "deleting {}", names.join(" ")).unwrap();
            out.flush().unwrap();
            let handles = chosen.iter().map(|m| m.receipt_handle.clone()).collect();
            let results = b.delete_messages("q", handles).await.unwrap();
            let deleted: Vec<&str> = chosen
                .iter()
                .zip(results)
                .filter(|(_, r)| r.is_ok())
                .map(|(m, _)| m.body.as_str())
                .collect();
            writeln!(out, "acked deleted {}", deleted.join(" ")).unwrap();
        }
        out.flush().unwrap();
    }
}

/// D1, reference model: a child sends and deletes at random and is killed
/// with SIGKILL at a random moment, six times over on one data directory.
/// After each kill the store holds every acknowledged send nobody tried to
/// delete, no message whose delete was acknowledged, and nothing never sent.
#[tokio::test]
async fn d1_kill_9_at_random_points_loses_no_acknowledged_change() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut tried = BTreeSet::new();
    let mut sent = BTreeSet::new();
    let mut deleted = BTreeSet::new();
    let mut deleting = BTreeSet::new();
    for round in 0..6u64 {
        let seed = base.wrapping_add(round.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1;
        let mut rng = XorShift(seed);
        let mut proc = child("random", dir.path(), seed);
        let stdout = proc.stdout.take().unwrap();
        // Wait until the child is working, then kill it a while later.
        let mut lines = BufReader::new(stdout).lines();
        for line in lines.by_ref() {
            if line.unwrap() == "ready" {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20 + rng.below(200)));
        proc.kill().unwrap();
        proc.wait().unwrap();
        for line in lines.map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("trying ") {
                tried.extend(rest.split(' ').map(str::to_string));
            } else if let Some(rest) = line.strip_prefix("deleting ") {
                deleting.extend(
                    rest.split(' ')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                );
            } else if let Some(rest) = line.strip_prefix("acked sent ") {
                sent.extend(rest.split(' ').map(str::to_string));
            } else if let Some(rest) = line.strip_prefix("acked deleted ") {
                deleted.extend(
                    rest.split(' ')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                );
            }
        }
        let (b, stats) = open_reporting(dir.path(), Duration::from_secs(1), 64 << 20);
        // Killed mid-checkpoint or not, every durable commit saved redb's
        // allocator state: no restart walks the whole file.
        assert!(!stats.store_repaired, "round {round} (seed {seed})");
        let present: BTreeSet<String> = stored(&b).await.into_iter().collect();
        drop(b);
        eprintln!(
            "round {round}: {} sends and {} deletes acknowledged so far, {} stored",
            sent.len(),
            deleted.len(),
            present.len()
        );
        for body in &sent {
            // A delete not acknowledged may or may not have happened.
            assert!(
                deleting.contains(body) || present.contains(body),
                "round {round} (seed {seed}): acknowledged send {body} lost"
            );
        }
        for body in &present {
            assert!(
                !deleted.contains(body),
                "round {round} (seed {seed}): acknowledged delete of {body} undone"
            );
            assert!(
                tried.contains(body),
                "round {round} (seed {seed}): {body} never sent"
            );
        }
    }
    assert!(!sent.is_empty(), "the children acknowledged something");
}
