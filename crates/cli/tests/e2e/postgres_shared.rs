//! Background work shared by several `sluice serve --postgres` nodes:
//! the alarms live in the database (every node shows the same ones),
//! one node evaluates and notifies and another takes over when it is
//! killed, alarms on counters see every node's activity, and a source
//! queue gets one active move task whichever nodes start them. Real
//! binaries on a fresh database of a throwaway PostgreSQL, in real time
//! (alarm periods of 10 s); without PostgreSQL's binaries each test says
//! SKIPPED and passes.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::{Value, json};
use sluice_postgres::testing;

use crate::alarms::{Receiver, metrics, sluice};
use crate::common::{RawClient, SluiceProcess, create_queue};

/// Two nodes on a fresh database, ticking alarms every second; A is the
/// one evaluating alarms (it started alone and took the claim).
async fn two_nodes(dir: &tempfile::TempDir) -> Option<(SluiceProcess, SluiceProcess)> {
    let url = testing::cluster()?.fresh_database().await;
    let config = dir.path().join("sluice.toml");
    std::fs::write(&config, "alarm_sample_seconds = 1\n").unwrap();
    let config = config.to_str().unwrap().to_string();
    let args = [
        "--postgres",
        &url,
        // A node holds one connection per claim (alarms, each move task).
        "--postgres-pool-size",
        "8",
        "--config",
        &config,
    ];
    let a = SluiceProcess::start(&args);
    wait_for("A to evaluate the alarms", 10, || async {
        evaluates(a.raw()).await
    })
    .await;
    let b = SluiceProcess::start(&args);
    Some((a, b))
}

/// Whether the node says it evaluates alarms (`sluice_alarm_evaluator`).
async fn evaluates(raw: RawClient) -> bool {
    let m = metrics(raw).await;
    if m.contains("\nsluice_alarm_evaluator 1\n") {
        return true;
    }
    assert!(m.contains("\nsluice_alarm_evaluator 0\n"), "{m}");
    false
}

