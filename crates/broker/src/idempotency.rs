//! Idempotency records (rule I1): a key a consumer claims before it does
//! a piece of work, completes with the work's result, or releases when
//! the work failed, so that a message delivered again (a retry, a
//! redrive, a restored archive) is processed once. The decisions are
//! here, over one record; each engine stores the records and makes each
//! decision atomically for its key.

use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::error::EngineError;

/// The longest `TtlSeconds`: thirty days, past the longest retention (a
/// message redriven near the end of its fourteen days keeps its key).
pub const MAX_TTL_SECONDS: u32 = 30 * 24 * 3600;
/// The longest `InProgressSeconds`: twelve hours, as the longest
/// visibility timeout.
pub const MAX_IN_PROGRESS_SECONDS: u32 = 12 * 3600;
/// `InProgressSeconds` when a claim does not say.
pub const DEFAULT_IN_PROGRESS_SECONDS: u32 = 60;
/// The longest key, in characters.
pub const MAX_KEY_CHARS: usize = 1024;

/// What a claim asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    /// How long the record is kept after its claim, and again after its
    /// completion, milliseconds.
    pub ttl_ms: u64,
    /// How long the claimer holds it before another claim may take it
    /// over (the claimer died), milliseconds.
    pub in_progress_ms: u64,
}

/// A key's record as the engines store it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdempotencyRecord {
    /// `None` while in progress; the work's result once completed (an
    /// empty string when the completion gave none).
    pub result: Option<String>,
    /// While in progress: when another claim may take it over (ms).
    pub in_progress_until: u64,
    /// When it is forgotten (ms).
    pub expires_at: u64,
    /// The claim's time to live, applied again at completion (ms).
    pub ttl_ms: u64,
}

/// How a claim was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimStatus {
    /// The caller owns the key now, until the time given (ms).
    Claimed {
        /// When another claim may take it over.
        in_progress_until: u64,
    },
    /// Someone else claimed it and has neither completed nor released it.
    InProgress {
        /// When another claim may take it over.
        in_progress_until: u64,
    },
    /// The work was done: its result.
    Completed {
        /// What the completion stored.
        result: String,
    },
}

impl ClaimStatus {
    /// The wire's `Status`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Claimed { .. } => "CLAIMED",
            Self::InProgress { .. } => "IN_PROGRESS",
            Self::Completed { .. } => "COMPLETED",
        }
    }
}

impl IdempotencyRecord {
    /// Whether it is forgotten at `now`.
    pub fn expired(&self, now: u64) -> bool {
        self.expires_at <= now
    }

    /// A claim of the key whose record is `existing` at `now`: the answer,
    /// and the record to store when the claim takes it (`None`: nothing
    /// changes).
    pub fn claim(existing: Option<&Self>, claim: Claim, now: u64) -> (ClaimStatus, Option<Self>) {
        match existing {
            Some(r) if !r.expired(now) => match &r.result {
                Some(result) => (
                    ClaimStatus::Completed {
                        result: result.clone(),
                    },
                    None,
                ),
                None if now < r.in_progress_until => (
                    ClaimStatus::InProgress {
                        in_progress_until: r.in_progress_until,
                    },
                    None,
                ),
                // Its claimer let the time run out: taken over.
                None => Self::fresh(claim, now),
            },
            _ => Self::fresh(claim, now),
        }
    }

    fn fresh(claim: Claim, now: u64) -> (ClaimStatus, Option<Self>) {
        let in_progress_until = now + claim.in_progress_ms;
        let record = Self {
            result: None,
            in_progress_until,
            expires_at: now + claim.ttl_ms.max(claim.in_progress_ms),
            ttl_ms: claim.ttl_ms,
        };
        (ClaimStatus::Claimed { in_progress_until }, Some(record))
    }

    /// The record completed with `result` at `now`; `None` when it is not
    /// in progress (never claimed, expired, released or completed).
    pub fn complete(existing: Option<&Self>, result: String, now: u64) -> Option<Self> {
        let r = existing.filter(|r| !r.expired(now) && r.result.is_none())?;
        Some(Self {
            result: Some(result),
            in_progress_until: now,
            expires_at: now + r.ttl_ms,
            ttl_ms: r.ttl_ms,
        })
    }

