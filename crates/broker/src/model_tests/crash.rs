//! Crashes: a standard-queue sequence (the ops of [`standard`]) runs until
//! the engine's storage dies at a chosen sync, then the engine is reopened
//! from what survived, and what it holds is checked against the model
//! (rules D1, D3, D4): every acknowledged change is there; the one change
//! in flight when the storage died was never acknowledged and may be
//! there or not, but wholly (a batch's messages all or none). With
//! [`Fault::FailedSync`] the chosen sync fails instead and the engine
//! reopens its storage in place (rule D5): the same check holds after
//! that reopen, and after a crash then. With [`Fault::CrashThenFullDisk`]
//! the engine is reopened after the crash on a disk with no room (rule
//! D6): the same check holds while it serves from memory, again once
//! space returns and it has reopened its storage, and after a crash then.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use proptest::prelude::*;
use sluice_core::{Clock, ErrorCode};

use super::create_queue;
use super::standard::{Model, ModelMessage, Op, RETENTION_SECS};
use crate::conformance::Harness;
use crate::{Broker, MessageFilter, NewMessage, ReceiveOptions, VisibilityChange};

/// An engine whose storage can be made to die at a chosen point.
pub trait CrashingEngine: Harness {
    /// The storage dies at its `n`th sync from now (the log's, the
    /// store's, a directory's): that sync and every later operation fail,
    /// and nothing more becomes durable.
    fn crash_at_sync(&self, n: u64);
    /// Whether the storage died.
    fn crashed(&self) -> bool;
    /// Drops the engine and opens a new one on what the storage had
    /// synced (a crash now, if it had not died yet), with the same clock.
    fn reopen_after_crash(&mut self) -> impl Future<Output = ()> + Send;
    /// The storage's `n`th sync from now fails (once), without a crash:
    /// what it covered never becomes durable, and the engine refuses
    /// writes until it reopens its storage by itself (rule D5).
    fn fail_sync_at(&self, n: u64);
    /// Waits until the engine takes writes again after a failed write,
    /// having reopened its storage in place by itself (at once when no
    /// write failed); fails the test after a while.
    fn reopened_in_place(&mut self) -> impl Future<Output = ()> + Send;
    /// [`reopen_after_crash`](Self::reopen_after_crash) onto a disk with
    /// no room left: nothing more can be written until
    /// [`space_returns`](Self::space_returns).
    fn reopen_after_crash_on_full_disk(&mut self) -> impl Future<Output = ()> + Send;
    /// The disk takes writes again.
    fn space_returns(&self);
}

/// What happens to the storage at the chosen sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The machine dies: reopened from what was synced (rule D4).
    Crash,
    /// The sync fails and the engine recovers in place (rule D5).
    FailedSync,
    /// The machine dies, and starts again on a full disk (rule D6).
    CrashThenFullDisk,
}

/// The change in flight when the storage died: never acknowledged.
#[derive(Debug)]
enum InFlight {
    Nothing,
    /// A send of these bodies.
    Send(Vec<String>),
    /// A receive of up to `max` of the messages ready then.
    Receive {
        max: usize,
        ready: Vec<usize>,
    },
    /// A delete of this message.
    Delete(usize),
    /// A visibility change: counts nor bodies are affected.
    Visibility,
}

/// Whether `e` is a refused write (the storage failed).
fn refused(e: &crate::EngineError) -> bool {
    e.to_sqs().code == ErrorCode::ServiceUnavailable
}

/// Runs `ops` (no restarts) against `engine` (fresh, empty) and the model
/// with the storage dying at its `crash_at`th sync after the queue is
/// created, then reopens and checks what survived.
pub async fn run<E: CrashingEngine>(
    engine: E,
    ops: Vec<Op>,
    crash_at: u64,
) -> Result<(), TestCaseError> {
    run_with(engine, ops, crash_at, Fault::Crash).await
}

