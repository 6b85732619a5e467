//! The data keys of every queue: which one seals a queue's new messages,
//! and each stored one by id for opening what it sealed.
//!
//! An engine stores [`DataKeyRecord`]s (the data key wrapped by a keyring
//! key) and hands them to [`DataKeys::load`] at start; a new data key is
//! handed to the engine to store through the `persist` callback of
//! [`DataKeys::sealer`], under this registry's lock, before any request can
//! seal with it: an engine that logs changes in submission order then
//! never stores a message sealed with a key it has not stored first.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};

use crate::envelope::DataKey;
use crate::error::KeyringError;
use crate::keyring::{Keyring, Lookup};

/// A data key as an engine stores it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DataKeyRecord {
    /// Its id, written beside everything it seals.
    pub id: u64,
    /// The queue it seals messages of.
    pub queue: u64,
    /// The keyring key that wraps it.
    pub master: String,
    /// True when the queue asked for the server's key (SSE-SQS or
    /// `alias/aws/sqs`): such data keys follow the active key when it
    /// rotates; a queue that named its key keeps that key.
    pub managed: bool,
    /// When it was made, milliseconds since the Unix epoch.
    pub created_at: u64,
    /// The key's bytes sealed by `master` (base64).
    pub wrapped: String,
}

impl DataKeyRecord {
    fn aad(id: u64, queue: u64) -> Vec<u8> {
        format!("sluice data key {id} of queue {queue}").into_bytes()
    }
}

/// How long after it is made a data key is kept: it seals new messages
/// for at most a day (`KmsDataKeyReusePeriodSeconds`), a message sealed
/// when it is stored or moved is deleted at most 14 days later (the
/// longest `MessageRetentionPeriod`, counted from a time no later than the
/// seal), and a day more covers a retention sweep that runs late.
pub const EXPIRY_MS: u64 = 16 * 24 * 3600 * 1000;

/// What a queue's attributes ask of encryption at rest.
#[derive(Debug, Clone, Copy)]
pub struct QueueSse<'a> {
    /// `SqsManagedSseEnabled`.
    pub sse_sqs: bool,
    /// `KmsMasterKeyId`, when set.
    pub kms_key_id: Option<&'a str>,
    /// `KmsDataKeyReusePeriodSeconds`: a data key seals new messages for
    /// this long, then a new one is made.
    pub reuse_seconds: u32,
}

/// The data key a request seals with.
#[derive(Clone)]
pub struct Sealer {
    /// Its id.
    pub id: u64,
    /// The key.
    pub key: Arc<DataKey>,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sealer({})", self.id)
    }
}

/// Why a queue's messages cannot be sealed.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// The queue's `KmsMasterKeyId` names no live key of the keyring.
    #[error("the key {0:?} is not in the server's keyring")]
    KeyNotFound(String),
    /// A new data key could not be stored.
    #[error("a new data key could not be stored: {0}")]
    NotStored(String),
    /// No randomness for a new data key.
    #[error(transparent)]
    Keyring(#[from] KeyringError),
}

/// What [`DataKeys::load`] found in the stored records.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Records wrapped again by the active key (their master rotated):
    /// the engine stores them in place of the old ones.
    pub rewrapped: Vec<DataKeyRecord>,
    /// Ids of data keys whose master was retired: their data is
    /// unreadable, and the engine deletes their records.
    pub shredded: Vec<u64>,
}

/// What [`DataKeys::rekey`] did.
#[derive(Debug, Default)]
pub struct Rekeyed {
    /// Records wrapped again by the new active key: the engine stores them
    /// in place of the old ones.
    pub rewrapped: Vec<DataKeyRecord>,
    /// Data keys whose master the new keyring retired: still held, so what
    /// they sealed stays readable until the next start shreds it.
    pub retired: usize,
}

/// A data key held for opening what it sealed, with its record (a
/// rotation wraps it again).
struct Stored {
    record: DataKeyRecord,
    key: Arc<DataKey>,
}

/// What a keyring made of one stored record.
enum Opened {
    /// Its master is retired: what it sealed is unreadable.
    Shredded,
    /// Its bytes, and whether the record was wrapped again by the active
    /// key (it follows the server's key, and that key rotated).
    Key { bytes: [u8; 32], rewrapped: bool },
}

