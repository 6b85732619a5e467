//! Tests of the queue index.

use std::sync::Arc;

use sluice_broker::QueueMeta;
use sluice_core::attributes::QueueConfig;

use super::{delivery::*, entry::*, state::*};
use crate::body_cache::BodyBudget;
use crate::message::{MessageData, MessageState};

fn queue(cache: Option<Arc<BodyBudget>>) -> QueueState {
    QueueState::new(
        QueueMeta {
            name: "q".into(),
            config: QueueConfig::for_create("q", &Default::default()).expect("config"),
            tags: Default::default(),
            created_at: 0,
            modified_at: 0,
        },
        cache,
    )
}

fn data(body: &str) -> Arc<MessageData> {
    Arc::new(MessageData {
        message_id: [1; 16],
        sent_at: 0,
        enqueued_at: 0,
        body: body.into(),
        attributes: Default::default(),
        system_attributes: Default::default(),
        group_id: None,
        dedup_id: None,
        body_md5: None,
    })
}

fn fresh() -> MessageState {
    MessageState {
        visible_at: 0,
        receive_count: 0,
        first_receive_at: 0,
        last_receive_at: 0,
    }
}

/// The index entry is what a backlog costs per message; a field added
/// carelessly shows up here before it shows up in a memory figure.
#[test]
fn an_index_entry_stays_small() {
    assert!(
        std::mem::size_of::<Entry>() <= 40,
        "{}",
        std::mem::size_of::<Entry>()
    );
}

#[test]
fn the_body_budget_keeps_the_newest_bodies() {
    let one = BodyBudget::weight(&data("x"));
    let budget = Arc::new(BodyBudget::new(3 * one));
    let mut q = queue(Some(budget.clone()));
    let rules = DeliveryRules {
        visibility_ms: 30_000,
        ..Default::default()
    };
    for seq in 1..=5 {
        q.insert(seq, Some(data("x")), 0, None, fresh(), 0);
        // Received at once: nothing waits ahead of the next send.
        assert_eq!(q.deliver(1, 0, &rules).delivered, vec![seq]);
    }
    assert_eq!(q.cached_bodies(), 3);
    assert_eq!(budget.used(), 3 * one);
    assert!(q.get(1).is_some_and(|e| e.body.is_none()));
    assert!(q.get(2).is_some_and(|e| e.body.is_none()));
    assert!(q.get(5).is_some_and(|e| e.body.is_some()));
    // Removing a cached message gives its bytes back.
    assert!(q.remove(5).is_some_and(|r| r.body.is_some()));
    assert_eq!(budget.used(), 2 * one);
    q.clear();
    assert_eq!(budget.used(), 0);
}

#[test]
fn a_body_behind_more_ready_messages_than_the_budget_holds_is_not_cached() {
    let one = BodyBudget::weight(&data("x"));
    let budget = Arc::new(BodyBudget::new(3 * one));
    let mut q = queue(Some(budget.clone()));
    for seq in 1..=6 {
        q.insert(seq, Some(data("x")), 0, None, fresh(), 0);
    }
    // Four waiting ahead of the fifth: it would be evicted before a
    // receive reached it, so it is not cached, and nothing older is
    // evicted for it.
    let cached: Vec<u64> = (1..=6)
        .filter(|&s| q.get(s).is_some_and(|e| e.body.is_some()))
        .collect();
    assert_eq!(cached, vec![2, 3, 4]);
    assert_eq!(budget.used(), 3 * one);
    // Once receives drain the queue, sends are cached again.
    let rules = DeliveryRules {
        visibility_ms: 30_000,
        ..Default::default()
    };
    assert_eq!(q.deliver(6, 0, &rules).delivered.len(), 6);
    q.insert(7, Some(data("x")), 0, None, fresh(), 0);
    assert!(q.get(7).is_some_and(|e| e.body.is_some()));
}

#[test]
fn in_memory_bodies_are_never_evicted() {
    let mut q = queue(None);
    for seq in 1..=100 {
        q.insert(seq, Some(data("x")), 0, None, fresh(), 0);
    }
    assert!((1..=100).all(|s| q.get(s).is_some_and(|e| e.body.is_some())));
}

#[test]
fn trimming_lets_go_of_old_bodies_only_when_the_budget_is_half_used() {
    let one = BodyBudget::weight(&data("x"));
    let budget = Arc::new(BodyBudget::new(10 * one));
    let mut q = queue(Some(budget.clone()));
    for seq in 1..=4 {
        q.insert(seq, Some(data("x")), 0, None, fresh(), seq * 10);
    }
    assert_eq!(q.trim_cache(1_000), 0, "under half the budget: kept");
    for seq in 5..=8 {
        q.insert(seq, Some(data("x")), 0, None, fresh(), seq * 10);
    }
    // Over half: bodies cached before 35 go until half is left.
    assert_eq!(q.trim_cache(35), 3);
    assert_eq!(q.cached_bodies(), 5);
}

/// The FIFO groups whose head is ready, recomputed from scratch.
fn ready_heads_by_scan(q: &QueueState) -> std::collections::BTreeSet<HeadTurn> {
    let lanes = q.lanes.as_ref().expect("a FIFO queue");
    q.entries
        .iter()
        .filter(|(seq, e)| {
            e.phase == Phase::Ready
                && e.group
                    .is_some_and(|g| lanes.at(q.groups.name(g), 0) == Some(**seq))
        })
        .map(|(seq, e)| e.head_turn(*seq))
        .collect()
}

/// The index of ready FIFO heads follows every change that moves a head:
/// deliveries, visibility returning, deletes of a head, messages put back
/// ahead of a head (recovery, dead-letter put-backs) and dead messages.
#[test]
fn ready_fifo_heads_follow_every_change() {
    let mut q = QueueState::new(
        QueueMeta {
            name: "q.fifo".into(),
            config: QueueConfig::for_create(
                "q.fifo",
                &[("FifoQueue".to_string(), "true".to_string())].into(),
            )
            .expect("config"),
            tags: Default::default(),
            created_at: 0,
            modified_at: 0,
        },
        None,
    );
    let check = |q: &QueueState, when: &str| {
        assert_eq!(q.ready_heads, ready_heads_by_scan(q), "after {when}");
    };
    for seq in 10..40u64 {
        let group = format!("g{}", seq % 4);
        q.insert(seq, Some(data("x")), 0, Some(&group), fresh(), 0);
    }
    check(&q, "sends");
    let rules = DeliveryRules::new(&q.meta.config, 1_000, Some(3));
    let got = q.deliver(5, 0, &rules);
    assert_eq!(got.delivered.len(), 5);
    check(&q, "a receive");
    // A head put back ahead of the group's ready head.
    q.insert(2, Some(data("x")), 0, Some("g1"), fresh(), 0);
    check(&q, "a put-back ahead of the head");
    // Deleting ready heads, and an in-flight one.
    for seq in [2, 11, got.delivered[0]] {
        q.remove(seq);
        check(&q, &format!("removing {seq}"));
    }
    q.tick(1_000);
    check(&q, "visibility returning");
    for now in [1_000, 2_000, 3_000, 4_000] {
        let got = q.deliver(10, now, &rules);
        check(&q, &format!("receiving at {now}"));
        q.tick(now + 1_000);
        check(&q, &format!("returning at {}", now + 1_000));
        if got.delivered.is_empty() && got.dead.is_empty() {
            break;
        }
    }
    q.set_visibility(12, 0, 10_000);
    check(&q, "a visibility change");
    q.clear();
    check(&q, "a purge");
}
