//! Encryption at rest in the PostgreSQL engine (rules E1–E6): what queues
//! with server-side encryption store is sealed in the database (`pg_dump`
//! finds none of it), every node with the keyring reads what another
//! sealed, restarts re-wrap after a rotation, and retiring a key or
//! deleting a queue shreds what its data keys sealed.
//! Without PostgreSQL's binaries every test says SKIPPED and passes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{
    Broker, EngineError, MessageFilter, Nack, NewMessage, ReceiveOptions, ReceivedMessage,
};
use sluice_core::ErrorCode;
use sluice_core::ManualClock;
use sluice_core::message::{AttributeValue, MessageAttributeValue, MessageAttributes};
use sluice_keyring::{Keyring, KeyringFile};
use sluice_postgres::{PgError, PostgresBroker, PostgresOptions, testing};

const MARKER: &str = "SSN-078-05-1120-marker";
const ATTRIBUTE_MARKER: &str = "attribute-secret-9c1d";
const REASON_MARKER: &str = "reason-secret-order-77";

struct Keys {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Keys {
    fn new(first: &str) -> Self {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("keys.json");
        KeyringFile::new_with_key(first, 1)
            .expect("key")
            .write(&path)
            .expect("write");
        Self { _dir: dir, path }
    }

    fn edit(&self, f: impl FnOnce(&mut KeyringFile)) {
        let mut file = KeyringFile::read(&self.path).expect("read");
        f(&mut file);
        file.write(&self.path).expect("write");
    }

    fn ring(&self) -> Arc<Keyring> {
        Arc::new(Keyring::load(&self.path).expect("keyring"))
    }
}

async fn node(url: &str, keys: Option<&Keys>) -> Result<PostgresBroker, PgError> {
    let options = PostgresOptions {
        pool_size: 4,
        keyring: keys.map(Keys::ring),
        ..Default::default()
    };
    PostgresBroker::connect(url, Arc::new(ManualClock::default()), options).await
}

fn secret(n: usize) -> NewMessage {
    let mut attributes = MessageAttributes::new();
    attributes.insert(
        "card".into(),
        MessageAttributeValue {
            data_type: "String".into(),
            value: AttributeValue::String(ATTRIBUTE_MARKER.into()),
        },
    );
    NewMessage {
        body: format!("{MARKER} {n}"),
        attributes,
        ..Default::default()
    }
}

async fn send(b: &PostgresBroker, queue: &str, count: usize) -> Result<(), EngineError> {
    b.send_messages(queue, (0..count).map(secret).collect())
        .await
        .map(|_| ())
}

async fn receive(b: &PostgresBroker, queue: &str, visibility: u32) -> Vec<ReceivedMessage> {
    let got = b
        .receive_messages(
            queue,
            ReceiveOptions {
                max_messages: 10,
                visibility_timeout: Some(visibility),
                wait: Duration::ZERO,
                attempt_id: None,
            },
        )
        .await
        .expect("receive");
    for m in &got {
        assert_eq!(
            m.attributes["card"].value,
            AttributeValue::String(ATTRIBUTE_MARKER.into())
        );
    }
    got
}

fn bodies(got: &[ReceivedMessage]) -> Vec<String> {
    let mut out: Vec<String> = got.iter().map(|m| m.body.clone()).collect();
    out.sort();
    out
}

/// What `pg_dump` writes of the database at `url`.
fn dump(bindir: &Path, url: &str) -> String {
    let out = std::process::Command::new(bindir.join("pg_dump"))
        .arg(url)
        .output()
        .expect("run pg_dump");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// E1, E2: a marker body, attribute and failure reason of a queue with
/// SSE-SQS are nowhere in `pg_dump`'s output, while a queue that turned SSE
/// off holds its marker clear (so the search can find it); a second node
/// with the keyring reads what the first sealed (it loads the data key
/// from the database), and a peek shows the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e1_sealed_messages_are_not_in_pg_dump_and_every_node_reads_them() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let keys = Keys::new("first");
    let a = node(&url, Some(&keys)).await.expect("node a");
    let b = node(&url, Some(&keys)).await.expect("node b");
    assert!(a.encrypts_at_rest());
    testing::create_queue(&a, "sealed", &[]).await;
    testing::create_queue(&a, "clear", &[("SqsManagedSseEnabled", "false")]).await;
    send(&a, "sealed", 3).await.expect("send");
    let got = receive(&b, "sealed", 30).await;
    assert_eq!(bodies(&got).len(), 3);
    b.nack_message(
        "sealed",
        &got[0].receipt_handle,
        Nack {
            reason: Some(REASON_MARKER.into()),
            class: None,
            permanent: false,
            retry_after_seconds: Some(0),
        },
    )
    .await
    .expect("nack");
    let dumped = dump(cluster.bindir(), &url);
    for secret in [MARKER, ATTRIBUTE_MARKER, REASON_MARKER] {
        assert!(!dumped.contains(secret), "{secret} in pg_dump");
    }
    let peeked = a
        .peek_messages("sealed", &MessageFilter::default(), None, 10)
        .await
        .expect("peek");
    let reasons: Vec<_> = peeked
        .messages
        .iter()
        .filter_map(|m| m.failure_reason.as_deref())
        .collect();
    assert_eq!(reasons, [REASON_MARKER]);
    send(&a, "clear", 1).await.expect("send clear");
    assert!(dump(cluster.bindir(), &url).contains(MARKER));
}

/// E5: a node whose keyring lacks the key of stored data keys, or that has
/// none, is refused at its start, naming the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_a_node_without_the_key_is_refused_naming_it() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let keys = Keys::new("first");
    let a = node(&url, Some(&keys)).await.expect("node");
    testing::create_queue(&a, "q", &[]).await;
    send(&a, "q", 1).await.expect("send");
    let other = Keys::new("second");
    let refused = node(&url, Some(&other))
        .await
        .err()
        .expect("refused")
        .to_string();
    assert!(refused.contains("\"first\""), "{refused}");
    let refused = node(&url, None).await.err().expect("refused").to_string();
    assert!(refused.contains("no keyring"), "{refused}");
}

