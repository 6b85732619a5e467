//! How many batches a consumer may have in flight, and when it may
//! receive again (rule C7). Like Lambda's pollers, the limit starts low,
//! grows by one with each full batch (the queue has a backlog) up to
//! `max_concurrency`, and halves when a whole batch fails (the handler is
//! in trouble: sending it more would only fail more). Partial failures
//! leave it alone: the handler works, some messages do not. A handler that
//! answers 429 or 503 with `Retry-After` gets no new batch for that long.

use std::time::Duration;

use tokio::time::Instant;

use super::outcome::Outcome;

/// Longest pause a `Retry-After` can ask for.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// The concurrency of one consumer's deliveries.
#[derive(Debug, Clone)]
pub struct Scaling {
    limit: u32,
    max: u32,
    paused_until: Option<Instant>,
}

impl Scaling {
    /// One batch in flight at first, at most `max_concurrency`.
    pub fn new(max_concurrency: u32) -> Self {
        Self {
            limit: 1,
            max: max_concurrency.max(1),
            paused_until: None,
        }
    }

    /// Batches that may be in flight now.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// A batch of `received` messages was received for a batch size of
    /// `batch_size`: a full one means more are waiting.
    pub fn received(&mut self, received: usize, batch_size: u32) {
        if received >= batch_size as usize {
            self.limit = (self.limit + 1).min(self.max);
        }
    }

    /// A delivery ended with `outcome`, at `now`.
    pub fn answered(&mut self, outcome: &Outcome, now: Instant) {
        match outcome {
            Outcome::AllSucceeded | Outcome::Partial(_) => {}
            Outcome::Failed(_) => self.shrink(),
            Outcome::Throttled(wait) => {
                self.shrink();
                let until = now + (*wait).min(MAX_RETRY_AFTER);
                self.paused_until = Some(self.paused_until.map_or(until, |p| p.max(until)));
            }
        }
    }

    /// When the next receive may start, if a `Retry-After` still holds.
    pub fn paused_until(&self, now: Instant) -> Option<Instant> {
        self.paused_until.filter(|&until| until > now)
    }

    fn shrink(&mut self) {
        self.limit = (self.limit / 2).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumers::outcome::FailureKind;

    /// C7: full batches grow the limit up to the maximum; whole-batch
    /// failures halve it, partial ones do not; it never drops below one.
    #[test]
    fn c7_grows_with_the_backlog_and_shrinks_on_failure() {
        let now = Instant::now();
        let mut s = Scaling::new(4);
        assert_eq!(s.limit(), 1);
        s.received(3, 10);
        assert_eq!(s.limit(), 1, "a partial receive: no backlog");
        for _ in 0..10 {
            s.received(10, 10);
        }
        assert_eq!(s.limit(), 4, "capped at max_concurrency");
        s.answered(&Outcome::Partial(Default::default()), now);
        assert_eq!(s.limit(), 4);
        s.answered(&Outcome::Failed(FailureKind::Status), now);
        assert_eq!(s.limit(), 2);
        s.answered(&Outcome::Failed(FailureKind::Timeout), now);
        s.answered(&Outcome::Failed(FailureKind::Timeout), now);
        assert_eq!(s.limit(), 1);
        assert_eq!(s.paused_until(now), None);
    }

    /// C7: a Retry-After pauses receiving for that long (capped), and the
    /// longest pause asked wins.
    #[test]
    fn c7_retry_after_pauses() {
        let now = Instant::now();
        let mut s = Scaling::new(2);
        s.answered(&Outcome::Throttled(Duration::from_secs(5)), now);
        s.answered(&Outcome::Throttled(Duration::from_secs(1)), now);
        assert_eq!(s.paused_until(now), Some(now + Duration::from_secs(5)));
        assert_eq!(s.paused_until(now + Duration::from_secs(5)), None);
        s.answered(&Outcome::Throttled(Duration::from_secs(100_000)), now);
        assert_eq!(s.paused_until(now), Some(now + MAX_RETRY_AFTER));
    }
}
