//! The checks of `sluice doctor` (rule X5): the pitfalls of the seed
//! documents as pure functions over a snapshot of the queues. Each finding
//! says what is wrong, why (with the arithmetic where there is some) and
//! the fix. docs/doctor.md lists them.

use sluice_core::limits::{MAX_INFLIGHT, MAX_RETENTION};

use super::report::{Report, Severity};
use super::setup::{AlarmInfo, Alarms, QueueSnapshot, Setup};
use crate::table::{duration, signed_duration};
use crate::timefmt::rfc3339;

mod consumers;
mod encryption;
mod subscriptions;

/// The queue tag that declares how long a consumer may take on one message,
/// in seconds (e.g. a Lambda function's timeout).
pub const CONSUMER_TIMEOUT_TAG: &str = "sluice:consumer-timeout-seconds";

/// Seconds in a day: DLQ messages closer than this to expiry are reported.
const DAY: u64 = 86_400;

/// Runs every check.
pub fn check(setup: &Setup) -> Report {
    let mut report = Report::default();
    let live = setup.queues.iter().any(|q| q.live.is_some());
    missing_dlq(setup, &mut report);
    dlq_retention(setup, &mut report);
    max_receive_count(setup, &mut report);
    redrive_policy(setup, &mut report);
    visibility_timeout(setup, &mut report);
    fifo_ordering(setup, &mut report);
    dlq_alarm(setup, &mut report);
    consumers::check(setup, &mut report);
    subscriptions::check(setup, &mut report);
    encryption::check(setup, &mut report);
    if live {
        dlq_expiring(setup, &mut report);
        inflight_limit(setup, &mut report);
    } else {
        let why = "needs a running server (--endpoint), not a config file";
        report.skip("dlq-expiring", why);
        report.skip("inflight-limit", why);
    }
    report
        .findings
        .sort_by(|a, b| b.severity.cmp(&a.severity).then(a.queue.cmp(&b.queue)));
    report
}

/// The queues some queue's RedrivePolicy or failure-class route targets
/// (present in the setup).
fn is_dlq(setup: &Setup, q: &QueueSnapshot) -> bool {
    setup
        .queues
        .iter()
        .any(|s| s.dead_letter_targets().contains(&q.arn.as_str()))
}

fn find<'a>(setup: &'a Setup, arn: &str) -> Option<&'a QueueSnapshot> {
    setup.queues.iter().find(|q| q.arn == arn)
}

/// `dlq-missing`: a RedrivePolicy or a failure class's route names a
/// queue that does not exist.
fn missing_dlq(setup: &Setup, report: &mut Report) {
    for q in &setup.queues {
        for (class, arn) in &q.routes {
            if find(setup, arn).is_none() {
                report.add(
                    "dlq-missing",
                    Severity::Critical,
                    &q.name,
                    format!(
                        "its SluiceDeadLetterRoutes sends failures of class {class} to {arn}, \
                         which does not exist: their nacks are refused and the messages stay"
                    ),
                    format!(
                        "create the queue {}, or route {class} to an existing DLQ",
                        tail(arn)
                    ),
                );
            }
        }
        if let Some((arn, n)) = &q.redrive
            && find(setup, arn).is_none()
        {
            report.add(
                "dlq-missing",
                Severity::Critical,
                &q.name,
                format!(
                    "its RedrivePolicy names {arn}, which does not exist: a message received \
                     {n} times has no dead-letter queue to go to"
                ),
                format!(
                    "create the queue {}, or point the RedrivePolicy at an existing DLQ",
                    tail(arn)
                ),
            );
        }
    }
}