/// Unwraps `r` with `ring`, wrapping it again by the active key when it
/// follows the server's key and that key rotated. A master the keyring
/// does not hold at all is an error: stored data would be unreadable.
fn open_record(ring: &Keyring, r: &mut DataKeyRecord) -> Result<Opened, KeyringError> {
    let master = match ring.lookup(&r.master) {
        Lookup::Live(m) => m,
        Lookup::Retired => return Ok(Opened::Shredded),
        Lookup::Missing => {
            return Err(KeyringError::MissingKey {
                key: r.master.clone(),
                keyring: ring.source().to_string(),
            });
        }
    };
    let wrong = || KeyringError::WrongKey {
        key: r.master.clone(),
    };
    let aad = DataKeyRecord::aad(r.id, r.queue);
    let wrapped = STANDARD.decode(&r.wrapped).map_err(|_| wrong())?;
    let bytes = master.unwrap(&aad, &wrapped).map_err(|_| wrong())?;
    let mut rewrapped = false;
    if r.managed
        && r.master != ring.active()
        && let Lookup::Live(active) = ring.lookup(ring.active())
    {
        r.wrapped = STANDARD.encode(active.wrap(&aad, &bytes)?);
        r.master = ring.active().to_string();
        rewrapped = true;
    }
    Ok(Opened::Key { bytes, rewrapped })
}

struct Current {
    sealer: Sealer,
    master: String,
    created_at: u64,
}

/// Every data key of the server, unwrapped.
pub struct DataKeys {
    /// Replaced whole by [`DataKeys::rekey`].
    keyring: RwLock<Option<Arc<Keyring>>>,
    keys: RwLock<HashMap<u64, Stored>>,
    current: Mutex<HashMap<u64, Current>>,
    next_id: AtomicU64,
    made: AtomicU64,
    shared: bool,
}

/// What [`DataKeys::prepare`] found.
pub enum Prepared {
    /// Seal with this (or store clear for `None`).
    Ready(Option<Sealer>),
    /// Store this new data key's record, then [`DataKeys::publish`] it.
    New(Box<NewDataKey>),
}

/// A data key made and not yet stored.
pub struct NewDataKey {
    /// What the engine stores.
    pub record: DataKeyRecord,
    key: DataKey,
}

/// The current sealer of `queue`, when it is for `master` and within its
/// reuse period.
fn fresh(
    current: &HashMap<u64, Current>,
    queue: u64,
    master: &str,
    sse: QueueSse<'_>,
    now: u64,
) -> Option<Sealer> {
    current
        .get(&queue)
        .filter(|c| c.master == master && now < c.created_at + u64::from(sse.reuse_seconds) * 1000)
        .map(|c| c.sealer.clone())
}

/// A random id below 2^63 (PostgreSQL's BIGINT holds it).
fn random_id() -> Result<u64, KeyringError> {
    use ring::rand::{SecureRandom, SystemRandom};
    let mut bytes = [0u8; 8];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| KeyringError::Random)?;
    Ok(u64::from_be_bytes(bytes) >> 1)
}

impl DataKeys {
    /// The registry of a server with `keyring` (`None`: no encryption).
    pub fn new(keyring: Option<Arc<Keyring>>) -> Self {
        Self {
            keyring: RwLock::new(keyring),
            keys: RwLock::new(HashMap::new()),
            current: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            made: AtomicU64::new(0),
            shared: false,
        }
    }

    /// The registry of one of several nodes sharing their storage: each
    /// makes data keys with random ids, so that two never pick the same.
    pub fn shared(keyring: Option<Arc<Keyring>>) -> Self {
        Self {
            shared: true,
            ..Self::new(keyring)
        }
    }

    /// Whether a keyring is configured.
    pub fn is_configured(&self) -> bool {
        self.keyring.read().is_some()
    }

