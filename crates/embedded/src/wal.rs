//! The write-ahead log: each group commit is one record appended to one
//! file and made durable with one `fdatasync`, before redb holds it durably.
//!
//! Layout: an 8-byte magic, then records, each a 16-byte header — CRC-32 (crc32fast)
//! (over the rest of the header and the payload), payload length, log
//! sequence number (LSN), all little-endian — and the payload
//! ([`crate::log_record`]). LSNs of the records of one file run without a
//! gap.
//!
//! The file is never truncated: after a checkpoint has made redb durable up
//! to some LSN, the next record is written at the start again, over records
//! redb already holds. That leaves nothing a crash could catch half done: a
//! reader tells the current records from older ones by their LSN chain, and
//! stops at the first record that is torn, fails its checksum, or does not
//! continue the chain (a torn tail is what a kill -9 normally leaves, not
//! an error).
//!
//! The file grows by writing zeros ahead of the records, [`GROW_BYTES`] at
//! a time, so that most syncs rewrite blocks the file already has: on ext4
//! such an `fdatasync` flushes data only, while one that changes the file's
//! size also commits the file system's journal, which costs another flush
//! and waits for whatever other files that commit carries.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The log's file name inside the data directory.
pub const LOG_FILE: &str = "sluice.wal";

const MAGIC: &[u8; 8] = b"SLUICEW1";
const START: u64 = MAGIC.len() as u64;

/// Bytes of a record's header.
pub const HEADER: usize = 16;

/// How much the file grows when a record would pass its end.
pub const GROW_BYTES: u64 = 4 << 20;

/// Errors of the log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Reading, writing or syncing the file failed.
    #[error("log file: {0}")]
    Io(#[from] io::Error),
    /// The file is not a sluice log.
    #[error("{0} is not a sluice log file")]
    NotALog(String),
    /// The log starts after the store's last change: records are missing.
    #[error("the log starts at record {first} but the store holds only up to {applied}")]
    Gap {
        /// The LSN of the first record found.
        first: u64,
        /// The last LSN the store holds.
        applied: u64,
    },
}

/// A record read back at start-up.
#[derive(Debug)]
pub struct Recovered {
    /// Its sequence number.
    pub lsn: u64,
    /// Its encoded changes.
    pub payload: Vec<u8>,
}

/// The log file, open for appending.
pub struct Log {
    file: File,
    /// Where the next record goes.
    end: u64,
    /// The file's length: zeros or old records from `end` to here.
    len: u64,
}

impl Log {
    /// Opens (or creates) the log at `path` and returns the records after
    /// `applied`, the last LSN the store holds durably, in order.
    ///
    /// The next [`Log::append`] writes over the records read, so the caller
    /// must make them durable in the store first.
    pub fn open(path: &Path, applied: u64) -> Result<(Self, Vec<Recovered>), LogError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let records = if bytes.len() < MAGIC.len() && MAGIC.starts_with(&bytes) {
            // New, or created by a run that died before its first sync,
            // which came before any record could be acknowledged.
            file.seek(SeekFrom::Start(0))?;
            file.write_all(MAGIC)?;
            file.sync_all()?;
            sync_dir(path)?;
            Vec::new()
        } else if !bytes.starts_with(MAGIC) {
            return Err(LogError::NotALog(path.display().to_string()));
        } else {
            read_records(&bytes[MAGIC.len()..], applied)?
        };
        let len = file.seek(SeekFrom::End(0))?;
        file.seek(SeekFrom::Start(START))?;
        Ok((
            Self {
                file,
                end: START,
                len,
            },
            records,
        ))
    }

    /// A log on `path` whose every write fails, as on a failing disk.
    #[cfg(test)]
    pub fn failing(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().read(true).open(path)?;
        Ok(Self {
            file,
            end: START,
            len: 0,
        })
    }

    /// Clears `buf` and reserves room for a record's header; the caller
    /// appends the payload after it.
    pub fn start_record(buf: &mut Vec<u8>) {
        buf.clear();
        buf.resize(HEADER, 0);
    }

    /// Writes the record `lsn` whose payload follows the header room in
    /// `buf` (see [`Log::start_record`]), without syncing.
    pub fn write(&mut self, lsn: u64, buf: &mut [u8]) -> io::Result<()> {
        let len = u32::try_from(buf.len() - HEADER)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "log record over 4 GiB"))?;
        buf[4..8].copy_from_slice(&len.to_le_bytes());
        buf[8..16].copy_from_slice(&lsn.to_le_bytes());
        let crc = crc32fast::hash(&buf[4..]);
        buf[0..4].copy_from_slice(&crc.to_le_bytes());
        let end = self.end + buf.len() as u64;
        if end > self.len {
            self.grow(end)?;
        }
        self.file.write_all(buf)?;
        self.end = end;
        Ok(())
    }

    /// Writes zeros from the file's end to past `needed`; the next sync
    /// makes them durable with the record that needed them.
    fn grow(&mut self, needed: u64) -> io::Result<()> {
        static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
        let target = needed.max(self.len + GROW_BYTES);
        self.file.seek(SeekFrom::Start(self.len))?;
        while self.len < target {
            let n = (target - self.len).min(ZEROS.len() as u64) as usize;
            self.file.write_all(&ZEROS[..n])?;
            self.len += n as u64;
        }
        self.file.seek(SeekFrom::Start(self.end))?;
        Ok(())
    }

    /// Makes every record written so far survive a crash (`fdatasync`).
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// [`Log::write`] then [`Log::sync`].
    #[cfg(test)]
    pub fn append(&mut self, lsn: u64, buf: &mut [u8]) -> io::Result<()> {
        self.write(lsn, buf)?;
        self.sync()
    }

    /// Starts writing at the beginning again; call only once the store
    /// holds every record written so far durably.
    pub fn rewind(&mut self) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(START))?;
        self.end = START;
        Ok(())
    }
}