/// `dlq-retention` (seed 001 trap 1, seed 003; rule R3): a standard DLQ
/// keeps a message's original enqueue time, so a message that reaches it
/// aged up to the source's retention may stay only DLQ retention − age;
/// a DLQ that archives what expires (rule X8) loses nothing to that.
fn dlq_retention(setup: &Setup, report: &mut Report) {
    let pairs = setup.queues.iter().flat_map(|src| {
        (src.dead_letter_targets().into_iter())
            .filter_map(move |arn| Some((src, find(setup, arn)?)))
    });
    for (src, dlq) in pairs {
        if dlq.retention_secs > src.retention_secs || dlq.archive_expired {
            continue;
        }
        let left = dlq.retention_secs as i64 - src.retention_secs as i64;
        let fix = if src.retention_secs >= u64::from(MAX_RETENTION) {
            format!(
                "{} already keeps messages the longest SQS allows (14d): lower its \
                 MessageRetentionPeriod so the DLQ can keep them longer, or let {} archive what \
                 expires (SluiceArchiveExpired=true on a server with --archive-dir)",
                src.name, dlq.name
            )
        } else {
            format!(
                "set MessageRetentionPeriod of {} above the {} s of {}; the longest, {MAX_RETENTION} \
                 (14d), gives the most time to investigate; or let it archive what expires \
                 (SluiceArchiveExpired=true on a server with --archive-dir)",
                dlq.name, src.retention_secs, src.name
            )
        };
        if src.fifo {
            report.add(
                "dlq-retention",
                Severity::Info,
                &dlq.name,
                format!(
                    "keeps messages {} while its source {} keeps them {}; a FIFO DLQ restarts the \
                     retention clock on the move (R3), so a dead-lettered message still gets {}, \
                     but no longer than the source would have kept it",
                    duration(dlq.retention_secs),
                    src.name,
                    duration(src.retention_secs),
                    duration(dlq.retention_secs)
                ),
                fix,
            );
            continue;
        }
        report.add(
            "dlq-retention",
            if left < 0 {
                Severity::Critical
            } else {
                Severity::Warning
            },
            &dlq.name,
            format!(
                "keeps messages {} but its source {} keeps them {}: a standard DLQ keeps the \
                 original enqueue time (R3), so a message that reaches it aged up to {} may stay \
                 only {} − {} = {} before it expires",
                duration(dlq.retention_secs),
                src.name,
                duration(src.retention_secs),
                duration(src.retention_secs),
                duration(dlq.retention_secs),
                duration(src.retention_secs),
                signed_duration(left)
            ),
            fix,
        );
    }
}

/// `max-receive-count` (seed 000, seed 001 "Cuándo NO usarlo").
fn max_receive_count(setup: &Setup, report: &mut Report) {
    for q in &setup.queues {
        let Some((_, n)) = &q.redrive else { continue };
        if *n == 1 {
            report.add(
                "max-receive-count",
                Severity::Warning,
                &q.name,
                "maxReceiveCount is 1: one transient failure (a timeout of the service next door) \
                 dead-letters a message that a second attempt would have processed"
                    .into(),
                "set maxReceiveCount to 3–5 in the RedrivePolicy; fail deterministic errors at once \
                 with Sluice.NackMessage Permanent=true instead"
                    .into(),
            );
        } else if *n > 10 {
            report.add(
                "max-receive-count",
                Severity::Warning,
                &q.name,
                format!(
                    "maxReceiveCount is {n}: a broken message circulates {n} times in the queue, \
                     costing receives and firing error alarms again and again, before it is set aside"
                ),
                "set maxReceiveCount to 3–5 in the RedrivePolicy".into(),
            );
        }
    }
}

/// `redrive-policy` (seed 001 "Cuándo usarlo: siempre"; seed 003).
fn redrive_policy(setup: &Setup, report: &mut Report) {
    for q in &setup.queues {
        if q.redrive.is_some() || is_dlq(setup, q) {
            continue;
        }
        report.add(
            "redrive-policy",
            Severity::Warning,
            &q.name,
            format!(
                "no RedrivePolicy: a poison message is retried until its retention ends ({}), \
                 costing a receive every visibility timeout, and then disappears without a trace",
                duration(q.retention_secs)
            ),
            format!(
                "create a DLQ (say {}-dlq, retention 14d) and set RedrivePolicy \
                 {{\"deadLetterTargetArn\":\"<its ARN>\",\"maxReceiveCount\":5}}",
                q.name.trim_end_matches(".fifo")
            ),
        );
    }
}

/// `visibility-timeout` (seed 000, seed 003): at least 6× the consumer's
/// timeout, declared in the `sluice:consumer-timeout-seconds` tag.
fn visibility_timeout(setup: &Setup, report: &mut Report) {
    for q in &setup.queues {
        let Some(raw) = q.tags.get(CONSUMER_TIMEOUT_TAG) else {
            continue;
        };
        let Some(consumer) = crate::timefmt::parse_duration_secs(raw).filter(|&s| s > 0) else {
            report.add(
                "visibility-timeout",
                Severity::Info,
                &q.name,
                format!(
                    "tag {CONSUMER_TIMEOUT_TAG}={raw:?} is not a number of seconds: not checked"
                ),
                format!("set {CONSUMER_TIMEOUT_TAG} to the consumer's timeout in seconds, e.g. 30"),
            );
            continue;
        };
        let wanted = consumer * 6;
        if q.visibility_timeout_secs >= wanted {
            continue;
        }
        let severity = if q.visibility_timeout_secs < consumer {
            Severity::Critical
        } else {
            Severity::Warning
        };
        report.add(
            "visibility-timeout",
            severity,
            &q.name,
            format!(
                "VisibilityTimeout is {} s but the consumer may take {consumer} s (tag \
                 {CONSUMER_TIMEOUT_TAG}); under 6 × {consumer} = {wanted} s a message can reappear \
                 while it is still being processed: a second consumer processes it too and its \
                 receive count rises without a failure",
                q.visibility_timeout_secs
            ),
            format!("set VisibilityTimeout to at least {wanted}"),
        );
    }
}

