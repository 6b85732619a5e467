//! Tests of wal.

use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::storage::Storage;

use super::{error::*, files::*, os, preparer::*, reader::*, record::*, recovery::*, writer::*};

fn append(log: &mut Log, lsn: u64, payload: &[u8]) {
    let mut buf = Vec::new();
    Log::start_record(&mut buf);
    buf.extend_from_slice(payload);
    log.append(lsn, &mut buf).unwrap();
}

fn lsns(records: &[Recovered]) -> Vec<u64> {
    records.iter().map(|r| r.lsn).collect()
}

fn read(dir: &Path, applied: u64) -> Vec<Recovered> {
    open(&*os(), dir, applied).unwrap().records
}

/// A data directory whose segment 1 holds records 1..=n, each with a
/// 10-byte payload; returns it with the segment's path.
fn written(n: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    assert!(open(&*os(), dir.path(), 0).unwrap().records.is_empty());
    let mut log = Log::create(&os(), dir.path(), 1).unwrap();
    for lsn in 1..=n {
        append(&mut log, lsn, &[lsn as u8; 10]);
    }
    let path = newest_segment(dir.path()).unwrap().unwrap();
    (dir, path)
}

#[test]
fn reads_back_the_records_after_the_stores_last_with_where_they_lie() {
    let (dir, _) = written(5);
    let records = read(dir.path(), 0);
    assert_eq!(lsns(&records), [1, 2, 3, 4, 5]);
    assert_eq!(records[2].payload, [3; 10]);
    // Each record is 16 + 10 bytes, after the 8-byte magic.
    assert_eq!(records[2].at, Some((1, START + 2 * 26 + HEADER as u64)));
    assert_eq!(lsns(&read(dir.path(), 3)), [4, 5]);
    assert!(read(dir.path(), 5).is_empty(), "nothing is replayed twice");
}

/// What a put's position names is what a reader of the segment gets.
#[test]
fn segments_read_what_a_position_names_and_nothing_once_gone() {
    let (dir, _) = written(3);
    let records = read(dir.path(), 0);
    let (segment, offset) = records[1].at.unwrap();
    let segments = Segments::new(os(), dir.path());
    let at = BodyAt {
        segment,
        offset: offset + 2,
        len: 5,
    };
    assert_eq!(segments.read(at).unwrap(), Some(vec![2; 5]));
    let log = Log::create(&os(), dir.path(), 2).unwrap();
    segments.forget(1);
    log.remove(1).unwrap();
    assert_eq!(segments.read(at).unwrap(), None);
    assert_eq!(open(&*os(), dir.path(), 3).unwrap().segments, [2]);
}

/// Only the newest segment holds records after the last checkpoint: an
/// older one is not read, and a new one (even one whose magic a crash
/// cut short) holds nothing yet.
#[test]
fn only_the_newest_segment_is_read() {
    let (dir, _) = written(3);
    let mut log = Log::create(&os(), dir.path(), 2).unwrap();
    append(&mut log, 4, b"four");
    let found = open(&*os(), dir.path(), 3).unwrap();
    assert_eq!(lsns(&found.records), [4]);
    assert_eq!(found.records[0].at, Some((2, START + HEADER as u64)));
    assert_eq!(found.segments, [1, 2]);
    // A segment created and cut before its magic was synced.
    std::fs::write(segment_path(&dir.path().join(LOG_DIR), 3), &MAGIC[..3]).unwrap();
    let found = open(&*os(), dir.path(), 4).unwrap();
    assert!(found.records.is_empty());
    assert_eq!(found.segments, [1, 2, 3]);
}

/// A store from before segments: its single log is replayed (its puts
/// keep their data in redb), ahead of the segments.
#[test]
fn the_legacy_log_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = MAGIC.to_vec();
    for lsn in 1..=2u64 {
        let mut buf = Vec::new();
        Log::start_record(&mut buf);
        buf.extend_from_slice(b"old");
        seal(lsn, &mut buf).unwrap();
        bytes.extend_from_slice(&buf);
    }
    std::fs::write(dir.path().join(LEGACY_LOG_FILE), &bytes).unwrap();
    let found = open(&*os(), dir.path(), 1).unwrap();
    assert!(found.legacy);
    assert_eq!(lsns(&found.records), [2]);
    assert_eq!(found.records[0].at, None);
    remove_legacy(&*os(), dir.path()).unwrap();
    assert!(!open(&*os(), dir.path(), 1).unwrap().legacy);
}

