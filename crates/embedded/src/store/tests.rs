//! Tests of the store.

use std::path::Path;
use std::sync::Arc;

use super::database::*;
use crate::change::Change;
use crate::change::Rewrite;
use crate::codec;
use crate::log_record;
use crate::message::{MessageData, MessageState};
use crate::wal::BodyAt;

/// A put of message `seq` of queue 1 with `body`, for tests here and
/// in the journal.
pub(crate) fn put(seq: u64, body: &str) -> Change {
    let data = MessageData {
        message_id: [1; 16],
        sent_at: 0,
        enqueued_at: 0,
        body: body.into(),
        attributes: Default::default(),
        system_attributes: Default::default(),
        group_id: None,
        dedup_id: None,
        body_md5: None,
    };
    Change::PutMessage {
        queue: 1,
        seq,
        data: codec::encode_message(&data, None),
        state: never_received(),
        in_log: None,
    }
}

/// The state of a message nobody received yet.
fn never_received() -> [u8; codec::STATE_LEN] {
    codec::encode_state(&MessageState {
        visible_at: 0,
        receive_count: 0,
        first_receive_at: 0,
        last_receive_at: 0,
    })
}

/// The sequences a start would read back for `queue`.
fn started(store: &Store, queue: u64) -> Vec<u64> {
    let mut seqs = Vec::new();
    store
        .for_each_message(queue, |seq, _, _, _, _| seqs.push(seq))
        .unwrap();
    seqs
}

/// D1 across a start that reads each message's head, not its record: heads follow
/// every put, delete, purge and move, and a store written before they
/// existed gets them at its first open.
#[test]
fn d1_heads_follow_the_messages_and_older_stores_get_them_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.redb");
    let store = Store::open(&path, None).unwrap();
    let puts: Vec<Change> = (1..=6).map(|seq| put(seq, "body")).collect();
    store.apply(puts.iter(), 1, None).unwrap();
    let changes = [
        Change::DeleteMessage { queue: 1, seq: 2 },
        Change::Purge { queue: 1, below: 2 },
        Change::MoveMessage {
            from: (1, 3),
            to: (2, 7),
            state: never_received(),
            rewrite: Rewrite(Arc::new(|m| m.group_id = Some("g".into()))),
            seal: None,
        },
    ];
    store.apply(changes.iter(), 2, None).unwrap();
    assert_eq!(started(&store, 1), [4, 5, 6]);
    let mut groups = Vec::new();
    store
        .for_each_message(2, |seq, _, group, _, _| {
            groups.push((seq, group.map(str::to_string)))
        })
        .unwrap();
    assert_eq!(groups, [(7, Some("g".to_string()))]);

    store.drop_heads();
    drop(store);
    let store = Store::open(&path, None).unwrap();
    assert_eq!(started(&store, 1), [4, 5, 6]);
    assert_eq!(started(&store, 2), [7]);

    // An older binary put a message (and no head) after the build.
    store.put_without_heads(&[put(8, "late")]);
    drop(store);
    let store = Store::open(&path, None).unwrap();
    assert_eq!(started(&store, 1), [4, 5, 6, 8]);
    store
        .apply([Change::DeleteQueue { id: 2 }].iter(), 3, None)
        .unwrap();
    assert!(started(&store, 2).is_empty());
}