    /// Whether it stands completed at `now`.
    pub fn completed(existing: Option<&Self>, now: u64) -> bool {
        existing.is_some_and(|r| !r.expired(now) && r.result.is_some())
    }

    /// Whether a release at `now` deletes it: only a claim in progress is
    /// released; a completed key keeps its result.
    pub fn releasable(existing: Option<&Self>, now: u64) -> bool {
        existing.is_some_and(|r| !r.expired(now) && r.result.is_none())
    }
}

/// The idempotency records an engine keeps (a supertrait of
/// [`Broker`](crate::Broker)). Keys are the caller's account's: `key` is
/// the engine's, made by the server from the account and the caller's
/// `Key`. Each answer is given once its change is durable.
pub trait IdempotencyKeys: Clone + Send + Sync + 'static {
    /// Claims `key` ([`IdempotencyRecord::claim`]).
    fn claim_idempotency_key(
        &self,
        key: &str,
        claim: Claim,
    ) -> impl Future<Output = Result<ClaimStatus, EngineError>> + Send;

    /// Completes the claim of `key` with `result`; `false` when the key is
    /// not in progress.
    fn complete_idempotency_key(
        &self,
        key: &str,
        result: String,
    ) -> impl Future<Output = Result<bool, EngineError>> + Send;

    /// Releases the claim of `key` (the work failed); `false` when the key
    /// is not in progress.
    fn release_idempotency_key(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<bool, EngineError>> + Send;

    /// Which of `keys` are completed (and not yet forgotten), in their
    /// order, changing nothing: what a push consumer asks of a batch
    /// before it delivers it.
    fn idempotency_keys_completed(
        &self,
        keys: &[String],
    ) -> impl Future<Output = Result<Vec<bool>, EngineError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAIM: Claim = Claim {
        ttl_ms: 10_000,
        in_progress_ms: 1_000,
    };

    /// I1: claimed once, in progress to everyone else until completed or
    /// timed out; completed answers its result until the TTL runs out,
    /// counted again from the completion.
    #[test]
    fn i1_a_key_is_claimed_once_then_completed_with_its_result() {
        let (first, stored) = IdempotencyRecord::claim(None, CLAIM, 100);
        assert_eq!(
            first,
            ClaimStatus::Claimed {
                in_progress_until: 1_100
            }
        );
        let stored = stored.unwrap();
        let (second, none) = IdempotencyRecord::claim(Some(&stored), CLAIM, 500);
        assert_eq!(
            second,
            ClaimStatus::InProgress {
                in_progress_until: 1_100
            }
        );
        assert!(none.is_none());
        let done = IdempotencyRecord::complete(Some(&stored), "ok".into(), 900).unwrap();
        assert_eq!(done.expires_at, 10_900);
        let (third, _) = IdempotencyRecord::claim(Some(&done), CLAIM, 10_899);
        assert_eq!(
            third,
            ClaimStatus::Completed {
                result: "ok".into()
            }
        );
        assert!(IdempotencyRecord::complete(Some(&done), "again".into(), 1_000).is_none());
        assert!(!IdempotencyRecord::releasable(Some(&done), 1_000));
        let (after, _) = IdempotencyRecord::claim(Some(&done), CLAIM, 10_900);
        assert_eq!(after.name(), "CLAIMED", "forgotten after its TTL");
    }

    /// I1: a claimer that neither completes nor releases in time loses the
    /// key to the next claim; a released key is claimed again at once.
    #[test]
    fn i1_a_timed_out_claim_is_taken_over_and_a_release_frees_the_key() {
        let (_, stored) = IdempotencyRecord::claim(None, CLAIM, 0);
        let stored = stored.unwrap();
        let (over, taken) = IdempotencyRecord::claim(Some(&stored), CLAIM, 1_000);
        assert_eq!(
            over,
            ClaimStatus::Claimed {
                in_progress_until: 2_000
            }
        );
        assert!(taken.is_some());
        assert!(IdempotencyRecord::releasable(Some(&stored), 500));
        assert!(!IdempotencyRecord::releasable(None, 500));
        // A TTL shorter than the time in progress still covers it.
        let short = Claim {
            ttl_ms: 10,
            in_progress_ms: 1_000,
        };
        let (_, r) = IdempotencyRecord::claim(None, short, 0);
        assert_eq!(r.unwrap().expires_at, 1_000);
    }
}
