//! The recent history of one queue's stats, and the samples of each metric
//! read from it: gauges are the value at each snapshot; counters are the
//! increase since the previous snapshot (rule M1).

use std::collections::VecDeque;

use sluice_broker::QueueStats;
use sluice_core::clock::Millis;

use super::definition::Metric;
use super::evaluate::Sample;

/// Snapshots of one queue's stats, oldest first.
#[derive(Debug, Default, Clone)]
pub struct QueueSeries {
    snapshots: VecDeque<(Millis, QueueStats)>,
}

impl QueueSeries {
    /// Adds a snapshot taken at `at`.
    pub fn record(&mut self, at: Millis, stats: QueueStats) {
        self.snapshots.push_back((at, stats));
    }

    /// Drops snapshots before `from`, keeping the one just before it (a
    /// counter's first increase in the range needs it) and always the latest.
    pub fn prune(&mut self, from: Millis) {
        while self.snapshots.len() > 1 && self.snapshots.get(1).is_some_and(|(at, _)| *at <= from) {
            self.snapshots.pop_front();
        }
    }

    /// How many snapshots are kept.
    pub fn len(&self) -> usize {
        self.snapshots.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.snapshots.is_empty()
    }

    /// The samples of `metric`, oldest first.
    pub fn samples(&self, metric: Metric) -> Vec<Sample> {
        if let Some(gauge) = gauge(metric) {
            return self
                .snapshots
                .iter()
                .map(|(at, s)| Sample {
                    at: *at,
                    value: gauge(s),
                })
                .collect();
        }
        self.snapshots
            .iter()
            .zip(self.snapshots.iter().skip(1))
            .filter_map(|((_, before), (at, after))| {
                counter_sample(metric, before, after).map(|value| Sample { at: *at, value })
            })
            .collect()
    }
}

type Gauge = fn(&QueueStats) -> f64;

fn gauge(metric: Metric) -> Option<Gauge> {
    Some(match metric {
        Metric::ApproximateNumberOfMessagesVisible => |s| s.counts.visible as f64,
        Metric::ApproximateNumberOfMessagesNotVisible => |s| s.counts.in_flight as f64,
        Metric::ApproximateNumberOfMessagesDelayed => |s| s.counts.delayed as f64,
        Metric::ApproximateAgeOfOldestMessage => |s| (s.oldest_age_ms / 1000) as f64,
        Metric::ApproximateNumberOfMessagesAwaitingArchive => |s| s.awaiting_archive as f64,
        _ => return None,
    })
}

/// The increase of a counter; a counter that went down (the queue was
/// deleted and created again) counts from zero.
fn increase(before: u64, after: u64) -> u64 {
    if after >= before {
        after - before
    } else {
        after
    }
}

fn counter_sample(metric: Metric, before: &QueueStats, after: &QueueStats) -> Option<f64> {
    let field: fn(&QueueStats) -> u64 = match metric {
        Metric::NumberOfMessagesSent => |s| s.sent,
        Metric::NumberOfMessagesReceived => |s| s.received,
        Metric::NumberOfMessagesDeleted => |s| s.deleted,
        Metric::NumberOfEmptyReceives => |s| s.empty_receives,
        Metric::NumberOfMessagesDeadLettered => |s| s.dead_lettered,
        Metric::NumberOfMessagesRedriven => |s| s.redriven,
        Metric::NumberOfMessagesExpired => |s| s.expired,
        Metric::SentMessageSize => {
            // CloudWatch's SentMessageSize has no datapoint without sends.
            let sent = increase(before.sent, after.sent);
            let bytes = increase(before.sent_bytes, after.sent_bytes);
            return (sent > 0).then(|| bytes as f64 / sent as f64);
        }
        _ => return None,
    };
    Some(increase(field(before), field(after)) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_broker::QueueCounts;

    fn stats(visible: u64, sent: u64, bytes: u64) -> QueueStats {
        QueueStats {
            counts: QueueCounts {
                visible,
                ..Default::default()
            },
            sent,
            sent_bytes: bytes,
            ..Default::default()
        }
    }

    /// M1: gauges are read as they are, counters as increases between
    /// snapshots, SentMessageSize as the average size of what was sent.
    #[test]
    fn m1_gauges_counters_and_sizes() {
        let mut q = QueueSeries::default();
        q.record(0, stats(2, 10, 100));
        q.record(10, stats(5, 14, 180));
        q.record(20, stats(1, 14, 180));
        q.record(30, stats(0, 3, 30));
        let v = |m| {
            q.samples(m)
                .iter()
                .map(|s| (s.at, s.value))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            v(Metric::ApproximateNumberOfMessagesVisible),
            vec![(0, 2.0), (10, 5.0), (20, 1.0), (30, 0.0)]
        );
        assert_eq!(
            v(Metric::NumberOfMessagesSent),
            vec![(10, 4.0), (20, 0.0), (30, 3.0)],
            "a counter that went down (queue created again) counts from zero"
        );
        assert_eq!(v(Metric::SentMessageSize), vec![(10, 20.0), (30, 10.0)]);
    }

    /// M1, X8: the messages waiting for the archive are a gauge.
    #[test]
    fn x8_messages_awaiting_the_archive_are_a_gauge() {
        let mut q = QueueSeries::default();
        for (at, waiting) in [(0, 0), (10, 3), (20, 3)] {
            q.record(
                at,
                QueueStats {
                    awaiting_archive: waiting,
                    ..Default::default()
                },
            );
        }
        let values: Vec<f64> = q
            .samples(Metric::ApproximateNumberOfMessagesAwaitingArchive)
            .iter()
            .map(|s| s.value)
            .collect();
        assert_eq!(values, [0.0, 3.0, 3.0]);
    }

    #[test]
    fn prune_keeps_one_before_the_range_and_the_latest() {
        let mut q = QueueSeries::default();
        for at in [0, 10, 20, 30] {
            q.record(at, stats(0, at, 0));
        }
        q.prune(15);
        assert_eq!(q.samples(Metric::NumberOfMessagesSent).len(), 2);
        assert_eq!(q.len(), 3);
        q.prune(1000);
        assert_eq!(q.len(), 1);
    }
}
