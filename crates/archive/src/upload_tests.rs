//! What is left to copy to a bucket, and its markers' life.

use std::fs;
use std::path::Path;

use super::*;

const HOUR: u64 = 3_600_000;
const T0: u64 = 1_700_000_000_000;

fn message(queue: &str, id: &str, archived_at: u64) -> ArchivedMessage {
    ArchivedMessage {
        queue: queue.to_owned(),
        message_id: id.to_owned(),
        body: format!("body of {id}"),
        attributes: Default::default(),
        system_attributes: Default::default(),
        sent_at: archived_at - 1000,
        archived_at,
        receive_count: 1,
        first_receive_at: archived_at - 900,
        last_receive_at: archived_at - 900,
        group_id: None,
        dedup_id: None,
        sequence_number: None,
        failure_reason: None,
        failure_class: None,
    }
}

fn open(dir: &Path, node: &str, retention_ms: Option<u64>) -> Archive {
    Archive::open(
        dir,
        ArchiveOptions {
            node: node.to_owned(),
            retention_ms,
            ..ArchiveOptions::default()
        },
    )
    .unwrap()
}

fn objects(pending: &[PendingUpload]) -> Vec<&str> {
    pending.iter().map(|p| p.object.as_str()).collect()
}

#[test]
fn only_this_nodes_rotated_segments_wait_until_marked() {
    let tmp = tempfile::tempdir().unwrap();
    let a = open(tmp.path(), "a", None);
    let b = open(tmp.path(), "b", None);
    a.append("orders/dlq", &[message("orders/dlq", "m1", T0)])
        .unwrap();
    b.append("orders/dlq", &[message("orders/dlq", "m2", T0)])
        .unwrap();
    // Open segments are still being written: nothing to copy yet.
    assert!(a.pending_uploads().unwrap().is_empty());

    a.rotate_due(T0 + HOUR).unwrap();
    b.rotate_due(T0 + HOUR).unwrap();
    let pending = a.pending_uploads().unwrap();
    // The object name is the directory's own layout.
    assert_eq!(
        objects(&pending),
        [format!("orders%2Fdlq/{T0:016}-a.jsonl.gz")]
    );
    assert_eq!(pending[0].queue, "orders/dlq");
    assert!(pending[0].path.is_file());

    a.mark_uploaded(&pending[0]).unwrap();
    assert!(a.pending_uploads().unwrap().is_empty());
    assert_eq!(b.pending_uploads().unwrap().len(), 1, "b's is b's to copy");
    // A marker changes nothing a reader sees.
    let page = a
        .list("orders/dlq", None, 10, &|_: &ArchivedMessage| true)
        .unwrap();
    assert_eq!(page.entries.len(), 2);
    let (_, segments) = a.usage().unwrap();
    assert_eq!(segments, 2);
}

#[test]
fn expiry_takes_the_marker_with_its_segment_and_recovery_drops_orphans() {
    let tmp = tempfile::tempdir().unwrap();
    let a = open(tmp.path(), "a", Some(HOUR));
    a.append("q", &[message("q", "m1", T0)]).unwrap();
    a.rotate_due(T0 + HOUR).unwrap();
    let pending = a.pending_uploads().unwrap();
    a.mark_uploaded(&pending[0]).unwrap();
    let marker = tmp
        .path()
        .join("q")
        .join(format!("{T0:016}-a.jsonl.gz.uploaded"));
    assert!(marker.is_file());

    // Expired while being copied: the marker is not made.
    let now = u64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    assert_eq!(a.expire(now + 2 * HOUR).unwrap(), 1);
    assert!(!marker.exists(), "the marker goes with its segment");
    a.mark_uploaded(&pending[0]).unwrap();
    assert!(!marker.exists());

    // A marker whose segment is gone (a crash between the two removals)
    // is dropped when the archive opens.
    a.append("r", &[message("r", "m2", T0)]).unwrap();
    let orphan = tmp
        .path()
        .join("r")
        .join(format!("{:016}-a.jsonl.gz.uploaded", T0 - 5));
    fs::write(&orphan, b"").unwrap();
    drop(a);
    let _reopened = open(tmp.path(), "a", Some(HOUR));
    assert!(!orphan.exists());
}
