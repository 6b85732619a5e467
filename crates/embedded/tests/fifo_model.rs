//! Property test of FIFO ordering (rules F1, F13): random interleavings of
//! sends to many groups, receives, deletes, visibility expiries and
//! (durable) restarts never deliver a group out of order: what a receive
//! takes of a group is a run from its head (its oldest message not yet
//! deleted) of messages none of which is in flight.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use sluice_broker::{
    Broker, CreateQueue, NewMessage, ReceiveOptions, ReceivedMessage, VisibilityChange,
};
use sluice_core::attributes::QueueConfig;
use sluice_core::{Clock, ManualClock};
use sluice_embedded::EmbeddedBroker;

#[derive(Debug, Clone)]
enum Op {
    Send { group: u8, count: u8 },
    Receive { max: u32, visibility: u32 },
    Delete { pick: usize },
    ChangeVisibility { pick: usize, timeout: u32 },
    Advance { secs: u64 },
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, 1u8..4).prop_map(|(group, count)| Op::Send { group, count }),
        4 => (1u32..11, prop_oneof![Just(0u32), 1u32..20]).prop_map(|(max, visibility)| Op::Receive { max, visibility }),
                3 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
        2 => (any::<usize>(), prop_oneof![Just(0u32), 1u32..20]).prop_map(|(pick, timeout)| Op::ChangeVisibility { pick, timeout }),
        2 => (1u64..25).prop_map(|secs| Op::Advance { secs }),
        1 => Just(Op::Restart),
    ]
}

async fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let clock = ManualClock::default();
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        EmbeddedBroker::open(dir.path(), Arc::new(clock.clone()))
            .unwrap()
            .0
    };
    let mut broker = Some(open());
    let requested: BTreeMap<String, String> = [("FifoQueue".to_string(), "true".to_string())]
        .into_iter()
        .collect();
    broker
        .as_ref()
        .unwrap()
        .create_queue(CreateQueue {
            name: "q.fifo".into(),
            config: QueueConfig::for_create("q.fifo", &requested).unwrap(),
            requested,
            tags: Default::default(),
        })
        .await
        .unwrap();
    // Per group: bodies not yet deleted, in send order.
    let mut pending: HashMap<String, Vec<String>> = HashMap::new();
    // Body → in flight until (ms), for the latest delivery.
    let mut in_flight_until: HashMap<String, u64> = HashMap::new();
    let mut handles: Vec<(String, String, String)> = Vec::new(); // (group, body, handle)
    let mut n = 0;
    for op in ops {
        let b = broker.as_ref().unwrap();
        let now = clock.now();
        match op {
            Op::Send { group, count } => {
                let group = format!("g{group}");
                let msgs: Vec<NewMessage> = (0..count)
                    .map(|_| {
                        n += 1;
                        NewMessage {
                            body: format!("m{n}"),
                            group_id: Some(group.clone()),
                            dedup_id: Some(format!("d{n}")),
                            ..Default::default()
                        }
                    })
                    .collect();
                for m in &msgs {
                    pending
                        .entry(group.clone())
                        .or_default()
                        .push(m.body.clone());
                }
                b.send_messages("q.fifo", msgs).await.unwrap();
            }
            Op::Receive { max, visibility } => {
                let got: Vec<ReceivedMessage> = b
                    .receive_messages(
                        "q.fifo",
                        ReceiveOptions {
                            max_messages: max,
                            visibility_timeout: Some(visibility),
                            wait: Duration::ZERO,
                            attempt_id: None,
                        },
                    )
                    .await
                    .unwrap();
                prop_assert!(got.len() <= max as usize);
                let mut by_group: BTreeMap<String, Vec<&ReceivedMessage>> = BTreeMap::new();
                for m in &got {
                    by_group
                        .entry(m.group_id.clone().unwrap())
                        .or_default()
                        .push(m);
                }
                for (group, msgs) in by_group {
                    let order = pending.get(&group).cloned().unwrap_or_default();
                    let bodies: Vec<String> = msgs.iter().map(|m| m.body.clone()).collect();
                    prop_assert!(
                        bodies.len() <= order.len(),
                        "group {} unknown messages",
                        group
                    );
                    prop_assert_eq!(
                        &bodies[..],
                        &order[..bodies.len()],
                        "group {} out of order",
                        group
                    );
                    let busy = bodies
                        .iter()
                        .any(|body| in_flight_until.get(body).is_some_and(|&until| until > now));
                    prop_assert!(!busy, "group {} delivered a message in flight", group);
                }
                for m in &got {
                    in_flight_until.insert(m.body.clone(), now + u64::from(visibility) * 1000);
                    handles.push((
                        m.group_id.clone().unwrap(),
                        m.body.clone(),
                        m.receipt_handle.clone(),
                    ));
                }
            }
            Op::Delete { pick } => {
                if handles.is_empty() {
                    continue;
                }
                let (group, body, handle) = handles.remove(pick % handles.len());
                let r = b.delete_messages("q.fifo", vec![handle]).await.unwrap();
                if r[0].is_ok() {
                    if let Some(list) = pending.get_mut(&group) {
                        list.retain(|x| *x != body);
                    }
                    in_flight_until.remove(&body);
                }
            }
            Op::ChangeVisibility { pick, timeout } => {
                if handles.is_empty() {
                    continue;
                }
                let (_, body, handle) = handles[pick % handles.len()].clone();
                let change = VisibilityChange {
                    receipt_handle: handle,
                    visibility_timeout: timeout,
                };
                let r = b.change_visibility("q.fifo", vec![change]).await.unwrap();
                if r[0].is_ok() {
                    in_flight_until.insert(body, now + u64::from(timeout) * 1000);
                }
            }
            Op::Advance { secs } => clock.advance_secs(secs),
            Op::Restart => {
                // The old engine must be gone (file lock released) before reopening.
                drop(broker.take());
                broker = Some(open());
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// F1 under random interleavings, across restarts.
    #[test]
    fn fifo_groups_stay_ordered_and_exclusive(ops in proptest::collection::vec(op(), 1..80)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(run(ops))?;
    }
}
