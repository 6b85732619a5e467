//! Every queue's depth over the last hour (rule M5), sampled in the
//! background so that a page opened now can draw an hour of history (the
//! console's sparklines). Each node keeps its own samples in memory; on
//! PostgreSQL the counts it samples are the whole cluster's, so every node
//! keeps the same history from the time it started.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use sluice_broker::{Broker, QueueCounts};
use sluice_core::clock::{Clock, Millis};

/// Time between two samples.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(30);

/// How far back the history reaches.
pub const KEPT: Duration = Duration::from_secs(3600);

/// The most queues sampled at each tick (the first ones in name order):
/// a sample costs one count per queue, which a server with tens of
/// thousands of queues should not pay twice a minute.
pub const MAX_QUEUES: usize = 1000;

/// One queue's depths at one time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthSample {
    /// When it was taken (ms since the epoch).
    pub at: Millis,
    /// The depths then.
    pub counts: QueueCounts,
}

/// The samples of every queue, oldest first.
#[derive(Debug, Default)]
pub struct DepthHistory {
    series: Mutex<HashMap<String, VecDeque<DepthSample>>>,
}

impl DepthHistory {
    /// Records one tick: `counts` of every queue sampled at `at`. A queue
    /// missing from `counts` was deleted (or is past [`MAX_QUEUES`]) and
    /// loses its history, so that a queue created again under its name
    /// starts afresh.
    pub fn record(&self, at: Millis, counts: Vec<(String, QueueCounts)>) {
        let from = at.saturating_sub(KEPT.as_millis() as u64);
        let mut series = self.lock();
        let mut next = HashMap::with_capacity(counts.len());
        for (queue, c) in counts {
            let mut samples = series.remove(&queue).unwrap_or_default();
            samples.push_back(DepthSample { at, counts: c });
            while samples.front().is_some_and(|s| s.at < from) {
                samples.pop_front();
            }
            next.insert(queue, samples);
        }
        *series = next;
    }

    /// The samples of the queue stored under `key`, oldest first (none if
    /// it was never sampled).
    pub fn samples(&self, key: &str) -> Vec<DepthSample> {
        self.lock()
            .get(key)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default()
    }

    /// The series. A panic while another thread held them leaves at worst
    /// some queues without their history, so a poisoned lock is taken.
    fn lock(&self) -> MutexGuard<'_, HashMap<String, VecDeque<DepthSample>>> {
        self.series.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Samples every queue (up to [`MAX_QUEUES`]) once, at the clock's time.
    pub async fn tick<B: Broker>(&self, broker: &B, clock: &dyn Clock) {
        let Ok(queues) = broker.list_queues().await else {
            // A storage outage: keep the history, try again next tick.
            return;
        };
        let mut counts = Vec::with_capacity(queues.len().min(MAX_QUEUES));
        for key in queues.into_iter().take(MAX_QUEUES) {
            if let Ok(c) = broker.queue_counts(&key).await {
                counts.push((key, c));
            }
        }
        self.record(clock.now(), counts);
    }
}

/// Samples every queue each [`SAMPLE_INTERVAL`], in the background.
pub fn spawn_depth_sampler<B: Broker>(
    history: Arc<DepthHistory>,
    broker: B,
    clock: Arc<dyn Clock>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(SAMPLE_INTERVAL);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            history.tick(&broker, clock.as_ref()).await;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(visible: u64) -> QueueCounts {
        QueueCounts {
            visible,
            in_flight: 1,
            delayed: 2,
        }
    }

    #[test]
    fn m5_keeps_an_hour_of_samples_per_queue() {
        let h = DepthHistory::default();
        let hour = KEPT.as_millis() as u64;
        h.record(
            1_000,
            vec![("a".into(), counts(1)), ("b".into(), counts(5))],
        );
        h.record(
            1_000 + hour / 2,
            vec![("a".into(), counts(2)), ("b".into(), counts(6))],
        );
        h.record(
            1_000 + hour + 1,
            vec![("a".into(), counts(3)), ("b".into(), counts(7))],
        );
        let a = h.samples("a");
        // The first sample is more than an hour old at the third tick.
        assert_eq!(
            a.iter().map(|s| s.counts.visible).collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(a[1].at, 1_000 + hour + 1);
        assert_eq!(a[1].counts, counts(3));
        assert_eq!(h.samples("b").len(), 2);
        assert!(h.samples("c").is_empty());
    }

    #[test]
    fn m5_a_deleted_queue_loses_its_history() {
        let h = DepthHistory::default();
        h.record(1, vec![("a".into(), counts(1)), ("b".into(), counts(1))]);
        h.record(2, vec![("b".into(), counts(2))]);
        assert!(h.samples("a").is_empty());
        h.record(3, vec![("a".into(), counts(9)), ("b".into(), counts(3))]);
        assert_eq!(
            h.samples("a").len(),
            1,
            "a queue created again starts afresh"
        );
        assert_eq!(h.samples("b").len(), 3);
    }
}