    /// Unwraps the stored `records` at start. A record whose key is not in
    /// the keyring (or no keyring at all) stops the start, naming the key.
    pub fn load(&self, records: Vec<DataKeyRecord>, now: u64) -> Result<Loaded, KeyringError> {
        let mut loaded = Loaded::default();
        let Some(ring) = self.keyring() else {
            if let Some(r) = records.first() {
                return Err(KeyringError::NotConfigured {
                    key: r.master.clone(),
                    count: records.len(),
                });
            }
            return Ok(loaded);
        };
        let mut keys = self.keys.write();
        let mut next = now;
        for mut r in records {
            next = next.max(r.id + 1);
            if keys.contains_key(&r.id) {
                // Loaded already (a reopen of the storage after a failed
                // write): the key in use stays.
                continue;
            }
            match open_record(&ring, &mut r)? {
                Opened::Shredded => loaded.shredded.push(r.id),
                Opened::Key { bytes, rewrapped } => {
                    if rewrapped {
                        loaded.rewrapped.push(r.clone());
                    }
                    let key = Arc::new(DataKey::from_bytes(&bytes)?);
                    keys.insert(r.id, Stored { record: r, key });
                }
            }
        }
        self.next_id.fetch_max(next, Ordering::Relaxed);
        Ok(loaded)
    }

    /// Puts `ring` in use while serving (the operator rotated or retired a
    /// key and signalled the server): every data key that follows the
    /// server's key is wrapped again by the new active key, and returned
    /// for the engine to store. `stored` is every record the engine keeps
    /// (`None`: those held here are all of them). A record whose master the
    /// new keyring lacks refuses the change, and nothing changes. New data
    /// keys are not made meanwhile, so none is wrapped by the old key
    /// after this returns.
    pub fn rekey(
        &self,
        ring: Arc<Keyring>,
        stored: Option<Vec<DataKeyRecord>>,
    ) -> Result<Rekeyed, KeyringError> {
        if !self.is_configured() {
            return Err(KeyringError::OffAtStart);
        }
        let current = self.current.lock();
        let mut records = stored.unwrap_or_else(|| {
            let keys = self.keys.read();
            keys.values().map(|s| s.record.clone()).collect()
        });
        let mut rekeyed = Rekeyed::default();
        for r in &mut records {
            match open_record(&ring, r)? {
                Opened::Shredded => rekeyed.retired += 1,
                Opened::Key {
                    rewrapped: true, ..
                } => rekeyed.rewrapped.push(r.clone()),
                Opened::Key { .. } => {}
            }
        }
        let mut keys = self.keys.write();
        for r in &rekeyed.rewrapped {
            if let Some(held) = keys.get_mut(&r.id) {
                held.record = r.clone();
            }
        }
        // A queue's current data key is replaced at its next seal when its
        // master is no longer the one the queue asks for.
        *self.keyring.write() = Some(ring);
        drop((keys, current));
        Ok(rekeyed)
    }

    /// The data key that seals `queue`'s new messages now, `None` when
    /// they stay clear (no keyring, or the queue asks for no encryption).
    /// A new one is made when the queue has none, its key changed or its
    /// reuse period ran out; `persist` stores it before anyone seals with
    /// it, under this registry's lock, so that an engine logging changes in
    /// submission order logs it before anything it seals.
    pub fn sealer(
        &self,
        queue: u64,
        sse: QueueSse<'_>,
        now: u64,
        persist: impl FnOnce(&DataKeyRecord) -> Result<(), String>,
    ) -> Result<Option<Sealer>, SealError> {
        if !sse.asks_for_encryption() {
            return Ok(None);
        }
        // The key is chosen under the lock a rekey holds: a data key made
        // here is wrapped by the keyring in use once it is stored.
        let mut current = self.current.lock();
        let Some(ring) = self.keyring() else {
            return Ok(None);
        };
        let Some((master, managed)) = wanted(&ring, sse)? else {
            return Ok(None);
        };
        if let Some(sealer) = fresh(&current, queue, master, sse, now) {
            return Ok(Some(sealer));
        }
        let new = make(&ring, self.next_id(), queue, master, managed, now)?;
        persist(&new.record).map_err(SealError::NotStored)?;
        Ok(Some(self.publish_in(&mut current, new)))
    }