/// E5: after a rotation, a node's start re-wraps the server's data keys
/// by the new active key, so the old key can be retired; a queue that
/// names its own key keeps it, and retiring that key drops its messages
/// at the next start, leaving the others'.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_rotation_rewraps_and_retiring_a_named_key_shreds_its_messages() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let keys = Keys::new("orders");
    keys.edit(|k| k.add_active("first", 1).expect("add"));
    {
        let a = node(&url, Some(&keys)).await.expect("node");
        testing::create_queue(&a, "orders", &[("KmsMasterKeyId", "alias/orders")]).await;
        testing::create_queue(&a, "other", &[]).await;
        send(&a, "orders", 2).await.expect("send");
        send(&a, "other", 2).await.expect("send");
    }
    keys.edit(|k| k.add_active("second", 2).expect("rotate"));
    drop(
        node(&url, Some(&keys))
            .await
            .expect("start after the rotation"),
    );
    keys.edit(|k| {
        k.retire("first", 3).expect("retire first");
        k.retire("orders", 3).expect("retire orders");
    });
    let a = node(&url, Some(&keys))
        .await
        .expect("start after the retirements");
    assert_eq!(receive(&a, "other", 30).await.len(), 2);
    assert!(receive(&a, "orders", 30).await.is_empty());
    let e = send(&a, "orders", 1).await.expect_err("refused").to_sqs();
    assert_eq!(e.code, ErrorCode::KmsNotFound);
}

/// E3: a send to a queue whose KmsMasterKeyId names no key of the keyring
/// is KmsNotFound and stores nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e3_an_unknown_key_refuses_the_send() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let keys = Keys::new("first");
    let a = node(&url, Some(&keys)).await.expect("node");
    testing::create_queue(&a, "q", &[("KmsMasterKeyId", "alias/nobody")]).await;
    let e = send(&a, "q", 1).await.expect_err("refused").to_sqs();
    assert_eq!(e.code, ErrorCode::KmsNotFound);
    assert!(receive(&a, "q", 0).await.is_empty());
}

