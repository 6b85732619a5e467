//! The operator's keyring: named 256-bit keys, one of them active, kept in
//! a JSON file the server only reads (`sluice keys` writes it).
//!
//! A key's material never leaves this module except as the AEAD key that
//! wraps data keys ([`MasterKey`]). A retired key keeps its name and loses
//! its material: stored data still wrapped by it is then known to be
//! shredded on purpose, where a name absent from the file means the wrong
//! keyring was given, and the start is refused.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};

use crate::envelope::MasterKey;
use crate::error::KeyringError;

/// The KMS alias of the key SQS manages itself: a queue that names it is
/// sealed with the keyring's active key, as an SSE-SQS queue is.
pub const AWS_MANAGED_ALIAS: &str = "alias/aws/sqs";

/// A keyring as loaded: which key is active and each key by name.
pub struct Keyring {
    source: String,
    active: String,
    keys: BTreeMap<String, Entry>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names only: the material never reaches a log.
        f.debug_struct("Keyring")
            .field("source", &self.source)
            .field("active", &self.active)
            .field("keys", &self.keys.keys().collect::<Vec<_>>())
            .finish()
    }
}

enum Entry {
    Live(Box<MasterKey>),
    Retired,
}

/// What the keyring holds under a name.
pub enum Lookup<'a> {
    /// A usable key.
    Live(&'a MasterKey),
    /// A key retired with `sluice keys retire`: its material is gone.
    Retired,
    /// No key of that name.
    Missing,
}

impl Keyring {
    /// Loads the keyring file at `path`.
    pub fn load(path: &Path) -> Result<Self, KeyringError> {
        let file = KeyringFile::read(path)?;
        Self::from_file(path.display().to_string(), file)
    }

    /// A keyring of one key, named `name`, given as the base64 of its 32
    /// bytes (the environment variable containers pass it in).
    pub fn from_base64(source: &str, name: &str, material: &str) -> Result<Self, KeyringError> {
        check_name(name)?;
        let key = decode_material(name, material)?;
        let mut keys = BTreeMap::new();
        keys.insert(
            name.to_string(),
            Entry::Live(Box::new(MasterKey::new(&key)?)),
        );
        Ok(Self {
            source: source.to_string(),
            active: name.to_string(),
            keys,
        })
    }

    fn from_file(source: String, file: KeyringFile) -> Result<Self, KeyringError> {
        let mut keys = BTreeMap::new();
        for k in file.keys {
            check_name(&k.name)?;
            let entry = match (&k.material, k.retired) {
                (Some(m), None) => {
                    Entry::Live(Box::new(MasterKey::new(&decode_material(&k.name, m)?)?))
                }
                (None, Some(_)) => Entry::Retired,
                _ => {
                    return Err(KeyringError::Malformed(format!(
                        "key {:?} must have either material or a retirement time",
                        k.name
                    )));
                }
            };
            if keys.insert(k.name.clone(), entry).is_some() {
                return Err(KeyringError::Malformed(format!(
                    "key {:?} is listed twice",
                    k.name
                )));
            }
        }
        match keys.get(&file.active) {
            Some(Entry::Live(_)) => {}
            _ => {
                return Err(KeyringError::Malformed(format!(
                    "the active key {:?} is not a live key of the file",
                    file.active
                )));
            }
        }
        Ok(Self {
            source,
            active: file.active,
            keys,
        })
    }

    /// Where the keyring came from (a path or an environment variable),
    /// for messages.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The active key's name: new data keys are wrapped by it.
    pub fn active(&self) -> &str {
        &self.active
    }

    /// The key named `name`.
    pub fn lookup(&self, name: &str) -> Lookup<'_> {
        match self.keys.get(name) {
            Some(Entry::Live(k)) => Lookup::Live(k),
            Some(Entry::Retired) => Lookup::Retired,
            None => Lookup::Missing,
        }
    }

    /// The name of the key a queue's `KmsMasterKeyId` means: a key name,
    /// `alias/<name>`, or a KMS ARN ending in `alias/<name>` or
    /// `key/<name>`; [`AWS_MANAGED_ALIAS`] means the active key. `None`
    /// when no live key answers to it.
    pub fn resolve(&self, kms_key_id: &str) -> Option<&str> {
        if kms_key_id == AWS_MANAGED_ALIAS || kms_key_id.ends_with(":alias/aws/sqs") {
            return Some(&self.active);
        }
        let tail = match kms_key_id.strip_prefix("arn:") {
            Some(arn) => arn.rsplit_once(':').map(|(_, resource)| resource)?,
            None => kms_key_id,
        };
        let name = tail
            .strip_prefix("alias/")
            .or_else(|| tail.strip_prefix("key/"))
            .unwrap_or(tail);
        match self.keys.get_key_value(name) {
            Some((name, Entry::Live(_))) => Some(name),
            _ => None,
        }
    }

    /// The name of the key that seals the messages of a queue with these
    /// attributes (`SqsManagedSseEnabled`, `KmsMasterKeyId`): `None` for a
    /// queue that asks for no encryption, `Some(None)` when its
    /// `KmsMasterKeyId` names no live key.
    pub fn key_for(&self, sse_sqs: bool, kms_key_id: Option<&str>) -> Option<Option<&str>> {
        match kms_key_id {
            Some(id) => Some(self.resolve(id)),
            None if sse_sqs => Some(Some(&self.active)),
            None => None,
        }
    }
}

/// The keyring file as written on disk.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyringFile {
    /// The name of the key new data keys are wrapped by.
    pub active: String,
    /// Every key, live or retired.
    pub keys: Vec<KeyEntry>,
}

