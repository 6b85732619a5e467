use std::fs;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sluice_broker::MessageFilter;
use sluice_core::message::{AttributeValue, MessageAttributeValue};

use super::*;

const HOUR: u64 = 3_600_000;
const T0: u64 = 1_700_000_000_000;

fn msg(queue: &str, id: &str, archived_at: u64) -> ArchivedMessage {
    let mut attributes = sluice_core::message::MessageAttributes::new();
    attributes.insert(
        "kind".to_owned(),
        MessageAttributeValue {
            data_type: "String".to_owned(),
            value: AttributeValue::String(format!("kind-of-{id}")),
        },
    );
    ArchivedMessage {
        queue: queue.to_owned(),
        message_id: id.to_owned(),
        body: format!("body of {id}"),
        attributes,
        system_attributes: Default::default(),
        sent_at: archived_at - 1000,
        archived_at,
        receive_count: 2,
        first_receive_at: archived_at - 900,
        last_receive_at: archived_at - 800,
        group_id: None,
        dedup_id: None,
        sequence_number: None,
        failure_reason: Some(format!("failed {id}")),
        failure_class: None,
    }
}

fn msgs(queue: &str, prefix: &str, n: usize, archived_at: u64) -> Vec<ArchivedMessage> {
    (0..n)
        .map(|i| msg(queue, &format!("{prefix}{i:03}"), archived_at + i as u64))
        .collect()
}

fn options(node: &str) -> ArchiveOptions {
    ArchiveOptions {
        node: node.to_owned(),
        ..ArchiveOptions::default()
    }
}

fn all(_: &ArchivedMessage) -> bool {
    true
}

/// Every entry of a queue, paging `limit` at a time; also the pages' sizes.
fn list_all(archive: &Archive, queue: &str, limit: usize) -> (Vec<String>, Vec<usize>) {
    let mut ids = Vec::new();
    let mut sizes = Vec::new();
    let mut after = None;
    for _ in 0..1000 {
        let page = archive.list(queue, after.as_ref(), limit, &all).unwrap();
        sizes.push(page.entries.len());
        ids.extend(page.entries.into_iter().map(|e| e.message.message_id));
        match page.next {
            // Through the token, as a client would.
            Some(c) => after = Some(ArchiveCursor::from_token(&c.to_token()).unwrap()),
            None => return (ids, sizes),
        }
    }
    panic!("paging does not end: {ids:?}");
}

fn ids(records: &[ArchivedMessage]) -> Vec<String> {
    records.iter().map(|m| m.message_id.clone()).collect()
}

fn queue_dir(archive: &Archive, queue: &str) -> PathBuf {
    archive.dir().join(layout::encode_queue(queue))
}

/// File names in a queue's directory, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn with_ext(dir: &Path, ext: &str) -> Vec<String> {
    files(dir)
        .into_iter()
        .filter(|n| n.ends_with(ext))
        .collect()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn archive_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Archive>();
}

#[test]
fn paging_round_trips_across_rotated_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(
        tmp.path().join("archive"),
        ArchiveOptions {
            segment_max_bytes: 1500,
            ..options("n1")
        },
    )
    .unwrap();
    let mut appended = Vec::new();
    for batch in 0..8 {
        let records = msgs("q", &format!("b{batch}-"), 3, T0 + batch * 10);
        archive.append("q", &records).unwrap();
        appended.extend(ids(&records));
    }
    let dir = queue_dir(&archive, "q");
    let gz = with_ext(&dir, ".jsonl.gz");
    assert!(
        gz.len() >= 3,
        "rotation should have made several segments: {gz:?}"
    );
    assert!(with_ext(&dir, ".tmp").is_empty());

    for limit in [1, 4, 5, 24, 100] {
        let (listed, sizes) = list_all(&archive, "q", limit);
        assert_eq!(listed, appended, "limit {limit}");
        assert!(sizes.iter().all(|&s| s <= limit));
        // `next` only when more follows: no trailing empty page.
        assert!(*sizes.last().unwrap() > 0);
    }
    let page = archive.list("q", None, 0, &all).unwrap();
    assert!(page.entries.is_empty() && page.next.is_none());
    // The records come back whole.
    let first = archive.list("q", None, 1, &all).unwrap();
    let expected = msg("q", "b0-000", T0);
    assert_eq!(first.entries[0].message, expected);
    assert_eq!(first.entries[0].restored_at, None);
}

