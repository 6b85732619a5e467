//! What encryption at rest does now, for `/metrics`: the data keys made
//! since the start, and the keyring key a queue's attributes choose
//! (names only, never key material).

use sluice_broker::EncryptionStats;

use crate::engine::EmbeddedBroker;

/// `None` unless the engine seals (durable, with a keyring).
pub(crate) fn encryption_stats(broker: &EmbeddedBroker) -> Option<EncryptionStats> {
    let inner = &broker.inner;
    (inner.journal.is_durable() && inner.data_keys.is_configured()).then(|| EncryptionStats {
        data_keys_made: inner.data_keys.made(),
    })
}

/// [`sluice_broker::Broker::sealing_key`]: `None` unless the engine seals.
pub(crate) fn sealing_key(
    broker: &EmbeddedBroker,
    sse_sqs: bool,
    kms_key_id: Option<&str>,
) -> Option<Option<String>> {
    if !broker.inner.journal.is_durable() {
        return None;
    }
    let keyring = broker.inner.data_keys.keyring()?;
    keyring
        .key_for(sse_sqs, kms_key_id)
        .map(|key| key.map(str::to_string))
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
    /// one none; a clear queue none at all; data keys are counted as sends
    /// make them. Without a keyring there is nothing to report.
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
        for (q, want) in [
            ("default", Some(Some("second"))),
            ("managed", Some(Some("second"))),
            ("missing", Some(None)),
            ("named", Some(Some("first"))),
            ("clear", None),
        ] {
            let c = b.get_queue(q).await.unwrap().config;
            let got = b.sealing_key(c.sqs_managed_sse_enabled, c.kms_master_key_id.as_deref());
            assert_eq!(got, want.map(|k| k.map(str::to_string)), "{q}");
        }
        for q in ["default", "named", "clear"] {
            let m = NewMessage {
                body: "x".into(),
                ..Default::default()
            };
            b.send_messages(q, vec![m]).await.unwrap();
        }
        assert_eq!(b.encryption_stats().unwrap().data_keys_made, 2);

        let plain = tempfile::tempdir().unwrap();
        let (b, _) = EmbeddedBroker::open(plain.path(), Arc::new(SystemClock)).unwrap();
        create(&b, "default", &[]).await;
        assert!(b.encryption_stats().is_none());
        assert!(b.sealing_key(true, None).is_none(), "no keyring");
        assert!(
            EmbeddedBroker::in_memory(Arc::new(SystemClock))
                .encryption_stats()
                .is_none()
        );
    }
}