#[test]
fn a_torn_tail_record_ends_the_log() {
    let (dir, path) = written(3);
    // Each record is 16 + 10 bytes; cut the third.
    let file = OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(START + 3 * 26 - 4).unwrap();
    assert_eq!(lsns(&read(dir.path(), 0)), [1, 2]);
    // A header cut short ends it too.
    file.set_len(START + 26 + 5).unwrap();
    assert_eq!(lsns(&read(dir.path(), 0)), [1]);
}

#[test]
fn a_record_failing_its_checksum_ends_the_log() {
    let (dir, path) = written(3);
    let mut bytes = std::fs::read(&path).unwrap();
    // Flip one payload byte of record 2 (each record is 16 + 10 bytes).
    bytes[START as usize + 26 + HEADER + 3] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(lsns(&read(dir.path(), 0)), [1]);
}

#[test]
fn garbage_after_the_last_record_is_ignored() {
    let (dir, path) = written(2);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend((0..200usize).map(|i| (i * 7919 % 251) as u8));
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(lsns(&read(dir.path(), 0)), [1, 2]);
}

#[test]
fn a_record_that_breaks_the_sequence_ends_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(&os(), dir.path(), 1).unwrap();
    for lsn in [1, 2, 4] {
        append(&mut log, lsn, b"x");
    }
    assert_eq!(lsns(&read(dir.path(), 0)), [1, 2]);
}

#[test]
fn a_log_starting_after_the_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(&os(), dir.path(), 1).unwrap();
    append(&mut log, 7, b"x");
    assert!(matches!(
        open(&*os(), dir.path(), 5),
        Err(LogError::Gap {
            first: 7,
            applied: 5
        })
    ));
    assert_eq!(lsns(&read(dir.path(), 6)), [7]);
}

#[test]
fn a_file_that_is_not_a_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(LOG_DIR)).unwrap();
    let path = segment_path(&dir.path().join(LOG_DIR), 1);
    std::fs::write(&path, b"something else entirely").unwrap();
    assert!(matches!(
        open(&*os(), dir.path(), 0),
        Err(LogError::NotALog(_))
    ));
}

/// Waits (bounded) until segment `id` of `dir` is ready.
fn await_ready(dir: &Path, id: u64) -> PathBuf {
    let ready = unready_path(&dir.join(LOG_DIR), id, READY_SUFFIX);
    for _ in 0..500 {
        if ready.exists() {
            return ready;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("segment {id} was not made ready");
}

/// Records written over zeros made ready ahead read back, and the
/// zeros after them end the log (a zero header fails its checksum); a
/// start cuts them off, as the writer does when it finishes a segment.
#[test]
fn zeros_after_the_last_record_end_the_log_and_are_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join(LOG_DIR);
    std::fs::create_dir_all(&log_dir).unwrap();
    prepare(&*os(), &log_dir, 1, 64 << 10, &AtomicBool::new(false)).unwrap();
    let mut log = Log::take_ready(&os(), dir.path(), 1).unwrap().unwrap();
    for lsn in 1..=3 {
        append(&mut log, lsn, &[lsn as u8; 10]);
    }
    let path = segment_path(&log_dir, 1);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 64 << 10);
    // As a kill -9 leaves it: no finish.
    drop(log);
    let found = open(&*os(), dir.path(), 0).unwrap();
    assert_eq!(lsns(&found.records), [1, 2, 3]);
    assert_eq!(
        found.records[2].at,
        Some((1, START + 2 * 26 + HEADER as u64))
    );
    assert_eq!(found.newest_len, START + 3 * 26);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), START + 3 * 26);
    assert_eq!(
        lsns(&read(dir.path(), 1)),
        [2, 3],
        "nothing is lost by the cut"
    );
}

/// What follows the last record and is not all zeros (a torn record)
/// stays on disk.
#[test]
fn a_torn_record_before_zeros_is_not_cut_off() {
    let (dir, path) = written(2);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[7; 20]);
    bytes.extend_from_slice(&[0; 4096]);
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(lsns(&read(dir.path(), 0)), [1, 2]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), bytes.len() as u64);
}