#[test]
fn cursor_stays_valid_across_rotation_and_new_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(tmp.path(), options("n1")).unwrap();
    archive.append("q", &msgs("q", "a", 3, T0)).unwrap();
    let page = archive.list("q", None, 1, &all).unwrap();
    assert_eq!(page.entries[0].message.message_id, "a000");
    let token = page.next.unwrap().to_token();

    // The open segment is rotated; more records land in a new one.
    assert_eq!(archive.rotate_due(T0 + 2 * HOUR).unwrap(), 1);
    let dir = queue_dir(&archive, "q");
    assert!(with_ext(&dir, ".jsonl").is_empty());
    assert_eq!(with_ext(&dir, ".jsonl.gz").len(), 1);
    archive
        .append("q", &msgs("q", "b", 2, T0 + 3 * HOUR))
        .unwrap();
    assert_eq!(with_ext(&dir, ".jsonl").len(), 1);

    let cursor = ArchiveCursor::from_token(&token).unwrap();
    let page = archive.list("q", Some(&cursor), 10, &all).unwrap();
    let got: Vec<_> = page
        .entries
        .iter()
        .map(|e| e.message.message_id.as_str())
        .collect();
    assert_eq!(got, ["a001", "a002", "b000", "b001"]);
    assert!(page.next.is_none());
}

#[test]
fn keep_filters_and_pages_over_the_accepted_only() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(
        tmp.path(),
        ArchiveOptions {
            segment_max_bytes: 2000,
            ..options("n1")
        },
    )
    .unwrap();
    let mut records = msgs("q", "m", 30, T0);
    for (i, r) in records.iter_mut().enumerate() {
        if i % 3 == 0 {
            r.body = format!("urgent {}", r.body);
        }
    }
    for chunk in records.chunks(4) {
        archive.append("q", chunk).unwrap();
    }
    let filter = MessageFilter {
        body_contains: Some("urgent".to_owned()),
        ..MessageFilter::default()
    };
    let keep = |m: &ArchivedMessage| filter.matches(&m.peeked());
    let mut got = Vec::new();
    let mut after = None;
    loop {
        let page = archive.list("q", after.as_ref(), 3, &keep).unwrap();
        assert!(
            page.entries
                .iter()
                .all(|e| e.message.body.starts_with("urgent"))
        );
        got.extend(page.entries.into_iter().map(|e| e.message.message_id));
        match page.next {
            Some(c) => after = Some(c),
            None => break,
        }
    }
    let expected: Vec<String> = (0..30).step_by(3).map(|i| format!("m{i:03}")).collect();
    assert_eq!(got, expected);
    // The peeked view carries the record's fields.
    let peeked = records[1].peeked();
    assert_eq!(peeked.state, "archived");
    assert_eq!(peeked.position, 0);
    assert_eq!(
        ArchivedMessage::from_peeked("q", &peeked, T0 + 1),
        records[1]
    );
}

#[test]
fn rotated_segments_are_gzip_and_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(tmp.path(), options("n1")).unwrap();
    let records = msgs("q", "g", 5, T0);
    archive.append("q", &records).unwrap();
    let dir = queue_dir(&archive, "q");
    let plain = fs::read(dir.join(&with_ext(&dir, ".jsonl")[0])).unwrap();
    assert_eq!(archive.rotate_due(T0 + HOUR).unwrap(), 1);

    let gz = dir.join(&with_ext(&dir, ".jsonl.gz")[0]);
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(fs::File::open(&gz).unwrap())
        .read_to_end(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, plain, "the gzip holds the same lines");

    let page = archive.list("q", None, 10, &all).unwrap();
    let listed: Vec<_> = page.entries.into_iter().map(|e| e.message).collect();
    assert_eq!(listed, records);
    let found = archive.find("q", &["g003".to_owned()]).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message, records[3]);
}

