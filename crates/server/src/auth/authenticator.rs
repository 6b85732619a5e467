//! The verifier's credentials: the key table, each key's principal and
//! rate bucket, and the signing key of the day it derives. The checks a
//! request goes through are `verify.rs`'s.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};
use sluice_sigv4 as sigv4;

use super::principal::{Credential, Principal};
use super::rate::Bucket;

/// The service every SQS credential scope names.
pub const SERVICE: &str = "sqs";

/// A configured credential, the principal its requests act as, and the
/// state of its rate.
pub(super) struct Key {
    pub(super) credential: Credential,
    /// Shared by every request the key signs (and its rate's bucket).
    pub(super) principal: Arc<Principal>,
    /// The signing key of the day, region and service last verified: it
    /// changes once a day, and deriving it costs four HMACs.
    day_key: ArcSwapOption<DayKey>,
}

/// A key's signing key for one day, region and service, ready to MAC with.
struct DayKey {
    /// `yyyymmdd`.
    date: String,
    region: String,
    /// `sqs` or `sns`: one key signs for both, and the service is part of
    /// the signing key.
    service: String,
    mac: sigv4::HmacSha256,
}

impl Key {
    /// The MAC keyed with this key's signing key of `date`, `region` and
    /// `service`, derived only when one changed since the last request.
    pub(super) fn signing_mac(&self, date: &str, region: &str, service: &str) -> sigv4::HmacSha256 {
        if let Some(day) = self.day_key.load().as_deref()
            && day.date == date
            && day.region == region
            && day.service == service
        {
            return day.mac.clone();
        }
        let mac = sigv4::signing_mac(&self.credential.secret_access_key, date, region, service);
        self.day_key.store(Some(Arc::new(DayKey {
            date: date.to_string(),
            region: region.to_string(),
            service: service.to_string(),
            mac: mac.clone(),
        })));
        mac
    }
}

/// The credentials of a verifier, by access key id.
pub(super) type KeyTable = HashMap<String, Key>;

/// Credentials checked by [`Authenticator::prepare`], not yet in use.
pub struct PreparedKeys(KeyTable);

/// The verifier of `auth.mode = "sigv4"`: the configured credentials by
/// access key id. The server has none when authentication is off.
///
/// The credentials can be replaced while the server runs (a reload on
/// SIGHUP): each verification reads the table once, lock-free, so requests
/// in progress finish with the table they started with.
pub struct Authenticator {
    pub(super) keys: ArcSwap<KeyTable>,
    /// The service credential scopes must name: `sqs` (the test suite's
    /// known answers are for `service`).
    pub(super) service: &'static str,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys = self.keys.load();
        let mut ids: Vec<&String> = keys.keys().collect();
        ids.sort();
        f.debug_struct("Authenticator")
            .field("access_key_ids", &ids)
            .finish()
    }
}

impl Authenticator {
    /// A verifier of these credentials; refuses none, an empty key or
    /// secret, and the same access key id twice.
    pub fn new(credentials: Vec<Credential>) -> Result<Self, String> {
        Ok(Self {
            keys: ArcSwap::from_pointee(key_table(credentials, &KeyTable::new())?),
            service: SERVICE,
        })
    }

    /// Replaces every credential with these, checked as [`Self::new`]
    /// checks them; on an error the credentials in use are kept.
    /// Verifications already started finish with the old ones. A key
    /// whose rate is unchanged keeps its bucket: a reload does not hand a
    /// throttled key a fresh burst.
    pub fn replace(&self, credentials: Vec<Credential>) -> Result<(), String> {
        let prepared = self.prepare(credentials)?;
        self.install(prepared);
        Ok(())
    }

    /// [`Self::replace`] in two steps, for a reload that checks everything
    /// before it changes anything: the credentials checked, not yet in use.
    pub fn prepare(&self, credentials: Vec<Credential>) -> Result<PreparedKeys, String> {
        Ok(PreparedKeys(key_table(credentials, &self.keys.load())?))
    }

    /// Puts credentials [`Self::prepare`] checked in use.
    pub fn install(&self, prepared: PreparedKeys) {
        self.keys.store(Arc::new(prepared.0));
    }

    /// How many credentials `prepared` holds.
    pub fn prepared_len(prepared: &PreparedKeys) -> usize {
        prepared.0.len()
    }

    /// How many credentials are configured.
    pub fn len(&self) -> usize {
        self.keys.load().len()
    }

    /// True when no credential is configured (never, once built).
    pub fn is_empty(&self) -> bool {
        self.keys.load().is_empty()
    }
}

/// The credentials by access key id, checked, with their rates' buckets
/// (those of `old` where a key's rate is unchanged).
fn key_table(credentials: Vec<Credential>, old: &KeyTable) -> Result<KeyTable, String> {
    if credentials.is_empty() {
        return Err("SigV4 authentication needs at least one [[auth.credentials]]".into());
    }
    let mut keys = HashMap::with_capacity(credentials.len());
    for c in credentials {
        if c.access_key_id.is_empty() || c.secret_access_key.is_empty() {
            return Err(
                "every [[auth.credentials]] needs an access_key_id and a secret_access_key".into(),
            );
        }
        // The key id travels in the credential scope, split on '/'.
        if c.access_key_id.contains(['/', ' ', ',', '=']) {
            return Err(format!(
                "access_key_id {:?} has a character a credential scope cannot carry",
                c.access_key_id
            ));
        }
        if c.session_token.as_deref() == Some("") {
            return Err(format!(
                "access key {}: session_token is empty (leave it out instead)",
                c.access_key_id
            ));
        }
        c.access
            .validate()
            .map_err(|e| format!("access key {}: {e}", c.access_key_id))?;
        if let Some(limit) = &c.rate_limit {
            limit
                .validate()
                .map_err(|e| format!("access key {}: {e}", c.access_key_id))?;
        }
        let bucket = c.rate_limit.map(|limit| {
            old.get(&c.access_key_id)
                .and_then(|k| k.principal.bucket.clone())
                .filter(|b| b.limit() == limit)
                .unwrap_or_else(|| Arc::new(Bucket::new(limit)))
        });
        let id = c.access_key_id.clone();
        let principal = Arc::new(Principal {
            access_key_id: c.access_key_id.clone(),
            account_id: c.account_id.clone(),
            access: c.access.clone(),
            bucket,
        });
        let key = Key {
            credential: c,
            principal,
            day_key: ArcSwapOption::empty(),
        };
        if keys.insert(id.clone(), key).is_some() {
            return Err(format!("access key {id} is configured twice"));
        }
    }
    Ok(keys)
}
