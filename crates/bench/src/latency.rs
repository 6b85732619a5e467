//! Request latencies: every sample is kept (4 bytes each, per worker, no
//! locking) and sorted once at the end, which gives exact percentiles without
//! a histogram dependency. A minute at 100,000 requests per second is 24 MB.

use std::time::Duration;

/// Latency samples of one kind of request, in microseconds.
#[derive(Debug, Default, Clone)]
pub struct Samples(Vec<u32>);

impl Samples {
    /// Records one request's duration.
    pub fn record(&mut self, elapsed: Duration) {
        self.0
            .push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
    }

    /// Adds another worker's samples.
    pub fn merge(&mut self, other: Samples) {
        self.0.extend(other.0);
    }

    /// Percentiles of everything recorded.
    pub fn summary(mut self) -> Summary {
        self.0.sort_unstable();
        let v = &self.0;
        let at = |q: f64| -> f64 {
            if v.is_empty() {
                return 0.0;
            }
            // Nearest rank: the smallest sample with at least q of them at or below it.
            let rank = (q * v.len() as f64).ceil() as usize;
            let index = rank.clamp(1, v.len()) - 1;
            millis(v[index])
        };
        Summary {
            count: v.len() as u64,
            p50_ms: at(0.50),
            p90_ms: at(0.90),
            p99_ms: at(0.99),
            max_ms: v.last().map_or(0.0, |&m| millis(m)),
        }
    }
}

/// Percentiles of one kind of request, in milliseconds.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Requests measured.
    pub count: u64,
    /// Median.
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Slowest.
    pub max_ms: f64,
}

/// Microseconds to milliseconds, rounded to the microsecond.
fn millis(micros: u32) -> f64 {
    f64::from(micros) / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut s = Samples::default();
        for us in 1..=100u64 {
            s.record(Duration::from_micros(us * 1000));
        }
        let sum = s.summary();
        assert_eq!(sum.count, 100);
        assert_eq!(sum.p50_ms, 50.0);
        assert_eq!(sum.p90_ms, 90.0);
        assert_eq!(sum.p99_ms, 99.0);
        assert_eq!(sum.max_ms, 100.0);
    }

    #[test]
    fn empty_is_zero() {
        assert_eq!(Samples::default().summary(), Summary::default());
    }

    #[test]
    fn merge_keeps_every_sample() {
        let mut a = Samples::default();
        a.record(Duration::from_micros(10));
        let mut b = Samples::default();
        b.record(Duration::from_micros(20));
        a.merge(b);
        assert_eq!(a.summary().count, 2);
    }
}
