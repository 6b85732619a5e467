//! Reads the per-queue and per-consumer samples out of sluice's `/metrics` page (OpenMetrics
//! text, see docs/metrics.md).

use std::collections::BTreeMap;

/// One queue's gauges and counters at one scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueSample {
    /// `sluice_queue_messages_visible`.
    pub visible: f64,
    /// `sluice_queue_messages_not_visible`.
    pub in_flight: f64,
    /// `sluice_queue_messages_delayed`.
    pub delayed: f64,
    /// `sluice_queue_oldest_message_age_seconds`.
    pub oldest_age_secs: f64,
    /// `sluice_queue_messages_sent_total`.
    pub sent: f64,
    /// `sluice_queue_messages_received_total`.
    pub received: f64,
    /// `sluice_queue_messages_deleted_total`.
    pub deleted: f64,
    /// `sluice_queue_messages_dead_lettered_total`.
    pub dead_lettered: f64,
    /// `sluice_queue_messages_redriven_total`.
    pub redriven: f64,
    /// `sluice_queue_messages_expired_total`.
    pub expired: f64,
    /// `sluice_queue_noisy_groups` (fair queues).
    pub noisy_groups: f64,
    /// `sluice_queue_quiet_group_messages_visible`.
    pub quiet_visible: f64,
    /// `sluice_queue_quiet_group_messages_not_visible`.
    pub quiet_in_flight: f64,
    /// `sluice_queue_quiet_group_messages_delayed`.
    pub quiet_delayed: f64,
    /// `sluice_queue_quiet_group_oldest_message_age_seconds`.
    pub quiet_oldest_age_secs: f64,
}

/// Every queue's sample in an exposition, by queue name.
pub fn queue_samples(text: &str) -> BTreeMap<String, QueueSample> {
    let mut out: BTreeMap<String, QueueSample> = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let Some((name, queue, value)) = parse_line(line) else {
            continue;
        };
        let s = out.entry(queue.to_string()).or_default();
        let field = match name {
            "sluice_queue_messages_visible" => &mut s.visible,
            "sluice_queue_messages_not_visible" => &mut s.in_flight,
            "sluice_queue_messages_delayed" => &mut s.delayed,
            "sluice_queue_oldest_message_age_seconds" => &mut s.oldest_age_secs,
            "sluice_queue_messages_sent_total" => &mut s.sent,
            "sluice_queue_messages_received_total" => &mut s.received,
            "sluice_queue_messages_deleted_total" => &mut s.deleted,
            "sluice_queue_messages_dead_lettered_total" => &mut s.dead_lettered,
            "sluice_queue_messages_redriven_total" => &mut s.redriven,
            "sluice_queue_messages_expired_total" => &mut s.expired,
            "sluice_queue_noisy_groups" => &mut s.noisy_groups,
            "sluice_queue_quiet_group_messages_visible" => &mut s.quiet_visible,
            "sluice_queue_quiet_group_messages_not_visible" => &mut s.quiet_in_flight,
            "sluice_queue_quiet_group_messages_delayed" => &mut s.quiet_delayed,
            "sluice_queue_quiet_group_oldest_message_age_seconds" => &mut s.quiet_oldest_age_secs,
            _ => continue,
        };
        *field = value;
    }
    out
}

/// One push consumer's counters and gauges at one scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConsumerSample {
    /// `sluice_consumer_deliveries_total`.
    pub deliveries: f64,
    /// `sluice_consumer_messages_total`.
    pub messages: f64,
    /// `sluice_consumer_deleted_messages_total`.
    pub deleted: f64,
    /// `sluice_consumer_dead_lettered_messages_total`.
    pub dead_lettered: f64,
    /// `sluice_consumer_filtered_messages_total`.
    pub filtered: f64,
    /// `sluice_consumer_failures_total`, by `kind`.
    pub failures: BTreeMap<String, f64>,
    /// `sluice_consumer_handler_duration_seconds_sum`.
    pub handler_seconds: f64,
    /// `sluice_consumer_handler_duration_seconds_count`.
    pub handler_answers: f64,
    /// `sluice_consumer_in_flight_batches`.
    pub in_flight: f64,
    /// `sluice_consumer_concurrency_limit`.
    pub limit: f64,
}

