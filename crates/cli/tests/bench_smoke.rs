//! `sluice bench` through the real binary: against `sluice serve
//! --in-memory` (every message verified) and against the null server
//! (verification off, said so). Checks the tool's output, not its speed.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The most a bench run may take here: 2 s of load, the drain, slack for a
/// debug build on a busy machine.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The figures every JSON report carries.
const KEYS: &[&str] = &[
    "end_to_end_per_sec",
    "sent_per_sec",
    "received_per_sec",
    "deleted_per_sec",
    "send_p50_ms",
    "send_p99_ms",
    "receive_p50_ms",
    "receive_p99_ms",
    "lost",
    "duplicates",
    "message_size",
    "batch_size",
    "producers",
    "consumers",
    "verified",
];

/// A child process killed when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `sluice ARGS` and returns it with the URL of its first stdout
/// line, `PREFIX http://…`.
fn start(args: &[&str], prefix: &str) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start sluice");
    let stdout = child.stdout.take().expect("stdout");
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the listening line");
    let endpoint = line
        .trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_string();
    (server, endpoint)
}

/// Runs `sluice bench --endpoint ENDPOINT --json EXTRA` to completion and
/// returns its exit success and its JSON report.
fn bench(endpoint: &str, extra: &[&str]) -> (bool, Value) {
    let (ok, report) = bench_json(endpoint, extra);
    for key in KEYS {
        assert!(report.get(key).is_some(), "no {key} in {report}");
    }
    (ok, report)
}

/// Runs `sluice bench --json EXTRA` against `endpoint`: whether it
/// succeeded, and the JSON object it printed (null when it printed none).
fn bench_json(endpoint: &str, extra: &[&str]) -> (bool, Value) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["bench", "--endpoint", endpoint, "--json"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start sluice bench");
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for sluice bench") {
            break status;
        }
        if began.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            panic!("sluice bench ran past {RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().expect("bench output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.trim().is_empty() {
        return (status.success(), Value::Null);
    }
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {stdout}"));
    (status.success(), report)
}

