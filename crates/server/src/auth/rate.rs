//! Per-credential request rates (rule A8): a key's `rate_limit` requests
//! per second with a `burst`, and SQS's answer to a key over it.
//!
//! The bucket is one atomic word per credential (the generic cell rate
//! algorithm: the time the bucket is next empty, advanced by one interval
//! per request), so keys never contend with each other and requests of
//! one key only on a compare-and-swap.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use sluice_core::{ErrorCode, SqsError};

/// A key's configured rate: `per_second` requests each second on
/// average, up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests per second, on average.
    pub per_second: u32,
    /// Requests accepted at once after a quiet spell.
    pub burst: u32,
}

impl RateLimit {
    /// Checks the numbers: both at least 1.
    pub fn validate(&self) -> Result<(), String> {
        if self.per_second == 0 {
            return Err("rate_limit must be at least 1 request per second".into());
        }
        if self.burst == 0 {
            return Err("burst must be at least 1".into());
        }
        Ok(())
    }
}

/// The state of one key's rate: lock-free, shared by its requests.
#[derive(Debug)]
pub struct Bucket {
    limit: RateLimit,
    /// Nanoseconds between two requests at the average rate.
    interval: u64,
    /// When (nanoseconds after `origin`) the bucket would be full again.
    full_at: AtomicU64,
    origin: Instant,
}

// Two buckets are alike when their limits are (a principal compares by
// what it may do, not by how much of it is left).
impl PartialEq for Bucket {
    fn eq(&self, other: &Self) -> bool {
        self.limit == other.limit
    }
}
impl Eq for Bucket {}

impl Bucket {
    /// A full bucket for `limit`.
    pub fn new(limit: RateLimit) -> Self {
        Self {
            limit,
            interval: 1_000_000_000 / u64::from(limit.per_second.max(1)),
            full_at: AtomicU64::new(0),
            origin: Instant::now(),
        }
    }

    /// The limit this bucket enforces.
    pub fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Takes one request's token now; false when the key is over its rate.
    pub fn try_take(&self) -> bool {
        let now = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.try_take_at(now)
    }

    /// Takes one request's token at `now` nanoseconds after the bucket's
    /// creation.
    pub fn try_take_at(&self, now: u64) -> bool {
        let capacity = self.interval.saturating_mul(u64::from(self.limit.burst));
        let mut full_at = self.full_at.load(Ordering::Relaxed);
        loop {
            let next = full_at.max(now).saturating_add(self.interval);
            if next - now > capacity {
                return false;
            }
            match self.full_at.compare_exchange_weak(
                full_at,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(seen) => full_at = seen,
            }
        }
    }
}

/// SQS's answer to a request over its key's rate: `RequestThrottled`,
/// HTTP 400, a sender fault (the SQS API reference lists it among the
/// errors of every action: "The request was denied due to request
/// throttling"; JSON `__type` `com.amazonaws.sqs#RequestThrottled`,
/// `x-amzn-query-error: RequestThrottled;Sender`). Every AWS SDK retries
/// it with backoff: its code is in their throttling lists.
pub fn throttled() -> SqsError {
    SqsError::new(ErrorCode::RequestThrottled, "Rate exceeded")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000_000;

    /// A8: a burst is accepted at once, the next request is not; tokens
    /// come back at the configured rate, never more than the burst.
    #[test]
    fn a8_bucket_burst_then_rate() {
        let b = Bucket::new(RateLimit {
            per_second: 10,
            burst: 3,
        });
        let t = 5 * SECOND;
        assert!((0..3).all(|_| b.try_take_at(t)));
        assert!(!b.try_take_at(t));
        // One interval later, one more token.
        assert!(b.try_take_at(t + SECOND / 10));
        assert!(!b.try_take_at(t + SECOND / 10));
        // A long quiet spell refills to the burst, not beyond.
        let later = t + 60 * SECOND;
        assert!((0..3).all(|_| b.try_take_at(later)));
        assert!(!b.try_take_at(later));
    }

    /// A8: over a second of steady requests, about `per_second` pass.
    #[test]
    fn a8_bucket_steady_rate() {
        let b = Bucket::new(RateLimit {
            per_second: 100,
            burst: 1,
        });
        let passed = (0..1000)
            .filter(|i| b.try_take_at(SECOND + i * SECOND / 1000))
            .count();
        assert!((99..=101).contains(&passed), "{passed}");
    }

    /// A8: threads sharing one key's bucket take exactly its burst.
    #[test]
    fn a8_bucket_is_shared_safely() {
        let b = std::sync::Arc::new(Bucket::new(RateLimit {
            per_second: 1,
            burst: 50,
        }));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let b = b.clone();
                std::thread::spawn(move || (0..100).filter(|_| b.try_take_at(SECOND)).count())
            })
            .collect();
        let taken: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(taken, 50);
    }

    /// A8: the answer is SQS's RequestThrottled, 400, a sender fault.
    #[test]
    fn a8_throttled_is_request_throttled() {
        let e = throttled();
        assert_eq!(e.code, ErrorCode::RequestThrottled);
        assert_eq!(e.code.http_status(), 400);
        assert_eq!(e.code.query_code(), "RequestThrottled");
        assert_eq!(e.code.json_shape(), "RequestThrottled");
        assert!(e.code.is_sender_fault());
    }

    /// A8: zero rates are refused at start-up.
    #[test]
    fn a8_limits_are_validated() {
        let ok = RateLimit {
            per_second: 1,
            burst: 1,
        };
        assert!(ok.validate().is_ok());
        assert!(
            RateLimit {
                per_second: 0,
                ..ok
            }
            .validate()
            .is_err()
        );
        assert!(RateLimit { burst: 0, ..ok }.validate().is_err());
    }
}
