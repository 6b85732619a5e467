//! Reads the per-queue samples out of sluice's `/metrics` page (OpenMetrics
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
            _ => continue,
        };
        *field = value;
    }
    out
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
}
