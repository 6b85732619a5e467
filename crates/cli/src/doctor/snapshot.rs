//! The snapshot `doctor` checks: read from a running server, or from the
//! `[[queues]]` of a config file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use sluice_core::attributes::QueueConfig;
use sluice_core::queue_name::Account;

use super::setup::{
    AlarmInfo, Alarms, AtRest, ConsumerInfo, Consumers, LiveState, QueueSnapshot, Sealing, Setup,
    Sse, SubscriptionInfo, TopicInfo, Topics,
};
use crate::config;
use crate::dlq::MessageFilter;
use crate::dlq::browse::peek_page;
use crate::inventory::{self, QueueInfo, name_of};
use crate::table::unsigned;
use crate::timefmt::now_ms;
use sluice_client::Client;
use sluice_client::sluice::{
    Alarm, Consumer, DescribeAlarmsRequest, DescribeTopicsRequest, ListConsumersRequest,
    SubscriptionDetail,
};

/// DLQ messages looked at for the one that expires first.
const EXPIRY_SCAN: usize = 1000;

/// Every queue of a running server, with live counts, the first expiry of
/// each DLQ and the server's alarms.
pub async fn live(client: &Client) -> anyhow::Result<Setup> {
    let queues = inventory::all_queues(client, true).await?;
    let dlqs: Vec<usize> = inventory::dead_letter_queues(&queues)
        .into_iter()
        .map(|(d, _)| d)
        .collect();
    let mut snapshots = Vec::new();
    for (i, q) in queues.iter().enumerate() {
        let mut s = from_attributes(q);
        let first_expiry_start_ms = if dlqs.contains(&i) {
            first_expiry_start(client, q).await?
        } else {
            None
        };
        s.live = Some(LiveState {
            in_flight: q.number("ApproximateNumberOfMessagesNotVisible"),
            first_expiry_start_ms,
        });
        snapshots.push(s);
    }
    Ok(Setup {
        queues: snapshots,
        alarms: alarms(client).await?,
        consumers: consumers(client).await?,
        topics: topics(client).await?,
        at_rest: at_rest(client).await,
        now_ms: now_ms(),
    })
}

/// Whether the server seals at rest, and which queues' keys are missing,
/// from its `/metrics`; or why that cannot be known.
async fn at_rest(client: &Client) -> AtRest {
    match client.metrics().await {
        Ok(text) => at_rest_in(&text),
        Err(e) => AtRest::Unknown(format!(
            "cannot read the server's /metrics ({e}), which says whether it encrypts at rest \
             (a server with a metrics listener of its own, --metrics-bind, serves it there only)"
        )),
    }
}

/// [`at_rest`] from an exposition: `sluice_encryption_at_rest`, and the
/// queues whose `sluice_queue_encryption_key_missing` is 1.
fn at_rest_in(text: &str) -> AtRest {
    let mut seals = None;
    let mut keys_missing = BTreeSet::new();
    for line in text.lines() {
        if let Some(value) = line.strip_prefix("sluice_encryption_at_rest ") {
            seals = value.trim().parse::<f64>().ok().map(|v| v >= 1.0);
        } else if let Some(rest) = line.strip_prefix("sluice_queue_encryption_key_missing{queue=\"")
            && let Some((queue, value)) = rest.split_once("\"}")
            && value.trim().parse::<f64>().is_ok_and(|v| v >= 1.0)
        {
            keys_missing.insert(queue.to_string());
        }
    }
    match seals {
        Some(seals) => AtRest::Known(Sealing {
            seals,
            keys_missing: Some(keys_missing),
        }),
        None => AtRest::Unknown(
            "the server's /metrics does not say whether it encrypts at rest \
             (no sluice_encryption_at_rest): not a sluice server that does"
                .into(),
        ),
    }
}

