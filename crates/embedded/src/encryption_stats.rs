//! What encryption at rest does now, for `/metrics`: the data keys made
//! since the start, and the keyring key each queue that asks for
//! server-side encryption seals with, read from its attributes (names
//! only, never key material).

use std::collections::BTreeMap;

use sluice_broker::EncryptionStats;
use sluice_core::queue_name::is_internal_key;

use crate::engine::EmbeddedBroker;

/// `None` unless the engine seals (durable, with a keyring).
pub(crate) fn encryption_stats(broker: &EmbeddedBroker) -> Option<EncryptionStats> {
    let inner = &broker.inner;
    if !inner.journal.is_durable() {
        return None;
    }
    let keyring = inner.data_keys.keyring()?;
    let cells: Vec<(String, _)> = (inner.queues.read().iter())
        .filter(|(name, _)| !is_internal_key(name))
        .map(|(name, cell)| (name.clone(), cell.clone()))
        .collect();
    let mut queue_keys = BTreeMap::new();
    for (name, cell) in cells {
        let (sse_sqs, kms_key_id) = {
            let st = cell.state.lock();
            if st.deleted {
                continue;
            }
            let c = &st.meta.config;
            (c.sqs_managed_sse_enabled, c.kms_master_key_id.clone())
        };
        // The key `DataKeys::sealer` would wrap a new data key with.
        let key = match kms_key_id.as_deref() {
            Some(id) => keyring.resolve(id).map(str::to_string),
            None if sse_sqs => Some(keyring.active().to_string()),
            None => continue,
        };
        queue_keys.insert(name, key);
    }
    Some(EncryptionStats {
        data_keys_made: inner.data_keys.made(),
        queue_keys,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use sluice_broker::{Broker, CreateQueue, NewMessage};
    use sluice_core::attributes::QueueConfig;
    use sluice_core::clock::SystemClock;
    use sluice_keyring::{Keyring, KeyringFile};

    use crate::engine::{EmbeddedBroker, EmbeddedOptions};

    async fn create(b: &EmbeddedBroker, name: &str, attrs: &[(&str, &str)]) {
        let requested: BTreeMap<String, String> = attrs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        b.create_queue(CreateQueue {
            name: name.into(),
            config: QueueConfig::for_create(name, &requested).unwrap(),
            requested,
            tags: BTreeMap::new(),
        })
        .await
        .unwrap();
    }

    /// The key each queue seals with follows its attributes: SSE-SQS and
    /// `alias/aws/sqs` the active key, a named key that key, an unknown
    /// one none; a clear queue is not listed; data keys are counted as
    /// sends make them. Without a keyring there is nothing to report.
    #[tokio::test]
    async fn each_queue_names_the_key_it_seals_with() {
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys.json");
        let mut file = KeyringFile::new_with_key("first", 1).unwrap();
        file.add_active("second", 2).unwrap();
        file.write(&keys).unwrap();
        let options = EmbeddedOptions {
            keyring: Some(Arc::new(Keyring::load(&keys).unwrap())),
            ..Default::default()
        };
        let (b, _) =
            EmbeddedBroker::open_with(&dir.path().join("data"), Arc::new(SystemClock), options)
                .unwrap();
        create(&b, "default", &[]).await;
        create(&b, "named", &[("KmsMasterKeyId", "alias/first")]).await;
        create(&b, "managed", &[("KmsMasterKeyId", "alias/aws/sqs")]).await;
        create(&b, "missing", &[("KmsMasterKeyId", "alias/nowhere")]).await;
        create(&b, "clear", &[("SqsManagedSseEnabled", "false")]).await;
        let stats = b.encryption_stats().expect("a keyring on disk");
        assert_eq!(stats.data_keys_made, 0);
        let want: BTreeMap<String, Option<String>> = [
            ("default", Some("second")),
            ("managed", Some("second")),
            ("missing", None),
            ("named", Some("first")),
        ]
        .into_iter()
        .map(|(q, k)| (q.to_string(), k.map(str::to_string)))
        .collect();
        assert_eq!(stats.queue_keys, want);
        for q in ["default", "named", "clear"] {
            let m = NewMessage {
                body: "x".into(),
                ..Default::default()
            };
            b.send_messages(q, vec![m]).await.unwrap();
        }
        assert_eq!(b.encryption_stats().unwrap().data_keys_made, 2);
        b.delete_queue("named").await.unwrap();
        assert!(
            !(b.encryption_stats().unwrap().queue_keys).contains_key("named"),
            "a deleted queue is not listed"
        );

        let plain = tempfile::tempdir().unwrap();
        let (b, _) = EmbeddedBroker::open(plain.path(), Arc::new(SystemClock)).unwrap();
        create(&b, "default", &[]).await;
        assert!(b.encryption_stats().is_none());
        assert!(
            EmbeddedBroker::in_memory(Arc::new(SystemClock))
                .encryption_stats()
                .is_none()
        );
    }
}