/// [`run`] with `fault` at the `at`th sync. A failed sync stops the
/// sequence at the first refused change; once the engine has reopened its
/// storage in place, what it holds is checked against the model (D5: the
/// failed change wholly or not at all), and again after a crash then (D5:
/// what the reopen read back is durable).
pub async fn run_with<E: CrashingEngine>(
    mut engine: E,
    ops: Vec<Op>,
    at: u64,
    fault: Fault,
) -> Result<(), TestCaseError> {
    let crash_at = at;
    let requested = [(
        "MessageRetentionPeriod".to_string(),
        RETENTION_SECS.to_string(),
    )]
    .into_iter()
    .collect();
    create_queue(engine.broker(), "q", requested).await;
    match fault {
        Fault::Crash | Fault::CrashThenFullDisk => engine.crash_at_sync(crash_at),
        Fault::FailedSync => engine.fail_sync_at(crash_at),
    }
    let mut model = Model::default();
    let mut handles: Vec<String> = Vec::new();
    let mut in_flight = InFlight::Nothing;
    for op in ops {
        let now = engine.clock().now();
        match op {
            Op::Send { count, delay } => {
                let first = model.messages.len();
                let bodies: Vec<String> = (first..first + count).map(|i| format!("m{i}")).collect();
                let msgs = bodies
                    .iter()
                    .map(|body| NewMessage {
                        body: body.clone(),
                        delay_seconds: Some(delay),
                        ..Default::default()
                    })
                    .collect();
                match engine.broker().send_messages("q", msgs).await {
                    Ok(sent) => prop_assert_eq!(sent.len(), count),
                    Err(e) if refused(&e) => {
                        in_flight = InFlight::Send(bodies);
                        break;
                    }
                    Err(e) => return Err(TestCaseError::fail(format!("send: {e:?}"))),
                }
                for body in bodies {
                    model.messages.push(ModelMessage {
                        body,
                        enqueued_at: now,
                        visible_at: now + u64::from(delay) * 1000,
                        receive_count: 0,
                        deleted: false,
                    });
                }
            }
            Op::Receive { max, visibility } => {
                let options = ReceiveOptions {
                    max_messages: max,
                    visibility_timeout: Some(visibility),
                    wait: Duration::ZERO,
                    attempt_id: None,
                };
                let ready = model.ready(now);
                let got = match engine.broker().receive_messages("q", options).await {
                    Ok(got) => got,
                    Err(e) if refused(&e) => {
                        in_flight = InFlight::Receive {
                            max: max as usize,
                            ready,
                        };
                        break;
                    }
                    Err(e) => return Err(TestCaseError::fail(format!("receive: {e:?}"))),
                };
                prop_assert_eq!(got.len(), ready.len().min(max as usize));
                for m in &got {
                    let i = ready
                        .iter()
                        .copied()
                        .find(|&i| model.messages[i].body == m.body);
                    let Some(i) = i else {
                        return Err(TestCaseError::fail(format!("{} was not ready", m.body)));
                    };
                    let mm = &mut model.messages[i];
                    mm.receive_count += 1;
                    mm.visible_at = now + u64::from(visibility) * 1000;
                    model.handles.push((i, mm.receive_count));
                    handles.push(m.receipt_handle.clone());
                }
            }
            Op::Delete { handle } => {
                if handles.is_empty() {
                    continue;
                }
                let h = handle % handles.len();
                match engine
                    .broker()
                    .delete_messages("q", vec![handles[h].clone()])
                    .await
                {
                    Ok(r) => prop_assert!(r[0].is_ok(), "{:?}", r[0]),
                    Err(e) if refused(&e) => {
                        in_flight = InFlight::Delete(model.handles[h].0);
                        break;
                    }
                    Err(e) => return Err(TestCaseError::fail(format!("delete: {e:?}"))),
                }
                model.messages[model.handles[h].0].deleted = true;
            }
            Op::ChangeVisibility { handle, timeout } => {
                if handles.is_empty() {
                    continue;
                }
                let h = handle % handles.len();
                let change = VisibilityChange {
                    receipt_handle: handles[h].clone(),
                    visibility_timeout: timeout,
                };
                let r = match engine.broker().change_visibility("q", vec![change]).await {
                    Ok(r) => r,
                    Err(e) if refused(&e) => {
                        in_flight = InFlight::Visibility;
                        break;
                    }
                    Err(e) => return Err(TestCaseError::fail(format!("visibility: {e:?}"))),
                };
                model.expire(now);
                let (i, issued) = model.handles[h];
                let m = &mut model.messages[i];
                let applies = !m.deleted && (m.visible_at > now || m.receive_count == issued);
                if r[0].is_ok() && applies {
                    m.visible_at = now + u64::from(timeout) * 1000;
                }
            }
            Op::Advance { secs } => engine.clock().advance_secs(secs),
            Op::Restart => {}
        }
        if engine.crashed() {
            break;
        }
        let actual = engine.broker().queue_counts("q").await.unwrap();
        prop_assert_eq!(actual, model.counts(engine.clock().now()));
    }
    if fault == Fault::FailedSync {
        engine.reopened_in_place().await;
        check_survivors(&engine, &mut model, &in_flight).await?;
    }
    if fault == Fault::CrashThenFullDisk {
        engine.reopen_after_crash_on_full_disk().await;
        check_survivors(&engine, &mut model, &in_flight).await?;
        engine.space_returns();
        engine.reopened_in_place().await;
        check_survivors(&engine, &mut model, &in_flight).await?;
    }
    engine.reopen_after_crash().await;
    check_survivors(&engine, &mut model, &in_flight).await?;
    // The reopened engine takes writes again.
    let again = vec![NewMessage {
        body: "after".into(),
        ..Default::default()
    }];
    engine.broker().send_messages("q", again).await.unwrap();
    Ok(())
}

