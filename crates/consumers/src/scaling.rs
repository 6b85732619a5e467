//! How many batches a consumer may have in flight, and when it may
//! receive again (rule C7). Like Lambda's pollers, the limit starts low,
//! grows by one with each full batch (the queue has a backlog) up to
//! `max_concurrency`, and halves when a whole batch fails (the handler is
//! in trouble: sending it more would only fail more). After a whole-batch
//! failure it grows again only once a batch succeeds: a backlog would
//! otherwise win back at each receive what the failures took, and a
//! failing handler would keep getting `max_concurrency` batches. Partial failures
//! leave it alone: the handler works, some messages do not. A handler that
//! answers 429 or 503 with `Retry-After` gets no new batch for that long.
//!
//! A handler that is down (refused connections, timeouts, 5xx) gets no new
//! batch either, for a pause that starts at one second and doubles with
//! each failure while it stays down, up to a minute, and ends at its first
//! answer (rule C12): a backlog is not received, and its receive counts
//! spent, against a handler that cannot take it.

use std::time::Duration;

use tokio::time::Instant;

use super::outcome::Outcome;

/// Longest pause a `Retry-After` can ask for.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// The first back-off pause after the handler is found down.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// The longest back-off pause while the handler stays down.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The concurrency of one consumer's deliveries.
#[derive(Debug, Clone)]
pub struct Scaling {
    limit: u32,
    max: u32,
    /// Until when a handler's `Retry-After` holds.
    paused_until: Option<Instant>,
    /// The last back-off pause (zero: the handler is not known down).
    backoff: Duration,
    /// Until when the back-off pause holds.
    backoff_until: Option<Instant>,
    /// The last answer was a whole-batch failure: no growth until a
    /// success.
    failing: bool,
}

impl Scaling {
    /// One batch in flight at first, at most `max_concurrency`.
    pub fn new(max_concurrency: u32) -> Self {
        Self {
            limit: 1,
            max: max_concurrency.max(1),
            paused_until: None,
            backoff: Duration::ZERO,
            backoff_until: None,
            failing: false,
        }
    }

    /// Batches that may be in flight now.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// A batch of `received` messages was received for a batch size of
    /// `batch_size`: a full one means more are waiting, and allows one
    /// more batch unless the handler is failing.
    pub fn received(&mut self, received: usize, batch_size: u32) {
        if received >= batch_size as usize && !self.failing {
            self.limit = (self.limit + 1).min(self.max);
        }
    }

    /// A delivery ended with `outcome`, at `now`.
    pub fn answered(&mut self, outcome: &Outcome, now: Instant) {
        match outcome {
            Outcome::AllSucceeded | Outcome::Partial(_) => {
                self.failing = false;
                self.backoff = Duration::ZERO;
                self.backoff_until = None;
            }
            Outcome::Failed(kind) => {
                self.shrink();
                if kind.handler_down() {
                    self.back_off(now);
                }
            }
            Outcome::Unreached => {
                self.shrink();
                self.back_off(now);
            }
            Outcome::Throttled(wait) => {
                self.shrink();
                let until = now + (*wait).min(MAX_RETRY_AFTER);
                self.paused_until = Some(self.paused_until.map_or(until, |p| p.max(until)));
            }
        }
    }

    /// When the next receive (or delivery) may start, if a `Retry-After`
    /// or a back-off pause still holds.
    pub fn paused_until(&self, now: Instant) -> Option<Instant> {
        let retry_after = self.paused_until.filter(|&until| until > now);
        let backoff = self.backoff_until.filter(|&until| until > now);
        retry_after.max(backoff)
    }

    /// Whether a handler's `Retry-After` holds now.
    pub fn throttled(&self, now: Instant) -> bool {
        self.paused_until.is_some_and(|until| until > now)
    }

    /// Whether a back-off pause holds now (the handler is down).
    pub fn backing_off(&self, now: Instant) -> bool {
        self.backoff_until.is_some_and(|until| until > now)
    }

    /// The handler was found down at `now`: pause, twice as long as the
    /// last time. Batches in flight together fail together: one failing
    /// while the pause of another holds does not lengthen it again.
    fn back_off(&mut self, now: Instant) {
        if self.backing_off(now) {
            return;
        }
        self.backoff = if self.backoff.is_zero() {
            FIRST_BACKOFF
        } else {
            (self.backoff * 2).min(MAX_BACKOFF)
        };
        self.backoff_until = Some(now + self.backoff);
    }

    fn shrink(&mut self) {
        self.failing = true;
        self.limit = (self.limit / 2).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::FailureKind;

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
        s.answered(&Outcome::Failed(FailureKind::Status(400)), now);
        assert_eq!(s.limit(), 2);
        s.answered(&Outcome::Failed(FailureKind::BadResponse), now);
        s.answered(&Outcome::Failed(FailureKind::FunctionError), now);
        assert_eq!(s.limit(), 1);
        assert_eq!(s.paused_until(now), None);
        s.received(10, 10);
        assert_eq!(s.limit(), 1, "a backlog does not grow it while failing");
        s.answered(&Outcome::AllSucceeded, now);
        s.received(10, 10);
        assert_eq!(s.limit(), 2, "a success lets it grow again");
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

    /// C12: a handler found down pauses receiving for 1 s, then 2, 4, …
    /// up to 60 s while it stays down; failures during a pause do not
    /// lengthen it; an answer ends it. A 4xx or a function error (the
    /// handler runs) does not pause.
    #[test]
    fn c12_backs_off_exponentially_while_the_handler_is_down() {
        let mut now = Instant::now();
        let mut s = Scaling::new(4);
        s.answered(&Outcome::Failed(FailureKind::Status(404)), now);
        s.answered(&Outcome::Failed(FailureKind::FunctionError), now);
        assert_eq!(s.paused_until(now), None);
        let mut pauses = Vec::new();
        for _ in 0..9 {
            s.answered(&Outcome::Unreached, now);
            // A second batch of the same outage, failing at once.
            s.answered(&Outcome::Failed(FailureKind::Timeout), now);
            let until = s.paused_until(now).expect("paused");
            pauses.push((until - now).as_secs());
            assert!(s.backing_off(now) && !s.throttled(now));
            now = until;
        }
        assert_eq!(pauses, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        s.answered(&Outcome::Failed(FailureKind::Status(503)), now);
        assert!(s.backing_off(now));
        s.answered(&Outcome::Partial(Default::default()), now);
        assert_eq!(s.paused_until(now), None, "an answer ends the pause");
        s.answered(&Outcome::Failed(FailureKind::Connection), now);
        assert_eq!(
            s.paused_until(now),
            Some(now + FIRST_BACKOFF),
            "and starts the doubling over"
        );
    }
}
