//! Encryption at rest in the durable engine (rules E1–E6): what a queue
//! that asks for SSE stores is sealed in the log, the store and backups,
//! reads back after restarts and key rotations, and is shredded with its
//! key or its queue.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{
    Broker, CreateQueue, EngineError, MessageFilter, Nack, NewMessage, ReceiveOptions,
};
use sluice_core::ErrorCode;
use sluice_core::SystemClock;
use sluice_core::attributes::QueueConfig;
use sluice_core::message::{AttributeValue, MessageAttributeValue, MessageAttributes};
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions, RecoveryStats, StoreError};
use sluice_keyring::{Keyring, KeyringFile};

const MARKER: &str = "PAN-4111111111111111-marker";
const ATTRIBUTE_MARKER: &str = "attribute-secret-7f3a";
const REASON_MARKER: &str = "reason-secret-customer-42";

struct Setup {
    _dir: tempfile::TempDir,
    data: PathBuf,
    keys: PathBuf,
}

impl Setup {
    /// A data directory and a keyring file of one key, `first`.
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("dir");
        let keys = dir.path().join("keys.json");
        KeyringFile::new_with_key("first", 1)
            .expect("key")
            .write(&keys)
            .expect("write keyring");
        Self {
            data: dir.path().join("data"),
            keys,
            _dir: dir,
        }
    }

    fn edit_keyring(&self, f: impl FnOnce(&mut KeyringFile)) {
        let mut file = KeyringFile::read(&self.keys).expect("read keyring");
        f(&mut file);
        file.write(&self.keys).expect("write keyring");
    }

    fn open(&self) -> (EmbeddedBroker, RecoveryStats) {
        self.try_open(Some(&self.keys)).expect("open")
    }

    fn try_open(&self, keys: Option<&Path>) -> Result<(EmbeddedBroker, RecoveryStats), StoreError> {
        let options = EmbeddedOptions {
            keyring: keys.map(|k| Arc::new(Keyring::load(k).expect("keyring"))),
            ..Default::default()
        };
        EmbeddedBroker::open_with(&self.data, Arc::new(SystemClock), options)
    }
}

async fn create(b: &EmbeddedBroker, name: &str, attrs: &[(&str, &str)]) {
    let requested: BTreeMap<String, String> = attrs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    b.create_queue(CreateQueue {
        name: name.into(),
        config: QueueConfig::for_create(name, &requested).expect("config"),
        requested,
        tags: BTreeMap::new(),
    })
    .await
    .expect("create");
}

fn secret_message(n: usize) -> NewMessage {
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

async fn send(b: &EmbeddedBroker, queue: &str, count: usize) -> Result<(), EngineError> {
    let batch = (0..count).map(secret_message).collect();
    b.send_messages(queue, batch).await.map(|_| ())
}

async fn receive_bodies(b: &EmbeddedBroker, queue: &str) -> Vec<String> {
    let got = b
        .receive_messages(
            queue,
            ReceiveOptions {
                max_messages: 10,
                visibility_timeout: Some(0),
                wait: Duration::ZERO,
                attempt_id: None,
            },
        )
        .await
        .expect("receive");
    for m in &got {
        let card = &m.attributes["card"].value;
        assert_eq!(card, &AttributeValue::String(ATTRIBUTE_MARKER.into()));
    }
    let mut bodies: Vec<String> = got.into_iter().map(|m| m.body.to_string()).collect();
    bodies.sort();
    bodies
}

/// Whether any file under `dir` holds `needle`: what `grep -r` would find.
fn found_on_disk(dir: &Path, needle: &str) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                // The engine may remove a file (a log segment it is done
                // with) between the listing and the read: it holds nothing.
                let bytes = match std::fs::read(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    read => read.expect("read file"),
                };
                if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                    return true;
                }
            }
        }
    }
    false
}

