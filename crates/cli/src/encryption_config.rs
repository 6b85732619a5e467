//! `sluice serve`'s encryption at rest: the keyring of the
//! `--encryption-key-file` flag, else of the config file's `[encryption]
//! key_file`, else the one key of the `SLUICE_ENCRYPTION_KEY` environment
//! variable (docs/configuration.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_keyring::{Keyring, KeyringError};

use crate::config::FileConfig;

/// The environment variable of a keyring of one key: the base64 of its
/// 32 bytes.
pub const KEY_ENV: &str = "SLUICE_ENCRYPTION_KEY";
/// The environment variable naming that key.
pub const KEY_NAME_ENV: &str = "SLUICE_ENCRYPTION_KEY_NAME";
/// The name of that key when [`KEY_NAME_ENV`] is not set.
pub const DEFAULT_ENV_KEY_NAME: &str = "env";

/// Where the keyring comes from.
pub enum KeyringSource {
    /// `--encryption-key-file`.
    Flag(PathBuf),
    /// The config file's `[encryption] key_file`.
    ConfigFile(PathBuf),
    /// [`KEY_ENV`], named by [`KEY_NAME_ENV`].
    Env {
        /// The key's name.
        name: String,
        /// The base64 of its bytes.
        material: String,
    },
}

impl std::fmt::Debug for KeyringSource {
    // The material never reaches a log or a message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Flag(path) => f.debug_tuple("Flag").field(path).finish(),
            Self::ConfigFile(path) => f.debug_tuple("ConfigFile").field(path).finish(),
            Self::Env { name, .. } => f
                .debug_struct("Env")
                .field("name", name)
                .finish_non_exhaustive(),
        }
    }
}

impl KeyringSource {
    /// The setting that gave it, for messages.
    fn setting(&self) -> &'static str {
        match self {
            Self::Flag(_) => "--encryption-key-file",
            Self::ConfigFile(_) => "[encryption] key_file in the config file",
            Self::Env { .. } => "the SLUICE_ENCRYPTION_KEY environment variable",
        }
    }

    /// The file, or the environment variable, for logs.
    fn describe(&self) -> String {
        match self {
            Self::Flag(path) | Self::ConfigFile(path) => path.display().to_string(),
            Self::Env { .. } => KEY_ENV.to_string(),
        }
    }
}

/// The key of the environment, read once at start.
#[derive(Default)]
pub struct EnvKey {
    /// [`KEY_ENV`].
    pub material: Option<String>,
    /// [`KEY_NAME_ENV`].
    pub name: Option<String>,
}

impl EnvKey {
    /// Reads [`KEY_ENV`] and [`KEY_NAME_ENV`].
    pub fn from_env() -> anyhow::Result<Self> {
        Ok(Self {
            material: var(KEY_ENV)?,
            name: var(KEY_NAME_ENV)?,
        })
    }
}

fn var(name: &str) -> anyhow::Result<Option<String>> {
    match std::env::var(name) {
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            anyhow::bail!("the environment variable {name} is not valid UTF-8")
        }
    }
}

/// The keyring's source: the flag, else the config file, else the
/// environment; `None` when none is given.
pub fn keyring_source(
    flag: Option<&Path>,
    file: &FileConfig,
    env: EnvKey,
) -> Option<KeyringSource> {
    let source = match (flag, file.encryption_key_file()) {
        (Some(path), _) => KeyringSource::Flag(path.to_path_buf()),
        (None, Some(path)) => KeyringSource::ConfigFile(path.to_path_buf()),
        (None, None) => {
            return env.material.map(|material| KeyringSource::Env {
                name: env.name.unwrap_or_else(|| DEFAULT_ENV_KEY_NAME.to_string()),
                material,
            });
        }
    };
    if env.material.is_some() {
        tracing::warn!(
            keyring = %source.describe(),
            "{KEY_ENV} is ignored: the keyring file given by {} is used",
            source.setting()
        );
    }
    Some(source)
}

/// The keyring the engine seals with (the durable store's or
/// PostgreSQL's): `None` without one. In memory one is ignored, as nothing
/// is at rest. A keyring that cannot be loaded stops the start.
pub fn keyring(
    source: Option<KeyringSource>,
    in_memory: bool,
) -> anyhow::Result<Option<Arc<Keyring>>> {
    let Some(source) = source else {
        return Ok(None);
    };
    if in_memory {
        tracing::warn!(
            keyring = %source.describe(),
            "in-memory mode: the encryption keyring is ignored, nothing is stored at rest"
        );
        return Ok(None);
    }
    let ring = load(&source)?;
    tracing::info!(
        keyring = ring.source(),
        active_key = ring.active(),
        "encryption at rest: keyring loaded"
    );
    Ok(Some(Arc::new(ring)))
}

/// The keyring file a reload reads again: the flag's, else the config
/// file's (`None` when neither names one).
pub fn reload(flag: Option<&Path>, file: &FileConfig) -> anyhow::Result<Option<Keyring>> {
    let source = match (flag, file.encryption_key_file()) {
        (Some(path), _) => KeyringSource::Flag(path.to_path_buf()),
        (None, Some(path)) => KeyringSource::ConfigFile(path.to_path_buf()),
        (None, None) => return Ok(None),
    };
    load(&source).map(Some)
}

