//! Encryption at rest.
//!
//! - [`keyring`]: the operator's keyring file of named keys, one active.
//! - [`envelope`]: AES-256-GCM sealing; keyring keys wrap data keys, data
//!   keys seal messages.
//! - [`data_keys`]: every queue's data keys, made when needed, rotated
//!   after the queue's reuse period, read back at start.
//!
//! The engines decide where sealed bytes go; this crate never touches
//! storage.

pub mod data_keys;
pub mod envelope;
pub mod error;
pub mod keyring;

pub use data_keys::{
    DataKeyRecord, DataKeys, EXPIRY_MS, Loaded, NewDataKey, Prepared, QueueSse, Rekeyed, SealError,
    Sealer,
};
pub use envelope::{DataKey, OpenError};
pub use error::KeyringError;
pub use keyring::{Keyring, KeyringFile};