/// E1, E2: the body and attributes of a message sent to a queue with
/// SSE-SQS (on by default with a keyring), and a consumer's failure reason
/// for it, are nowhere on disk; a queue that turned SSE off holds them
/// clear (so the search can find them); receives return the message and
/// a peek the reason unchanged, before and after a restart.
#[tokio::test]
async fn e1_sealed_messages_leave_no_plaintext_on_disk_and_read_back_after_restart() {
    let s = Setup::new();
    {
        let (b, _) = s.open();
        create(&b, "sealed", &[]).await;
        create(&b, "clear", &[("SqsManagedSseEnabled", "false")]).await;
        send(&b, "sealed", 3).await.expect("send sealed");
        let got = b
            .receive_messages(
                "sealed",
                ReceiveOptions {
                    max_messages: 1,
                    visibility_timeout: Some(30),
                    wait: Duration::ZERO,
                    attempt_id: None,
                },
            )
            .await
            .expect("receive");
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
        for secret in [MARKER, ATTRIBUTE_MARKER, REASON_MARKER] {
            assert!(!found_on_disk(&s.data, secret), "{secret} on disk");
        }
        send(&b, "clear", 1).await.expect("send clear");
        assert!(
            found_on_disk(&s.data, MARKER),
            "the clear queue's body is on disk"
        );
        b.delete_queue("clear").await.expect("delete clear");
        assert_eq!(receive_bodies(&b, "sealed").await.len(), 3);
    }
    // A restart replays the log into the store: still nothing clear but
    // the deleted queue's old log, which the next checkpoint drops.
    let (b, stats) = s.open();
    assert_eq!(stats.messages, 3);
    let peeked = b
        .peek_messages("sealed", &MessageFilter::default(), None, 10)
        .await
        .expect("peek");
    let reasons: Vec<_> = peeked
        .messages
        .iter()
        .filter_map(|m| m.failure_reason.as_deref())
        .collect();
    assert_eq!(reasons, [REASON_MARKER]);
    assert_eq!(
        receive_bodies(&b, "sealed").await,
        vec![
            format!("{MARKER} 0"),
            format!("{MARKER} 1"),
            format!("{MARKER} 2")
        ]
    );
}

/// E5: a start whose stored data keys name a key the keyring lacks is
/// refused naming the key; so is a start without a keyring.
#[tokio::test]
async fn e5_a_start_without_the_key_is_refused_naming_it() {
    let s = Setup::new();
    {
        let (b, _) = s.open();
        create(&b, "q", &[]).await;
        send(&b, "q", 1).await.expect("send");
    }
    let other = tempfile::tempdir().expect("dir");
    let wrong = other.path().join("other.json");
    KeyringFile::new_with_key("second", 1)
        .expect("key")
        .write(&wrong)
        .expect("write");
    let refused = s.try_open(Some(&wrong)).err().expect("refused").to_string();
    assert!(refused.contains("\"first\""), "{refused}");
    assert!(refused.contains("other.json"), "{refused}");
    let refused = s.try_open(None).err().expect("refused").to_string();
    assert!(
        refused.contains("\"first\"") && refused.contains("no keyring"),
        "{refused}"
    );
    // The right keyring still opens it, with the message intact.
    let (b, _) = s.open();
    assert_eq!(receive_bodies(&b, "q").await, vec![format!("{MARKER} 0")]);
}

/// E5: after a rotation, a start re-wraps the server's data keys by the
/// new active key, durably, so the old key can then be retired without
/// losing a message.
#[tokio::test]
async fn e5_rotation_rewraps_so_the_old_key_can_be_retired() {
    let s = Setup::new();
    {
        let (b, _) = s.open();
        create(&b, "q", &[]).await;
        send(&b, "q", 2).await.expect("send");
    }
    s.edit_keyring(|k| k.add_active("second", 2).expect("rotate"));
    {
        let (b, _) = s.open();
        send(&b, "q", 1).await.expect("send after rotation");
    }
    s.edit_keyring(|k| k.retire("first", 3).expect("retire"));
    let (b, stats) = s.open();
    assert_eq!(stats.shredded_messages, 0);
    assert_eq!(receive_bodies(&b, "q").await.len(), 3);
    assert!(!found_on_disk(&s.data, MARKER));
}

/// E3, E5: a queue that names its key keeps it through rotations; when
/// that key is retired its messages are shredded at the next start, and
/// the other queues' stay.
#[tokio::test]
async fn e5_retiring_a_queue_s_named_key_shreds_its_messages() {
    let s = Setup::new();
    s.edit_keyring(|k| {
        k.add_active("orders", 1).expect("add");
        k.add_active("current", 1).expect("add");
    });
    {
        let (b, _) = s.open();
        create(&b, "orders", &[("KmsMasterKeyId", "alias/orders")]).await;
        create(&b, "other", &[]).await;
        send(&b, "orders", 4).await.expect("send");
        send(&b, "other", 1).await.expect("send");
    }
    s.edit_keyring(|k| k.retire("orders", 2).expect("retire"));
    let (b, stats) = s.open();
    assert_eq!(stats.shredded_messages, 4);
    assert!(receive_bodies(&b, "orders").await.is_empty());
    assert_eq!(receive_bodies(&b, "other").await.len(), 1);
    // The retired key seals nothing new either.
    let refused = send(&b, "orders", 1).await.expect_err("refused");
    assert_eq!(refused.to_sqs().code, ErrorCode::KmsNotFound);
}