    /// [`DataKeys::sealer`] in two steps, for an engine that stores a new
    /// data key asynchronously: the data key to seal with, or a new one to
    /// store (its `record`) and then [`DataKeys::publish`].
    /// The engine makes data keys one at a time, and never while it runs
    /// [`DataKeys::rekey`].
    pub fn prepare(&self, queue: u64, sse: QueueSse<'_>, now: u64) -> Result<Prepared, SealError> {
        let Some(ring) = self.keyring() else {
            return Ok(Prepared::Ready(None));
        };
        let Some((master, managed)) = wanted(&ring, sse)? else {
            return Ok(Prepared::Ready(None));
        };
        if let Some(sealer) = fresh(&self.current.lock(), queue, master, sse, now) {
            return Ok(Prepared::Ready(Some(sealer)));
        }
        Ok(Prepared::New(Box::new(make(
            &ring,
            self.next_id(),
            queue,
            master,
            managed,
            now,
        )?)))
    }

    /// Makes a data key [`DataKeys::prepare`] made, and its engine stored,
    /// the one that seals its queue's new messages.
    pub fn publish(&self, new: Box<NewDataKey>) -> Sealer {
        self.publish_in(&mut self.current.lock(), *new)
    }

    /// Reads one stored data key another node made (engines that share
    /// their storage load them when they first meet them).
    pub fn add_record(&self, record: &DataKeyRecord) -> Result<(), KeyringError> {
        let ring = self.keyring().ok_or_else(|| KeyringError::NotConfigured {
            key: record.master.clone(),
            count: 1,
        })?;
        let mut r = record.clone();
        let Opened::Key { bytes, .. } = open_record(&ring, &mut r)? else {
            return Err(KeyringError::MissingKey {
                key: record.master.clone(),
                keyring: ring.source().to_string(),
            });
        };
        let key = Arc::new(DataKey::from_bytes(&bytes)?);
        self.keys
            .write()
            .entry(record.id)
            .or_insert(Stored { record: r, key });
        Ok(())
    }

    /// The id of the next data key made.
    fn next_id(&self) -> Result<u64, KeyringError> {
        if self.shared {
            random_id()
        } else {
            Ok(self.next_id.fetch_add(1, Ordering::Relaxed))
        }
    }

    fn publish_in(&self, current: &mut HashMap<u64, Current>, new: NewDataKey) -> Sealer {
        let NewDataKey { record, key } = new;
        let sealer = Sealer {
            id: record.id,
            key: Arc::new(key),
        };
        current.insert(
            record.queue,
            Current {
                sealer: sealer.clone(),
                master: record.master.clone(),
                created_at: record.created_at,
            },
        );
        self.keys.write().insert(
            record.id,
            Stored {
                record,
                key: sealer.key.clone(),
            },
        );
        self.made.fetch_add(1, Ordering::Relaxed);
        sealer
    }

    /// The data key `id`, to open what it sealed; `None` once shredded.
    pub fn get(&self, id: u64) -> Option<Arc<DataKey>> {
        self.keys.read().get(&id).map(|s| s.key.clone())
    }

    /// Forgets which data key seals each queue's new messages: after a
    /// failed write, one made just before may not be stored, so new ones
    /// are made (and stored) first.
    pub fn forget_current(&self) {
        self.current.lock().clear();
    }

    /// Forgets `queue`'s data keys (it was deleted; the engine deletes
    /// their records): what they sealed can no longer be read.
    pub fn forget_queue(&self, queue: u64) {
        self.current.lock().remove(&queue);
        self.keys.write().retain(|_, s| s.record.queue != queue);
    }

    /// Forgets the data keys made before `before` (ms) and returns their
    /// ids for the engine to delete: with `before` [`EXPIRY_MS`] ago, every
    /// message they sealed is past the longest retention, and none seals
    /// new messages any more (its reuse period is over; the next seal of
    /// its queue makes a new one).
    pub fn expire(&self, before: u64) -> Vec<u64> {
        let mut gone = Vec::new();
        self.keys.write().retain(|id, s| {
            let keep = s.record.created_at >= before;
            if !keep {
                gone.push(*id);
            }
            keep
        });
        if !gone.is_empty() {
            self.current
                .lock()
                .retain(|_, c| !gone.contains(&c.sealer.id));
        }
        gone.sort_unstable();
        gone
    }

    /// The keyring key that seals `queue`'s new messages, by name.
    pub fn queue_key(&self, queue: u64) -> Option<String> {
        self.current.lock().get(&queue).map(|c| c.master.clone())
    }

