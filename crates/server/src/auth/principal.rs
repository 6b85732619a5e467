//! Who a request is from: a configured credential, and the principal its
//! verified requests act as.

use std::fmt;
use std::sync::Arc;

use super::access::Access;
use super::rate::{Bucket, RateLimit};

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