/// E3: a send to a queue whose KmsMasterKeyId names no key of the keyring
/// is KmsNotFound, and nothing is stored.
#[tokio::test]
async fn e3_an_unknown_key_refuses_the_send() {
    let s = Setup::new();
    let (b, _) = s.open();
    create(&b, "q", &[("KmsMasterKeyId", "alias/nobody")]).await;
    let e = send(&b, "q", 1).await.expect_err("refused").to_sqs();
    assert_eq!(e.code, ErrorCode::KmsNotFound);
    assert!(e.message.contains("alias/nobody"), "{}", e.message);
    assert!(receive_bodies(&b, "q").await.is_empty());
}

/// E6: a message moved to a dead-letter queue is sealed by the DLQ's
/// key: deleting its source queue (whose data keys go with it) leaves the
/// DLQ's copy readable, before and after a restart.
#[tokio::test]
async fn e6_a_dead_lettered_message_is_sealed_by_the_dlq_s_key() {
    let s = Setup::new();
    s.edit_keyring(|k| k.add_active("source-key", 1).expect("add"));
    s.edit_keyring(|k| k.add_active("current", 1).expect("add"));
    {
        let (b, _) = s.open();
        create(&b, "dlq", &[]).await;
        let policy = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
        create(
            &b,
            "src",
            &[("RedrivePolicy", policy), ("KmsMasterKeyId", "source-key")],
        )
        .await;
        send(&b, "src", 1).await.expect("send");
        assert_eq!(receive_bodies(&b, "src").await.len(), 1);
        // Past maxReceiveCount: the next receive moves it.
        assert!(receive_bodies(&b, "src").await.is_empty());
        b.set_deleted_name_hold(Duration::ZERO);
        b.delete_queue("src").await.expect("delete source");
        assert_eq!(receive_bodies(&b, "dlq").await, vec![format!("{MARKER} 0")]);
    }
    let (b, stats) = s.open();
    assert_eq!(stats.shredded_messages, 0);
    assert_eq!(receive_bodies(&b, "dlq").await, vec![format!("{MARKER} 0")]);
    assert!(!found_on_disk(&s.data, MARKER));
}

/// E5: a backup of an encrypted engine holds no plaintext, and opens with
/// the same keyring.
#[tokio::test]
async fn e5_a_backup_is_sealed_too_and_opens_with_the_keyring() {
    let s = Setup::new();
    let copy = s._dir.path().join("backup");
    {
        let (b, _) = s.open();
        create(&b, "q", &[]).await;
        send(&b, "q", 2).await.expect("send");
        b.backup(&copy).await.expect("backup");
    }
    assert!(!found_on_disk(&copy, MARKER));
    let options = EmbeddedOptions {
        keyring: Some(Arc::new(Keyring::load(&s.keys).expect("keyring"))),
        ..Default::default()
    };
    let (b, _) =
        EmbeddedBroker::open_with(&copy, Arc::new(SystemClock), options).expect("open copy");
    assert_eq!(receive_bodies(&b, "q").await.len(), 2);
    let refused =
        EmbeddedBroker::open_with(&copy, Arc::new(SystemClock), EmbeddedOptions::default());
    assert!(refused.is_err(), "a backup opens only with its keyring");
}

/// E4: a data key past its expiry (the longest retention after it last
/// sealed, and a day) is deleted by the sweeper, so a keyring key that
/// sealed only expired messages can leave the keyring without stopping the
/// start.
#[tokio::test]
async fn e4_expired_data_keys_are_deleted_and_no_longer_need_their_key() {
    let s = Setup::new();
    s.edit_keyring(|k| {
        k.add_active("old", 1).expect("add");
        k.add_active("current", 1).expect("add");
    });
    let clock = sluice_core::ManualClock::new(1_000_000);
    let open = || {
        let options = EmbeddedOptions {
            keyring: Some(Arc::new(Keyring::load(&s.keys).expect("keyring"))),
            ..Default::default()
        };
        EmbeddedBroker::open_with(&s.data, Arc::new(clock.clone()), options)
    };
    {
        let (b, _) = open().expect("open");
        create(
            &b,
            "old",
            &[
                ("KmsMasterKeyId", "alias/old"),
                ("MessageRetentionPeriod", "60"),
            ],
        )
        .await;
        send(&b, "old", 1).await.expect("send");
        clock.advance_ms(sluice_keyring::EXPIRY_MS + 3_600_000);
        b.sweep();
    }
    // The key is gone from the keyring altogether, not retired.
    s.edit_keyring(|k| k.keys.retain(|e| e.name != "old"));
    let (b, stats) = open().expect("a start needs no key of an expired data key");
    assert_eq!(stats.messages, 0);
    let e = send(&b, "old", 1).await.expect_err("refused").to_sqs();
    assert_eq!(e.code, ErrorCode::KmsNotFound);
}