/// The server-side encryption `attributes` ask for.
fn sse_of(attributes: &BTreeMap<String, String>) -> Sse {
    Sse {
        sqs_managed: attributes
            .get("SqsManagedSseEnabled")
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        kms_key_id: attributes
            .get("KmsMasterKeyId")
            .filter(|v| !v.is_empty())
            .cloned(),
    }
}

fn from_attributes(q: &QueueInfo) -> QueueSnapshot {
    QueueSnapshot {
        name: q.name.clone(),
        arn: q.arn.clone(),
        fifo: q.fifo(),
        retention_secs: q.number("MessageRetentionPeriod"),
        visibility_timeout_secs: q.number("VisibilityTimeout"),
        redrive: q
            .redrive()
            .map(|r| (r.dead_letter_target_arn, r.max_receive_count)),
        routes: (q.routes().into_iter())
            .map(|r| (r.class, r.dead_letter_target_arn))
            .collect(),
        archive_expired: q
            .attributes
            .get(sluice_core::attributes::ARCHIVE_EXPIRED)
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        tags: q.tags.clone(),
        policy: q.attributes.get("Policy").cloned(),
        sse: sse_of(&q.attributes),
        live: None,
    }
}

/// The earliest start of a retention clock among the DLQ's first
/// messages: a standard DLQ keeps the original enqueue time (the sent
/// timestamp), a FIFO DLQ restarts it on the move (rule R3).
async fn first_expiry_start(client: &Client, q: &QueueInfo) -> anyhow::Result<Option<u64>> {
    let mut earliest: Option<u64> = None;
    let mut token: Option<String> = None;
    let mut seen = 0;
    while seen < EXPIRY_SCAN {
        let (page, next) = peek_page(
            client,
            &q.url,
            &MessageFilter::default(),
            100,
            token.as_deref(),
        )
        .await?;
        seen += page.len();
        for m in &page {
            let sent = unsigned(m.sent_timestamp);
            let moved = (m.attributes.get("Sluice.MovedAt")).and_then(|v| v.parse::<u64>().ok());
            let start = if q.fifo() { moved.or(sent) } else { sent };
            if let Some(s) = start {
                earliest = Some(earliest.map_or(s, |e| e.min(s)));
            }
        }
        match next {
            Some(t) => token = Some(t),
            None => break,
        }
    }
    Ok(earliest)
}