    /// Data keys made since the start (new queues and rotations).
    pub fn made(&self) -> u64 {
        self.made.load(Ordering::Relaxed)
    }

    /// The keyring in use, when one is configured.
    pub fn keyring(&self) -> Option<Arc<Keyring>> {
        self.keyring.read().clone()
    }
}

impl QueueSse<'_> {
    /// Whether the queue's attributes ask for its messages to be sealed.
    fn asks_for_encryption(&self) -> bool {
        self.sse_sqs || self.kms_key_id.is_some()
    }
}

/// The keyring key a queue's attributes ask for, and whether it is the
/// server's (follows the active key); `None` for a clear queue.
fn wanted<'r>(ring: &'r Keyring, sse: QueueSse<'_>) -> Result<Option<(&'r str, bool)>, SealError> {
    let managed = sse.kms_key_id.is_none_or(is_managed_alias);
    match ring.key_for(sse.sse_sqs, sse.kms_key_id) {
        Some(Some(name)) => Ok(Some((name, managed))),
        Some(None) => Err(SealError::KeyNotFound(
            sse.kms_key_id.unwrap_or_default().to_string(),
        )),
        None => Ok(None),
    }
}

/// A new data key of `queue`, wrapped by `master` of `ring`.
fn make(
    ring: &Keyring,
    id: Result<u64, KeyringError>,
    queue: u64,
    master: &str,
    managed: bool,
    now: u64,
) -> Result<NewDataKey, SealError> {
    let Lookup::Live(wrapping) = ring.lookup(master) else {
        return Err(SealError::KeyNotFound(master.to_string()));
    };
    let id = id?;
    let (key, bytes) = DataKey::generate()?;
    Ok(NewDataKey {
        record: DataKeyRecord {
            id,
            queue,
            master: master.to_string(),
            managed,
            created_at: now,
            wrapped: STANDARD.encode(wrapping.wrap(&DataKeyRecord::aad(id, queue), &bytes)?),
        },
        key,
    })
}

