//! FIFO queues: random interleavings of sends to many groups, receives,
//! deletes, visibility changes, clock advances and restarts never deliver a
//! group out of order (rules F1, F13): what a receive takes of a group is a
//! run from its head (its oldest message not yet deleted) of messages none
//! of which is in flight.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use proptest::prelude::*;
use sluice_core::Clock;

use super::{EngineUnderTest, create_queue};
use crate::{Broker, NewMessage, ReceiveOptions, ReceivedMessage, VisibilityChange};

/// One step of a sequence.
#[derive(Debug, Clone)]
pub enum Op {
    /// Send `count` messages to group `g{group}`.
    Send {
        /// The group's number.
        group: u8,
        /// Messages in the batch.
        count: u8,
    },
    /// Receive up to `max` with a visibility timeout of `visibility`.
    Receive {
        /// MaxNumberOfMessages.
        max: u32,
        /// VisibilityTimeout, seconds.
        visibility: u32,
    },
    /// Delete with one of the handles not yet used to delete (modulo).
    Delete {
        /// Which handle.
        pick: usize,
    },
    /// Change visibility with one of those handles.
    ChangeVisibility {
        /// Which handle.
        pick: usize,
        /// The new timeout, seconds.
        timeout: u32,
    },
    /// Advance the clock.
    Advance {
        /// Seconds.
        secs: u64,
    },
    /// Restart the engine on the same storage.
    Restart,
}

/// One random step. (The strategy must not change shape, or the seeds in
/// the regression files replay other cases.)
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, 1u8..4).prop_map(|(group, count)| Op::Send { group, count }),
        4 => (1u32..11, prop_oneof![Just(0u32), 1u32..20]).prop_map(|(max, visibility)| Op::Receive { max, visibility }),
        3 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
        2 => (any::<usize>(), prop_oneof![Just(0u32), 1u32..20]).prop_map(|(pick, timeout)| Op::ChangeVisibility { pick, timeout }),
        2 => (1u64..25).prop_map(|secs| Op::Advance { secs }),
        1 => Just(Op::Restart),
    ]
}

/// Runs `ops` against `engine` (fresh, empty), checking every receive
/// against what the model allows.
pub async fn run<E: EngineUnderTest>(mut engine: E, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let requested: BTreeMap<String, String> = [("FifoQueue".to_string(), "true".to_string())]
        .into_iter()
        .collect();
    create_queue(engine.broker(), "q.fifo", requested).await;
    // Per group: bodies not yet deleted, in send order.
    let mut pending: HashMap<String, Vec<String>> = HashMap::new();
    // Body → in flight until (ms), for the latest delivery.
    let mut in_flight_until: HashMap<String, u64> = HashMap::new();
    let mut handles: Vec<(String, String, String)> = Vec::new(); // (group, body, handle)
    let mut n = 0;
    for op in ops {
        let now = engine.clock().now();
        let b = engine.broker();
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
                let sent = b.send_messages("q.fifo", msgs).await.unwrap();
                prop_assert_eq!(sent.len(), usize::from(count), "V1: one answer per message");
            }
            Op::Receive { max, visibility } => {
                let options = ReceiveOptions {
                    max_messages: max,
                    visibility_timeout: Some(visibility),
                    wait: Duration::ZERO,
                    attempt_id: None,
                };
                let got: Vec<ReceivedMessage> =
                    b.receive_messages("q.fifo", options).await.unwrap();
                prop_assert!(got.len() <= max as usize);
                let mut by_group: BTreeMap<String, Vec<&ReceivedMessage>> = BTreeMap::new();
                for m in &got {
                    let group = m.group_id.clone().unwrap_or_default();
                    by_group.entry(group).or_default().push(m);
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
                        "F1: group {} out of order",
                        group
                    );
                    let busy = bodies
                        .iter()
                        .any(|body| in_flight_until.get(body).is_some_and(|&until| until > now));
                    prop_assert!(!busy, "F13: group {} delivered a message in flight", group);
                }
                for m in &got {
                    in_flight_until.insert(m.body.clone(), now + u64::from(visibility) * 1000);
                    handles.push((
                        m.group_id.clone().unwrap_or_default(),
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
                // A handle whose delivery is over may fail (F15); the
                // message then stays at its group's head.
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
            Op::Advance { secs } => engine.clock().advance_secs(secs),
            Op::Restart => engine.restart().await,
        }
    }
    Ok(())
}
