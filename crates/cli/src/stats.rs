//! `sluice stats`: every queue's depth, messages in flight and delayed, the
//! age of its oldest message, and its send/receive/delete rates, computed
//! from the counters of two scrapes of `/metrics` (docs/metrics.md); then
//! the push consumers ([`crate::stats_consumers`]).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

use crate::admin::{Connection, out, outln, print_json};
use crate::exposition::{self, ConsumerSample, QueueSample};
use crate::stats_consumers::{self, ConsumerRow, Listed};
use crate::table::{Table, duration};
use crate::timefmt::{now_ms, rfc3339};
use sluice_client::Client;
use sluice_client::sluice::ListConsumersRequest;

/// `sluice stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    connection: Connection,
    /// Redraw every SECS seconds (default 2) until Ctrl-C; with --json,
    /// print one JSON document per line at each refresh.
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "2",
          value_parser = clap::value_parser!(u64).range(1..))]
    watch: Option<u64>,
    /// Seconds between the two samples the rates are computed from
    /// (without --watch).
    #[arg(long, value_name = "SECS", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=3600))]
    interval: u64,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

/// One queue's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Row {
    /// Queue name.
    pub name: String,
    /// Messages available.
    pub visible: u64,
    /// Messages in flight.
    pub in_flight: u64,
    /// Messages delayed.
    pub delayed: u64,
    /// Age of the oldest message, seconds.
    pub oldest_message_age_seconds: f64,
    /// Messages sent between the two samples (None without a previous one).
    pub sent: Option<u64>,
    /// Messages received between the two samples.
    pub received: Option<u64>,
    /// Messages deleted between the two samples.
    pub deleted: Option<u64>,
    /// Sends per second.
    pub sent_per_second: Option<f64>,
    /// Receives per second.
    pub received_per_second: Option<f64>,
    /// Deletes per second.
    pub deleted_per_second: Option<f64>,
    /// Fair queues: what SQS publishes of their tenants (all zero for
    /// any other queue).
    pub fair: FairRow,
}

/// A fair queue's noisy and quiet tenants (rule V10), named as SQS's
/// metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FairRow {
    /// ApproximateNumberOfNoisyGroups.
    pub noisy_groups: u64,
    /// ApproximateNumberOfMessagesVisibleInQuietGroups.
    pub quiet_visible: u64,
    /// ApproximateNumberOfMessagesNotVisibleInQuietGroups.
    pub quiet_in_flight: u64,
    /// ApproximateNumberOfMessagesDelayedInQuietGroups.
    pub quiet_delayed: u64,
    /// ApproximateAgeOfOldestMessageInQuietGroups, seconds.
    pub quiet_oldest_message_age_seconds: f64,
}