fn count(report: &Value, key: &str) -> u64 {
    report[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a count in {report}"))
}

#[test]
fn bench_against_in_memory_sluice_loses_and_duplicates_nothing() {
    let (_server, endpoint) = start(
        &["serve", "--in-memory", "--bind", "127.0.0.1:0"],
        "sluice listening on ",
    );
    let (ok, report) = bench(&endpoint, &["--duration", "2"]);
    assert!(ok, "bench failed: {report}");
    assert_eq!(report["verified"], true, "{report}");
    assert_eq!(report["null_server"], false, "{report}");
    assert!(count(&report, "sent") > 0, "{report}");
    assert_eq!(count(&report, "lost"), 0, "{report}");
    assert_eq!(count(&report, "duplicates"), 0, "{report}");
    assert_eq!(
        count(&report, "end_to_end"),
        count(&report, "sent"),
        "everything sent is received and deleted: {report}"
    );
    assert!(report["end_to_end_per_sec"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(report["send_p50_ms"].as_f64().unwrap_or(0.0) > 0.0);
}

#[test]
fn bench_against_the_null_server_reports_figures_without_verification() {
    let (_server, endpoint) = start(
        &["bench", "--null-server", "--bind", "127.0.0.1:0"],
        "sluice null server listening on ",
    );
    let (ok, report) = bench(&endpoint, &["--duration", "2"]);
    assert!(ok, "bench failed: {report}");
    assert_eq!(report["null_server"], true, "{report}");
    assert_eq!(report["verified"], false, "{report}");
    assert!(
        report["verification"]
            .as_str()
            .is_some_and(|v| v.contains("null server")),
        "the report says why nothing was verified: {report}"
    );
    assert!(report["lost"].is_null() && report["duplicates"].is_null());
    assert!(count(&report, "sent") > 0, "{report}");
    assert!(count(&report, "deleted") > 0, "{report}");
    assert!(report["end_to_end_per_sec"].as_f64().unwrap_or(0.0) > 0.0);
}

#[test]
fn bench_counts_a_fixed_number_of_messages_through_fifo_queues() {
    let (_server, endpoint) = start(
        &["serve", "--in-memory", "--bind", "127.0.0.1:0"],
        "sluice listening on ",
    );
    let (ok, report) = bench(
        &endpoint,
        &[
            "--messages",
            "300",
            "--fifo",
            "--groups",
            "3",
            "--queues",
            "2",
        ],
    );
    assert!(ok, "bench failed: {report}");
    assert_eq!(count(&report, "sent"), 300, "{report}");
    assert_eq!(count(&report, "end_to_end"), 300, "{report}");
    assert_eq!(count(&report, "lost"), 0, "{report}");
    assert_eq!(count(&report, "duplicates"), 0, "{report}");
}

#[test]
fn wake_probes_time_each_long_poll_and_leave_the_queue_empty() {
    let (_server, endpoint) = start(
        &["serve", "--in-memory", "--bind", "127.0.0.1:0"],
        "sluice listening on ",
    );
    let (ok, report) = bench_json(&endpoint, &["--wake-probes", "5", "--queue", "wake"]);
    assert!(ok, "wake probes failed: {report}");
    assert_eq!(count(&report, "wake_probes"), 5, "{report}");
    assert_eq!(count(&report, "missed"), 0, "{report}");
    let p50 = report["wake_p50_ms"].as_f64().unwrap_or(0.0);
    let max = report["wake_max_ms"].as_f64().unwrap_or(0.0);
    assert!(p50 > 0.0 && p50 <= max, "{report}");
    // Each probe deleted its message: a second run starts on an empty
    // queue, so its receives return their own probe, never a leftover.
    // The sender may be another endpoint (another node); here the same one.
    let (ok, again) = bench_json(
        &endpoint,
        &[
            "--wake-probes",
            "3",
            "--queue",
            "wake",
            "--wake-send-endpoint",
            &endpoint,
        ],
    );
    assert!(ok, "{again}");
    assert_eq!(count(&again, "missed"), 0, "{again}");
}

#[test]
fn wake_probes_refuse_the_null_server() {
    let (_server, endpoint) = start(
        &["bench", "--null-server", "--bind", "127.0.0.1:0"],
        "sluice null server listening on ",
    );
    let (ok, report) = bench_json(&endpoint, &["--wake-probes", "2"]);
    assert!(
        !ok,
        "the null server answers receives at once: nothing to time"
    );
    assert!(report.is_null(), "no figures: {report}");
}

#[test]
fn sync_probe_times_the_disks_syncs_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().to_str().expect("utf-8 path");
    // No server: the endpoint is not used.
    let (ok, report) = bench_json("http://127.0.0.1:1", &["--sync-probe", path]);
    assert!(ok, "sync probe failed: {report}");
    assert_eq!(count(&report, "syncs"), 1000, "{report}");
    for series in ["busy", "quiet", "append"] {
        let ms = |q: &str| {
            report[format!("{series}_{q}_ms")]
                .as_f64()
                .unwrap_or_else(|| panic!("no {series}_{q}_ms in {report}"))
        };
        let (p50, p99, max) = (ms("p50"), ms("p99"), ms("max"));
        assert!(0.0 < max && p50 <= p99 && p99 <= max, "{series}: {report}");
    }
    assert!(
        report["busy_syncs_per_sec"].as_f64().unwrap_or(0.0) > 0.0,
        "{report}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).expect("list").collect();
    assert!(left.is_empty(), "the probe's file is removed: {left:?}");

    let gone = dir.path().join("missing");
    let (ok, report) = bench_json(
        "http://127.0.0.1:1",
        &["--sync-probe", gone.to_str().unwrap()],
    );
    assert!(!ok, "a directory that does not exist fails the probe");
    assert!(report.is_null(), "no figures: {report}");
}

/// N2: `--fanout` publishes to a topic over every queue of the run and
/// checks that each queue got every acknowledged publish; against the null
/// server (no SNS) it fails at its set-up instead of reporting figures.
#[test]
fn fanout_puts_every_publish_in_every_queue() {
    let (_server, endpoint) = start(
        &["serve", "--in-memory", "--bind", "127.0.0.1:0"],
        "sluice listening on ",
    );
    for (name, delivery) in [("raw", &["--raw-delivery"][..]), ("envelope", &[][..])] {
        let mut flags = vec![
            "--fanout",
            "--queue",
            name,
            "--queues",
            "3",
            "--messages",
            "40",
        ];
        flags.extend_from_slice(delivery);
        let (ok, report) = bench_json(&endpoint, &flags);
        assert!(ok, "bench failed: {report}");
        assert_eq!(count(&report, "published"), 40, "{report}");
        assert_eq!(count(&report, "failed"), 0, "{report}");
        assert_eq!(count(&report, "subscriptions"), 3, "{report}");
        assert_eq!(report["delivery"], name, "{report}");
    }
    let (_null, null_endpoint) = start(
        &["bench", "--null-server", "--bind", "127.0.0.1:0"],
        "sluice null server listening on ",
    );
    let (ok, _) = bench_json(&null_endpoint, &["--fanout", "--messages", "10"]);
    assert!(!ok, "the null server has no topics: the run must fail");
}

/// I1: `--idempotency` claims and completes a key per cycle, and every
/// tenth cycle of a producer finds a completed key's result; the counts
/// add up. Against
/// the null server (no idempotency keys) the run fails instead of
/// reporting figures.
#[test]
fn idempotency_claims_completes_and_replays_keys() {
    let (_server, endpoint) = start(
        &["serve", "--in-memory", "--bind", "127.0.0.1:0"],
        "sluice listening on ",
    );
    // One producer: every tenth of its cycles replays a key.
    let one = ["--idempotency", "--producers", "1", "--messages", "60"];
    let (ok, report) = bench_json(&endpoint, &one);
    assert!(ok, "bench failed: {report}");
    assert_eq!(count(&report, "claimed"), 60, "{report}");
    assert_eq!(count(&report, "replayed"), 6, "one in ten cycles: {report}");
    assert_eq!(count(&report, "failed"), 0, "{report}");
    // Several: the cycles are shared out, each key claimed once.
    let three = ["--idempotency", "--producers", "3", "--messages", "60"];
    let (ok, report) = bench_json(&endpoint, &three);
    assert!(ok, "bench failed: {report}");
    assert_eq!(count(&report, "claimed"), 60, "{report}");
    assert_eq!(count(&report, "failed"), 0, "{report}");
    let (_null, null_endpoint) = start(
        &["bench", "--null-server", "--bind", "127.0.0.1:0"],
        "sluice null server listening on ",
    );
    let (ok, _) = bench_json(&null_endpoint, &["--idempotency", "--messages", "10"]);
    assert!(!ok, "the null server keeps no keys: the run must fail");
}

/// `--fair` measures the consumers' capacity first (never above what
/// their work time allows) and runs its four phases, each with quiet
/// messages and, but for the first, other load; `--fair-capacity work`
/// takes the work-time capacity as it is.
#[test]
fn fair_measures_capacity_then_runs_four_phases() {
    let (_server, endpoint) = start(
        &["serve", "--in-memory", "--bind", "127.0.0.1:0"],
        "sluice listening on ",
    );
    let plan = [
        "--fair",
        "--consumers",
        "2",
        "--fair-work-ms",
        "5",
        "--duration",
        "1",
    ];
    let (ok, report) = bench_json(&endpoint, &plan);
    assert!(ok, "bench failed: {report}");
    let work = report["work_capacity_per_sec"]
        .as_f64()
        .expect("work capacity");
    let measured = report["capacity_per_sec"].as_f64().expect("capacity");
    assert!((work - 400.0).abs() < 1e-6, "{report}");
    assert!(measured > 0.0 && measured <= work * 1.05, "{report}");
    let phases = report["phases"].as_array().expect("phases");
    let names: Vec<&str> = phases.iter().filter_map(|p| p["phase"].as_str()).collect();
    assert_eq!(names, ["idle", "busy", "flood", "flood-ungrouped"]);
    for p in phases {
        assert!(count(&p["quiet"], "count") > 0, "{p}");
        let load = count(&p["load"], "count");
        assert_eq!(load == 0, p["phase"] == "idle", "{p}");
    }

    let mut by_work = plan.to_vec();
    by_work.extend(["--fair-capacity", "work"]);
    let (ok, report) = bench_json(&endpoint, &by_work);
    assert!(ok, "bench failed: {report}");
    assert_eq!(
        report["capacity_per_sec"], report["work_capacity_per_sec"],
        "{report}"
    );
}
