//! Tests of group_commit.

use parking_lot::Mutex;

use super::{applier::*, gate::*};

/// A reader waits for every record handed over to be applied, and no
/// longer: applied records let it through at once.
#[test]
fn a_reader_waits_for_the_records_handed_over() {
    let gate = Mutex::new(Gate::new(0));
    assert!(matches!(Gate::readable(&gate), Ok(None)));
    Gate::handed(&gate, 1);
    Gate::handed(&gate, 2);
    let mut rx = Gate::readable(&gate)
        .unwrap()
        .expect("record 2 is not applied");
    Gate::applied(&gate, 1);
    assert!(rx.try_recv().is_err(), "answered before record 2 applied");
    Gate::applied(&gate, 2);
    assert_eq!(rx.try_recv(), Ok(Ok(())));
    assert!(matches!(Gate::readable(&gate), Ok(None)));
}

/// Only a segment mostly dead and no longer shrinking is compacted:
/// one whose messages consumers are still deleting (the head of a
/// backlog) is left to drain, and one just seen for the first time
/// waits a checkpoint to show which it is.
#[test]
fn d1_a_segment_still_being_drained_is_not_compacted() {
    let len = 1000;
    assert!(worth_compacting(400, Some(400), len), "settled, sparse");
    assert!(worth_compacting(0, Some(0), len));
    assert!(!worth_compacting(400, Some(450), len), "still draining");
    assert!(!worth_compacting(400, None, len), "first seen");
    assert!(!worth_compacting(600, Some(600), len), "mostly needed");
    assert!(!worth_compacting(500, Some(500), len), "exactly half");
}

/// A failed apply answers the readers waiting and every later one
/// with its error.
#[test]
fn a_failed_apply_answers_waiting_and_later_readers_with_its_error() {
    let gate = Mutex::new(Gate::new(0));
    Gate::handed(&gate, 1);
    let mut rx = Gate::readable(&gate).unwrap().unwrap();
    Gate::apply_failed(&gate, "disk full");
    assert_eq!(rx.try_recv(), Ok(Err("disk full".to_string())));
    assert_eq!(Gate::readable(&gate).unwrap_err(), "disk full");
}