/// D4: after the reopen, the queue holds every message the model holds,
/// with its receive count, and nothing else, give or take `in_flight`.
async fn check_survivors<E: CrashingEngine>(
    engine: &E,
    model: &mut Model,
    in_flight: &InFlight,
) -> Result<(), TestCaseError> {
    let now = engine.clock().now();
    model.expire(now);
    let mut found: BTreeMap<String, u32> = BTreeMap::new();
    let mut after = None;
    loop {
        let page = engine
            .broker()
            .peek_messages("q", &MessageFilter::default(), after, 1000)
            .await
            .map_err(|e| TestCaseError::fail(format!("D4: the queue after the reopen: {e:?}")))?;
        found.extend(page.messages.into_iter().map(|m| (m.body, m.receive_count)));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    let mut bumped = 0;
    for (i, m) in model.messages.iter().enumerate() {
        let survived = found.remove(&m.body);
        if m.deleted {
            prop_assert!(survived.is_none(), "D1: deleted {} came back", m.body);
            continue;
        }
        let Some(count) = survived else {
            prop_assert!(
                matches!(in_flight, InFlight::Delete(d) if *d == i),
                "D4: acknowledged {} lost ({:?} in flight)",
                m.body,
                in_flight
            );
            continue;
        };
        if count == m.receive_count + 1
            && matches!(in_flight, InFlight::Receive { ready, .. } if ready.contains(&i))
        {
            bumped += 1;
        } else {
            prop_assert_eq!(count, m.receive_count, "D1: receive count of {}", &m.body);
        }
    }
    if let InFlight::Receive { max, .. } = in_flight {
        prop_assert!(bumped <= *max, "D4: {} received, at most {}", bumped, max);
    }
    // What is left is the send in flight, whole or not at all.
    let sent: &[String] = match in_flight {
        InFlight::Send(bodies) => bodies,
        _ => &[],
    };
    for (body, count) in &found {
        prop_assert!(sent.contains(body), "D4: {} was never sent", body);
        prop_assert_eq!(*count, 0);
    }
    prop_assert!(
        found.is_empty() || found.len() == sent.len(),
        "D4: part of a batch survived: {:?} of {:?}",
        found,
        sent
    );
    Ok(())
}
