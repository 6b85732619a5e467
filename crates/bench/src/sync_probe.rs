//! `--sync-probe DIR`: what a durable commit costs on the disk holding
//! `DIR`, the floor under a durable server's latency, as the null server is
//! the floor under its throughput.
//!
//! A durable sluice answers a request once the write-ahead log record that
//! holds it is synced (`fdatasync`). Under load a request also waits for the
//! sync already under way, so a durable answer takes about one and a half
//! syncs more than an in-memory one. The probe times that sync the way the
//! log does it: records of [`RECORD`] bytes written in turn into a file
//! zero-filled beforehand, each followed by `fdatasync`:
//! - back to back, as under load;
//! - with a [`PAUSE`] between them, as on a quiet server (a virtual
//!   machine's idle CPUs and disks often answer later);
//! - appending to a growing file, which also commits the file's new size
//!   to the file system's journal: what sluice avoids by zero-filling its
//!   segments ahead.
//!
//! The probe's file is removed when it ends, on an error too (not if the
//! process is killed: it is `.sluice-sync-probe-<pid>` in `DIR`).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::latency::{Samples, Summary};

/// Bytes written before each sync: a batch of ten 1 KiB messages with
/// their attributes and the record's framing, as the log writes it.
pub const RECORD: usize = 16 << 10;

/// Syncs timed in each series.
pub const SYNCS: u32 = 1000;

/// The wait between two syncs of the quiet series.
pub const PAUSE: Duration = Duration::from_millis(2);

/// What the probe measured, each series in milliseconds per sync.
#[derive(Debug, Serialize)]
pub struct SyncReport {
    /// The directory whose disk was probed.
    pub sync_probe_dir: String,
    /// Bytes written before each sync.
    pub record_bytes: usize,
    /// Syncs in each series.
    pub syncs: u32,
    /// Back to back into a zero-filled file: median.
    pub busy_p50_ms: f64,
    /// Back to back into a zero-filled file: 99th percentile.
    pub busy_p99_ms: f64,
    /// Back to back into a zero-filled file: slowest.
    pub busy_max_ms: f64,
    /// Syncs per second back to back: at most this many group commits.
    pub busy_syncs_per_sec: f64,
    /// With a pause between syncs: median.
    pub quiet_p50_ms: f64,
    /// With a pause between syncs: 99th percentile.
    pub quiet_p99_ms: f64,
    /// With a pause between syncs: slowest.
    pub quiet_max_ms: f64,
    /// Appending to a growing file, back to back: median.
    pub append_p50_ms: f64,
    /// Appending to a growing file, back to back: 99th percentile.
    pub append_p99_ms: f64,
    /// Appending to a growing file, back to back: slowest.
    pub append_max_ms: f64,
}

impl SyncReport {
    /// The report as a short table.
    pub fn table(&self) -> String {
        let row = |name: &str, p50: f64, p99: f64, max: f64| {
            format!("  {name:<34} p50 {p50:>7.3} ms   p99 {p99:>7.3} ms   max {max:>7.3} ms\n")
        };
        format!(
            "fdatasync after each {} KiB written, {} syncs a series, in {}\n{}{}{}  \
             back to back: {:.0} syncs/s at most. Under load a durable answer waits \
             about 1.5 syncs (the one under way, then its own) more than an in-memory one.\n",
            self.record_bytes >> 10,
            self.syncs,
            self.sync_probe_dir,
            row(
                "zero-filled, back to back",
                self.busy_p50_ms,
                self.busy_p99_ms,
                self.busy_max_ms
            ),
            row(
                &format!("zero-filled, {} ms apart", PAUSE.as_millis()),
                self.quiet_p50_ms,
                self.quiet_p99_ms,
                self.quiet_max_ms
            ),
            row(
                "appended, back to back",
                self.append_p50_ms,
                self.append_p99_ms,
                self.append_max_ms
            ),
            self.busy_syncs_per_sec,
        )
    }
}