/// The server's alarms, or why they cannot be known.
async fn alarms(client: &Client) -> anyhow::Result<Alarms> {
    let out = match client.call(&DescribeAlarmsRequest::default()).await {
        Ok(out) => out,
        Err(e) if e.is_unknown_action() => {
            return Ok(Alarms::Unknown(format!(
                "this server has no alarms (Sluice.DescribeAlarms: {e})"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Alarms::Known(out.alarms.iter().map(alarm_info).collect()))
}

/// The server's push consumers (Sluice.ListConsumers), or why they cannot
/// be known.
async fn consumers(client: &Client) -> anyhow::Result<Consumers> {
    let out = match client.call(&ListConsumersRequest::default()).await {
        Ok(out) => out,
        Err(e) if e.is_unknown_action() => {
            return Ok(Consumers::Unknown(format!(
                "this server has no push consumers (Sluice.ListConsumers: {e})"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Consumers::Known(
        out.consumers.iter().map(consumer_info).collect(),
    ))
}

/// The account's topics and their subscriptions (Sluice.DescribeTopics),
/// or why they cannot be known.
async fn topics(client: &Client) -> anyhow::Result<Topics> {
    let out = match client.call(&DescribeTopicsRequest::default()).await {
        Ok(out) => out,
        Err(e) if e.is_unknown_action() => {
            return Ok(Topics::Unknown(format!(
                "this server has no topics (Sluice.DescribeTopics: {e})"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Topics::Known(
        out.topics
            .iter()
            .map(|t| TopicInfo {
                arn: t.topic_arn.clone().unwrap_or_default(),
                subscriptions: t.subscriptions.iter().map(subscription_info).collect(),
            })
            .collect(),
    ))
}

fn subscription_info(s: &SubscriptionDetail) -> SubscriptionInfo {
    let dead_letter_arn = (s.attributes.get("RedrivePolicy"))
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .and_then(|p| p.get("deadLetterTargetArn")?.as_str().map(str::to_string));
    SubscriptionInfo {
        protocol: s.protocol.clone().unwrap_or_default(),
        endpoint: s.endpoint.clone().unwrap_or_default(),
        pending: s.pending_confirmation.unwrap_or(false),
        filter_policy: s.attributes.get("FilterPolicy").cloned(),
        dead_letter_arn,
        delivered: unsigned(s.delivered_count).unwrap_or(0),
        filtered_out: unsigned(s.filtered_out_count).unwrap_or(0),
    }
}

fn consumer_info(c: &Consumer) -> ConsumerInfo {
    ConsumerInfo {
        name: c.name.clone().unwrap_or_default(),
        queue: c.queue_name.clone().unwrap_or_default(),
        batch_size: unsigned(c.batch_size).unwrap_or(0),
        batching_window_secs: unsigned(c.batching_window_seconds).unwrap_or(0),
        timeout_secs: unsigned(c.timeout_seconds).unwrap_or(0),
        report_batch_item_failures: c.report_batch_item_failures.unwrap_or(false),
        skip_completed: c.skip_completed.clone().filter(|k| !k.is_empty()),
    }
}

fn alarm_info(a: &Alarm) -> AlarmInfo {
    AlarmInfo {
        name: a.alarm_name.clone().unwrap_or_default(),
        queue: (a.queue_name.as_deref())
            .map(|q| name_of(q).to_string())
            .unwrap_or_default(),
        metric: a.metric_name.clone().unwrap_or_default(),
        has_actions: !a.actions.is_empty(),
    }
}

/// The queues declared in a config file, as `sluice serve --config` would
/// create them (same validation, same account and region in ARNs).
pub fn from_config(path: &Path) -> anyhow::Result<Setup> {
    let file = config::load(path)?;
    let mut account = Account::default();
    if let Some(id) = &file.account_id {
        account.id = id.clone();
    }
    if let Some(region) = &file.region {
        account.region = region.clone();
    }
    let mut queues = Vec::new();
    for decl in &file.queues {
        let attributes = decl.attribute_strings();
        let config = QueueConfig::for_create(&decl.name, &attributes)
            .map_err(|e| anyhow::anyhow!("queue {} in {}: {e}", decl.name, path.display()))?;
        queues.push(QueueSnapshot {
            name: decl.name.clone(),
            arn: account.queue_arn(&decl.name),
            fifo: config.fifo,
            retention_secs: u64::from(config.message_retention_period),
            visibility_timeout_secs: u64::from(config.visibility_timeout),
            redrive: config
                .redrive()
                .map(|r| (r.dead_letter_target_arn, r.max_receive_count)),
            routes: (config.routes().unwrap_or_default().0.into_iter())
                .map(|r| (r.class, r.dead_letter_target_arn))
                .collect(),
            archive_expired: config.archive_expired,
            tags: decl.tags.clone(),
            policy: attributes.get("Policy").cloned(),
            // As declared: a server started with the file turns SSE-SQS on
            // by default only when it seals (rule E2).
            sse: sse_of(&attributes),
            live: None,
        });
    }
    let alarms = config_alarms(&file, &queues);
    let consumers = file
        .consumers
        .iter()
        .map(|c| {
            let spec = c.spec();
            ConsumerInfo {
                name: spec.name,
                queue: spec.queue,
                batch_size: u64::from(spec.batch_size),
                batching_window_secs: spec.batching_window.as_secs(),
                timeout_secs: spec.timeout.as_secs(),
                report_batch_item_failures: spec.report_batch_item_failures,
                skip_completed: spec.skip_completed,
            }
        })
        .collect();
    Ok(Setup {
        queues,
        alarms: Alarms::Known(alarms),
        consumers: Consumers::Known(consumers),
        topics: Topics::Unknown("a config file declares no topics: use --endpoint".into()),
        at_rest: config_at_rest(&file),
        now_ms: now_ms(),
    })
}

/// A file with `[encryption] key_file` gives its server a keyring; one
/// without may still get it from `--encryption-key-file` or the
/// environment, which the file does not show.
fn config_at_rest(file: &config::FileConfig) -> AtRest {
    if file.encryption_key_file().is_some() {
        return AtRest::Known(Sealing {
            seals: true,
            keys_missing: None,
        });
    }
    AtRest::Unknown(
        "the config file has no [encryption] key_file, and a server may get its keyring from \
         --encryption-key-file or SLUICE_ENCRYPTION_KEY instead: use --endpoint"
            .into(),
    )
}

/// The alarms a server started with this file would have: its `[[alarms]]`
/// and, with `[dlq_alarms]`, `dlq-depth:<queue>` on every queue some
/// RedrivePolicy targets. Alarms made later through the API are not in the
/// file: only `--endpoint` sees them.
fn config_alarms(file: &config::FileConfig, queues: &[QueueSnapshot]) -> Vec<AlarmInfo> {
    let mut alarms: Vec<AlarmInfo> = file
        .alarms
        .iter()
        .map(|a| AlarmInfo {
            name: a.name.clone(),
            queue: a.queue.clone(),
            metric: a.metric.clone(),
            has_actions: !a.actions.is_empty(),
        })
        .collect();
    if let Some(dlq) = file.dlq_alarms.as_ref().filter(|d| d.enabled) {
        for q in queues {
            let is_dlq = queues
                .iter()
                .any(|s| s.redrive.as_ref().is_some_and(|(arn, _)| *arn == q.arn));
            if is_dlq {
                alarms.push(AlarmInfo {
                    name: format!("dlq-depth:{}", q.name),
                    queue: q.name.clone(),
                    metric: "ApproximateNumberOfMessagesVisible".into(),
                    has_actions: !dlq.actions.is_empty(),
                });
            }
        }
    }
    alarms
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encryption facts `doctor` reads from `/metrics`: whether the
    /// server seals, and the queues whose key is missing; an exposition
    /// without them says nothing.
    #[test]
    fn x5_at_rest_is_read_from_the_metrics() {
        let text = "# TYPE sluice_encryption_at_rest gauge\n\
            sluice_encryption_at_rest 1\n\
            sluice_queue_encryption_key{queue=\"a\",key=\"k0\"} 1\n\
            sluice_queue_encryption_key_missing{queue=\"a\"} 0\n\
            sluice_queue_encryption_key_missing{queue=\"orphan\"} 1\n\
            # EOF\n";
        let AtRest::Known(s) = at_rest_in(text) else {
            panic!("known");
        };
        assert!(s.seals);
        assert_eq!(
            s.keys_missing.unwrap().into_iter().collect::<Vec<_>>(),
            ["orphan"]
        );
        let AtRest::Known(s) = at_rest_in("sluice_encryption_at_rest 0\n") else {
            panic!("known");
        };
        assert!(!s.seals);
        assert!(matches!(
            at_rest_in("sluice_requests_total{action=\"x\"} 1\n"),
            AtRest::Unknown(_)
        ));
    }

    #[test]
    fn sse_is_read_from_the_attributes() {
        let attrs = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(!sse_of(&attrs(&[("SqsManagedSseEnabled", "false")])).asked());
        assert!(sse_of(&attrs(&[("SqsManagedSseEnabled", "true")])).sqs_managed);
        let kms = sse_of(&attrs(&[("KmsMasterKeyId", "alias/aws/sqs")]));
        assert_eq!(kms.kms_key_id.as_deref(), Some("alias/aws/sqs"));
        assert!(!sse_of(&attrs(&[("KmsMasterKeyId", "")])).asked());
    }
}
