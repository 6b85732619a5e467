//! Fair queues (rule V10): when a tenant of a standard queue is *noisy*,
//! the measures SQS uses to decide it, shared by every engine.
//!
//! A tenant is a message group; each message without a group is a tenant
//! of its own. SQS calls a tenant noisy when it has a backlog, sent a
//! message in the last five minutes, and either holds more than a tenth of
//! the queue's messages in flight with at least 30 of its own, or took more
//! than a tenth of the consumers' recent processing time. Receives then
//! serve quiet tenants first; noisy ones get what is left, the one with the
//! fewest messages in flight first.

use crate::clock::Millis;

/// A tenant with fewer of its own messages in flight is never noisy by
/// concurrency share, whatever its share.
pub const NOISY_MIN_IN_FLIGHT: u64 = 30;

/// A tenant stays a candidate for noisy while it sent within this long.
pub const NOISY_SEND_WINDOW_MS: Millis = 5 * 60 * 1000;

/// How far back "recent processing time" reaches: the time constant of
/// the decaying integral of messages in flight.
pub const PROCESSING_MEMORY_MS: f64 = 60_000.0;

/// Processing time spent recently: the integral of the number of messages
/// in flight over time, each past moment weighing less the longer ago it
/// was (an exponential decay with [`PROCESSING_MEMORY_MS`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// Message-milliseconds, as of `at`.
    value: f64,
    /// When `value` was last brought up to date.
    at: Millis,
}

impl Usage {
    /// The value at `now`, had `in_flight` messages been in flight since
    /// the last update.
    pub fn at(&self, now: Millis, in_flight: u64) -> f64 {
        let elapsed = now.saturating_sub(self.at) as f64;
        if elapsed == 0.0 {
            return self.value;
        }
        let kept = (-elapsed / PROCESSING_MEMORY_MS).exp();
        self.value * kept + in_flight as f64 * PROCESSING_MEMORY_MS * (1.0 - kept)
    }

    /// Brings the value up to `now`, with `in_flight` messages in flight
    /// since the last update (call it before the count changes).
    pub fn advance(&mut self, now: Millis, in_flight: u64) {
        if now > self.at {
            self.value = self.at(now, in_flight);
            self.at = now;
        }
    }

    /// Adds `amount` message-milliseconds of processing time that ended at
    /// `now` (for engines that learn of processing time when it ends
    /// rather than watching it go by).
    pub fn add(&mut self, now: Millis, amount: f64) {
        self.value = self.at(now.max(self.at), 0) + amount;
        self.at = self.at.max(now);
    }

    /// True when the recent processing time has all but decayed away.
    pub fn is_spent(&self, now: Millis) -> bool {
        self.at(now, 0) < 1.0
    }
}

/// What is known of one tenant at a moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TenantLoad {
    /// Its messages in flight.
    pub in_flight: u64,
    /// Its recent processing time ([`Usage::at`] now).
    pub usage: f64,
    /// Whether it has messages waiting to be received.
    pub backlog: bool,
    /// When it last sent a message.
    pub last_sent: Millis,
}

/// What is known of the whole queue at the same moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueLoad {
    /// All its messages in flight.
    pub in_flight: u64,
    /// The recent processing time of all its messages.
    pub usage: f64,
}

impl TenantLoad {
    /// Whether SQS would call this tenant noisy now.
    pub fn is_noisy(&self, queue: &QueueLoad, now: Millis) -> bool {
        if !self.backlog || now.saturating_sub(self.last_sent) >= NOISY_SEND_WINDOW_MS {
            return false;
        }
        let concurrency =
            self.in_flight >= NOISY_MIN_IN_FLIGHT && self.in_flight * 10 > queue.in_flight;
        let processing = queue.usage > 0.0 && self.usage * 10.0 > queue.usage;
        concurrency || processing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(in_flight: u64, usage: f64) -> TenantLoad {
        TenantLoad {
            in_flight,
            usage,
            backlog: true,
            last_sent: 1_000,
        }
    }

    #[test]
    fn usage_integrates_and_decays() {
        let mut u = Usage::default();
        u.advance(1_000, 0);
        // Ten messages in flight for one second: nearly 10,000 message-ms.
        let after = u.at(2_000, 10);
        assert!((9_900.0..10_000.0).contains(&after), "{after}");
        u.advance(2_000, 10);
        // Ten minutes later, nothing in flight since: all but gone.
        assert!(u.at(602_000, 0) < 1.0);
        assert!(u.is_spent(602_000));
        assert!(!u.is_spent(3_000));
    }

    #[test]
    fn processing_time_added_when_it_ends_decays_from_then() {
        let mut u = Usage::default();
        u.add(1_000, 5_000.0);
        assert_eq!(u.at(1_000, 0), 5_000.0);
        let later = u.at(61_000, 0);
        assert!((1_800.0..1_900.0).contains(&later), "{later}");
    }

    #[test]
    fn concurrency_share_needs_thirty_and_a_tenth() {
        let queue = QueueLoad {
            in_flight: 200,
            usage: 0.0,
        };
        assert!(tenant(30, 0.0).is_noisy(&queue, 2_000));
        assert!(!tenant(29, 0.0).is_noisy(&queue, 2_000), "fewer than 30");
        assert!(!tenant(20, 0.0).is_noisy(&queue, 2_000));
        let crowded = QueueLoad {
            in_flight: 400,
            usage: 0.0,
        };
        assert!(
            !tenant(40, 0.0).is_noisy(&crowded, 2_000),
            "exactly a tenth"
        );
        assert!(tenant(41, 0.0).is_noisy(&crowded, 2_000));
    }

    #[test]
    fn processing_share_over_a_tenth_is_noisy() {
        let queue = QueueLoad {
            in_flight: 5,
            usage: 1_000.0,
        };
        assert!(tenant(1, 101.0).is_noisy(&queue, 2_000));
        assert!(!tenant(1, 100.0).is_noisy(&queue, 2_000));
    }

    #[test]
    fn no_backlog_or_no_recent_send_is_quiet() {
        let queue = QueueLoad {
            in_flight: 100,
            usage: 1_000.0,
        };
        let drained = TenantLoad {
            backlog: false,
            ..tenant(100, 1_000.0)
        };
        assert!(!drained.is_noisy(&queue, 2_000));
        let silent = tenant(100, 1_000.0);
        assert!(silent.is_noisy(&queue, 1_000 + NOISY_SEND_WINDOW_MS - 1));
        assert!(!silent.is_noisy(&queue, 1_000 + NOISY_SEND_WINDOW_MS));
    }
}