/// D1 across compaction in steps: `take_in` copies a segment's
/// messages into redb a few at a time, across queues, going on from
/// where it stopped, and leaves other segments' messages alone; each
/// reads the same before and after, and once none is left the segment
/// has no entry.
#[test]
fn d1_compaction_in_steps_moves_every_message_of_its_segment_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
    // Queues 1 and 3 get messages in segment 5, queue 2 in segment 6.
    let layout = [(5, vec![(1, 1..=4), (3, 7..=9)]), (6, vec![(2, 5..=6)])];
    let changes = puts_in_log(dir.path(), &layout);
    store.apply(changes.iter(), 1, None).unwrap();
    let indexed = |queue: u64| {
        let mut seen = Vec::new();
        store
            .for_each_message(queue, |seq, _, _, _, _| seen.push(seq))
            .unwrap();
        seen
    };
    let indexed_before: Vec<_> = [1, 2, 3].map(indexed).to_vec();
    let body = |queue: u64, seq: u64| {
        store.read_messages(queue, &[seq]).unwrap()[0]
            .as_ref()
            .map(|m| m.body.clone())
    };
    let all = [
        (1, 1),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 5),
        (2, 6),
        (3, 7),
        (3, 8),
        (3, 9),
    ];
    let before: Vec<_> = all.iter().map(|&(q, s)| body(q, s)).collect();
    assert_eq!(store.segment_use().unwrap()[&5].messages, 7);

    let mut from = (0, 0);
    let mut steps = 0;
    while let Some(next) = store.take_in(5, from, 3).unwrap() {
        from = next;
        steps += 1;
    }
    assert_eq!(steps, 2, "seven messages, three a step");
    let used = store.segment_use().unwrap();
    assert!(!used.contains_key(&5), "{used:?}");
    assert_eq!(used[&6].messages, 2);
    // Segment 5 can go: what moved reads from redb alone.
    store.segments().forget(5);
    let log_dir = dir.path().join(crate::wal::LOG_DIR);
    std::fs::remove_file(log_dir.join(format!("{:020}.wal", 5))).unwrap();
    let after: Vec<_> = all.iter().map(|&(q, s)| body(q, s)).collect();
    assert_eq!(before, after);
    assert!(after.iter().all(Option::is_some));
    // A start indexes the same messages.
    assert_eq!([1, 2, 3].map(indexed).to_vec(), indexed_before);
}

/// A queue and some of its sequences.
type QueueSeqs = (u64, std::ops::RangeInclusive<u64>);

/// Writes the puts of `layout` (segment, then queue and sequences) to
/// log segments in `dir`, as the log writer does, and returns them,
/// pointing at their data, with a PutQueue for each queue first.
fn puts_in_log(dir: &Path, layout: &[(u64, Vec<QueueSeqs>)]) -> Vec<Change> {
    let mut queues: Vec<u64> = layout
        .iter()
        .flat_map(|(_, q)| q.iter().map(|(id, _)| *id))
        .collect();
    queues.sort_unstable();
    queues.dedup();
    let mut changes: Vec<Change> = queues
        .into_iter()
        .map(|id| Change::PutQueue {
            id,
            record: b"{}".to_vec(),
        })
        .collect();
    for (segment, queues) in layout {
        let mut log = crate::wal::Log::create(&crate::wal::os(), dir, *segment).unwrap();
        let mut buf = Vec::new();
        crate::wal::Log::start_record(&mut buf);
        let base = log.end();
        for (queue, seqs) in queues {
            for seq in seqs.clone() {
                let Change::PutMessage { data, state, .. } = put(seq, &format!("m{seq}")) else {
                    unreachable!()
                };
                let start = log_record::put_message(&mut buf, (*queue, seq), &data, &state);
                let at = BodyAt {
                    segment: *segment,
                    offset: base + start as u64,
                    len: data.len() as u32,
                };
                changes.push(Change::PutMessage {
                    queue: *queue,
                    seq,
                    data,
                    state,
                    in_log: Some(at),
                });
            }
        }
        log.write(1, &mut buf).unwrap();
    }
    changes
}

/// A message whose data lies in the log is one row of `states`: a send,
/// a receive and a delete each change one tree. The row keeps the
/// data's place and the head through receives, a start indexes the
/// message from it alone, and its delete counts it out of its segment.
#[test]
fn d1_a_message_in_the_log_is_one_row_from_send_to_delete() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
    let changes = puts_in_log(dir.path(), &[(4, vec![(1, 1..=3)])]);
    store.apply(changes.iter(), 1, None).unwrap();
    assert_eq!(store.rows().unwrap(), (0, 0, 3), "messages, heads, states");

    let received = MessageState {
        visible_at: 500,
        receive_count: 1,
        first_receive_at: 100,
        last_receive_at: 100,
    };
    let receive = Change::PutState {
        queue: 1,
        seq: 2,
        state: codec::encode_state(&received),
    };
    store.apply([receive].iter(), 2, None).unwrap();
    assert_eq!(store.rows().unwrap(), (0, 0, 3));
    let read = store.read_messages(1, &[1, 2, 3]).unwrap();
    let bodies: Vec<_> = read
        .iter()
        .map(|m| m.as_ref().map(|m| m.body.as_str()))
        .collect();
    assert_eq!(bodies, [Some("m1"), Some("m2"), Some("m3")]);
    let mut indexed = Vec::new();
    store
        .for_each_message(1, |seq, _, _, state, _| indexed.push((seq, state)))
        .unwrap();
    assert_eq!(indexed.len(), 3);
    assert_eq!(indexed[1], (2, received));

    let delete = Change::DeleteMessage { queue: 1, seq: 2 };
    store.apply([delete].iter(), 3, None).unwrap();
    assert_eq!(store.rows().unwrap(), (0, 0, 2));
    assert_eq!(store.segment_use().unwrap()[&4].messages, 2);
    assert!(store.read_messages(1, &[2]).unwrap()[0].is_none());
    // A state for a message deleted meanwhile leaves no row behind.
    let late = Change::PutState {
        queue: 1,
        seq: 2,
        state: codec::encode_state(&received),
    };
    store.apply([late].iter(), 4, None).unwrap();
    assert_eq!(store.rows().unwrap(), (0, 0, 2));
    let purge = Change::Purge {
        queue: 1,
        below: 10,
    };
    store.apply([purge].iter(), 5, None).unwrap();
    assert_eq!(store.rows().unwrap(), (0, 0, 0));
    assert!(store.segment_use().unwrap().is_empty());

    // Were a sequence put again (sequences are never reused), no row of
    // the first put would outlive the second.
    store.apply([put(9, "in redb")].iter(), 6, None).unwrap();
    assert_eq!(store.rows().unwrap(), (1, 1, 1));
    let again = puts_in_log(dir.path(), &[(8, vec![(1, 9..=9)])]);
    store.apply(again.iter(), 7, None).unwrap();
    assert_eq!(store.rows().unwrap(), (0, 0, 1));
    assert_eq!(store.segment_use().unwrap()[&8].messages, 1);
}

