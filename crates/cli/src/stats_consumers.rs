//! The push consumers' section of `sluice stats`: per consumer its state
//! (from ListConsumers), its batches in flight over its limit, deliveries
//! and messages per second, failures by kind, filtered messages and the
//! handler's mean answer time, from the consumer metrics of two scrapes
//! (docs/metrics.md).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use sluice_client::sluice::Consumer;

use crate::exposition::ConsumerSample;
use crate::table::Table;

/// A consumer as ListConsumers lists it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listed {
    /// Its queue.
    pub queue: String,
    /// `running`, `throttled`, `backing_off` or `stopped`.
    pub state: String,
}

/// The consumers of a ListConsumers answer, by name.
pub fn listed(consumers: &[Consumer]) -> BTreeMap<String, Listed> {
    consumers
        .iter()
        .map(|c| {
            let l = Listed {
                queue: c.queue_name.clone().unwrap_or_default(),
                state: c.state.clone().unwrap_or_default(),
            };
            (c.name.clone().unwrap_or_default(), l)
        })
        .collect()
}

/// One consumer's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ConsumerRow {
    /// Consumer name.
    pub name: String,
    /// Its queue (None when ListConsumers did not answer).
    pub queue: Option<String>,
    /// Its state (None when ListConsumers did not answer).
    pub state: Option<String>,
    /// Batches in flight.
    pub in_flight_batches: u64,
    /// Batches it may have in flight now.
    pub concurrency_limit: u64,
    /// Batches POSTed since the server started.
    pub deliveries: u64,
    /// Messages in them.
    pub messages: u64,
    /// Messages deleted as handled.
    pub deleted: u64,
    /// Messages moved to the dead-letter queue as permanent failures.
    pub dead_lettered: u64,
    /// Messages deleted without delivery by the filter.
    pub filtered: u64,
    /// Failed batches by kind, since the server started.
    pub failures: BTreeMap<String, u64>,
    /// Batches POSTed per second over the interval.
    pub deliveries_per_second: Option<f64>,
    /// Messages POSTed per second over the interval.
    pub messages_per_second: Option<f64>,
    /// The handler's mean answer time over the interval (without a
    /// previous sample, since the start); None without answers.
    pub mean_handler_seconds: Option<f64>,
}

/// The rows of `current`, with rates against `previous` taken `elapsed`
/// earlier. With `listed` (ListConsumers answered), its consumers only:
/// the metrics of a deleted one stay until the server restarts.
pub fn consumer_rows(
    previous: Option<(&BTreeMap<String, ConsumerSample>, Duration)>,
    current: &BTreeMap<String, ConsumerSample>,
    listed: Option<&BTreeMap<String, Listed>>,
) -> Vec<ConsumerRow> {
    let names: Vec<&String> = match listed {
        Some(l) => l.keys().collect(),
        None => current.keys().collect(),
    };
    let none = ConsumerSample::default();
    names
        .into_iter()
        .map(|name| {
            let s = current.get(name).unwrap_or(&none);
            let before = previous.and_then(|(p, e)| p.get(name).map(|b| (b, e)));
            let rate = |f: fn(&ConsumerSample) -> f64| {
                before.and_then(|(b, e)| {
                    let d = f(s) - f(b);
                    (d >= 0.0).then(|| d / e.as_secs_f64().max(0.001))
                })
            };
            let (seconds, answers) = match before {
                Some((b, _)) => (
                    s.handler_seconds - b.handler_seconds,
                    s.handler_answers - b.handler_answers,
                ),
                None => (s.handler_seconds, s.handler_answers),
            };
            let entry = listed.and_then(|l| l.get(name));
            ConsumerRow {
                name: name.clone(),
                queue: entry.map(|e| e.queue.clone()),
                state: entry.map(|e| e.state.clone()),
                in_flight_batches: s.in_flight as u64,
                concurrency_limit: s.limit as u64,
                deliveries: s.deliveries as u64,
                messages: s.messages as u64,
                deleted: s.deleted as u64,
                dead_lettered: s.dead_lettered as u64,
                filtered: s.filtered as u64,
                failures: s
                    .failures
                    .iter()
                    .map(|(k, v)| (k.clone(), *v as u64))
                    .collect(),
                deliveries_per_second: rate(|s| s.deliveries),
                messages_per_second: rate(|s| s.messages),
                mean_handler_seconds: (answers > 0.0).then(|| seconds / answers),
            }
        })
        .collect()
}