/// The records of `bytes` (a log without its magic) after `applied`.
fn read_records(mut bytes: &[u8], applied: u64) -> Result<Vec<Recovered>, LogError> {
    let mut out = Vec::new();
    let mut last: Option<u64> = None;
    while bytes.len() >= HEADER {
        let crc = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let len = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
        let Some(record) = bytes.get(..HEADER + len) else {
            break;
        };
        if crc32fast::hash(&record[4..]) != crc {
            break;
        }
        let mut lsn = [0u8; 8];
        lsn.copy_from_slice(&record[8..16]);
        let lsn = u64::from_le_bytes(lsn);
        match last {
            // An older generation's record left behind a rewind.
            Some(prev) if lsn != prev + 1 => break,
            None if lsn > applied + 1 => {
                return Err(LogError::Gap {
                    first: lsn,
                    applied,
                });
            }
            _ => {}
        }
        if lsn > applied {
            out.push(Recovered {
                lsn,
                payload: record[HEADER..].to_vec(),
            });
        }
        last = Some(lsn);
        bytes = &bytes[HEADER + len..];
    }
    Ok(out)
}

/// Makes a new file's directory entry durable.
fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(log: &mut Log, lsn: u64, payload: &[u8]) {
        let mut buf = Vec::new();
        Log::start_record(&mut buf);
        buf.extend_from_slice(payload);
        log.append(lsn, &mut buf).unwrap();
    }

    fn lsns(records: &[Recovered]) -> Vec<u64> {
        records.iter().map(|r| r.lsn).collect()
    }

    /// A log holding records 1..=n, each with a 10-byte payload.
    fn written(n: u64) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        let (mut log, records) = Log::open(&path, 0).unwrap();
        assert!(records.is_empty());
        for lsn in 1..=n {
            append(&mut log, lsn, &[lsn as u8; 10]);
        }
        (dir, path)
    }

    #[test]
    fn reads_back_the_records_after_the_stores_last() {
        let (_dir, path) = written(5);
        let (_, records) = Log::open(&path, 0).unwrap();
        assert_eq!(lsns(&records), [1, 2, 3, 4, 5]);
        assert_eq!(records[2].payload, [3; 10]);
        let (_, records) = Log::open(&path, 3).unwrap();
        assert_eq!(lsns(&records), [4, 5]);
        let (_, records) = Log::open(&path, 5).unwrap();
        assert!(records.is_empty(), "nothing is replayed twice");
    }

    #[test]
    fn a_torn_tail_record_ends_the_log() {
        let (_dir, path) = written(3);
        // Each record is 16 + 10 bytes; cut the third.
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(START + 3 * 26 - 4).unwrap();
        let (_, records) = Log::open(&path, 0).unwrap();
        assert_eq!(lsns(&records), [1, 2]);
        // A header cut short ends it too.
        file.set_len(START + 26 + 5).unwrap();
        let (_, records) = Log::open(&path, 0).unwrap();
        assert_eq!(lsns(&records), [1]);
    }

    #[test]
    fn a_record_failing_its_checksum_ends_the_log() {
        let (_dir, path) = written(3);
        let mut bytes = std::fs::read(&path).unwrap();
        // Flip one payload byte of record 2 (each record is 16 + 10 bytes).
        bytes[START as usize + 26 + HEADER + 3] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let (_, records) = Log::open(&path, 0).unwrap();
        assert_eq!(lsns(&records), [1]);
    }

    #[test]
    fn garbage_after_the_last_record_is_ignored() {
        let (_dir, path) = written(2);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = START as usize + 2 * 26;
        for (i, b) in bytes[at..at + 200].iter_mut().enumerate() {
            *b = (i * 7919 % 251) as u8;
        }
        std::fs::write(&path, &bytes).unwrap();
        let (_, records) = Log::open(&path, 0).unwrap();
        assert_eq!(lsns(&records), [1, 2]);
    }

    #[test]
    fn a_record_that_breaks_the_sequence_ends_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        let (mut log, _) = Log::open(&path, 0).unwrap();
        for lsn in [1, 2, 4] {
            append(&mut log, lsn, b"x");
        }
        let (_, records) = Log::open(&path, 0).unwrap();
        assert_eq!(lsns(&records), [1, 2]);
    }

    #[test]
    fn a_log_starting_after_the_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        let (mut log, _) = Log::open(&path, 0).unwrap();
        append(&mut log, 7, b"x");
        assert!(matches!(
            Log::open(&path, 5),
            Err(LogError::Gap {
                first: 7,
                applied: 5
            })
        ));
        assert_eq!(lsns(&Log::open(&path, 6).unwrap().1), [7]);
    }

    #[test]
    fn records_left_behind_a_rewind_are_not_replayed() {
        let (_dir, path) = written(5);
        // A checkpoint made 1..=5 durable in the store; the log starts again.
        let (mut log, _) = Log::open(&path, 5).unwrap();
        append(&mut log, 6, &[6; 10]);
        append(&mut log, 7, &[7; 10]);
        // Records 3, 4 and 5 of the old generation follow 7 on disk, each
        // intact, exactly where a record 8 would start.
        let (_, records) = Log::open(&path, 5).unwrap();
        assert_eq!(lsns(&records), [6, 7]);
        assert_eq!(records[1].payload, [7; 10]);
        // A shorter first record leaves a torn old one behind it.
        let (mut log, _) = Log::open(&path, 7).unwrap();
        append(&mut log, 8, b"short");
        let (_, records) = Log::open(&path, 7).unwrap();
        assert_eq!(lsns(&records), [8]);
    }

    #[test]
    fn a_crash_mid_rotation_loses_no_durable_record() {
        // Between the checkpoint and the first new record: the store holds
        // 1..=5, the log still has them all.
        let (dir, path) = written(5);
        let (_, records) = Log::open(&path, 5).unwrap();
        assert!(records.is_empty());
        // The first new record torn as it overwrites the old first one:
        // its header landed, its payload did not.
        let mut bytes = std::fs::read(&path).unwrap();
        let mut record = Vec::new();
        Log::start_record(&mut record);
        record.extend_from_slice(&[6; 10]);
        let (mut scratch, _) = Log::open(&dir.path().join("scratch"), 0).unwrap();
        scratch.append(6, &mut record).unwrap();
        bytes[START as usize..START as usize + HEADER].copy_from_slice(&record[..HEADER]);
        std::fs::write(&path, &bytes).unwrap();
        let (_, records) = Log::open(&path, 5).unwrap();
        assert!(records.is_empty(), "an unsynced record is never replayed");
        // Its payload landed, its header did not: the old record 1 is
        // unreadable, the rest of the old generation is older than the store.
        let mut bytes = std::fs::read(&path).unwrap();
        let (_old_dir, old_header) = written(1);
        let old = std::fs::read(&old_header).unwrap();
        bytes[START as usize..START as usize + HEADER]
            .copy_from_slice(&old[START as usize..START as usize + HEADER]);
        bytes[START as usize + HEADER..START as usize + 26].copy_from_slice(&[6; 10]);
        std::fs::write(&path, &bytes).unwrap();
        let (_, records) = Log::open(&path, 5).unwrap();
        assert!(records.is_empty());
    }

    #[test]
    fn the_file_grows_ahead_of_the_records_and_zeros_end_the_log() {
        let (_dir, path) = written(3);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), START + GROW_BYTES);
        let (mut log, records) = Log::open(&path, 0).unwrap();
        assert_eq!(lsns(&records), [1, 2, 3]);
        // A record larger than what is left grows the file past it.
        log.rewind().unwrap();
        append(&mut log, 4, &vec![9; GROW_BYTES as usize]);
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(len >= START + HEADER as u64 + GROW_BYTES, "{len}");
        let (_, records) = Log::open(&path, 3).unwrap();
        assert_eq!(lsns(&records), [4]);
    }

    #[test]
    fn a_file_that_is_not_a_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        std::fs::write(&path, b"something else entirely").unwrap();
        assert!(matches!(Log::open(&path, 0), Err(LogError::NotALog(_))));
    }
}