#[test]
fn rotate_due_rotates_old_and_abandoned_segments_only() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let archive = Archive::open(tmp.path(), options("n1")).unwrap();
        archive.append("q", &msgs("q", "a", 2, T0)).unwrap();
        assert_eq!(archive.rotate_due(T0 + HOUR - 1).unwrap(), 0);
        archive.append("other", &msgs("other", "o", 1, T0)).unwrap();
    }
    // A new run does not append to the old run's segments: it rotates them
    // whatever their age, and starts new ones.
    let archive = Archive::open(tmp.path(), options("n1")).unwrap();
    archive.append("q", &msgs("q", "b", 1, T0 + 10)).unwrap();
    let dir = queue_dir(&archive, "q");
    assert_eq!(with_ext(&dir, ".jsonl").len(), 2);
    assert_eq!(archive.rotate_due(T0 + 20).unwrap(), 2);
    assert_eq!(with_ext(&dir, ".jsonl").len(), 1, "the current one stays");
    assert_eq!(archive.rotate_due(T0 + 20 + HOUR).unwrap(), 1);
    assert!(with_ext(&dir, ".jsonl").is_empty());
    let (listed, _) = list_all(&archive, "q", 10);
    assert_eq!(listed, ["a000", "a001", "b000"]);
}

#[test]
fn new_segments_sort_after_older_ones_even_with_an_older_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(tmp.path(), options("n1")).unwrap();
    archive.append("q", &msgs("q", "a", 1, T0)).unwrap();
    archive.rotate_due(T0 + HOUR).unwrap();
    // A record archived "earlier" (clock went back) still lands after.
    archive.append("q", &msgs("q", "b", 1, T0 - HOUR)).unwrap();
    archive.rotate_due(T0 + 2 * HOUR).unwrap();
    archive.append("q", &msgs("q", "c", 1, T0)).unwrap();
    let dir = queue_dir(&archive, "q");
    let names = files(&dir);
    assert_eq!(names.len(), 3, "{names:?}");
    let (listed, _) = list_all(&archive, "q", 1);
    assert_eq!(listed, ["a000", "b000", "c000"]);
}

#[test]
fn recovery_cuts_a_torn_tail_of_this_node_only() {
    let tmp = tempfile::tempdir().unwrap();
    let records = msgs("q", "t", 2, T0);
    let (mine, theirs) = {
        let a = Archive::open(tmp.path(), options("n1")).unwrap();
        let b = Archive::open(tmp.path(), options("n2")).unwrap();
        a.append("q", &records).unwrap();
        b.append("q", &msgs("q", "u", 1, T0 + 5)).unwrap();
        let dir = queue_dir(&a, "q");
        let open = with_ext(&dir, ".jsonl");
        let mine = dir.join(open.iter().find(|n| n.ends_with("-n1.jsonl")).unwrap());
        let theirs = dir.join(open.iter().find(|n| n.ends_with("-n2.jsonl")).unwrap());
        (mine, theirs)
    };
    let good_len = fs::metadata(&mine).unwrap().len();
    let their_len = fs::metadata(&theirs).unwrap().len();
    // A crash mid-append: a partial record after the last newline.
    for path in [&mine, &theirs] {
        let mut f = fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(br#"{"queue":"q","messageId":"torn","bo"#)
            .unwrap();
    }

    // Readers skip the torn tail of an open segment of any node.
    let reader = Archive::open(tmp.path(), options("n3")).unwrap();
    let (listed, _) = list_all(&reader, "q", 10);
    assert_eq!(listed, ["t000", "t001", "u000"]);
    assert!(fs::metadata(&theirs).unwrap().len() > their_len);

    let _a = Archive::open(tmp.path(), options("n1")).unwrap();
    assert_eq!(fs::metadata(&mine).unwrap().len(), good_len);
    assert!(
        fs::metadata(&theirs).unwrap().len() > their_len,
        "another node's segment is not ours to cut"
    );
    let (listed, _) = list_all(&reader, "q", 10);
    assert_eq!(listed, ["t000", "t001", "u000"]);
}

#[test]
fn recovery_cuts_from_the_first_unparseable_line() {
    let tmp = tempfile::tempdir().unwrap();
    let path = {
        let a = Archive::open(tmp.path(), options("n1")).unwrap();
        a.append("q", &msgs("q", "t", 2, T0)).unwrap();
        let dir = queue_dir(&a, "q");
        dir.join(&with_ext(&dir, ".jsonl")[0])
    };
    let good_len = fs::metadata(&path).unwrap().len();
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    // Blocks of an unfinished write: zeros, then a later whole line.
    f.write_all(b"\0\0\0\0\n").unwrap();
    f.write_all(&serde_json::to_vec(&msg("q", "late", T0)).unwrap())
        .unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    let a = Archive::open(tmp.path(), options("n1")).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), good_len);
    assert_eq!(list_all(&a, "q", 10).0, ["t000", "t001"]);
}