impl FairRow {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The rows of `current`, with rates against `previous` taken `elapsed`
/// earlier. A queue new since then, or whose counters went back (a server
/// restart), has no rates.
pub fn rows(
    previous: Option<(&BTreeMap<String, QueueSample>, Duration)>,
    current: &BTreeMap<String, QueueSample>,
) -> Vec<Row> {
    current
        .iter()
        .map(|(name, s)| {
            let before = previous.and_then(|(p, e)| p.get(name).map(|b| (b, e)));
            let delta = |f: fn(&QueueSample) -> f64| {
                before.and_then(|(b, _)| {
                    let d = f(s) - f(b);
                    (d >= 0.0).then_some(d as u64)
                })
            };
            let rate = |d: Option<u64>| {
                d.zip(before)
                    .map(|(d, (_, e))| d as f64 / e.as_secs_f64().max(0.001))
            };
            let (sent, received, deleted) = (
                delta(|s| s.sent),
                delta(|s| s.received),
                delta(|s| s.deleted),
            );
            Row {
                name: name.clone(),
                visible: s.visible as u64,
                in_flight: s.in_flight as u64,
                delayed: s.delayed as u64,
                oldest_message_age_seconds: s.oldest_age_secs,
                sent,
                received,
                deleted,
                sent_per_second: rate(sent),
                received_per_second: rate(received),
                deleted_per_second: rate(deleted),
                fair: FairRow {
                    noisy_groups: s.noisy_groups as u64,
                    quiet_visible: s.quiet_visible as u64,
                    quiet_in_flight: s.quiet_in_flight as u64,
                    quiet_delayed: s.quiet_delayed as u64,
                    quiet_oldest_message_age_seconds: s.quiet_oldest_age_secs,
                },
            }
        })
        .collect()
}

/// The fair queues' tenants, for the queues that have any to show.
fn fair_table(rows: &[Row]) -> Option<String> {
    let mut table = Table::new(&[
        "FAIR QUEUE",
        "NOISY GROUPS>",
        "QUIET VISIBLE>",
        "QUIET IN FLIGHT>",
        "QUIET DELAYED>",
        "QUIET OLDEST>",
    ]);
    let mut any = false;
    for r in rows.iter().filter(|r| !r.fair.is_empty()) {
        any = true;
        table.row(vec![
            r.name.clone(),
            r.fair.noisy_groups.to_string(),
            r.fair.quiet_visible.to_string(),
            r.fair.quiet_in_flight.to_string(),
            r.fair.quiet_delayed.to_string(),
            duration(r.fair.quiet_oldest_message_age_seconds as u64),
        ]);
    }
    any.then(|| table.render())
}

/// Runs `stats`; returns the exit code.
pub async fn run(args: StatsArgs) -> anyhow::Result<u8> {
    let client = args.connection.client()?;
    let mut previous = scrape(&client).await?;
    let Some(every) = args.watch else {
        tokio::time::sleep(Duration::from_secs(args.interval)).await;
        let current = scrape(&client).await?;
        let elapsed = current.at - previous.at;
        draw(
            &args,
            &current.rows(Some((&previous, elapsed))),
            elapsed,
            false,
        );
        return Ok(0);
    };
    let clear = !args.json && std::io::stdout().is_terminal();
    draw(&args, &previous.rows(None), Duration::ZERO, clear);
    loop {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(every)) => {}
            _ = tokio::signal::ctrl_c() => return Ok(0),
        }
        let current = scrape(&client).await?;
        let elapsed = current.at - previous.at;
        draw(
            &args,
            &current.rows(Some((&previous, elapsed))),
            elapsed,
            clear,
        );
        previous = current;
    }
}

/// One scrape of `/metrics`, with the ListConsumers answer beside it.
struct Sample {
    queues: BTreeMap<String, QueueSample>,
    consumers: BTreeMap<String, ConsumerSample>,
    /// None when ListConsumers did not answer.
    listed: Option<BTreeMap<String, Listed>>,
    at: Instant,
}

impl Sample {
    /// The queues' and consumers' rows, with rates against `previous`.
    fn rows(&self, previous: Option<(&Sample, Duration)>) -> (Vec<Row>, Vec<ConsumerRow>) {
        let queues = rows(previous.map(|(p, e)| (&p.queues, e)), &self.queues);
        let consumers = stats_consumers::consumer_rows(
            previous.map(|(p, e)| (&p.consumers, e)),
            &self.consumers,
            self.listed.as_ref(),
        );
        (queues, consumers)
    }
}

async fn scrape(client: &Client) -> anyhow::Result<Sample> {
    let text = client.metrics().await?;
    let at = Instant::now();
    // The consumers' states; a server that cannot list them still has
    // its metrics shown.
    let listed = client
        .call(&ListConsumersRequest::default())
        .await
        .ok()
        .map(|answer| stats_consumers::listed(&answer.consumers));
    Ok(Sample {
        queues: exposition::queue_samples(&text),
        consumers: exposition::consumer_samples(&text),
        listed,
        at,
    })
}

/// `stats --json`: one sample.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Document<'a> {
    sampled_at: String,
    interval_seconds: f64,
    queues: &'a [Row],
    consumers: &'a [ConsumerRow],
}