/// A store written when a message in the log had a pointer record in
/// `messages`, its head in `heads` and its state alone in `states`
/// (before this layout) reads, indexes, receives, deletes and compacts
/// as before.
#[test]
fn d1_pointer_records_of_the_earlier_layout_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
    let changes = puts_in_log(dir.path(), &[(4, vec![(1, 1..=4)])]);
    store.apply(changes.iter(), 1, None).unwrap();
    store.to_pointer_records();
    assert_eq!(store.rows().unwrap(), (4, 4, 4));

    let read = store.read_messages(1, &[4, 1]).unwrap();
    let bodies: Vec<_> = read
        .iter()
        .map(|m| m.as_ref().map(|m| m.body.as_str()))
        .collect();
    assert_eq!(bodies, [Some("m4"), Some("m1")]);
    let count = store.for_each_message(1, |_, _, _, _, _| {}).unwrap();
    assert_eq!(count, 4);
    let receive = Change::PutState {
        queue: 1,
        seq: 1,
        state: never_received(),
    };
    let delete = Change::DeleteMessage { queue: 1, seq: 2 };
    store.apply([receive, delete].iter(), 2, None).unwrap();
    assert_eq!(store.rows().unwrap(), (3, 3, 3));
    assert_eq!(store.segment_use().unwrap()[&4].messages, 3);
    while store.take_in(4, (0, 0), 2).unwrap().is_some() {}
    assert!(store.segment_use().unwrap().is_empty());
    let read = store.read_messages(1, &[1, 3, 4]).unwrap();
    assert!(read.iter().all(Option::is_some));
    assert_eq!(store.for_each_message(1, |_, _, _, _, _| {}).unwrap(), 3);
}

/// Reads answer in the order asked, with `None` for what is not
/// stored, whether the sequences are close (one walk along the
/// leaves) or far apart (one lookup each), repeated or out of order.
#[test]
fn read_messages_answers_in_the_order_asked() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.redb"), None).unwrap();
    let changes: Vec<Change> = [3, 4, 5, 7, 9, 1000]
        .into_iter()
        .map(|seq| put(seq, &format!("m{seq}")))
        .collect();
    store.apply(changes.iter(), 1, None).unwrap();
    let bodies = |seqs: &[u64]| -> Vec<Option<String>> {
        let read = store.read_messages(1, seqs).unwrap();
        read.into_iter().map(|m| m.map(|m| m.body)).collect()
    };
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        bodies(&[9, 3, 6, 4, 9, 2]),
        [some("m9"), some("m3"), None, some("m4"), some("m9"), None]
    );
    assert_eq!(bodies(&[1000, 5, 8]), [some("m1000"), some("m5"), None]);
    assert_eq!(bodies(&[7]), [some("m7")]);
    assert!(bodies(&[]).is_empty());
    assert_eq!(store.read_messages(2, &[3]).unwrap().len(), 1);
    assert!(store.read_messages(2, &[3]).unwrap()[0].is_none());
}