/// The consumers' table.
pub fn table(rows: &[ConsumerRow]) -> String {
    let rate = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.1}"));
    let mut table = Table::new(&[
        "CONSUMER",
        "QUEUE",
        "STATE",
        "IN FLIGHT>",
        "BATCHES/S>",
        "MESSAGES/S>",
        "HANDLER>",
        "DELIVERED>",
        "FILTERED>",
        "FAILURES",
    ]);
    for r in rows {
        let failures: Vec<String> = r
            .failures
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        table.row(vec![
            r.name.clone(),
            r.queue.clone().unwrap_or_else(|| "-".into()),
            r.state.clone().unwrap_or_else(|| "-".into()),
            format!("{}/{}", r.in_flight_batches, r.concurrency_limit),
            rate(r.deliveries_per_second),
            rate(r.messages_per_second),
            r.mean_handler_seconds
                .map_or("-".into(), |s| format!("{:.1} ms", s * 1000.0)),
            r.messages.to_string(),
            r.filtered.to_string(),
            if failures.is_empty() {
                "-".into()
            } else {
                failures.join(", ")
            },
        ]);
    }
    table.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(deliveries: f64, seconds: f64, answers: f64) -> ConsumerSample {
        ConsumerSample {
            deliveries,
            messages: deliveries * 10.0,
            handler_seconds: seconds,
            handler_answers: answers,
            in_flight: 2.0,
            limit: 4.0,
            failures: BTreeMap::from([("timeout".to_string(), 1.0)]),
            ..Default::default()
        }
    }

    #[test]
    fn m6_consumer_rates_and_mean_latency_are_over_the_interval() {
        let before = BTreeMap::from([("w".to_string(), sample(10.0, 1.0, 10.0))]);
        let after = BTreeMap::from([("w".to_string(), sample(30.0, 7.0, 30.0))]);
        let r = consumer_rows(Some((&before, Duration::from_secs(2))), &after, None);
        assert_eq!(r[0].deliveries_per_second, Some(10.0));
        assert_eq!(r[0].messages_per_second, Some(100.0));
        assert_eq!(r[0].mean_handler_seconds, Some(0.3), "6 s over 20 answers");
        assert_eq!((r[0].in_flight_batches, r[0].concurrency_limit), (2, 4));
        assert_eq!(r[0].failures["timeout"], 1);
        assert_eq!(r[0].state, None, "no ListConsumers answer");
        let first = consumer_rows(None, &after, None);
        assert_eq!(first[0].deliveries_per_second, None);
        assert_eq!(first[0].mean_handler_seconds, Some(7.0 / 30.0));
        let idle = consumer_rows(Some((&after, Duration::from_secs(1))), &after, None);
        assert_eq!(idle[0].mean_handler_seconds, None, "no answer in between");
        assert!(table(&r).contains("2/4"));
    }

    #[test]
    fn m6_listed_consumers_only_with_their_state() {
        let consumer = |name: &str, queue: &str, state: &str| Consumer {
            name: Some(name.into()),
            queue_name: Some(queue.into()),
            state: Some(state.into()),
            ..Default::default()
        };
        let listed = listed(&[
            consumer("w", "orders", "throttled"),
            consumer("new", "jobs", "running"),
        ]);
        let current = BTreeMap::from([
            ("w".to_string(), sample(3.0, 0.0, 0.0)),
            ("deleted".to_string(), sample(1.0, 0.0, 0.0)),
        ]);
        let r = consumer_rows(None, &current, Some(&listed));
        let names: Vec<&str> = r.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["new", "w"]);
        assert_eq!(r[1].state.as_deref(), Some("throttled"));
        assert_eq!(r[1].queue.as_deref(), Some("orders"));
        assert_eq!(r[0].deliveries, 0, "no metrics yet");
    }
}