/// E6: a dead-lettered message is sealed by the DLQ's data key: deleting
/// its source queue (whose data keys go with it) leaves it readable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e6_a_dead_lettered_message_is_sealed_by_the_dlq_s_key() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let keys = Keys::new("source-key");
    keys.edit(|k| k.add_active("current", 1).expect("add"));
    let a = node(&url, Some(&keys)).await.expect("node");
    a.set_deleted_name_hold(Duration::ZERO);
    testing::create_queue(&a, "dlq", &[]).await;
    let policy =
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
    testing::create_queue(
        &a,
        "src",
        &[("RedrivePolicy", policy), ("KmsMasterKeyId", "source-key")],
    )
    .await;
    send(&a, "src", 1).await.expect("send");
    assert_eq!(receive(&a, "src", 0).await.len(), 1);
    assert!(receive(&a, "src", 0).await.is_empty(), "moved to the DLQ");
    a.delete_queue("src").await.expect("delete the source");
    let b = node(&url, Some(&keys)).await.expect("another node");
    assert_eq!(
        bodies(&receive(&b, "dlq", 30).await),
        [format!("{MARKER} 0")]
    );
    assert!(!dump(cluster.bindir(), &url).contains(MARKER));
}

/// E4: a data key past its expiry (the longest retention after it last
/// sealed, and a day) is deleted by the sweeper, so a keyring key that
/// sealed only expired messages can leave the keyring without stopping a
/// node's start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e4_expired_data_keys_are_deleted_and_no_longer_need_their_key() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let keys = Keys::new("old");
    keys.edit(|k| k.add_active("current", 1).expect("add"));
    let clock = ManualClock::new(1_000_000);
    let options = PostgresOptions {
        pool_size: 4,
        keyring: Some(keys.ring()),
        ..Default::default()
    };
    let a = PostgresBroker::connect(&url, Arc::new(clock.clone()), options)
        .await
        .expect("node");
    testing::create_queue(
        &a,
        "old",
        &[
            ("KmsMasterKeyId", "alias/old"),
            ("MessageRetentionPeriod", "60"),
        ],
    )
    .await;
    send(&a, "old", 1).await.expect("send");
    clock.advance_ms(sluice_keyring::EXPIRY_MS + 3_600_000);
    a.sweep().await.expect("sweep");
    // The key is gone from the keyring altogether, not retired.
    keys.edit(|k| k.keys.retain(|e| e.name != "old"));
    let b = node(&url, Some(&keys))
        .await
        .expect("a start needs no key of an expired data key");
    assert!(receive(&b, "old", 0).await.is_empty());
}

/// E4: many sends arriving together on a queue without a data key make
/// one, on the connection a send already holds: with a pool of two, twenty
/// concurrent sends all succeed and one data key is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e4_concurrent_sends_make_one_data_key_without_more_connections() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let keys = Keys::new("first");
    let options = PostgresOptions {
        pool_size: 2,
        wait_timeout: Duration::from_secs(2),
        keyring: Some(keys.ring()),
    };
    let a = PostgresBroker::connect(&url, Arc::new(ManualClock::default()), options)
        .await
        .expect("node");
    testing::create_queue(&a, "std", &[]).await;
    testing::create_queue(&a, "f.fifo", &[("FifoQueue", "true")]).await;
    let mut sends = tokio::task::JoinSet::new();
    for i in 0..20 {
        let a = a.clone();
        sends.spawn(async move {
            let m = NewMessage {
                body: format!("{MARKER} {i}"),
                ..Default::default()
            };
            if i % 2 == 0 {
                a.send_messages("std", vec![m]).await
            } else {
                let m = NewMessage {
                    group_id: Some("g".into()),
                    dedup_id: Some(format!("d{i}")),
                    ..m
                };
                a.send_messages("f.fifo", vec![m]).await
            }
        });
    }
    while let Some(sent) = sends.join_next().await {
        sent.expect("task").expect("send");
    }
    let db = testing::plain_connection(&url).await;
    let stored: i64 = db
        .query_one("SELECT count(*) FROM sluice_data_keys", &[])
        .await
        .expect("count")
        .get(0);
    assert_eq!(stored, 2, "one data key per queue");
}
