//! The log line of a server error. `InternalFailure` (a fault of ours) is
//! logged every time. `ServiceUnavailable` means the storage or the
//! database is out of reach, and while that lasts every request fails
//! alike: it is logged at most once a second, with how many like it went
//! unlogged since the last line, so that an outage under load does not
//! write a line per request. `/metrics` still counts every one.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::api::{ApiError, ServerFault};

/// How often an unavailable storage is logged at most.
const UNAVAILABLE_EVERY: Duration = Duration::from_secs(1);

/// The one throttle of `ServiceUnavailable` lines, shared by every
/// server of the process (they share its log).
static UNAVAILABLE: Throttle = Throttle::new(UNAVAILABLE_EVERY);

/// Logs `e` when it is a server error, as the module says.
pub(crate) fn log_server_error<E: ApiError>(e: &E, request_id: &str) {
    let code = e.code();
    match e.server_fault() {
        Some(ServerFault::Internal) => {
            tracing::error!(request_id, code, message = %e.message(), "server error");
        }
        Some(ServerFault::Unavailable) => {
            if let Some(unlogged) = UNAVAILABLE.admit(Instant::now()) {
                tracing::error!(
                    request_id,
                    code,
                    message = %e.message(),
                    unlogged,
                    "server error (unlogged: like ones since the last line)"
                );
            }
        }
        None => {}
    }
}

/// At most one line per interval; counts the ones it holds back.
struct Throttle {
    every: Duration,
    /// When a line was last let through, and how many were held back since.
    state: Mutex<(Option<Instant>, u64)>,
}

impl Throttle {
    const fn new(every: Duration) -> Self {
        Throttle {
            every,
            state: Mutex::new((None, 0)),
        }
    }

    /// `Some(held back since the last line)` when a line may be written
    /// at `now`; `None` (and one more held back) when not.
    fn admit(&self, now: Instant) -> Option<u64> {
        // A panic while holding this lock cannot leave the counts wrong
        // in a way that matters: take them as they are.
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (last, held) = &mut *state;
        match *last {
            Some(at) if now.saturating_duration_since(at) < self.every => {
                *held += 1;
                None
            }
            _ => {
                *last = Some(now);
                Some(std::mem::take(held))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An outage's 503s are logged once a second, each line saying how
    /// many it stands for.
    #[test]
    fn unavailable_lines_are_throttled_and_counted() {
        let throttle = Throttle::new(Duration::from_secs(1));
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(throttle.admit(at(0)), Some(0), "the first is logged");
        assert_eq!(throttle.admit(at(10)), None);
        assert_eq!(throttle.admit(at(999)), None);
        assert_eq!(throttle.admit(at(1_000)), Some(2), "then one a second");
        assert_eq!(throttle.admit(at(1_500)), None);
        assert_eq!(throttle.admit(at(5_000)), Some(1));
        assert_eq!(
            throttle.admit(at(9_000)),
            Some(0),
            "a quiet spell holds nothing back"
        );
    }
}
