//! The keyring's errors.

use std::path::PathBuf;

/// Why a keyring or a data key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyringError {
    /// The keyring file could not be read or written.
    #[error("keyring file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The keyring file, or a key in it, is not well formed.
    #[error("keyring: {0}")]
    Malformed(String),
    /// The system's random source failed.
    #[error("the system's random source failed")]
    Random,
    /// Stored data is wrapped by a key that the keyring does not hold.
    #[error(
        "stored data is encrypted with key {key:?}, which the keyring {keyring} does not hold: start with the keyring that has it"
    )]
    MissingKey {
        /// The key's name.
        key: String,
        /// Where the keyring came from.
        keyring: String,
    },
    /// Stored data is encrypted and no keyring was given.
    #[error(
        "{count} stored data keys are encrypted with key {key:?} (and maybe others), but no keyring is configured: start with --encryption-key-file"
    )]
    NotConfigured {
        /// The first key named.
        key: String,
        /// How many data keys are stored.
        count: usize,
    },
    /// A keyring was given while serving to a server started without one.
    #[error("encryption at rest was off at start: turning it on needs a restart")]
    OffAtStart,
    /// A key of that name is in the keyring, but it does not open the data
    /// keys wrapped under its name: a different key of the same name.
    #[error("key {key:?} of the keyring does not open the data keys stored under its name")]
    WrongKey {
        /// The key's name.
        key: String,
    },
}