/// `fifo-ordering` (rule F5; seed 001 "Cuándo NO usarlo").
fn fifo_ordering(setup: &Setup, report: &mut Report) {
    for q in &setup.queues {
        if !q.fifo || q.redrive.is_none() {
            continue;
        }
        report.add(
            "fifo-ordering",
            Severity::Info,
            &q.name,
            "a FIFO queue with a DLQ: a message moved to the DLQ unblocks its group, and the \
             messages behind it are then processed before it, out of order"
                .into(),
            "keep the DLQ if unblocking the group matters more than order; if strict order is \
             the requirement, remove the RedrivePolicy and handle poison messages in the consumer \
             (a redrive puts the message at the back of its group)"
                .into(),
        );
    }
}

/// `dlq-alarm` (rule M2; seed 000, seed 001: a DLQ nobody watches).
fn dlq_alarm(setup: &Setup, report: &mut Report) {
    let alarms = match &setup.alarms {
        Alarms::Unknown(why) => {
            report.skip("dlq-alarm", why);
            return;
        }
        Alarms::Known(alarms) => alarms,
    };
    for q in setup.queues.iter().filter(|q| is_dlq(setup, q)) {
        let on_queue: Vec<&AlarmInfo> = alarms.iter().filter(|a| a.queue == q.name).collect();
        let depth: Vec<&&AlarmInfo> = on_queue
            .iter()
            .filter(|a| a.metric == "ApproximateNumberOfMessagesVisible")
            .collect();
        let fix = format!(
            "add an alarm on {}'s ApproximateNumberOfMessagesVisible >= 1 (Sluice.PutAlarm) \
             with an action that reaches a person",
            q.name
        );
        if depth.is_empty() {
            let problem = if on_queue.is_empty() {
                "a DLQ without an alarm: messages pile up and expire and nobody hears of it \
                 (a DLQ nobody watches gives a false sense of safety)"
                    .to_string()
            } else {
                format!(
                    "alarms on this DLQ ({}) but none on its depth \
                     (ApproximateNumberOfMessagesVisible): any message here needs a person",
                    on_queue
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            report.add("dlq-alarm", Severity::Warning, &q.name, problem, fix);
        } else if depth.iter().all(|a| !a.has_actions) {
            report.add(
                "dlq-alarm",
                Severity::Info,
                &q.name,
                format!(
                    "the depth alarm {} has no actions: it changes state but tells nobody",
                    depth[0].name
                ),
                "add an action (webhook) to the alarm that reaches the on-call channel".into(),
            );
        }
    }
}

/// `dlq-expiring` (seed 001 trap 1): the DLQ message that expires first
/// does so within a day, and is then gone (a DLQ that archives what
/// expires, rule X8, keeps it).
fn dlq_expiring(setup: &Setup, report: &mut Report) {
    for q in (setup.queues.iter()).filter(|q| is_dlq(setup, q) && !q.archive_expired) {
        let Some(start) = q.live.as_ref().and_then(|l| l.first_expiry_start_ms) else {
            continue;
        };
        let expires = start + q.retention_secs * 1000;
        let left_ms = expires as i64 - setup.now_ms as i64;
        if left_ms >= (DAY * 1000) as i64 {
            continue;
        }
        let severity = if left_ms < 3_600_000 {
            Severity::Critical
        } else {
            Severity::Warning
        };
        report.add(
            "dlq-expiring",
            severity,
            &q.name,
            format!(
                "a message expires in {} (retention clock started {}, retention {}, expiry {}): \
                 once expired it is gone, with the evidence of the failure",
                signed_duration(left_ms / 1000),
                rfc3339(start),
                duration(q.retention_secs),
                rfc3339(expires)
            ),
            format!(
                "look now: `sluice dlq peek {n}`; keep a copy: `sluice dlq export {n} --out {n}.jsonl`; \
                 redrive once fixed: `sluice dlq redrive {n}`; and raise its retention",
                n = q.name
            ),
        );
    }
}

/// `inflight-limit` (seed 003; limits.rs): receives fail with OverLimit
/// at 120,000 messages in flight.
fn inflight_limit(setup: &Setup, report: &mut Report) {
    let limit = MAX_INFLIGHT as u64;
    for q in &setup.queues {
        let Some(live) = &q.live else { continue };
        let share = live.in_flight as f64 / limit as f64;
        if share < 0.75 {
            continue;
        }
        report.add(
            "inflight-limit",
            if share >= 0.9 {
                Severity::Critical
            } else {
                Severity::Warning
            },
            &q.name,
            format!(
                "{} messages in flight, {:.0}% of the {limit} limit: at the limit receives fail \
                 with OverLimit",
                live.in_flight,
                share * 100.0
            ),
            "make consumers delete what they processed (DeleteMessageBatch), shorten the \
             VisibilityTimeout of abandoned receives, or spread the load over more queues"
                .into(),
        );
    }
}

fn tail(arn: &str) -> &str {
    arn.rsplit(':').next().unwrap_or(arn)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::doctor::setup::{
        AtRest, ConsumerInfo, Consumers, LiveState, Sealing, Sse, SubscriptionInfo, TopicInfo,
        Topics,
    };

    const NOW: u64 = 1_767_225_600_000;

    fn arn(name: &str) -> String {
        format!("arn:aws:sqs:us-east-1:000000000000:{name}")
    }

    fn queue(name: &str) -> QueueSnapshot {
        QueueSnapshot {
            name: name.into(),
            arn: arn(name),
            fifo: name.ends_with(".fifo"),
            retention_secs: 345_600,
            visibility_timeout_secs: 180,
            redrive: None,
            routes: Vec::new(),
            archive_expired: false,
            tags: BTreeMap::new(),
            policy: None,
            sse: Sse::default(),
            live: Some(LiveState::default()),
        }
    }

    /// The seeds' recommended setup: source 4d, DLQ 14d, maxReceiveCount 5,
    /// visibility 6× the consumer's 30 s, an alarm with an action on the DLQ.
    fn clean() -> Setup {
        let mut src = queue("orders");
        src.redrive = Some((arn("orders-dlq"), 5));
        src.tags.insert(CONSUMER_TIMEOUT_TAG.into(), "30".into());
        let mut dlq = queue("orders-dlq");
        dlq.retention_secs = 1_209_600;
        dlq.live = Some(LiveState {
            in_flight: 0,
            first_expiry_start_ms: Some(NOW - 3_600_000),
        });
        Setup {
            queues: vec![src, dlq],
            alarms: Alarms::Known(vec![AlarmInfo {
                name: "orders-dlq-not-empty".into(),
                queue: "orders-dlq".into(),
                metric: "ApproximateNumberOfMessagesVisible".into(),
                has_actions: true,
            }]),
            consumers: Consumers::Known(Vec::new()),
            topics: Topics::Known(Vec::new()),
            at_rest: AtRest::Known(Sealing {
                seals: false,
                keys_missing: Some(Default::default()),
            }),
            now_ms: NOW,
        }
    }

    /// C8: the consumers' pitfalls, and none in the seeds' setup.
    #[test]
    fn c8_consumer_pitfalls() {
        let mut s = clean();
        let worker = ConsumerInfo {
            name: "orders-worker".into(),
            queue: "orders".into(),
            batch_size: 10,
            batching_window_secs: 0,
            timeout_secs: 30,
            report_batch_item_failures: true,
            skip_completed: Some("message_id".into()),
        };
        s.consumers = Consumers::Known(vec![worker.clone()]);
        assert!(checks(&s).is_empty(), "the seeds' setup with a consumer");
        let mut unrecorded = worker.clone();
        unrecorded.skip_completed = None;
        s.consumers = Consumers::Known(vec![unrecorded]);
        assert_eq!(
            checks(&s),
            [("consumer-idempotency", Severity::Info, "orders".to_string())],
            "replays may repeat work"
        );
        let mut list = vec![worker];
        list[0].report_batch_item_failures = false;
        list[0].timeout_secs = 40;
        list.push(ConsumerInfo {
            name: "dlq-reader".into(),
            queue: "orders-dlq".into(),
            batch_size: 1,
            timeout_secs: 1000,
            ..ConsumerInfo::default()
        });
        s.consumers = Consumers::Known(list);
        let found = checks(&s);
        for (check, severity, queue) in [
            ("consumer-visibility", Severity::Warning, "orders"),
            ("consumer-batch-failures", Severity::Warning, "orders"),
            ("consumer-visibility", Severity::Critical, "orders-dlq"),
            ("consumer-dlq", Severity::Warning, "orders-dlq"),
        ] {
            assert!(
                found.contains(&(check, severity, queue.to_string())),
                "{check} {queue}: {found:?}"
            );
        }
        assert_eq!(found.len(), 4, "{found:?}");
        s.consumers = Consumers::Unknown("old server".into());
        assert_eq!(check(&s).skipped.len(), 4);
    }

    fn checks(setup: &Setup) -> Vec<(&'static str, Severity, String)> {
        check(setup)
            .findings
            .into_iter()
            .map(|f| (f.check, f.severity, f.queue))
            .collect()
    }

    /// N5, N6, N8: the topics' pitfalls, each found once, and none in the
    /// seeds' setup fed by a topic whose subscription has all it needs.
    #[test]
    fn n5_topic_pitfalls() {
        let topic = "arn:aws:sns:us-east-1:000000000000:events";
        let mut s = clean();
        s.queues.push(queue("events-undelivered"));
        s.queues[0].policy = Some(
            serde_json::json!({"Statement": [{"Effect": "Allow",
                "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage",
                "Condition": {"ArnEquals": {"aws:SourceArn": topic}}}]})
            .to_string(),
        );
        let good = SubscriptionInfo {
            protocol: "sqs".into(),
            endpoint: arn("orders"),
            dead_letter_arn: Some(arn("events-undelivered")),
            delivered: 3,
            ..SubscriptionInfo::default()
        };
        s.topics = Topics::Known(vec![TopicInfo {
            arn: topic.into(),
            subscriptions: vec![good.clone()],
        }]);
        let found = checks(&s);
        assert!(
            found
                .iter()
                .all(|(c, _, _)| !c.starts_with("subscription-")),
            "{found:?}"
        );

        let mut unpoliced = queue("audit");
        unpoliced.redrive = Some((arn("orders-dlq"), 5));
        s.queues.push(unpoliced);
        let subscriptions = vec![
            good,
            // No policy on its queue, no DLQ of its own.
            SubscriptionInfo {
                protocol: "sqs".into(),
                endpoint: arn("audit"),
                ..SubscriptionInfo::default()
            },
            // Never confirmed, and its DLQ is the consumers' DLQ.
            SubscriptionInfo {
                protocol: "https".into(),
                endpoint: "https://hooks.example.com/sns".into(),
                pending: true,
                dead_letter_arn: Some(arn("orders-dlq")),
                ..SubscriptionInfo::default()
            },
            // A filter that let nothing through.
            SubscriptionInfo {
                protocol: "https".into(),
                endpoint: "https://billing.example.com/sns".into(),
                filter_policy: Some(r#"{"kind":["refund"]}"#.into()),
                dead_letter_arn: Some(arn("events-undelivered")),
                filtered_out: 12,
                ..SubscriptionInfo::default()
            },
        ];
        s.topics = Topics::Known(vec![TopicInfo {
            arn: topic.into(),
            subscriptions,
        }]);
        let mut found: Vec<_> = checks(&s)
            .into_iter()
            .filter(|(c, _, _)| c.starts_with("subscription-"))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("subscription-dlq", Severity::Warning, "audit".to_string()),
                (
                    "subscription-dlq-mistaken",
                    Severity::Info,
                    "orders-dlq".to_string()
                ),
                (
                    "subscription-filter",
                    Severity::Warning,
                    "https://billing.example.com/sns".to_string()
                ),
                (
                    "subscription-queue-policy",
                    Severity::Warning,
                    "audit".to_string()
                ),
                (
                    "subscription-unconfirmed",
                    Severity::Warning,
                    "https://hooks.example.com/sns".to_string()
                ),
            ]
        );

        // A subscription DLQ on a queue without a RedrivePolicy of its own.
        let mut s = clean();
        s.queues[0].redrive = None;
        s.queues[0].policy =
            Some(r#"{"Statement":{"Effect":"Allow","Principal":"*","Action":"*"}}"#.into());
        s.topics = Topics::Known(vec![TopicInfo {
            arn: topic.into(),
            subscriptions: vec![SubscriptionInfo {
                protocol: "sqs".into(),
                endpoint: arn("orders"),
                dead_letter_arn: Some(arn("orders-dlq")),
                ..SubscriptionInfo::default()
            }],
        }]);
        assert!(
            checks(&s).contains(&(
                "subscription-dlq-mistaken",
                Severity::Warning,
                "orders".to_string()
            )),
            "{:?}",
            checks(&s)
        );
    }

    fn sse_checks(setup: &Setup) -> Vec<(&'static str, Severity, String)> {
        checks(setup)
            .into_iter()
            .filter(|(c, _, _)| c.starts_with("sse-"))
            .collect()
    }

    fn sealing(seals: bool, missing: Option<&[&str]>) -> AtRest {
        AtRest::Known(Sealing {
            seals,
            keys_missing: missing.map(|m| m.iter().map(|q| q.to_string()).collect()),
        })
    }

    /// X5: queues whose attributes ask for encryption on a server that
    /// does not seal are flagged, and only they; on a server that seals,
    /// only a queue whose key the keyring lacks is; without the server's
    /// side the checks are skipped, but only when a queue asks.
    #[test]
    fn x5_sse_unsealed_and_key_missing() {
        let mut s = clean();
        let skipped =
            |s: &Setup| -> Vec<&'static str> { check(s).skipped.iter().map(|k| k.check).collect() };
        s.at_rest = AtRest::Unknown("no metrics".into());
        assert!(skipped(&s).is_empty(), "no queue asks: nothing to skip");
        s.queues[0].sse.sqs_managed = true;
        let mut payments = queue("payments");
        payments.redrive = Some((arn("orders-dlq"), 5));
        payments.sse.kms_key_id = Some("alias/payments".into());
        s.queues.push(payments);
        s.queues.push(queue("clear"));
        s.queues[3].redrive = Some((arn("orders-dlq"), 5));
        assert_eq!(skipped(&s), ["sse-unsealed", "sse-key-missing"]);
        assert!(sse_checks(&s).is_empty());

        s.at_rest = sealing(false, Some(&[]));
        assert_eq!(
            checks(&s),
            [
                ("sse-unsealed", Severity::Warning, "orders".to_string()),
                ("sse-unsealed", Severity::Warning, "payments".to_string()),
            ]
        );
        let f = &check(&s).findings[1];
        assert!(
            f.problem.contains("KmsMasterKeyId alias/payments"),
            "{}",
            f.problem
        );
        assert!(f.fix.contains("--encryption-key-file"), "{}", f.fix);

        s.at_rest = sealing(true, Some(&[]));
        assert!(checks(&s).is_empty(), "{:?}", checks(&s));
        s.at_rest = sealing(true, Some(&["payments", "clear"]));
        assert_eq!(
            checks(&s),
            [(
                "sse-key-missing",
                Severity::Critical,
                "payments".to_string()
            )],
            "a queue that asks for no encryption needs no key"
        );
        // A config file with a keyring: the keys are the server's to know.
        s.at_rest = sealing(true, None);
        assert!(checks(&s).is_empty());
        assert_eq!(skipped(&s), ["sse-key-missing"]);
    }

    /// X5: a queue encrypted with alias/aws/sqs that SNS, EventBridge or
    /// S3 deliver to (its Policy allows their service principal, or it is
    /// subscribed to a topic) is flagged; the same queue with a key of its
    /// own, with SSE-SQS, or with no such sender is not.
    #[test]
    fn x5_sse_aws_managed_key_with_delivering_services() {
        let topic = "arn:aws:sns:us-east-1:000000000000:events";
        let events_policy = serde_json::json!({"Statement": [{"Effect": "Allow",
            "Principal": {"Service": "events.amazonaws.com"}, "Action": "sqs:SendMessage"}]})
        .to_string();
        let mut s = clean();
        s.at_rest = sealing(true, Some(&[]));
        s.queues[0].sse.kms_key_id = Some("alias/aws/sqs".into());
        assert!(sse_checks(&s).is_empty(), "no service delivers to it");

        s.queues[0].policy = Some(events_policy.clone());
        let found = check(&s);
        let f = found
            .findings
            .iter()
            .find(|f| f.check == "sse-aws-managed-key")
            .expect("flagged");
        assert_eq!(
            (f.severity, f.queue.as_str()),
            (Severity::Warning, "orders")
        );
        assert!(f.problem.contains("EventBridge"), "{}", f.problem);
        assert!(f.fix.contains("events.amazonaws.com"), "{}", f.fix);
        assert!(f.fix.contains("customer managed key"), "{}", f.fix);

        // Through a subscription, with no policy naming SNS.
        let mut audit = queue("audit");
        audit.redrive = Some((arn("orders-dlq"), 5));
        audit.sse.kms_key_id = Some("arn:aws:kms:us-east-1:000000000000:alias/aws/sqs".into());
        s.queues.push(audit);
        s.topics = Topics::Known(vec![TopicInfo {
            arn: topic.into(),
            subscriptions: vec![SubscriptionInfo {
                protocol: "sqs".into(),
                endpoint: arn("audit"),
                ..SubscriptionInfo::default()
            }],
        }]);
        assert_eq!(
            sse_checks(&s),
            [
                (
                    "sse-aws-managed-key",
                    Severity::Warning,
                    "audit".to_string()
                ),
                (
                    "sse-aws-managed-key",
                    Severity::Warning,
                    "orders".to_string()
                ),
            ]
        );
        let audit = check(&s)
            .findings
            .into_iter()
            .find(|f| f.check == "sse-aws-managed-key" && f.queue == "audit")
            .unwrap();
        assert!(audit.problem.contains(topic), "{}", audit.problem);
        assert!(audit.fix.contains("sns.amazonaws.com"), "{}", audit.fix);

        // A key of their own, or SSE-SQS: nothing to say.
        s.queues[0].sse.kms_key_id = Some("alias/orders-key".into());
        s.queues[2].sse = Sse {
            sqs_managed: true,
            kms_key_id: None,
        };
        assert!(sse_checks(&s).is_empty(), "{:?}", sse_checks(&s));
    }

    #[test]
    fn x5_a_clean_setup_has_no_findings() {
        let report = check(&clean());
        assert_eq!(report.findings, vec![]);
        assert!(report.skipped.is_empty());
        assert_eq!(report.worst(), None);
    }

    #[test]
    fn x5_dlq_retention_equal_to_the_source_leaves_no_time() {
        let mut s = clean();
        s.queues[1].retention_secs = 345_600;
        let report = check(&s);
        assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
        let f = &report.findings[0];
        assert_eq!(
            (f.check, f.severity, f.queue.as_str()),
            ("dlq-retention", Severity::Warning, "orders-dlq")
        );
        assert!(f.problem.contains("4d − 4d = 0s"), "{}", f.problem);
        assert!(f.fix.contains("1209600"), "{}", f.fix);
    }

    #[test]
    fn x5_dlq_retention_shorter_than_the_source_is_critical_with_the_arithmetic() {
        let mut s = clean();
        s.queues[1].retention_secs = 86_400;
        let f = &check(&s).findings[0];
        assert_eq!((f.check, f.severity), ("dlq-retention", Severity::Critical));
        assert!(f.problem.contains("1d − 4d = -3d"), "{}", f.problem);
    }

    #[test]
    fn x8_a_dlq_that_archives_what_expires_loses_nothing_to_retention() {
        let mut s = clean();
        s.queues[1].retention_secs = 86_400;
        s.queues[1].archive_expired = true;
        let found = check(&s);
        assert!(
            !found.findings.iter().any(|f| f.check == "dlq-retention"),
            "{:?}",
            found.findings
        );
        s.queues[1].archive_expired = false;
        let f = &check(&s).findings[0];
        assert!(f.fix.contains("SluiceArchiveExpired"), "{}", f.fix);
    }

    #[test]
    fn x5_fifo_dlq_retention_is_only_info_since_fifo_restarts_the_clock() {
        let mut s = clean();
        s.queues[0].name = "orders.fifo".into();
        s.queues[0].fifo = true;
        s.queues[1].retention_secs = 345_600;
        let found = checks(&s);
        assert!(
            found.contains(&("dlq-retention", Severity::Info, "orders-dlq".into())),
            "{found:?}"
        );
    }

    #[test]
    fn x5_max_receive_count_of_one_or_above_ten() {
        for (n, expect) in [(1, true), (2, false), (10, false), (11, true), (1000, true)] {
            let mut s = clean();
            s.queues[0].redrive = Some((arn("orders-dlq"), n));
            let found = checks(&s);
            assert_eq!(
                found == vec![("max-receive-count", Severity::Warning, "orders".into())],
                expect,
                "maxReceiveCount {n}: {found:?}"
            );
        }
    }

    #[test]
    fn x5_a_dlq_without_a_depth_alarm() {
        let mut s = clean();
        s.alarms = Alarms::Known(vec![]);
        assert_eq!(
            checks(&s),
            vec![("dlq-alarm", Severity::Warning, "orders-dlq".into())]
        );
        s.alarms = Alarms::Known(vec![AlarmInfo {
            name: "old".into(),
            queue: "orders-dlq".into(),
            metric: "ApproximateAgeOfOldestMessage".into(),
            has_actions: true,
        }]);
        assert_eq!(
            checks(&s),
            vec![("dlq-alarm", Severity::Warning, "orders-dlq".into())]
        );
        s.alarms = Alarms::Known(vec![AlarmInfo {
            name: "silent".into(),
            queue: "orders-dlq".into(),
            metric: "ApproximateNumberOfMessagesVisible".into(),
            has_actions: false,
        }]);
        assert_eq!(
            checks(&s),
            vec![("dlq-alarm", Severity::Info, "orders-dlq".into())]
        );
    }

    #[test]
    fn x5_alarms_unknown_skip_the_alarm_check() {
        let mut s = clean();
        s.alarms = Alarms::Unknown("the server has no Sluice.DescribeAlarms".into());
        let report = check(&s);
        assert!(report.findings.is_empty());
        assert_eq!(report.skipped[0].check, "dlq-alarm");
    }

    #[test]
    fn x5_a_queue_without_redrive_policy_but_not_its_dlq() {
        let mut s = clean();
        s.queues.push(queue("emails"));
        assert_eq!(
            checks(&s),
            vec![("redrive-policy", Severity::Warning, "emails".into())]
        );
    }

    #[test]
    fn x5_visibility_timeout_under_six_times_the_consumer_timeout() {
        let mut s = clean();
        s.queues[0].visibility_timeout_secs = 179;
        assert_eq!(
            checks(&s),
            vec![("visibility-timeout", Severity::Warning, "orders".into())]
        );
        s.queues[0].visibility_timeout_secs = 20;
        let report = check(&s);
        assert_eq!(report.findings[0].severity, Severity::Critical);
        assert!(report.findings[0].fix.contains("180"));
        s.queues[0]
            .tags
            .insert(CONSUMER_TIMEOUT_TAG.into(), "soon".into());
        assert_eq!(
            checks(&s),
            vec![("visibility-timeout", Severity::Info, "orders".into())]
        );
    }

    #[test]
    fn f5_a_fifo_queue_with_a_dlq_loses_order() {
        let mut s = clean();
        s.queues[0].name = "orders.fifo".into();
        s.queues[0].fifo = true;
        assert_eq!(
            checks(&s),
            vec![("fifo-ordering", Severity::Info, "orders.fifo".into())]
        );
    }

    #[test]
    fn x5_dlq_messages_expiring_within_a_day() {
        let mut s = clean();
        // Sent 13.5 days ago into a 14-day DLQ: 12 h left.
        s.queues[1].live.as_mut().unwrap().first_expiry_start_ms =
            Some(NOW - (1_209_600 - 43_200) * 1000);
        let report = check(&s);
        assert_eq!(report.findings.len(), 1);
        let f = &report.findings[0];
        assert_eq!((f.check, f.severity), ("dlq-expiring", Severity::Warning));
        assert!(f.problem.contains("expires in 12h"), "{}", f.problem);
        s.queues[1].live.as_mut().unwrap().first_expiry_start_ms =
            Some(NOW - (1_209_600 - 60) * 1000);
        assert_eq!(check(&s).findings[0].severity, Severity::Critical);
        // Rule X8: archived when it expires, so nothing is about to be lost.
        s.queues[1].archive_expired = true;
        assert!(check(&s).findings.is_empty());
    }

    #[test]
    fn x5_messages_near_the_in_flight_limit() {
        let mut s = clean();
        s.queues[0].live.as_mut().unwrap().in_flight = 89_999;
        assert!(checks(&s).is_empty());
        s.queues[0].live.as_mut().unwrap().in_flight = 90_000;
        assert_eq!(
            checks(&s),
            vec![("inflight-limit", Severity::Warning, "orders".into())]
        );
        s.queues[0].live.as_mut().unwrap().in_flight = 119_000;
        assert_eq!(
            checks(&s),
            vec![("inflight-limit", Severity::Critical, "orders".into())]
        );
    }

    #[test]
    fn x5_a_redrive_policy_to_a_missing_queue() {
        let mut s = clean();
        s.queues[0].redrive = Some((arn("gone"), 5));
        s.queues.retain(|q| q.name != "orders-dlq");
        assert_eq!(
            checks(&s),
            vec![("dlq-missing", Severity::Critical, "orders".into())]
        );
    }

    /// X5, X7: a failure class's DLQ is a DLQ to every check: it needs a
    /// depth alarm, a retention longer than its source's, and to exist.
    #[test]
    fn x7_a_class_dlq_is_checked_like_any_dlq() {
        let mut s = clean();
        s.queues[0].routes = vec![("validation".into(), arn("orders-invalid"))];
        s.queues.push(queue("orders-invalid"));
        let found = checks(&s);
        assert_eq!(
            found,
            vec![
                ("dlq-retention", Severity::Warning, "orders-invalid".into()),
                ("dlq-alarm", Severity::Warning, "orders-invalid".into()),
            ]
        );
        s.queues.retain(|q| q.name != "orders-invalid");
        assert_eq!(
            checks(&s),
            vec![("dlq-missing", Severity::Critical, "orders".into())]
        );
    }

    #[test]
    fn x5_offline_setups_skip_the_live_checks() {
        let mut s = clean();
        for q in &mut s.queues {
            q.live = None;
        }
        let report = check(&s);
        assert!(report.findings.is_empty());
        let skipped: Vec<_> = report.skipped.iter().map(|k| k.check).collect();
        assert_eq!(skipped, ["dlq-expiring", "inflight-limit"]);
    }
}
