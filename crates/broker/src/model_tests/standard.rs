//! Standard queues: random sequences of send, receive, delete, change
//! visibility, clock advances and (with restarts) engine restarts, against
//! a plain reference model of the rules (V1–V5, V7, V10, V20, D1).

use std::time::Duration;

use proptest::prelude::*;
use sluice_core::{Clock, ErrorCode};

use super::{EngineUnderTest, create_queue};
use crate::{Broker, NewMessage, QueueCounts, ReceiveOptions, VisibilityChange};

/// The retention period of the queue under test (rule V7), seconds.
pub(super) const RETENTION_SECS: u64 = 120;

/// One step of a sequence.
#[derive(Debug, Clone)]
pub enum Op {
    /// Send `count` messages with `delay` seconds of delay.
    Send {
        /// Messages in the batch.
        count: usize,
        /// Their DelaySeconds.
        delay: u32,
    },
    /// Receive up to `max` with a visibility timeout of `visibility`.
    Receive {
        /// MaxNumberOfMessages.
        max: u32,
        /// VisibilityTimeout, seconds.
        visibility: u32,
    },
    /// Delete with one of the handles issued so far (modulo their number).
    Delete {
        /// Which handle.
        handle: usize,
    },
    /// Change visibility with one of the handles issued so far.
    ChangeVisibility {
        /// Which handle.
        handle: usize,
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

/// One random step; restarts only when `restarts`. (The strategy must not
/// change shape, or the seeds in the regression files replay other cases.)
pub fn op(restarts: bool) -> impl Strategy<Value = Op> {
    let restart_weight = if restarts { 1 } else { 0 };
    prop_oneof![
        3 => (1usize..4, prop_oneof![3 => Just(0u32), 1 => 1u32..20]).prop_map(|(count, delay)| Op::Send { count, delay }),
        3 => (1u32..5, prop_oneof![Just(0u32), 1u32..40]).prop_map(|(max, visibility)| Op::Receive { max, visibility }),
        2 => any::<usize>().prop_map(|handle| Op::Delete { handle }),
        1 => (any::<usize>(), 0u32..40).prop_map(|(handle, timeout)| Op::ChangeVisibility { handle, timeout }),
        2 => prop_oneof![1u64..10, 25u64..50].prop_map(|secs| Op::Advance { secs }),
        restart_weight => Just(Op::Restart),
    ]
}

/// The reference: a list of messages and the rules, written as plainly as
/// possible.
#[derive(Debug, Default)]
pub(super) struct Model {
    pub(super) messages: Vec<ModelMessage>,
    /// (message index, receive count when issued), in issue order.
    pub(super) handles: Vec<(usize, u32)>,
}

#[derive(Debug)]
pub(super) struct ModelMessage {
    pub(super) body: String,
    pub(super) enqueued_at: u64,
    pub(super) visible_at: u64,
    pub(super) receive_count: u32,
    pub(super) deleted: bool,
}

impl Model {
    pub(super) fn expire(&mut self, now: u64) {
        for m in &mut self.messages {
            if m.enqueued_at + RETENTION_SECS * 1000 <= now {
                m.deleted = true;
            }
        }
    }

    pub(super) fn counts(&mut self, now: u64) -> QueueCounts {
        self.expire(now);
        let mut c = QueueCounts::default();
        for m in self.messages.iter().filter(|m| !m.deleted) {
            if m.visible_at <= now {
                c.visible += 1;
            } else if m.receive_count == 0 {
                c.delayed += 1;
            } else {
                c.in_flight += 1;
            }
        }
        c
    }

    /// Indexes of the messages a receive may return at `now`.
    pub(super) fn ready(&mut self, now: u64) -> Vec<usize> {
        self.expire(now);
        (0..self.messages.len())
            .filter(|&i| !self.messages[i].deleted && self.messages[i].visible_at <= now)
            .collect()
    }
}

/// Runs `ops` against `engine` (fresh, empty) and the model, checking every
/// answer and the queue's counts after every step.
pub async fn run<E: EngineUnderTest>(mut engine: E, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let requested = [(
        "MessageRetentionPeriod".to_string(),
        RETENTION_SECS.to_string(),
    )]
    .into_iter()
    .collect();
    create_queue(engine.broker(), "q", requested).await;
    let mut model = Model::default();
    // The engine's receipt handles, parallel to `model.handles`.
    let mut handles: Vec<String> = Vec::new();
    for op in ops {
        let now = engine.clock().now();
        match op {
            Op::Send { count, delay } => {
                let first = model.messages.len();
                let msgs: Vec<NewMessage> = (first..first + count)
                    .map(|i| NewMessage {
                        body: format!("m{i}"),
                        delay_seconds: Some(delay),
                        ..Default::default()
                    })
                    .collect();
                let sent = engine.broker().send_messages("q", msgs).await.unwrap();
                prop_assert_eq!(sent.len(), count, "V1: one answer per message");
                for i in first..first + count {
                    model.messages.push(ModelMessage {
                        body: format!("m{i}"),
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
                let got = engine
                    .broker()
                    .receive_messages("q", options)
                    .await
                    .unwrap();
                let ready = model.ready(now);
                // As many as are ready, up to `max`: a sluice engine has no
                // sampling of servers to miss some. Which ones and in what
                // order is best effort (rule V10), so any ready ones will do.
                prop_assert_eq!(got.len(), ready.len().min(max as usize), "V2: {:?}", got);
                let mut taken = Vec::with_capacity(got.len());
                for m in &got {
                    let found = ready.iter().find(|&&i| model.messages[i].body == m.body);
                    let Some(&i) = found else {
                        return Err(TestCaseError::fail(format!("V2: {} was not ready", m.body)));
                    };
                    prop_assert!(!taken.contains(&i), "V2: {} twice in one receive", m.body);
                    prop_assert_eq!(
                        m.receive_count,
                        model.messages[i].receive_count + 1,
                        "V2: receive count of {}",
                        m.body
                    );
                    taken.push(i);
                }
                for (i, m) in taken.into_iter().zip(&got) {
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
                let r = engine
                    .broker()
                    .delete_messages("q", vec![handles[h].clone()])
                    .await
                    .unwrap();
                prop_assert!(r[0].is_ok(), "any issued handle deletes (V4): {:?}", r[0]);
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
                let r = engine
                    .broker()
                    .change_visibility("q", vec![change])
                    .await
                    .unwrap();
                model.expire(now);
                let (i, issued) = model.handles[h];
                let m = &mut model.messages[i];
                // V20: any handle while a delivery is in flight; once the
                // visibility ended, only the latest handle.
                let in_flight = m.visible_at > now;
                let latest = m.receive_count == issued;
                let expected = if m.deleted {
                    Err(ErrorCode::InvalidParameterValue)
                } else if !(in_flight || latest) {
                    Err(ErrorCode::MessageNotInflight)
                } else {
                    m.visible_at = now + u64::from(timeout) * 1000;
                    Ok(())
                };
                prop_assert_eq!(
                    r[0].as_ref().map_err(|e| e.to_sqs().code).copied(),
                    expected
                );
            }
            Op::Advance { secs } => engine.clock().advance_secs(secs),
            Op::Restart => engine.restart().await,
        }
        let actual = engine.broker().queue_counts("q").await.unwrap();
        prop_assert_eq!(actual, model.counts(engine.clock().now()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// V2, V7: the model's own counts follow a message's lifecycle.
    #[test]
    fn the_model_counts_delayed_in_flight_and_expired() {
        let mut model = Model::default();
        model.messages.push(ModelMessage {
            body: "m0".into(),
            enqueued_at: 0,
            visible_at: 5_000,
            receive_count: 0,
            deleted: false,
        });
        assert_eq!(model.counts(0).delayed, 1);
        assert_eq!(model.ready(5_000), vec![0]);
        model.messages[0].receive_count = 1;
        model.messages[0].visible_at = 10_000;
        assert_eq!(model.counts(6_000).in_flight, 1);
        assert_eq!(model.counts(RETENTION_SECS * 1000), QueueCounts::default());
    }
}