fn is_managed_alias(kms_key_id: &str) -> bool {
    kms_key_id == crate::keyring::AWS_MANAGED_ALIAS || kms_key_id.ends_with(":alias/aws/sqs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyring::KeyringFile;

    fn keyring(names: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.json");
        let mut file = KeyringFile::new_with_key(names[0], 1).unwrap();
        for n in &names[1..] {
            file.add_active(n, 1).unwrap();
        }
        file.write(&path).unwrap();
        (dir, path)
    }

    const SSE: QueueSse<'static> = QueueSse {
        sse_sqs: true,
        kms_key_id: None,
        reuse_seconds: 300,
    };

    #[test]
    fn old_data_keys_expire_and_a_queue_then_gets_a_new_one() {
        let (_d, path) = keyring(&["k1"]);
        let keys = DataKeys::new(Some(Arc::new(Keyring::load(&path).unwrap())));
        let old = keys.sealer(1, SSE, 1_000, |_| Ok(())).unwrap().unwrap();
        let newer = keys.sealer(1, SSE, 400_000, |_| Ok(())).unwrap().unwrap();
        let other = keys.sealer(2, SSE, 1_000, |_| Ok(())).unwrap().unwrap();
        let mut both = vec![old.id, other.id];
        both.sort_unstable();
        assert_eq!(keys.expire(1_001), both);
        assert!(keys.get(old.id).is_none() && keys.get(other.id).is_none());
        assert!(keys.get(newer.id).is_some());
        // Queue 2's data key went: its next seal makes (and stores) another.
        let mut stored = 0;
        let again = keys
            .sealer(2, SSE, 2_000, |_| {
                stored += 1;
                Ok(())
            })
            .unwrap()
            .unwrap();
        assert_ne!(again.id, other.id);
        assert_eq!(stored, 1);
    }

    #[test]
    fn a_data_key_is_stored_before_use_and_renewed_after_its_reuse_period() {
        let (_d, path) = keyring(&["k1"]);
        let keys = DataKeys::new(Some(Arc::new(Keyring::load(&path).unwrap())));
        let mut stored = Vec::new();
        let a = keys
            .sealer(1, SSE, 1_000, |r| {
                stored.push(r.clone());
                Ok(())
            })
            .unwrap()
            .unwrap();
        let b = keys
            .sealer(1, SSE, 300_999, |r| {
                stored.push(r.clone());
                Ok(())
            })
            .unwrap()
            .unwrap();
        assert_eq!(a.id, b.id, "within the reuse period");
        let c = keys
            .sealer(1, SSE, 301_000, |r| {
                stored.push(r.clone());
                Ok(())
            })
            .unwrap()
            .unwrap();
        assert_ne!(a.id, c.id);
        assert_eq!(stored.len(), 2);
        assert!(stored.iter().all(|r| r.managed && r.master == "k1"));
        let clear = QueueSse {
            sse_sqs: false,
            ..SSE
        };
        assert!(
            keys.sealer(2, clear, 1, |_| unreachable!())
                .unwrap()
                .is_none()
        );
        let unknown = QueueSse {
            kms_key_id: Some("alias/nope"),
            ..SSE
        };
        assert!(matches!(
            keys.sealer(3, unknown, 1, |_| unreachable!()),
            Err(SealError::KeyNotFound(k)) if k == "alias/nope"
        ));
    }

    #[test]
    fn a_restart_reads_its_keys_back_and_rewraps_managed_ones_under_the_active_key() {
        let (_d, path) = keyring(&["k1", "named"]);
        let mut file = KeyringFile::read(&path).unwrap();
        file.active = "k1".into();
        file.write(&path).unwrap();
        let keys = DataKeys::new(Some(Arc::new(Keyring::load(&path).unwrap())));
        let mut stored = Vec::new();
        let named = QueueSse {
            kms_key_id: Some("alias/named"),
            ..SSE
        };
        let a = keys
            .sealer(1, SSE, 1, |r| {
                stored.push(r.clone());
                Ok(())
            })
            .unwrap()
            .unwrap();
        let b = keys
            .sealer(2, named, 1, |r| {
                stored.push(r.clone());
                Ok(())
            })
            .unwrap()
            .unwrap();
        let mut sealed = Vec::new();
        a.key.seal_into(b"", b"secret", &mut sealed);

        let mut file = KeyringFile::read(&path).unwrap();
        file.add_active("k2", 2).unwrap();
        file.write(&path).unwrap();
        let again = DataKeys::new(Some(Arc::new(Keyring::load(&path).unwrap())));
        let loaded = again.load(stored.clone(), 5).unwrap();
        assert_eq!(loaded.rewrapped.len(), 1, "only the managed key follows");
        assert_eq!(loaded.rewrapped[0].master, "k2");
        assert_eq!(
            again.get(a.id).unwrap().open(b"", &sealed).unwrap(),
            b"secret"
        );
        assert!(again.get(b.id).is_some());

        // k1 can go once nothing is wrapped by it.
        let mut file = KeyringFile::read(&path).unwrap();
        file.retire("k1", 3).unwrap();
        file.write(&path).unwrap();
        let third = DataKeys::new(Some(Arc::new(Keyring::load(&path).unwrap())));
        let records = vec![loaded.rewrapped[0].clone(), stored[1].clone()];
        assert!(third.load(records, 6).unwrap().shredded.is_empty());
        assert_eq!(
            third.get(a.id).unwrap().open(b"", &sealed).unwrap(),
            b"secret"
        );
    }

    #[test]
    fn a_missing_key_stops_the_start_and_a_retired_one_shreds() {
        let (_d, path) = keyring(&["k1", "k2"]);
        let keys = DataKeys::new(Some(Arc::new(Keyring::load(&path).unwrap())));
        let named = QueueSse {
            kms_key_id: Some("k1"),
            ..SSE
        };
        let mut stored = Vec::new();
        keys.sealer(1, named, 1, |r| {
            stored.push(r.clone());
            Ok(())
        })
        .unwrap();

        let (_d2, other) = keyring(&["k2"]);
        let wrong = DataKeys::new(Some(Arc::new(Keyring::load(&other).unwrap())));
        match wrong.load(stored.clone(), 2) {
            Err(KeyringError::MissingKey { key, .. }) => assert_eq!(key, "k1"),
            other => panic!("{other:?}"),
        }
        match DataKeys::new(None).load(stored.clone(), 2) {
            Err(KeyringError::NotConfigured { key, count }) => {
                assert_eq!((key.as_str(), count), ("k1", 1))
            }
            other => panic!("{other:?}"),
        }

        let mut file = KeyringFile::read(&path).unwrap();
        file.retire("k1", 3).unwrap();
        file.write(&path).unwrap();
        let shredding = DataKeys::new(Some(Arc::new(Keyring::load(&path).unwrap())));
        let loaded = shredding.load(stored.clone(), 2).unwrap();
        assert_eq!(loaded.shredded, vec![stored[0].id]);
        assert!(shredding.get(stored[0].id).is_none());
    }

    /// A rotation while serving: the data key of the server's key is
    /// wrapped again by the new active key (and stays the one that opens
    /// what it sealed), a queue's next seal makes a data key under the new
    /// key, a named key's data key keeps its master, and a keyring lacking
    /// a stored master is refused without changing anything.
    #[test]
    fn a_rekey_while_serving_rewraps_managed_keys_and_refuses_a_missing_master() {
        let (_d, path) = keyring(&["named", "k1"]);
        let keys = DataKeys::new(Some(Arc::new(Keyring::load(&path).unwrap())));
        let named = QueueSse {
            kms_key_id: Some("named"),
            ..SSE
        };
        let mut stored = Vec::new();
        let mut keep = |r: &DataKeyRecord| {
            stored.push(r.clone());
            Ok(())
        };
        let a = keys.sealer(1, SSE, 1, &mut keep).unwrap().unwrap();
        let b = keys.sealer(2, named, 1, &mut keep).unwrap().unwrap();
        let mut sealed = Vec::new();
        a.key.seal_into(b"", b"secret", &mut sealed);

        // The same keyring without "named".
        let mut file = KeyringFile::read(&path).unwrap();
        file.keys.retain(|k| k.name != "named");
        let lacking = path.with_file_name("lacking.json");
        file.write(&lacking).unwrap();
        let refused = keys.rekey(Arc::new(Keyring::load(&lacking).unwrap()), None);
        assert!(matches!(refused, Err(KeyringError::MissingKey { key, .. }) if key == "named"));
        assert_eq!(keys.keyring().unwrap().active(), "k1", "nothing changed");

        let mut file = KeyringFile::read(&path).unwrap();
        file.add_active("k2", 2).unwrap();
        file.write(&path).unwrap();
        let rekeyed = keys
            .rekey(Arc::new(Keyring::load(&path).unwrap()), None)
            .unwrap();
        assert_eq!(rekeyed.rewrapped.len(), 1, "only the managed key follows");
        assert_eq!(rekeyed.rewrapped[0].id, a.id);
        assert_eq!(rekeyed.rewrapped[0].master, "k2");
        assert_eq!(rekeyed.retired, 0);
        assert_eq!(
            keys.get(a.id).unwrap().open(b"", &sealed).unwrap(),
            b"secret"
        );

        let mut made = Vec::new();
        let next = keys
            .sealer(1, SSE, 2, |r| {
                made.push(r.clone());
                Ok(())
            })
            .unwrap()
            .unwrap();
        assert_ne!(next.id, a.id, "a new data key under the new active key");
        assert_eq!(made[0].master, "k2");
        let same = keys
            .sealer(2, named, 2, |_| unreachable!())
            .unwrap()
            .unwrap();
        assert_eq!(same.id, b.id, "a named key is not rotated");

        // k1 retired: once the rewrapped record is stored, a start keeps
        // the message readable; a held key of a retired master is counted.
        let mut file = KeyringFile::read(&path).unwrap();
        file.retire("k1", 3).unwrap();
        file.write(&path).unwrap();
        let ring = Arc::new(Keyring::load(&path).unwrap());
        let records = vec![
            rekeyed.rewrapped[0].clone(),
            stored[1].clone(),
            made[0].clone(),
        ];
        let restarted = DataKeys::new(Some(ring.clone()));
        assert!(restarted.load(records, 9).unwrap().shredded.is_empty());
        assert_eq!(
            restarted.get(a.id).unwrap().open(b"", &sealed).unwrap(),
            b"secret"
        );
        let old = vec![stored[0].clone()];
        assert_eq!(keys.rekey(ring, Some(old)).unwrap().retired, 1);
    }
}
