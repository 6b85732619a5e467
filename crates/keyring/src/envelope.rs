//! Envelope encryption: data keys seal user data, keyring keys wrap data
//! keys. Both with AES-256-GCM; a sealed value is its 12-byte nonce, the
//! ciphertext and the 16-byte tag.
//!
//! A data key makes its nonces from a random 4-byte prefix drawn when it
//! is loaded and a counter, so sealing a message costs no system call; a
//! prefix repeats only across loads of one key, which rotates within a
//! day at most (`KmsDataKeyReusePeriodSeconds`), so the chance of a
//! repeated nonce stays far below GCM's bounds.

use std::sync::atomic::{AtomicU64, Ordering};

use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use crate::error::KeyringError;

/// Bytes a sealed value adds to its plaintext.
pub const OVERHEAD: usize = NONCE_LEN + 16;

/// A value that could not be opened: wrong key, or bytes changed.
#[derive(Debug, thiserror::Error)]
#[error("sealed data does not open with its key")]
pub struct OpenError;

/// A keyring key: wraps and unwraps data keys.
pub struct MasterKey(LessSafeKey);

impl MasterKey {
    pub(crate) fn new(material: &[u8; 32]) -> Result<Self, KeyringError> {
        let key = UnboundKey::new(&AES_256_GCM, material).map_err(|_| KeyringError::Random)?;
        Ok(Self(LessSafeKey::new(key)))
    }

    /// Seals a data key's bytes; `aad` binds the result to the data key's
    /// identity, so a wrapped key cannot be swapped for another's.
    pub fn wrap(&self, aad: &[u8], data_key: &[u8; 32]) -> Result<Vec<u8>, KeyringError> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| KeyringError::Random)?;
        Ok(seal_with(&self.0, nonce, aad, data_key))
    }

    /// Opens what [`MasterKey::wrap`] sealed.
    pub fn unwrap(&self, aad: &[u8], wrapped: &[u8]) -> Result<[u8; 32], OpenError> {
        let plain = open_with(&self.0, aad, wrapped)?;
        plain.try_into().map_err(|_| OpenError)
    }
}

/// A data key: seals the user data of one queue for a while.
pub struct DataKey {
    key: LessSafeKey,
    prefix: [u8; 4],
    counter: AtomicU64,
}

impl DataKey {
    /// A fresh random data key and its bytes (to be wrapped and stored).
    pub fn generate() -> Result<(Self, [u8; 32]), KeyringError> {
        let mut bytes = [0u8; 32];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| KeyringError::Random)?;
        Ok((Self::from_bytes(&bytes)?, bytes))
    }

    /// The data key of `bytes`, as unwrapped from storage.
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<Self, KeyringError> {
        let key = UnboundKey::new(&AES_256_GCM, bytes).map_err(|_| KeyringError::Random)?;
        let mut prefix = [0u8; 4];
        SystemRandom::new()
            .fill(&mut prefix)
            .map_err(|_| KeyringError::Random)?;
        Ok(Self {
            key: LessSafeKey::new(key),
            prefix,
            counter: AtomicU64::new(0),
        })
    }

    /// Appends `plaintext` sealed, bound to `aad`, to `out`.
    pub fn seal_into(&self, aad: &[u8], plaintext: &[u8], out: &mut Vec<u8>) {
        let mut nonce = [0u8; NONCE_LEN];
        nonce[..4].copy_from_slice(&self.prefix);
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        nonce[4..].copy_from_slice(&n.to_be_bytes());
        let start = out.len();
        out.reserve(OVERHEAD + plaintext.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(plaintext);
        // Sealed where it lies: no copy. Sealing in place cannot fail for a
        // buffer of this size; were it to, nothing of the plaintext stays.
        match self.key.seal_in_place_separate_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(aad),
            &mut out[start + NONCE_LEN..],
        ) {
            Ok(tag) => out.extend_from_slice(tag.as_ref()),
            Err(_) => out.truncate(start),
        }
    }

    /// Opens what [`DataKey::seal_into`] sealed with the same `aad`.
    pub fn open(&self, aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, OpenError> {
        open_with(&self.key, aad, sealed)
    }
}

fn seal_with(key: &LessSafeKey, nonce: [u8; NONCE_LEN], aad: &[u8], plain: &[u8]) -> Vec<u8> {
    let mut body = plain.to_vec();
    let mut out = Vec::with_capacity(OVERHEAD + plain.len());
    out.extend_from_slice(&nonce);
    if let Ok(tag) = key.seal_in_place_separate_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(aad),
        &mut body,
    ) {
        out.extend_from_slice(&body);
        out.extend_from_slice(tag.as_ref());
    }
    out
}

fn open_with(key: &LessSafeKey, aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, OpenError> {
    if sealed.len() < OVERHEAD {
        return Err(OpenError);
    }
    let (nonce, rest) = sealed.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| OpenError)?;
    let mut body = rest.to_vec();
    let plain_len = key
        .open_in_place(nonce, Aad::from(aad), &mut body)
        .map_err(|_| OpenError)?
        .len();
    body.truncate(plain_len);
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_data_opens_only_with_its_key_and_aad() {
        let (key, _) = DataKey::generate().unwrap();
        let (other, _) = DataKey::generate().unwrap();
        let mut sealed = Vec::new();
        key.seal_into(b"head", b"the body", &mut sealed);
        assert_eq!(sealed.len(), OVERHEAD + 8);
        assert!(!sealed.windows(8).any(|w| w == b"the body"));
        assert_eq!(key.open(b"head", &sealed).unwrap(), b"the body");
        assert!(key.open(b"other head", &sealed).is_err());
        assert!(other.open(b"head", &sealed).is_err());
        let mut changed = sealed.clone();
        changed[20] ^= 1;
        assert!(key.open(b"head", &changed).is_err());
    }

    #[test]
    fn each_seal_takes_a_new_nonce() {
        let (key, _) = DataKey::generate().unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        key.seal_into(b"", b"same", &mut a);
        key.seal_into(b"", b"same", &mut b);
        assert_ne!(a[..NONCE_LEN], b[..NONCE_LEN]);
        assert_ne!(a, b);
    }

    #[test]
    fn a_wrapped_data_key_unwraps_with_its_master_and_identity() {
        let master = MasterKey::new(&[7; 32]).unwrap();
        let wrapped = master.wrap(b"id 1", &[9; 32]).unwrap();
        assert_eq!(master.unwrap(b"id 1", &wrapped).unwrap(), [9; 32]);
        assert!(master.unwrap(b"id 2", &wrapped).is_err());
        let other = MasterKey::new(&[8; 32]).unwrap();
        assert!(other.unwrap(b"id 1", &wrapped).is_err());
    }
}