impl KeyringSource {
    /// Whether a reload reads it again (a file; the environment's key
    /// stays what it was at start).
    pub fn is_file(&self) -> bool {
        matches!(self, Self::Flag(_) | Self::ConfigFile(_))
    }
}

fn load(source: &KeyringSource) -> anyhow::Result<Keyring> {
    let why = |e: KeyringError| match e {
        KeyringError::Io { source, .. } => source.to_string(),
        KeyringError::Malformed(m) => m,
        e => e.to_string(),
    };
    match source {
        KeyringSource::Flag(path) | KeyringSource::ConfigFile(path) => {
            Keyring::load(path).map_err(|e| {
                anyhow::anyhow!(
                    "cannot load the encryption keyring {} ({}): {}",
                    path.display(),
                    source.setting(),
                    why(e)
                )
            })
        }
        KeyringSource::Env { name, material } => Keyring::from_base64(KEY_ENV, name, material)
            .map_err(|e| anyhow::anyhow!("cannot use the key of {KEY_ENV}: {}", why(e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_keyring::KeyringFile;

    /// The base64 of 32 bytes.
    const MATERIAL: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    fn file(toml: &str) -> FileConfig {
        toml::from_str(toml).unwrap()
    }

    fn env(material: Option<&str>, name: Option<&str>) -> EnvKey {
        EnvKey {
            material: material.map(str::to_string),
            name: name.map(str::to_string),
        }
    }

    fn path_of(source: Option<KeyringSource>) -> Option<PathBuf> {
        match source {
            Some(KeyringSource::Flag(p) | KeyringSource::ConfigFile(p)) => Some(p),
            _ => None,
        }
    }

    /// The flag wins over the config file, which wins over the
    /// environment; the environment's key is named `env` by default.
    #[test]
    fn the_flag_then_the_file_then_the_environment_give_the_keyring() {
        let in_file = file("[encryption]\nkey_file = \"file.json\"\n");
        let none = FileConfig::default();
        let flag = Some(Path::new("flag.json"));
        let s = keyring_source(flag, &in_file, env(Some(MATERIAL), None));
        assert!(matches!(&s, Some(KeyringSource::Flag(_))));
        assert_eq!(path_of(s), Some(PathBuf::from("flag.json")));
        let s = keyring_source(None, &in_file, env(Some(MATERIAL), None));
        assert!(matches!(&s, Some(KeyringSource::ConfigFile(_))));
        assert_eq!(path_of(s), Some(PathBuf::from("file.json")));
        match keyring_source(None, &none, env(Some(MATERIAL), None)) {
            Some(KeyringSource::Env { name, material }) => {
                assert_eq!((name.as_str(), material.as_str()), ("env", MATERIAL));
            }
            other => panic!("{other:?}"),
        }
        match keyring_source(None, &none, env(Some(MATERIAL), Some("prod"))) {
            Some(KeyringSource::Env { name, .. }) => assert_eq!(name, "prod"),
            other => panic!("{other:?}"),
        }
        assert!(keyring_source(None, &none, env(None, Some("prod"))).is_none());
        assert!(keyring_source(None, &none, EnvKey::default()).is_none());
    }

    /// A file keyring loads with its active key; one that cannot be read
    /// stops the start naming its path and the setting.
    #[test]
    fn the_durable_engine_gets_the_loaded_keyring() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keyring.json");
        KeyringFile::new_with_key("first", 1)
            .unwrap()
            .write(&path)
            .unwrap();
        let ring = keyring(Some(KeyringSource::Flag(path.clone())), false)
            .unwrap()
            .expect("a keyring");
        assert_eq!(ring.active(), "first");
        assert_eq!(ring.source(), path.display().to_string());
        assert!(keyring(None, false).unwrap().is_none());

        let missing = dir.path().join("missing.json");
        let e = keyring(Some(KeyringSource::ConfigFile(missing.clone())), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&missing.display().to_string()), "{e}");
        assert!(e.contains("[encryption] key_file"), "{e}");
        std::fs::write(&missing, "{}").unwrap();
        let e = keyring(Some(KeyringSource::Flag(missing.clone())), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.json (--encryption-key-file)"), "{e}");
    }

    /// The environment's key loads under its name; a bad one is refused
    /// without being printed.
    #[test]
    fn the_environment_gives_a_keyring_of_one_key() {
        let source = |material: &str| {
            Some(KeyringSource::Env {
                name: "env".into(),
                material: material.into(),
            })
        };
        let ring = keyring(source(MATERIAL), false).unwrap().unwrap();
        assert_eq!((ring.active(), ring.source()), ("env", KEY_ENV));
        let e = keyring(source("c2VjcmV0LXRvby1zaG9ydA=="), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains(KEY_ENV) && e.contains("32 bytes"), "{e}");
        assert!(!e.contains("c2VjcmV0"), "{e}");
        let debug = format!("{:?}", source(MATERIAL).unwrap());
        assert!(!debug.contains(MATERIAL), "{debug}");
    }

    /// In memory a keyring is ignored (not even read); elsewhere one that
    /// cannot be read stops the start, naming where it came from.
    #[test]
    fn in_memory_ignores_a_keyring_and_a_missing_one_stops_the_start() {
        let missing = || Some(KeyringSource::Flag(PathBuf::from("/nonexistent/k.json")));
        assert!(keyring(missing(), true).unwrap().is_none());
        let e = keyring(missing(), false).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/k.json"), "{e}");
    }
}