fn draw(
    args: &StatsArgs,
    (rows, consumers): &(Vec<Row>, Vec<ConsumerRow>),
    elapsed: Duration,
    clear: bool,
) {
    if args.json {
        let doc = Document {
            sampled_at: rfc3339(now_ms()),
            interval_seconds: elapsed.as_secs_f64(),
            queues: rows,
            consumers,
        };
        if args.watch.is_some() {
            // One document per line, so a script can read them as they come.
            outln!("{}", serde_json::to_string(&doc).unwrap_or_default());
        } else {
            print_json(&doc);
        }
        return;
    }
    if clear {
        out!("\x1b[2J\x1b[H");
    }
    let rate = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.1}"));
    let mut table = Table::new(&[
        "QUEUE",
        "VISIBLE>",
        "IN FLIGHT>",
        "DELAYED>",
        "OLDEST>",
        "SENT/S>",
        "RECEIVED/S>",
        "DELETED/S>",
    ]);
    for r in rows {
        table.row(vec![
            r.name.clone(),
            r.visible.to_string(),
            r.in_flight.to_string(),
            r.delayed.to_string(),
            duration(r.oldest_message_age_seconds as u64),
            rate(r.sent_per_second),
            rate(r.received_per_second),
            rate(r.deleted_per_second),
        ]);
    }
    if rows.is_empty() {
        outln!("no queues");
    } else {
        out!("{}", table.render());
    }
    if let Some(fair) = fair_table(rows) {
        outln!();
        out!("{fair}");
    }
    if !consumers.is_empty() {
        outln!();
        out!("{}", stats_consumers::table(consumers));
    }
    if elapsed.is_zero() {
        outln!("{}  rates from the next refresh", rfc3339(now_ms()));
    } else {
        outln!(
            "{}  rates over the last {:.1} s",
            rfc3339(now_ms()),
            elapsed.as_secs_f64()
        );
    }
    if args.watch.is_some() && !clear {
        outln!();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(sent: f64, received: f64, deleted: f64) -> QueueSample {
        QueueSample {
            visible: 4.0,
            in_flight: 2.0,
            sent,
            received,
            deleted,
            ..Default::default()
        }
    }

    #[test]
    fn m1_rates_are_counter_deltas_over_the_interval() {
        let before = BTreeMap::from([("orders".to_string(), sample(10.0, 5.0, 1.0))]);
        let after = BTreeMap::from([
            ("orders".to_string(), sample(30.0, 9.0, 1.0)),
            ("new".to_string(), sample(3.0, 0.0, 0.0)),
        ]);
        let r = rows(Some((&before, Duration::from_secs(2))), &after);
        let orders = r.iter().find(|r| r.name == "orders").unwrap();
        assert_eq!(orders.sent, Some(20));
        assert_eq!(orders.sent_per_second, Some(10.0));
        assert_eq!(orders.received_per_second, Some(2.0));
        assert_eq!(orders.deleted_per_second, Some(0.0));
        assert_eq!((orders.visible, orders.in_flight), (4, 2));
        let new = r.iter().find(|r| r.name == "new").unwrap();
        assert_eq!(new.sent_per_second, None, "no previous sample, no rate");
    }

    #[test]
    fn m1_a_counter_that_went_back_has_no_rate() {
        let before = BTreeMap::from([("q".to_string(), sample(100.0, 0.0, 0.0))]);
        let after = BTreeMap::from([("q".to_string(), sample(3.0, 0.0, 0.0))]);
        let r = rows(Some((&before, Duration::from_secs(1))), &after);
        assert_eq!(r[0].sent_per_second, None);
        assert_eq!(rows(None, &after)[0].sent, None);
    }

    #[test]
    fn v10_fair_queues_get_a_table_of_their_tenants() {
        let fair = QueueSample {
            noisy_groups: 1.0,
            quiet_visible: 3.0,
            quiet_in_flight: 2.0,
            quiet_delayed: 1.0,
            quiet_oldest_age_secs: 65.0,
            ..Default::default()
        };
        let current = BTreeMap::from([
            ("plain".to_string(), sample(1.0, 1.0, 1.0)),
            ("tenants".to_string(), fair),
        ]);
        let r = rows(None, &current);
        assert_eq!(r[1].fair.noisy_groups, 1);
        let table = fair_table(&r).expect("a fair queue to show");
        assert!(table.contains("tenants"), "{table}");
        assert!(!table.contains("plain"), "{table}");
        assert!(table.contains("1m5s"), "{table}");
        assert_eq!(
            fair_table(&rows(
                None,
                &BTreeMap::from([("plain".to_string(), sample(1.0, 1.0, 1.0))])
            )),
            None
        );
    }
}
