//! Authentication: SigV4 verification in front of the router (like Garage,
//! the signature check is separate from the API). A request either comes
//! out as an authenticated [`Principal`] (access key and account), which
//! the request context carries to the actions, or is refused with AWS's
//! answer for what is wrong. Storage never sees credentials.
//!
//! The signing arithmetic is the `sluice-sigv4` crate (the client signs
//! with the same functions); `verify.rs` holds what a request must carry and the checks, in AWS's order and with AWS's words.
//! See docs/security.md.

pub mod access;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod rate;
// The signing arithmetic, shared with the client (`sluice-client`).
use sluice_sigv4 as sigv4;
mod verify;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};
use sluice_core::{ErrorCode, SqsError};

pub use access::Access;
pub use rate::{Bucket, RateLimit};
pub use verify::RequestParts;

/// A configured credential: what a client signs with.
#[derive(Clone)]
pub struct Credential {
    /// The access key id clients send in their credential scope.
    pub access_key_id: String,
    /// The secret both sides sign with; never logged nor printed.
    pub secret_access_key: String,
    /// When set, requests must carry it as `X-Amz-Security-Token`.
    pub session_token: Option<String>,
    /// The 12-digit account the key acts for.
    pub account_id: String,
    /// The actions and queues the key is limited to (rule A2).
    pub access: Arc<Access>,
    /// The key's request rate (rule A8); `None`: unlimited.
    pub rate_limit: Option<RateLimit>,
}

impl fmt::Debug for Credential {
    // The secret and the token stay out of every Debug print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("access_key_id", &self.access_key_id)
            .field("session_token", &self.session_token.as_ref().map(|_| "…"))
            .field("account_id", &self.account_id)
            .field("access", &self.access)
            .field("rate_limit", &self.rate_limit)
            .finish_non_exhaustive()
    }
}

/// Who sent a request, once its signature verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The access key id it was signed with.
    pub access_key_id: String,
    /// The account that key acts for.
    pub account_id: String,
    /// What the key may do (rule A2).
    pub access: Arc<Access>,
    /// The key's request rate, shared by all its requests (rule A8).
    pub bucket: Option<Arc<Bucket>>,
}

/// A configured credential, the principal its requests act as, and the
/// state of its rate.
struct Key {
    credential: Credential,
    /// Shared by every request the key signs (and its rate's bucket).
    principal: Arc<Principal>,
    /// The signing key of the day and region last verified: it changes
    /// once a day, and deriving it costs four HMACs.
    day_key: ArcSwapOption<DayKey>,
}

/// A key's signing key for one day and region, ready to MAC with.
struct DayKey {
    /// `yyyymmdd`.
    date: String,
    region: String,
    mac: sigv4::HmacSha256,
}

impl Key {
    /// The MAC keyed with this key's signing key of `date` and `region`,
    /// derived only when either changed since the last request.
    fn signing_mac(&self, date: &str, region: &str, service: &str) -> sigv4::HmacSha256 {
        if let Some(day) = self.day_key.load().as_deref()
            && day.date == date
            && day.region == region
        {
            return day.mac.clone();
        }
        let mac = sigv4::signing_mac(&self.credential.secret_access_key, date, region, service);
        self.day_key.store(Some(Arc::new(DayKey {
            date: date.to_string(),
            region: region.to_string(),
            mac: mac.clone(),
        })));
        mac
    }
}

/// The credentials of a verifier, by access key id.
type KeyTable = HashMap<String, Key>;

/// The verifier of `auth.mode = "sigv4"`: the configured credentials by
/// access key id. The server has none when authentication is off.
///
/// The credentials can be replaced while the server runs (a reload on
/// SIGHUP): each verification reads the table once, lock-free, so requests
/// in progress finish with the table they started with.
pub struct Authenticator {
    keys: ArcSwap<KeyTable>,
    /// The service credential scopes must name: `sqs` (the test suite's
    /// known answers are for `service`).
    service: &'static str,
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
            service: verify::SERVICE,
        })
    }

    /// Replaces every credential with these, checked as [`Self::new`]
    /// checks them; on an error the credentials in use are kept.
    /// Verifications already started finish with the old ones. A key
    /// whose rate is unchanged keeps its bucket: a reload does not hand a
    /// throttled key a fresh burst.
    pub fn replace(&self, credentials: Vec<Credential>) -> Result<(), String> {
        let table = key_table(credentials, &self.keys.load())?;
        self.keys.store(Arc::new(table));
        Ok(())
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

/// A refused request: the answer the client gets, and what the log says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// AWS's error for it.
    pub error: SqsError,
    /// A short reason for the log (never a secret or a signature).
    pub reason: &'static str,
    /// The access key id the request named, when it named one.
    pub access_key_id: Option<String>,
}

impl Refusal {
    fn new(code: ErrorCode, message: impl Into<String>, reason: &'static str) -> Self {
        Self {
            error: SqsError::new(code, message),
            reason,
            access_key_id: None,
        }
    }

    fn by(mut self, access_key_id: &str) -> Self {
        self.access_key_id = Some(access_key_id.to_string());
        self
    }
}

/// The action a refused request asked for, for the log only: the JSON
/// target's name, or the Query `Action` of the URL or the form body.
pub fn action_hint(target: Option<&str>, url_query: &str, body: &[u8]) -> String {
    if let Some(t) = target {
        let name = t.rsplit('.').next().unwrap_or(t);
        return name.chars().take(64).collect();
    }
    let from = |bytes: &[u8]| {
        form_urlencoded::parse(bytes)
            .find(|(k, _)| k == "Action")
            .map(|(_, v)| v.into_owned())
    };
    // Bounded: it is the client's text, going to the log.
    let action = from(url_query.as_bytes())
        .or_else(|| from(body))
        .unwrap_or_default();
    action.chars().take(64).collect()
}

/// The longest queue hint a refusal log carries: the client's text.
const MAX_QUEUE_HINT: usize = 128;

/// The queue a refused request named, for the log only: the `QueueUrl` or
/// `QueueName` of its JSON body, of its Query parameters (URL or form
/// body), or the queue URL it was sent to; empty when it names none.
/// Bounded: it is the client's text, going to the log.
pub fn queue_hint(json: bool, path: &str, url_query: &str, body: &[u8]) -> String {
    let named = if json {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Named {
            queue_url: Option<serde_json::Value>,
            queue_name: Option<serde_json::Value>,
        }
        serde_json::from_slice::<Named>(body).ok().and_then(|n| {
            [n.queue_url, n.queue_name]
                .into_iter()
                .flatten()
                .find_map(|v| v.as_str().map(str::to_string))
        })
    } else {
        let from = |bytes: &[u8]| {
            form_urlencoded::parse(bytes)
                .find(|(k, _)| k == "QueueUrl" || k == "QueueName")
                .map(|(_, v)| v.into_owned())
        };
        from(url_query.as_bytes()).or_else(|| from(body))
    };
    let queue = named.unwrap_or_else(|| {
        // A Query request sent to a queue's URL names it by its path.
        let trimmed = path.trim_matches('/');
        if trimmed.contains('/') {
            trimmed.to_string()
        } else {
            String::new()
        }
    });
    queue.chars().take(MAX_QUEUE_HINT).collect()
}

#[cfg(test)]
mod tests;