/// Runs the three series in a file created in `dir`, `syncs` syncs each.
pub fn probe(dir: &Path, syncs: u32) -> io::Result<SyncReport> {
    let probe = ProbeFile::create(dir)?;
    let len = RECORD as u64 * u64::from(syncs);
    let record = vec![0x5a_u8; RECORD];

    zero_fill(&probe.file, len)?;
    let started = Instant::now();
    let busy = timed_syncs(&probe.file, &record, syncs, None)?;
    let busy_secs = started.elapsed().as_secs_f64();
    let quiet = timed_syncs(&probe.file, &record, syncs, Some(PAUSE))?;
    // Emptied, the same writes make the file grow.
    probe.file.set_len(0)?;
    probe.file.sync_all()?;
    let append = timed_syncs(&probe.file, &record, syncs, None)?;

    Ok(SyncReport {
        sync_probe_dir: dir.display().to_string(),
        record_bytes: RECORD,
        syncs,
        busy_p50_ms: busy.p50_ms,
        busy_p99_ms: busy.p99_ms,
        busy_max_ms: busy.max_ms,
        busy_syncs_per_sec: f64::from(syncs) / busy_secs.max(f64::EPSILON),
        quiet_p50_ms: quiet.p50_ms,
        quiet_p99_ms: quiet.p99_ms,
        quiet_max_ms: quiet.max_ms,
        append_p50_ms: append.p50_ms,
        append_p99_ms: append.p99_ms,
        append_max_ms: append.max_ms,
    })
}

/// Writes `syncs` records one after the other from the file's start,
/// timing each one's `fdatasync` (the write itself only reaches the page
/// cache). Over zeros the file keeps its size; past its end it grows.
fn timed_syncs(
    file: &File,
    record: &[u8],
    syncs: u32,
    pause: Option<Duration>,
) -> io::Result<Summary> {
    let mut samples = Samples::default();
    for i in 0..u64::from(syncs) {
        file.write_all_at(record, i * record.len() as u64)?;
        let started = Instant::now();
        file.sync_data()?;
        samples.record(started.elapsed());
        if let Some(pause) = pause {
            std::thread::sleep(pause);
        }
    }
    Ok(samples.summary())
}

/// Writes `len` zeros and syncs them with the file's size, as sluice
/// makes a log segment ready before it writes records there.
fn zero_fill(file: &File, len: u64) -> io::Result<()> {
    let zeros = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(zeros.len() as u64) as usize;
        file.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    file.sync_all()
}

/// The probe's file, removed when dropped.
struct ProbeFile {
    path: PathBuf,
    file: File,
}

impl ProbeFile {
    /// A new file in `dir`, named after this process (never an existing one).
    fn create(dir: &Path) -> io::Result<ProbeFile> {
        let path = dir.join(format!(".sluice-sync-probe-{}", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(ProbeFile { path, file })
    }
}

impl Drop for ProbeFile {
    fn drop(&mut self) {
        // Nothing to do about a failure here but leave the file.
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_series_times_every_sync_and_the_file_is_removed() {
        let dir = std::env::temp_dir().join(format!("sync-probe-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let report = probe(&dir, 20).unwrap();
        assert_eq!(report.syncs, 20);
        for (p50, p99, max) in [
            (report.busy_p50_ms, report.busy_p99_ms, report.busy_max_ms),
            (
                report.quiet_p50_ms,
                report.quiet_p99_ms,
                report.quiet_max_ms,
            ),
            (
                report.append_p50_ms,
                report.append_p99_ms,
                report.append_max_ms,
            ),
        ] {
            assert!(0.0 <= p50 && p50 <= p99 && p99 <= max, "{report:?}");
        }
        assert!(report.busy_syncs_per_sec > 0.0, "{report:?}");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "the probe's file is removed: {left:?}");
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn appending_grows_the_file_and_overwriting_keeps_its_size() {
        let dir = std::env::temp_dir().join(format!("sync-probe-sizes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let probe_file = ProbeFile::create(&dir).unwrap();
        let record = vec![1u8; 100];
        zero_fill(&probe_file.file, 1000).unwrap();
        timed_syncs(&probe_file.file, &record, 5, None).unwrap();
        assert_eq!(probe_file.file.metadata().unwrap().len(), 1000);
        let mut start = vec![0u8; 500];
        probe_file.file.read_exact_at(&mut start, 0).unwrap();
        assert!(
            start.iter().all(|&b| b == 1),
            "records written from the start"
        );
        probe_file.file.set_len(0).unwrap();
        timed_syncs(&probe_file.file, &record, 5, None).unwrap();
        assert_eq!(probe_file.file.metadata().unwrap().len(), 500);
        drop(probe_file);
        std::fs::remove_dir(&dir).unwrap();
    }
}
