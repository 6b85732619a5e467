//! What the storage-fault tests share: queue `q` on an engine over
//! [`FaultStorage`](sluice_embedded::FaultStorage) in `/data`, sends to
//! it, what it holds, and the retryable refusal of a write.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, CreateQueue, EngineError, MessageFilter, NewMessage};
use sluice_core::attributes::QueueConfig;
use sluice_core::{ErrorCode, ManualClock};
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions, FaultStorage, RecoveryStats, StoreError};

/// The data directory on the injected storage.
pub const DIR: &str = "/data";

/// Opens the engine on `storage` never checkpointing during a test,
/// reopening its storage after a failed write at most every 10 ms (rule
/// D5), and with no body kept in memory: every body a peek shows is read
/// from disk.
pub fn open_reopening_uncached(
    storage: &FaultStorage,
) -> Result<(EmbeddedBroker, RecoveryStats), StoreError> {
    let options = EmbeddedOptions {
        checkpoint_interval: Duration::from_secs(3600),
        reopen_interval: Duration::from_millis(10),
        body_cache_bytes: 0,
        ..Default::default()
    };
    let clock = Arc::new(ManualClock::default());
    EmbeddedBroker::open_on(Arc::new(storage.clone()), Path::new(DIR), clock, options)
}

/// The creation of queue `name`, with SQS's default attributes.
pub fn spec(name: &str) -> CreateQueue {
    let requested = BTreeMap::new();
    CreateQueue {
        name: name.into(),
        config: QueueConfig::for_create(name, &requested).unwrap(),
        requested,
        tags: BTreeMap::new(),
    }
}

/// Creates queue `q`.
pub async fn create(b: &EmbeddedBroker) {
    b.create_queue(spec("q")).await.unwrap();
}

/// Sends `body` to queue `q`.
pub async fn send(b: &EmbeddedBroker, body: &str) -> Result<(), EngineError> {
    let message = NewMessage {
        body: body.into(),
        ..Default::default()
    };
    b.send_messages("q", vec![message]).await.map(drop)
}

/// Every body in queue `q`, sorted.
pub async fn stored(b: &EmbeddedBroker) -> Vec<String> {
    let page = b
        .peek_messages("q", &MessageFilter::default(), None, 1000)
        .await
        .unwrap();
    assert!(page.next.is_none());
    let mut bodies: Vec<String> = page.messages.into_iter().map(|m| m.body).collect();
    bodies.sort();
    bodies
}

/// Asserts that `e` is the retryable answer of a refused write: 503
/// ServiceUnavailable, saying why.
pub fn assert_unavailable(e: &EngineError, why: &str) {
    let sqs = e.to_sqs();
    assert_eq!(sqs.code, ErrorCode::ServiceUnavailable, "{e:?}");
    assert!(sqs.message.contains(why), "{}", sqs.message);
}

/// Sends `body` until it is accepted (the engine reopened its storage),
/// for up to 10 s; every refusal before is the retryable one.
pub async fn send_until_accepted(b: &EmbeddedBroker, body: &str) {
    for _ in 0..1000 {
        match send(b, body).await {
            Ok(()) => return,
            Err(e) => assert_eq!(e.to_sqs().code, ErrorCode::ServiceUnavailable, "{e:?}"),
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the engine did not reopen its storage within 10 s");
}

/// Waits until `storage` stops growing (the engine's thread that makes
/// the log's segments ready has written their zeros), for up to 2 s: a
/// test that sets the disk's budget to what it holds measures it then.
pub async fn settled(storage: &FaultStorage) {
    let mut used = storage.used();
    let mut still = 0;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = storage.used();
        still = if now == used { still + 1 } else { 0 };
        used = now;
        if still == 3 {
            return;
        }
    }
}

/// A runtime on the test's thread.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}