#[test]
fn a_bad_line_inside_a_segment_is_corrupt() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Archive::open(tmp.path(), options("n1")).unwrap();
    a.append("q", &msgs("q", "t", 1, T0)).unwrap();
    let dir = queue_dir(&a, "q");
    // Another node's segment, garbled in the middle.
    let path = dir.join(format!("{}.jsonl", layout::stem(T0, "n2")));
    let good = serde_json::to_string(&msg("q", "x", T0)).unwrap();
    fs::write(&path, format!("{good}\nnot json\n{good}\n")).unwrap();
    match a.list("q", None, 10, &all) {
        Err(ArchiveError::Corrupt { file, line }) => {
            assert_eq!(file, path);
            assert_eq!(line, 2);
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    // Garbage as the last line of an open segment is a writer mid-write.
    fs::write(&path, format!("{good}\nnot json yet\n")).unwrap();
    let (listed, _) = list_all(&a, "q", 10);
    assert_eq!(listed, ["t000", "x"]);
}

#[test]
fn recovery_removes_leftover_tmp_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = {
        let a = Archive::open(tmp.path(), options("n1")).unwrap();
        a.append("q", &msgs("q", "t", 1, T0)).unwrap();
        queue_dir(&a, "q")
    };
    let mine = dir.join(format!("{}.jsonl.gz.tmp", layout::stem(T0 - 5, "n1")));
    let theirs_fresh = dir.join(format!("{}.jsonl.gz.tmp", layout::stem(T0 - 5, "n2")));
    let theirs_stale = dir.join(format!("{}.jsonl.gz.tmp", layout::stem(T0 - 6, "n2")));
    for p in [&mine, &theirs_fresh, &theirs_stale] {
        fs::write(p, b"half a gzip").unwrap();
    }
    fs::File::options()
        .write(true)
        .open(&theirs_stale)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(2 * 3600))
        .unwrap();
    let a = Archive::open(tmp.path(), options("n1")).unwrap();
    assert!(!mine.exists());
    assert!(!theirs_stale.exists());
    assert!(
        theirs_fresh.exists(),
        "another node may be rotating right now"
    );
    assert_eq!(list_all(&a, "q", 10).0, ["t000"]);
}

#[test]
fn recovery_keeps_the_gzip_when_both_copies_exist() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Archive::open(tmp.path(), options("n1")).unwrap();
    a.append("q", &msgs("q", "t", 3, T0)).unwrap();
    let dir = queue_dir(&a, "q");
    let plain_name = with_ext(&dir, ".jsonl")[0].clone();
    let plain = fs::read(dir.join(&plain_name)).unwrap();
    a.rotate_due(T0 + HOUR).unwrap();
    // A crash after the rename, before the plain file's removal; a copy
    // that differs shows which one is read.
    let mut plain = plain;
    plain.extend(serde_json::to_vec(&msg("q", "stray", T0)).unwrap());
    plain.push(b'\n');
    fs::write(dir.join(&plain_name), &plain).unwrap();
    assert_eq!(with_ext(&dir, ".jsonl").len(), 1);
    assert_eq!(with_ext(&dir, ".jsonl.gz").len(), 1);

    // Before any recovery, readers take the gzip only.
    assert_eq!(list_all(&a, "q", 2).0, ["t000", "t001", "t002"]);
    assert_eq!(a.find("q", &["t001".to_owned()]).unwrap().len(), 1);
    drop(a);

    // Recovery by any node removes the plain copy.
    let b = Archive::open(tmp.path(), options("n2")).unwrap();
    assert!(!dir.join(&plain_name).exists());
    assert_eq!(list_all(&b, "q", 2).0, ["t000", "t001", "t002"]);
    fs::write(dir.join(&plain_name), &plain).unwrap();
    let a = Archive::open(tmp.path(), options("n1")).unwrap();
    assert!(!dir.join(&plain_name).exists());
    assert_eq!(list_all(&a, "q", 2).0, ["t000", "t001", "t002"]);
}