/// One key of the file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    /// Its name, `[A-Za-z0-9_-]{1,64}`.
    pub name: String,
    /// When it was made, seconds since the Unix epoch.
    pub created: u64,
    /// Base64 of its 32 bytes; absent once retired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub material: Option<String>,
    /// When it was retired, seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retired: Option<u64>,
}

impl KeyringFile {
    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<Self, KeyringError> {
        let text = std::fs::read_to_string(path).map_err(|e| KeyringError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        serde_json::from_str(&text).map_err(|e| KeyringError::Malformed(e.to_string()))
    }

    /// A new file holding one fresh key, `name`, active.
    pub fn new_with_key(name: &str, now: u64) -> Result<Self, KeyringError> {
        let mut file = Self {
            active: String::new(),
            keys: Vec::new(),
        };
        file.add_active(name, now)?;
        Ok(file)
    }

    /// Adds a fresh key `name` and makes it the active one.
    pub fn add_active(&mut self, name: &str, now: u64) -> Result<(), KeyringError> {
        check_name(name)?;
        if self.keys.iter().any(|k| k.name == name) {
            return Err(KeyringError::Malformed(format!(
                "the keyring already has a key named {name:?}"
            )));
        }
        let mut material = [0u8; 32];
        SystemRandom::new()
            .fill(&mut material)
            .map_err(|_| KeyringError::Random)?;
        self.keys.push(KeyEntry {
            name: name.to_string(),
            created: now,
            material: Some(STANDARD.encode(material)),
            retired: None,
        });
        self.active = name.to_string();
        Ok(())
    }

    /// Forgets the material of key `name` for good; the active key cannot
    /// be retired.
    pub fn retire(&mut self, name: &str, now: u64) -> Result<(), KeyringError> {
        if self.active == name {
            return Err(KeyringError::Malformed(format!(
                "{name:?} is the active key: rotate to a new key first"
            )));
        }
        let entry = self
            .keys
            .iter_mut()
            .find(|k| k.name == name)
            .ok_or_else(|| KeyringError::Malformed(format!("no key named {name:?}")))?;
        if entry.retired.is_none() {
            entry.material = None;
            entry.retired = Some(now);
        }
        Ok(())
    }

    /// Writes the file to `path` readable by its owner only, through a
    /// temporary file renamed over it, so that a crash leaves the old file
    /// or the new one.
    pub fn write(&self, path: &Path) -> Result<(), KeyringError> {
        let io = |source| KeyringError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| KeyringError::Malformed(e.to_string()))?;
        text.push('\n');
        let tmp = temporary_path(path);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut f = options.open(&tmp).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(io)?;
        }
        Ok(())
    }
}

fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

fn check_name(name: &str) -> Result<(), KeyringError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(KeyringError::Malformed(format!(
            "key name {name:?} must be 1 to 64 of A-Z, a-z, 0-9, '-' and '_'"
        )))
    }
}

fn decode_material(name: &str, material: &str) -> Result<[u8; 32], KeyringError> {
    STANDARD
        .decode(material.trim())
        .ok()
        .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
        .ok_or_else(|| {
            KeyringError::Malformed(format!(
                "key {name:?} must be the base64 of exactly 32 bytes"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring_of(names: &[&str]) -> Keyring {
        let mut file = KeyringFile::new_with_key(names[0], 1).unwrap();
        for n in &names[1..] {
            file.add_active(n, 2).unwrap();
        }
        Keyring::from_file("test".into(), file).unwrap()
    }

    #[test]
    fn kms_key_ids_resolve_by_name_alias_and_arn() {
        let ring = ring_of(&["orders", "current"]);
        assert_eq!(ring.resolve("orders"), Some("orders"));
        assert_eq!(ring.resolve("alias/orders"), Some("orders"));
        assert_eq!(
            ring.resolve("arn:aws:kms:us-east-1:000000000000:alias/orders"),
            Some("orders")
        );
        assert_eq!(
            ring.resolve("arn:aws:kms:us-east-1:000000000000:key/orders"),
            Some("orders")
        );
        assert_eq!(ring.resolve("alias/aws/sqs"), Some("current"));
        assert_eq!(ring.resolve("alias/unknown"), None);
    }

    #[test]
    fn a_retired_key_loses_its_material_and_no_longer_resolves() {
        let mut file = KeyringFile::new_with_key("old", 1).unwrap();
        file.add_active("new", 2).unwrap();
        assert!(file.retire("new", 3).is_err(), "the active key stays");
        file.retire("old", 3).unwrap();
        assert!(file.keys[0].material.is_none());
        let ring = Keyring::from_file("test".into(), file).unwrap();
        assert!(matches!(ring.lookup("old"), Lookup::Retired));
        assert!(matches!(ring.lookup("new"), Lookup::Live(_)));
        assert!(matches!(ring.lookup("other"), Lookup::Missing));
        assert_eq!(ring.resolve("old"), None);
    }

    #[test]
    fn the_file_round_trips_and_is_private_to_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.json");
        KeyringFile::new_with_key("first", 7)
            .unwrap()
            .write(&path)
            .unwrap();
        let ring = Keyring::load(&path).unwrap();
        assert_eq!(ring.active(), "first");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn malformed_files_are_refused_with_what_is_wrong() {
        let bad = |json: &str| {
            let file: KeyringFile = serde_json::from_str(json).unwrap();
            match Keyring::from_file("t".into(), file) {
                Err(KeyringError::Malformed(m)) => m,
                _ => panic!("accepted {json}"),
            }
        };
        assert!(bad(r#"{"active":"a","keys":[]}"#).contains("active key"));
        assert!(
            bad(r#"{"active":"a","keys":[{"name":"a","created":1,"material":"c2hvcnQ="}]}"#)
                .contains("32 bytes")
        );
        assert!(bad(r#"{"active":"a b","keys":[]}"#).contains("active key"));
    }
}