/// With a preparer, the log moves to a segment made ready ahead, cut the
/// one it leaves to its records, and the one after is made ready.
#[test]
fn the_log_moves_to_the_segment_made_ready_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join(LOG_DIR);
    let mut log = Log::create(&os(), dir.path(), 1)
        .unwrap()
        .ready_ahead(100 << 10);
    let ready = await_ready(dir.path(), 2);
    assert_eq!(
        std::fs::metadata(&ready).unwrap().len(),
        ready_len(100 << 10)
    );
    append(&mut log, 1, b"one");
    log.next_segment().unwrap();
    assert_eq!(log.segment(), 2);
    assert!(!ready.exists());
    assert_eq!(
        std::fs::metadata(segment_path(&log_dir, 1)).unwrap().len(),
        START + HEADER as u64 + 3
    );
    append(&mut log, 2, b"two");
    assert_eq!(
        std::fs::metadata(segment_path(&log_dir, 2)).unwrap().len(),
        ready_len(100 << 10),
        "records went over the zeros"
    );
    // Sized after the segment just finished.
    let next = await_ready(dir.path(), 3);
    assert_eq!(std::fs::metadata(&next).unwrap().len(), READY_MIN);
    let found = open(&*os(), dir.path(), 1).unwrap();
    assert_eq!(lsns(&found.records), [2]);
    assert_eq!(found.records[0].at, Some((2, START + HEADER as u64)));
    // A start removes what an earlier run made ready.
    assert!(!next.exists());
    assert_eq!(found.segments, [1, 2]);
}

/// Without a segment made ready the log creates one; a segment made
/// ready too late for the log (it created that one itself) is removed
/// when the next is asked for.
#[test]
fn a_segment_not_ready_in_time_is_created_and_the_late_one_removed() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join(LOG_DIR);
    let mut log = Log::create(&os(), dir.path(), 1).unwrap();
    log.next_segment().unwrap();
    assert_eq!(log.segment(), 2);
    assert_eq!(
        std::fs::metadata(segment_path(&log_dir, 2)).unwrap().len(),
        START
    );
    let preparer = Preparer::spawn(os(), dir.path());
    preparer.prepare(3, 0);
    let late = await_ready(dir.path(), 3);
    preparer.prepare(4, 0);
    await_ready(dir.path(), 4);
    assert!(!late.exists());
}

/// Records past the zeros made ready go on by appending.
#[test]
fn a_segment_outgrowing_its_zeros_goes_on_appending() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join(LOG_DIR);
    std::fs::create_dir_all(&log_dir).unwrap();
    prepare(&*os(), &log_dir, 1, READY_MIN, &AtomicBool::new(false)).unwrap();
    let mut log = Log::take_ready(&os(), dir.path(), 1).unwrap().unwrap();
    let payload = vec![9u8; 1000];
    for lsn in 1..=40 {
        append(&mut log, lsn, &payload);
    }
    let found = open(&*os(), dir.path(), 0).unwrap();
    assert_eq!(found.records.len(), 40);
    assert!(found.records.iter().all(|r| r.payload == payload));
    assert_eq!(found.newest_len, START + 40 * 1016);
}

#[test]
fn segments_are_made_ready_a_quarter_longer_within_bounds() {
    assert_eq!(ready_len(0), READY_MIN);
    assert_eq!(ready_len(4 << 20), 5 << 20);
    assert_eq!(ready_len(4_000_001) % 4096, 0);
    assert_eq!(ready_len(1 << 40), READY_MAX);
}