#[test]
fn expire_removes_only_old_rotated_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(
        tmp.path(),
        ArchiveOptions {
            retention_ms: Some(24 * HOUR),
            ..options("n1")
        },
    )
    .unwrap();
    archive.append("q", &msgs("q", "old", 2, T0)).unwrap();
    archive.rotate_due(T0 + HOUR).unwrap();
    archive
        .append("q", &msgs("q", "new", 2, T0 + HOUR))
        .unwrap();
    archive.rotate_due(T0 + 2 * HOUR).unwrap();
    archive
        .append("q", &msgs("q", "open", 1, T0 + 2 * HOUR))
        .unwrap();
    let dir = queue_dir(&archive, "q");
    let gz = with_ext(&dir, ".jsonl.gz");
    assert_eq!(gz.len(), 2);
    let now = now_ms();
    let old = dir.join(&gz[0]);
    fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(25 * 3600))
        .unwrap();
    // The open segment is old too, but only rotated ones expire.
    let open = dir.join(&with_ext(&dir, ".jsonl")[0]);
    fs::File::options()
        .write(true)
        .open(&open)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(25 * 3600))
        .unwrap();

    assert_eq!(archive.expire(now).unwrap(), 1);
    assert!(!old.exists());
    assert!(open.exists());
    assert_eq!(
        list_all(&archive, "q", 10).0,
        ["new000", "new001", "open000"]
    );
    assert_eq!(archive.expire(now).unwrap(), 0);

    // Without a retention nothing expires.
    let keep_all = Archive::open(tmp.path(), options("n2")).unwrap();
    assert_eq!(keep_all.expire(now + 1000 * 24 * HOUR).unwrap(), 0);
    assert_eq!(with_ext(&dir, ".jsonl.gz").len(), 1);
}

#[test]
fn expire_removes_a_queue_left_without_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(
        tmp.path(),
        ArchiveOptions {
            retention_ms: Some(HOUR),
            ..options("n1")
        },
    )
    .unwrap();
    archive.append("gone", &msgs("gone", "g", 1, T0)).unwrap();
    archive
        .mark_restored("gone", &["g000".to_owned()], "dest", T0)
        .unwrap();
    archive.rotate_due(T0 + HOUR).unwrap();
    archive.append("kept", &msgs("kept", "k", 1, T0)).unwrap();
    assert_eq!(archive.queues().unwrap(), ["gone", "kept"]);
    assert_eq!(archive.expire(now_ms() + 2 * HOUR).unwrap(), 1);
    assert_eq!(archive.queues().unwrap(), ["kept"]);
    assert!(
        archive
            .list("gone", None, 10, &all)
            .unwrap()
            .entries
            .is_empty()
    );
}