/// Polls `check` every 100 ms until it holds, failing after `secs`.
async fn wait_for<F, Fut>(what: &str, secs: u64, check: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn put_alarm(raw: RawClient, alarm: Value) {
    let (status, _, r) = sluice(raw, "PutAlarm", alarm).await;
    assert_eq!(status, 200, "{}", r.body);
}

/// The alarm `name` as a node describes it (`null` when unknown).
async fn describe(raw: RawClient, name: &str) -> Value {
    let (status, v, r) = sluice(raw, "DescribeAlarms", json!({"AlarmNames": [name]})).await;
    assert_eq!(status, 200, "{}", r.body);
    v["Alarms"][0].clone()
}

async fn state(raw: RawClient, name: &str) -> String {
    describe(raw, name).await["StateValue"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// No notification for `secs` seconds: several ticks of both nodes.
async fn assert_no_notification(hook: &Receiver, secs: u64) {
    if let Some(extra) = hook.next(Duration::from_secs(secs)).await {
        panic!("one notification per state change, got another one: {extra}");
    }
}

/// M2 across nodes: an alarm put through A is described identically
/// through B; its changes are notified once each with two nodes up (one
/// evaluates); kill -9 of the evaluating node, and the other one evaluates
/// and notifies the next change, with the history kept in the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_alarms_shared_by_nodes_notify_once_and_survive_kill_9_real_time() {
    let dir = tempfile::tempdir().unwrap();
    let Some((a, b)) = two_nodes(&dir).await else {
        return;
    };
    let hook = Receiver::start().await;
    let (sa, sb) = (a.sdk(), b.sdk());
    let url = create_queue(&sa, "jobs").await;
    put_alarm(
        a.raw(),
        json!({"AlarmName": "jobs-depth", "QueueUrl": url,
               "MetricName": "ApproximateNumberOfMessagesVisible", "Statistic": "Maximum",
               "Period": 10, "EvaluationPeriods": 1, "Threshold": 1,
               "ComparisonOperator": "GreaterThanOrEqualToThreshold",
               "TreatMissingData": "notBreaching", "Actions": [hook.url]}),
    )
    .await;
    let through_b = describe(b.raw(), "jobs-depth").await;
    assert_eq!(through_b["Source"], "api", "B knows A's alarm: {through_b}");
    assert_eq!(through_b["Actions"], json!([hook.url]));
    assert_eq!(through_b["Period"], 10);
    wait_for("the alarm to be OK", 30, || async {
        state(b.raw(), "jobs-depth").await == "OK"
    })
    .await;
    assert_eq!(
        describe(a.raw(), "jobs-depth").await,
        describe(b.raw(), "jobs-depth").await,
        "both nodes describe the same alarm, state and history"
    );
    assert!(evaluates(a.raw()).await && !evaluates(b.raw()).await);

    sb.send_message()
        .queue_url(&url)
        .message_body("backlog")
        .send()
        .await
        .unwrap();
    let n = hook
        .next(Duration::from_secs(30))
        .await
        .expect("ALARM notified");
    assert_eq!(
        (n["old_state"].as_str(), n["new_state"].as_str()),
        (Some("OK"), Some("ALARM"))
    );
    assert_no_notification(&hook, 3).await;
    let on_a = describe(a.raw(), "jobs-depth").await;
    assert_eq!(on_a, describe(b.raw(), "jobs-depth").await);
    assert_eq!(on_a["StateValue"], "ALARM");
    assert_eq!(on_a["History"].as_array().map(Vec::len), Some(2), "{on_a}");

    a.kill_9();
    let got = sb.receive_message().queue_url(&url).send().await.unwrap();
    sb.delete_message()
        .queue_url(&url)
        .receipt_handle(got.messages()[0].receipt_handle().unwrap())
        .send()
        .await
        .unwrap();
    let n = hook
        .next(Duration::from_secs(40))
        .await
        .expect("B notifies the change after A died");
    assert_eq!(
        (n["old_state"].as_str(), n["new_state"].as_str()),
        (Some("ALARM"), Some("OK"))
    );
    assert!(evaluates(b.raw()).await, "B took over");
    assert_no_notification(&hook, 3).await;
    let on_b = describe(b.raw(), "jobs-depth").await;
    let history: Vec<&str> = on_b["History"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["NewState"].as_str().unwrap())
        .collect();
    assert_eq!(history, ["OK", "ALARM", "OK"], "{on_b}");
}

/// M1, M2 across nodes: an alarm on NumberOfMessagesSent counts the sends
/// through both nodes: 2 through A and 2 through B in one period reach its
/// threshold of 4 (each node alone counted 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_alarm_on_sends_counts_every_node_real_time() {
    let dir = tempfile::tempdir().unwrap();
    let Some((a, b)) = two_nodes(&dir).await else {
        return;
    };
    let (sa, sb) = (a.sdk(), b.sdk());
    let url = create_queue(&sa, "orders").await;
    put_alarm(
        b.raw(),
        json!({"AlarmName": "orders-sent", "QueueUrl": url,
               "MetricName": "NumberOfMessagesSent", "Statistic": "Sum",
               "Period": 10, "EvaluationPeriods": 1, "Threshold": 4,
               "ComparisonOperator": "GreaterThanOrEqualToThreshold",
               "TreatMissingData": "notBreaching"}),
    )
    .await;
    // The first evaluation also took the first sample, which counts from.
    wait_for("the alarm to be OK", 30, || async {
        state(a.raw(), "orders-sent").await == "OK"
    })
    .await;
    // Send early in a period, so its count is flushed and sampled before the period ends.
    let into_period = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        % 10_000;
    tokio::time::sleep(Duration::from_millis((10_500 - into_period) % 10_000)).await;
    for sqs in [&sa, &sa, &sb, &sb] {
        sqs.send_message()
            .queue_url(&url)
            .message_body("x")
            .send()
            .await
            .unwrap();
    }
    wait_for("the alarm to count both nodes' sends", 30, || async {
        state(b.raw(), "orders-sent").await == "ALARM"
    })
    .await;
    let alarm = describe(a.raw(), "orders-sent").await;
    let reason = alarm["StateReason"].as_str().unwrap();
    assert!(reason.contains("[4]"), "{reason}");
}

/// R7 across nodes: StartMessageMoveTask on the same DLQ through A and B
/// at once, for five DLQs: each time exactly one starts, the other gets
/// the error one node alone gives, and one task is RUNNING.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_one_move_task_per_source_across_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let Some((a, b)) = two_nodes(&dir).await else {
        return;
    };
    let (sa, sb) = (a.sdk(), b.sdk());
    let elsewhere = create_queue(&sa, "elsewhere").await;
    let _ = elsewhere;
    let elsewhere_arn = "arn:aws:sqs:us-east-1:000000000000:elsewhere";
    for i in 0..5 {
        let dlq = create_queue(&sa, &format!("dlq{i}")).await;
        let dlq_arn = format!("arn:aws:sqs:us-east-1:000000000000:dlq{i}");
        sa.create_queue()
            .queue_name(format!("src{i}"))
            .attributes(
                Attr::RedrivePolicy,
                format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":1}}"#),
            )
            .send()
            .await
            .unwrap();
        for m in 0..10 {
            sa.send_message()
                .queue_url(&dlq)
                .message_body(format!("m{m}"))
                .send()
                .await
                .unwrap();
        }
        let start = |sqs: aws_sdk_sqs::Client| {
            let (arn, to) = (dlq_arn.clone(), elsewhere_arn.to_string());
            async move {
                sqs.start_message_move_task()
                    .source_arn(arn)
                    .destination_arn(to)
                    .max_number_of_messages_per_second(1)
                    .send()
                    .await
            }
        };
        let (ra, rb) = tokio::join!(start(sa.clone()), start(sb.clone()));
        let (started, refused): (Vec<_>, Vec<_>) = [ra, rb].into_iter().partition(Result::is_ok);
        assert_eq!((started.len(), refused.len()), (1, 1), "round {i}");
        let e = refused.into_iter().next().unwrap().unwrap_err();
        let e = e.into_service_error();
        assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
        assert!(
            e.message()
                .unwrap_or_default()
                .contains("Only one active task"),
            "{e:?}"
        );
        let tasks = sb
            .list_message_move_tasks()
            .source_arn(&dlq_arn)
            .max_results(10)
            .send()
            .await
            .unwrap();
        let statuses: Vec<_> = tasks
            .results()
            .iter()
            .map(|t| t.status().unwrap_or_default().to_string())
            .collect();
        assert_eq!(statuses, ["RUNNING"], "round {i}");
        let handle = started.into_iter().next().unwrap().unwrap();
        sb.cancel_message_move_task()
            .task_handle(handle.task_handle().unwrap())
            .send()
            .await
            .unwrap();
    }
}