/// A stopping log does not wait for the segment being made ready: the
/// preparer drops it, and leaves nothing behind.
#[test]
fn a_stopping_preparer_drops_the_segment_it_was_making_ready() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join(LOG_DIR);
    std::fs::create_dir_all(&log_dir).unwrap();
    let stopped = prepare(&*os(), &log_dir, 1, READY_MAX, &AtomicBool::new(true));
    assert_eq!(stopped.unwrap_err().kind(), io::ErrorKind::Interrupted);
    let preparer = Preparer::spawn(os(), dir.path());
    preparer.prepare(2, READY_MAX);
    drop(preparer);
    let left: Vec<_> = std::fs::read_dir(&log_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A run's first segment is zero-filled at its first record, not at the
/// start, whatever the last segment's size, and only then is the next
/// one made ready behind it, sized after the last: a start that writes
/// nothing takes no room.
#[test]
fn a_start_zero_fills_its_first_segment_at_its_first_record() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join(LOG_DIR);
    let mut log = Log::start(&os(), dir.path(), 1, 0).unwrap();
    let len = |id| std::fs::metadata(segment_path(&log_dir, id)).unwrap().len();
    assert_eq!(len(1), START, "the magic only");
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(
        !unready_path(&log_dir, 2, READY_SUFFIX).exists()
            && !unready_path(&log_dir, 2, PREPARING_SUFFIX).exists(),
        "the next segment made ready before a record"
    );
    append(&mut log, 1, b"one");
    assert_eq!(len(1), START_READY, "zero-filled at the first record");
    append(&mut log, 2, b"two");
    assert_eq!(len(1), START_READY, "written over the zeros");
    let next = await_ready(dir.path(), 2);
    assert_eq!(std::fs::metadata(next).unwrap().len(), READY_MIN);
    drop(log);
    let found = open(&*os(), dir.path(), 0).unwrap();
    assert_eq!(lsns(&found.records), [1, 2]);
    let mut log = Log::start(&os(), dir.path(), 2, 100 << 20).unwrap();
    assert_eq!(len(2), START);
    append(&mut log, 3, b"three");
    assert_eq!(len(2), START_READY);
    drop(log);
}

/// On a disk without room for a first segment's zeros, its records are
/// appended as they come: the zeros that fitted are cut off again, and
/// what was written reads back.
#[test]
fn a_first_segment_without_room_for_its_zeros_appends_without() {
    let storage = crate::storage::FaultStorage::new();
    let dir = Path::new("/d");
    let shared: Arc<dyn Storage> = Arc::new(storage.clone());
    let mut log = Log::start(&shared, dir, 1, 0).unwrap();
    storage.set_space(Some(storage.used() + (64 << 10)));
    append(&mut log, 1, b"one");
    let seg = segment_path(&dir.join(LOG_DIR), 1);
    assert!(storage.len(&seg).unwrap() < 4096, "the zeros were kept");
    append(&mut log, 2, b"two");
    drop(log);
    storage.set_space(None);
    let found = open(&storage, dir, 0).unwrap();
    assert_eq!(lsns(&found.records), [1, 2]);
}

/// Data close together is read in one go, data far apart or in other
/// segments on its own, and each reads back what a read of it alone
/// gives, in the order asked; a gone segment gives `None`.
#[test]
fn reads_of_many_match_reads_of_each() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(&os(), dir.path(), 1).unwrap();
    let payload: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
    append(&mut log, 1, &payload);
    let mut log = Log::create(&os(), dir.path(), 2).unwrap();
    append(&mut log, 2, &payload);
    let mut log = Log::create(&os(), dir.path(), 3).unwrap();
    append(&mut log, 3, b"gone");
    let at = |segment, offset, len| BodyAt {
        segment,
        offset: START + HEADER as u64 + offset,
        len,
    };
    let ats = [
        at(1, 9_000, 100), // far from the others in segment 1
        at(2, 10, 5),      // another segment
        at(1, 30, 20),     // close to the next two
        at(1, 0, 20),      // overlapping one another
        at(1, 40, 60),
        at(3, 0, 4),       // a segment deleted below
        at(1, 19_990, 10), // the record's last bytes
        at(2, 10, 5),      // asked twice
    ];
    let segments = Segments::new(os(), dir.path());
    drop(log);
    std::fs::remove_file(segment_path(&dir.path().join(LOG_DIR), 3)).unwrap();
    let mut many = vec![None; ats.len()];
    segments
        .read_many(&ats, |i, data| {
            assert!(many[i].replace(data.to_vec()).is_none(), "{i} twice");
            Ok::<(), io::Error>(())
        })
        .unwrap();
    let each: Vec<_> = ats.iter().map(|&a| segments.read(a).unwrap()).collect();
    assert_eq!(many, each);
    assert_eq!(many[2].as_deref(), Some(&payload[30..50]));
    assert_eq!(many[5], None);
    let none = segments.read_many(&[], |_, _| Err(io::Error::other("called")));
    assert!(none.is_ok());
}