#[test]
fn mark_restored_shows_in_list_and_find() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(tmp.path(), options("n1")).unwrap();
    archive.append("q", &msgs("q", "r", 3, T0)).unwrap();
    let ids = ["r000".to_owned(), "r002".to_owned()];
    archive.mark_restored("q", &ids, "dest-a", T0 + 50).unwrap();
    archive
        .mark_restored("q", &ids[..1], "dest-b", T0 + 90)
        .unwrap();

    let page = archive.list("q", None, 10, &all).unwrap();
    let restored: Vec<_> = page.entries.iter().map(|e| e.restored_at).collect();
    assert_eq!(restored, [Some(T0 + 90), None, Some(T0 + 50)]);
    let found = archive.find("q", &ids).unwrap();
    let found: Vec<_> = found
        .iter()
        .map(|e| (e.message.message_id.as_str(), e.restored_at))
        .collect();
    assert_eq!(found, [("r000", Some(T0 + 90)), ("r002", Some(T0 + 50))]);

    // The log holds one line per restore, and a torn line (a crash) costs
    // only itself.
    let log = queue_dir(&archive, "q").join("restored.jsonl");
    let text = fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.contains(r#""destination":"dest-b""#));
    let mut f = fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(br#"{"messageId":"r001","rest"#).unwrap();
    archive
        .mark_restored("q", &["r001".to_owned()], "dest-c", T0 + 99)
        .unwrap();
    let page = archive.list("q", None, 10, &all).unwrap();
    assert_eq!(page.entries[1].restored_at, Some(T0 + 99));
}

#[test]
fn a_copy_archived_after_its_restore_is_not_restored() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(tmp.path(), options("n1")).unwrap();
    archive.append("q", &[msg("q", "m", T0)]).unwrap();
    archive
        .mark_restored("q", &["m".to_owned()], "q", T0 + 10)
        .unwrap();
    // Restored, expired again, archived again under the same id.
    archive.append("q", &[msg("q", "m", T0 + 20)]).unwrap();
    let page = archive.list("q", None, 10, &all).unwrap();
    let restored: Vec<_> = page.entries.iter().map(|e| e.restored_at).collect();
    assert_eq!(restored, [Some(T0 + 10), None]);
    let found = archive.find("q", &["m".to_owned()]).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message.archived_at, T0 + 20);
    assert_eq!(
        found[0].restored_at, None,
        "the newest copy waits for a restore"
    );
}

#[test]
fn queue_keys_with_slashes_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(tmp.path(), options("n1")).unwrap();
    let keys = [
        "eu-west-1/000000000000/orders",
        "plain",
        "eu-west-1/000000000000/orders.fifo",
        ".hidden/..",
        "späť 100%",
    ];
    for key in keys {
        archive.append(key, &msgs(key, "k", 1, T0)).unwrap();
    }
    assert!(
        tmp.path()
            .join("eu-west-1%2F000000000000%2Forders")
            .is_dir()
    );
    let mut expected: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    expected.sort();
    assert_eq!(archive.queues().unwrap(), expected);
    for key in keys {
        let page = archive.list(key, None, 10, &all).unwrap();
        assert_eq!(page.entries.len(), 1, "{key}");
        assert_eq!(page.entries[0].message.queue, key);
    }
    // A stray file or a directory that is not an encoding is not a queue.
    fs::write(tmp.path().join("README"), b"x").unwrap();
    fs::create_dir(tmp.path().join("lower%2f")).unwrap();
    assert_eq!(archive.queues().unwrap(), expected);
    assert!(archive.append("", &msgs("", "k", 1, T0)).is_err());
}

#[test]
fn find_dedupes_copies_keeping_the_latest() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(tmp.path(), options("n1")).unwrap();
    // A crash between the append and the queue's delete: archived twice.
    archive
        .append("q", &[msg("q", "a", T0), msg("q", "dup", T0 + 1)])
        .unwrap();
    archive.rotate_due(T0 + HOUR).unwrap();
    let mut again = msg("q", "dup", T0 + 500);
    again.receive_count = 7;
    archive
        .append("q", &[msg("q", "b", T0 + 400), again.clone()])
        .unwrap();

    assert_eq!(list_all(&archive, "q", 10).0, ["a", "dup", "b", "dup"]);
    let ids = ["dup".to_owned(), "a".to_owned(), "missing".to_owned()];
    let found = archive.find("q", &ids).unwrap();
    let got: Vec<_> = found.iter().map(|e| e.message.clone()).collect();
    assert_eq!(got, [msg("q", "a", T0), again]);
    assert!(archive.find("q", &[]).unwrap().is_empty());
    assert!(archive.find("nothing-here", &ids).unwrap().is_empty());
}