/// Every push consumer's sample in an exposition, by consumer name.
pub fn consumer_samples(text: &str) -> BTreeMap<String, ConsumerSample> {
    let mut out: BTreeMap<String, ConsumerSample> = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("sluice_consumer_")) {
        let Some((name, labels, value)) = split_line(line) else {
            continue;
        };
        let Some(consumer) = label(labels, "consumer") else {
            continue;
        };
        let s = out.entry(consumer.to_string()).or_default();
        let field = match name {
            "sluice_consumer_deliveries_total" => &mut s.deliveries,
            "sluice_consumer_messages_total" => &mut s.messages,
            "sluice_consumer_deleted_messages_total" => &mut s.deleted,
            "sluice_consumer_dead_lettered_messages_total" => &mut s.dead_lettered,
            "sluice_consumer_filtered_messages_total" => &mut s.filtered,
            "sluice_consumer_handler_duration_seconds_sum" => &mut s.handler_seconds,
            "sluice_consumer_handler_duration_seconds_count" => &mut s.handler_answers,
            "sluice_consumer_in_flight_batches" => &mut s.in_flight,
            "sluice_consumer_concurrency_limit" => &mut s.limit,
            "sluice_consumer_failures_total" => {
                let Some(kind) = label(labels, "kind") else {
                    continue;
                };
                s.failures.entry(kind.to_string()).or_default()
            }
            _ => continue,
        };
        *field = value;
    }
    out
}

/// `name{labels} value` → (name, labels, value).
fn split_line(line: &str) -> Option<(&str, &str, f64)> {
    let (name, rest) = line.split_once('{')?;
    let (labels, value) = rest.split_once('}')?;
    let value = value.split_whitespace().next()?.parse().ok()?;
    Some((name, labels, value))
}

/// The value of label `key` in `a="x",b="y"` (sluice's values hold no
/// quotes or commas: names and kinds).
fn label<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    labels.split(',').find_map(|l| {
        l.trim()
            .strip_prefix(key)?
            .strip_prefix("=\"")?
            .strip_suffix('"')
    })
}

/// `name{queue="q"} value` → (name, q, value); other label sets are skipped.
fn parse_line(line: &str) -> Option<(&str, &str, f64)> {
    let (name, rest) = line.split_once('{')?;
    let (labels, value) = rest.split_once('}')?;
    let queue = labels
        .split(',')
        .find_map(|l| l.trim().strip_prefix("queue=\""))?
        .strip_suffix('"')?;
    let value = value.split_whitespace().next()?.parse().ok()?;
    Some((name, queue, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_queue_samples_and_skips_the_rest() {
        let text = "# HELP sluice_queue_messages_visible x\n\
            # TYPE sluice_queue_messages_visible gauge\n\
            sluice_queue_messages_visible{queue=\"orders\"} 3\n\
            sluice_queue_oldest_message_age_seconds{queue=\"orders\"} 12.5\n\
            sluice_queue_messages_sent_total{queue=\"orders\"} 7\n\
            sluice_queue_messages_sent_total{queue=\"orders-dlq\"} 1\n\
            sluice_requests_total{action=\"SendMessage\",protocol=\"json\",code=\"ok\"} 9\n\
            # EOF\n";
        let s = queue_samples(text);
        assert_eq!(s.len(), 2);
        assert_eq!(s["orders"].visible, 3.0);
        assert_eq!(s["orders"].oldest_age_secs, 12.5);
        assert_eq!(s["orders"].sent, 7.0);
        assert_eq!(s["orders-dlq"].sent, 1.0);
    }

    #[test]
    fn reads_consumer_samples() {
        let text = "sluice_consumer_deliveries_total{consumer=\"w\"} 4\n\
            sluice_consumer_failures_total{consumer=\"w\",kind=\"timeout\"} 2\n\
            sluice_consumer_failures_total{consumer=\"w\",kind=\"status\"} 1\n\
            sluice_consumer_handler_duration_seconds_bucket{le=\"0.001\",consumer=\"w\"} 0\n\
            sluice_consumer_handler_duration_seconds_sum{consumer=\"w\"} 1.5\n\
            sluice_consumer_handler_duration_seconds_count{consumer=\"w\"} 3\n\
            sluice_consumer_in_flight_batches{consumer=\"w\"} 2\n\
            sluice_consumer_concurrency_limit{consumer=\"other\"} 5\n\
            sluice_queue_messages_sent_total{queue=\"w\"} 7\n";
        let s = consumer_samples(text);
        assert_eq!(s.len(), 2);
        let w = &s["w"];
        assert_eq!(w.deliveries, 4.0);
        assert_eq!(w.failures["timeout"], 2.0);
        assert_eq!(w.failures["status"], 1.0);
        assert_eq!((w.handler_seconds, w.handler_answers), (1.5, 3.0));
        assert_eq!(w.in_flight, 2.0);
        assert_eq!(s["other"].limit, 5.0);
    }
}
