//! Model-based tests: random sequences of send, receive, delete, change
//! visibility, clock advances and (for the durable engine) restarts, run
//! against the engine and against a plain reference model of SQS standard
//! queue semantics (rules V1–V5, V7, V20, D1). Any divergence is a bug in one of
//! them.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use sluice_broker::{
    Broker, CreateQueue, NewMessage, QueueCounts, ReceiveOptions, VisibilityChange,
};
use sluice_core::attributes::QueueConfig;
use sluice_core::{Clock, ErrorCode, ManualClock};
use sluice_embedded::EmbeddedBroker;

const RETENTION_SECS: u64 = 120;

#[derive(Debug, Clone)]
enum Op {
    Send { count: usize, delay: u32 },
    Receive { max: u32, visibility: u32 },
    Delete { handle: usize },
    ChangeVisibility { handle: usize, timeout: u32 },
    Advance { secs: u64 },
    Restart,
}

fn op(restarts: bool) -> impl Strategy<Value = Op> {
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
struct Model {
    messages: Vec<ModelMessage>,
    /// (message index, receive count when issued).
    handles: Vec<(usize, u32)>,
}

#[derive(Debug)]
struct ModelMessage {
    body: String,
    enqueued_at: u64,
    visible_at: u64,
    receive_count: u32,
    deleted: bool,
}

impl Model {
    fn expire(&mut self, now: u64) {
        for m in &mut self.messages {
            if m.enqueued_at + RETENTION_SECS * 1000 <= now {
                m.deleted = true;
            }
        }
    }

    fn counts(&mut self, now: u64) -> QueueCounts {
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
}

struct Engine {
    broker: Option<EmbeddedBroker>,
    handles: Vec<String>,
    dir: Option<tempfile::TempDir>,
    clock: ManualClock,
}

impl Engine {
    fn broker(&self) -> &EmbeddedBroker {
        self.broker.as_ref().expect("engine open")
    }

    fn restart(&mut self) {
        // Dropping the engine stops its writer once everything is written.
        self.broker = None;
        let dir = self.dir.as_ref().expect("durable");
        let (broker, _) =
            EmbeddedBroker::open(dir.path(), Arc::new(self.clock.clone())).expect("reopen");
        self.broker = Some(broker);
    }
}

async fn run(ops: Vec<Op>, durable: bool) -> Result<(), TestCaseError> {
    let clock = ManualClock::default();
    let (broker, dir) = if durable {
        let dir = tempfile::tempdir().unwrap();
        let (b, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).unwrap();
        (b, Some(dir))
    } else {
        (EmbeddedBroker::in_memory(Arc::new(clock.clone())), None)
    };
    let mut engine = Engine {
        broker: Some(broker),
        handles: Vec::new(),
        dir,
        clock: clock.clone(),
    };
    let requested = [(
        "MessageRetentionPeriod".to_string(),
        RETENTION_SECS.to_string(),
    )]
    .into_iter()
    .collect();
    engine
        .broker()
        .create_queue(CreateQueue {
            name: "q".into(),
            config: QueueConfig::for_create("q", &requested).unwrap(),
            requested,
            tags: Default::default(),
        })
        .await
        .unwrap();
    let mut model = Model::default();
    let mut next_body = 0;
    for op in ops {
        let now = clock.now();
        match op {
            Op::Send { count, delay } => {
                let msgs: Vec<NewMessage> = (0..count)
                    .map(|i| NewMessage {
                        body: format!("m{}", next_body + i),
                        delay_seconds: Some(delay),
                        ..Default::default()
                    })
                    .collect();
                engine.broker().send_messages("q", msgs).await.unwrap();
                for _ in 0..count {
                    model.messages.push(ModelMessage {
                        body: format!("m{next_body}"),
                        enqueued_at: now,
                        visible_at: now + u64::from(delay) * 1000,
                        receive_count: 0,
                        deleted: false,
                    });
                    next_body += 1;
                }
            }
            Op::Receive { max, visibility } => {
                let got = engine
                    .broker()
                    .receive_messages(
                        "q",
                        ReceiveOptions {
                            max_messages: max,
                            visibility_timeout: Some(visibility),
                            wait: Duration::ZERO,
                            attempt_id: None,
                        },
                    )
                    .await
                    .unwrap();
                model.expire(now);
                // Ready messages, oldest first (the engine's best-effort order).
                let ready: Vec<usize> = (0..model.messages.len())
                    .filter(|&i| !model.messages[i].deleted && model.messages[i].visible_at <= now)
                    .take(max as usize)
                    .collect();
                let expected: Vec<(String, u32)> = ready
                    .iter()
                    .map(|&i| {
                        (
                            model.messages[i].body.clone(),
                            model.messages[i].receive_count + 1,
                        )
                    })
                    .collect();
                let actual: Vec<(String, u32)> = got
                    .iter()
                    .map(|m| (m.body.clone(), m.receive_count))
                    .collect();
                prop_assert_eq!(actual, expected);
                for (&i, m) in ready.iter().zip(&got) {
                    let mm = &mut model.messages[i];
                    mm.receive_count += 1;
                    mm.visible_at = now + u64::from(visibility) * 1000;
                    model.handles.push((i, mm.receive_count));
                    engine.handles.push(m.receipt_handle.clone());
                }
            }
            Op::Delete { handle } => {
                if engine.handles.is_empty() {
                    continue;
                }
                let h = handle % engine.handles.len();
                let r = engine
                    .broker()
                    .delete_messages("q", vec![engine.handles[h].clone()])
                    .await
                    .unwrap();
                prop_assert!(r[0].is_ok(), "any issued handle deletes (V4): {:?}", r[0]);
                model.messages[model.handles[h].0].deleted = true;
            }
            Op::ChangeVisibility { handle, timeout } => {
                if engine.handles.is_empty() {
                    continue;
                }
                let h = handle % engine.handles.len();
                let r = engine
                    .broker()
                    .change_visibility(
                        "q",
                        vec![VisibilityChange {
                            receipt_handle: engine.handles[h].clone(),
                            visibility_timeout: timeout,
                        }],
                    )
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
                prop_assert_eq!(r[0].as_ref().map_err(|e| e.code).copied(), expected);
            }
            Op::Advance { secs } => clock.advance_secs(secs),
            Op::Restart => engine.restart(),
        }
        let actual = engine.broker().queue_counts("q").await.unwrap();
        prop_assert_eq!(actual, model.counts(clock.now()));
    }
    Ok(())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// V1–V5, V7 in memory.
    #[test]
    fn in_memory_engine_matches_the_model(ops in proptest::collection::vec(op(false), 1..80)) {
        runtime().block_on(run(ops, false))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// V1–V5, V7 and D1 on disk, with restarts anywhere in the sequence.
    #[test]
    fn durable_engine_matches_the_model_across_restarts(ops in proptest::collection::vec(op(true), 1..60)) {
        runtime().block_on(run(ops, true))?;
    }
}