#[test]
fn cursor_tokens_round_trip_and_junk_is_bad() {
    let cursor = ArchiveCursor {
        stem: layout::stem(T0, "node-1"),
        line: 42,
    };
    let token = cursor.to_token();
    assert!(
        token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    );
    assert_eq!(ArchiveCursor::from_token(&token).unwrap(), cursor);

    let b64 = |s: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s)
    };
    let junk = [
        "".to_owned(),
        "not base64!".to_owned(),
        b64("no colon"),
        b64(&format!("{}:", cursor.stem)),
        b64(&format!("{}:+1", cursor.stem)),
        b64(&format!("{}:-1", cursor.stem)),
        b64("123-n:5"),
        b64("../../etc/passwd:1"),
        b64(&format!("{}:99999999999999999999999", cursor.stem)),
    ];
    for token in junk {
        assert!(
            matches!(
                ArchiveCursor::from_token(&token),
                Err(ArchiveError::BadCursor)
            ),
            "{token}"
        );
    }
}

#[test]
fn usage_counts_files_and_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::open(tmp.path(), options("n1")).unwrap();
    assert_eq!(archive.usage().unwrap(), (0, 0));
    archive.append("q", &msgs("q", "a", 3, T0)).unwrap();
    archive.rotate_due(T0 + HOUR).unwrap();
    archive.append("q", &msgs("q", "b", 3, T0 + HOUR)).unwrap();
    archive.append("r", &msgs("r", "c", 1, T0)).unwrap();
    archive
        .mark_restored("q", &["a000".to_owned()], "d", T0)
        .unwrap();
    let mut bytes = 0;
    for q in ["q", "r"] {
        for name in files(&queue_dir(&archive, q)) {
            bytes += fs::metadata(queue_dir(&archive, q).join(name))
                .unwrap()
                .len();
        }
    }
    assert_eq!(archive.usage().unwrap(), (bytes, 3));
}

#[test]
fn records_serialise_in_camel_case_and_omit_absent_options() {
    let mut m = msg("q", "id", T0);
    m.failure_reason = None;
    m.group_id = Some("g".to_owned());
    let json = serde_json::to_string(&m).unwrap();
    assert!(json.contains(r#""messageId":"id""#));
    assert!(json.contains(r#""archivedAt":"#));
    assert!(json.contains(r#""groupId":"g""#));
    assert!(!json.contains("failureReason"));
    assert!(!json.contains("dedupId"));
    // Older or minimal lines still read.
    let minimal =
        r#"{"queue":"q","messageId":"m","body":"b","sentAt":1,"archivedAt":2,"receiveCount":0}"#;
    let m: ArchivedMessage = serde_json::from_str(minimal).unwrap();
    assert_eq!(m.first_receive_at, 0);
    assert!(m.attributes.is_empty());
}

#[test]
fn queue_names_encode_and_decode() {
    assert_eq!(layout::encode_queue("a/b.c_d-e"), "a%2Fb.c_d-e");
    assert_eq!(layout::encode_queue(".."), "%2E.");
    assert_eq!(
        layout::decode_queue("a%2Fb.c_d-e").as_deref(),
        Some("a/b.c_d-e")
    );
    assert_eq!(layout::decode_queue("%2E.").as_deref(), Some(".."));
    for bad in ["", "a%2f", "a%", "a%zz", "..", "a b", "%2"] {
        assert_eq!(layout::decode_queue(bad), None, "{bad}");
    }
    assert_eq!(layout::sanitize_node("eu node/1"), "eu_node_1");
    assert_eq!(layout::sanitize_node(""), "node");
}

#[test]
fn a_stem_both_open_and_rotated_is_read_from_the_gzip() {
    let s = layout::stem(T0, "n1");
    let later = layout::stem(T0 + 1, "n1");
    for entries in [
        vec![
            Entry::Open(s.clone()),
            Entry::Rotated(s.clone()),
            Entry::Open(later.clone()),
        ],
        vec![
            Entry::Open(later.clone()),
            Entry::Rotated(s.clone()),
            Entry::Open(s.clone()),
        ],
    ] {
        let segments = layout::segments(entries);
        let got: Vec<_> = segments
            .iter()
            .map(|g| (g.stem.as_str(), g.rotated))
            .collect();
        assert_eq!(got, [(s.as_str(), true), (later.as_str(), false)]);
    }
}
