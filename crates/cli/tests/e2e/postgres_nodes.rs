//! Several `sluice serve --postgres` nodes over one database:
//! any node serves any queue, a long poll on one node wakes on a send
//! through another, work spread over both loses nothing, and a message
//! move task survives kill -9 of the node that ran it. Each test runs two
//! real server processes on a fresh database of a throwaway PostgreSQL;
//! without PostgreSQL's binaries each says SKIPPED and passes.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use aws_sdk_sqs::types::{DeleteMessageBatchRequestEntry, QueueAttributeName as Attr};
use sluice_postgres::testing;

use crate::common::{DLQ_ARN, SluiceProcess, approximate, create_queue, dead_lettered, until};

/// Two nodes on a fresh database, or `None` without PostgreSQL.
async fn two_nodes() -> Option<(SluiceProcess, SluiceProcess, String)> {
    let url = testing::cluster()?.fresh_database().await;
    let a = SluiceProcess::start(&["--postgres", &url, "--postgres-pool-size", "4"]);
    let b = SluiceProcess::start(&["--postgres", &url, "--postgres-pool-size", "4"]);
    Some((a, b, url))
}

/// V1, V6 across nodes: a message sent through A is received and deleted
/// through B, and a long poll waiting on B returns the message a send
/// through A stores (woken by LISTEN/NOTIFY: B has no other way to know).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v6_nodes_share_queues_and_wake_each_others_long_polls() {
    let Some((a, b, _)) = two_nodes().await else {
        return;
    };
    let (sa, sb) = (a.sdk(), b.sdk());
    let url = create_queue(&sa, "shared").await;
    let seen_by_b = sb
        .get_queue_url()
        .queue_name("shared")
        .send()
        .await
        .unwrap();
    assert!(
        seen_by_b
            .queue_url()
            .is_some_and(|u| u.ends_with("/000000000000/shared")),
        "B sees the queue A created: {seen_by_b:?}"
    );
    sa.send_message()
        .queue_url(&url)
        .message_body("through A")
        .send()
        .await
        .unwrap();
    let got = sb.receive_message().queue_url(&url).send().await.unwrap();
    assert_eq!(got.messages()[0].body(), Some("through A"));
    sb.delete_message()
        .queue_url(&url)
        .receipt_handle(got.messages()[0].receipt_handle().unwrap())
        .send()
        .await
        .unwrap();

    let poll = {
        let (sb, url) = (sb.clone(), url.clone());
        tokio::spawn(async move {
            sb.receive_message()
                .queue_url(&url)
                .wait_time_seconds(20)
                .send()
                .await
                .unwrap()
        })
    };
    // Let the poll reach B and find the queue empty first.
    tokio::time::sleep(Duration::from_millis(500)).await;
    sa.send_message()
        .queue_url(&url)
        .message_body("wake B")
        .send()
        .await
        .unwrap();
    let woken = poll.await.unwrap();
    assert_eq!(
        woken.messages().first().and_then(|m| m.body()),
        Some("wake B"),
        "the long poll on B returned the message sent through A"
    );
}

/// V2, V3, V4 across nodes: 200 messages sent through both nodes, received
/// by consumers on both, each deleted through the node that did not
/// deliver it: every message is processed exactly once (the visibility
/// timeout is longer than the test), none is lost, the queue ends empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v4_work_spread_over_two_nodes_loses_nothing() {
    let Some((a, b, _)) = two_nodes().await else {
        return;
    };
    let clients = [a.sdk(), b.sdk()];
    let url = create_queue(&clients[0], "work").await;
    const N: usize = 200;
    for batch in 0..N / 10 {
        let sqs = &clients[batch % 2];
        let entries = (0..10)
            .map(|i| {
                aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(format!("m{}", batch * 10 + i))
                    .build()
                    .unwrap()
            })
            .collect();
        let sent = sqs
            .send_message_batch()
            .queue_url(&url)
            .set_entries(Some(entries))
            .send()
            .await
            .unwrap();
        assert_eq!(sent.successful().len(), 10);
    }
    let consumers = (0..4).map(|c| {
        let receive_from = clients[c % 2].clone();
        let delete_through = clients[(c + 1) % 2].clone();
        let url = url.clone();
        tokio::spawn(async move {
            let mut seen = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                let got = receive_from
                    .receive_message()
                    .queue_url(&url)
                    .max_number_of_messages(10)
                    .visibility_timeout(600)
                    .wait_time_seconds(1)
                    .send()
                    .await
                    .unwrap();
                if got.messages().is_empty() {
                    break;
                }
                let entries = got
                    .messages()
                    .iter()
                    .enumerate()
                    .map(|(i, m)| {
                        seen.push(m.body().unwrap().to_string());
                        DeleteMessageBatchRequestEntry::builder()
                            .id(format!("d{i}"))
                            .receipt_handle(m.receipt_handle().unwrap())
                            .build()
                            .unwrap()
                    })
                    .collect();
                let deleted = delete_through
                    .delete_message_batch()
                    .queue_url(&url)
                    .set_entries(Some(entries))
                    .send()
                    .await
                    .unwrap();
                assert!(deleted.failed().is_empty(), "{:?}", deleted.failed());
            }
            seen
        })
    });
    let mut times: BTreeMap<String, usize> = BTreeMap::new();
    for consumer in consumers.collect::<Vec<_>>() {
        for body in consumer.await.unwrap() {
            *times.entry(body).or_default() += 1;
        }
    }
    let expected: BTreeMap<String, usize> = (0..N).map(|i| (format!("m{i}"), 1)).collect();
    assert_eq!(times, expected, "every message exactly once");
    for node in &clients {
        assert_eq!(
            approximate(node, &url, Attr::ApproximateNumberOfMessages).await,
            0
        );
        assert_eq!(
            approximate(node, &url, Attr::ApproximateNumberOfMessagesNotVisible).await,
            0
        );
    }
}

/// R7 across nodes: a move task started on A survives kill -9 of A: B
/// resumes it once A's claim is gone, and it completes with every message
/// back in its source once, none lost, none moved twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_move_task_survives_kill_9_of_its_node() {
    let Some((a, b, _)) = two_nodes().await else {
        return;
    };
    let sa = a.sdk();
    const N: usize = 12;
    let (src, dlq) = dead_lettered(&sa, N).await;
    assert_eq!(
        approximate(&sa, &dlq, Attr::ApproximateNumberOfMessages).await,
        N
    );
    sa.start_message_move_task()
        .source_arn(DLQ_ARN)
        .max_number_of_messages_per_second(2)
        .send()
        .await
        .unwrap();
    // Kill A once its task has moved something and is far from done.
    let mut moved_by_a = 0;
    assert!(
        until(Duration::from_secs(15), async || {
            moved_by_a = approximate(&sa, &src, Attr::ApproximateNumberOfMessages).await;
            moved_by_a > 0
        })
        .await,
        "the task never moved a message"
    );
    a.kill_9();
    assert!(
        moved_by_a < N,
        "A was killed half-way ({moved_by_a} of {N})"
    );

    let sb = b.sdk();
    let deadline = Instant::now() + Duration::from_secs(60);
    let task = loop {
        let list = sb
            .list_message_move_tasks()
            .source_arn(DLQ_ARN)
            .send()
            .await
            .unwrap();
        let task = list.results()[0].clone();
        if task.status() != Some("RUNNING") {
            break task;
        }
        assert!(
            Instant::now() < deadline,
            "the task never finished: {task:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(task.status(), Some("COMPLETED"), "{task:?}");
    assert_eq!(
        approximate(&sb, &dlq, Attr::ApproximateNumberOfMessages).await,
        0
    );
    let mut bodies = Vec::new();
    loop {
        let got = sb
            .receive_message()
            .queue_url(&src)
            .max_number_of_messages(10)
            .visibility_timeout(600)
            .send()
            .await
            .unwrap();
        if got.messages().is_empty() {
            break;
        }
        bodies.extend(got.messages().iter().map(|m| m.body().unwrap().to_string()));
    }
    bodies.sort();
    let mut expected: Vec<String> = (0..N).map(|i| format!("m{i}")).collect();
    expected.sort();
    assert_eq!(bodies, expected, "every message back once in its source");
}

/// `postgres = "…"` in the config file runs a node on PostgreSQL: the
/// queue it declares is there for a node started with `--postgres`, and
/// both write the same queue URLs from the shared `base_url`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_file_runs_a_node_on_postgres() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sluice.toml");
    std::fs::write(
        &config,
        format!(
            r#"
postgres = "{url}"
postgres_pool_size = 2
base_url = "https://sqs.example.test"

[[queues]]
name = "declared"
attributes = {{ VisibilityTimeout = 45 }}
"#
        ),
    )
    .unwrap();
    let a = SluiceProcess::start(&["--config", config.to_str().unwrap()]);
    let b = SluiceProcess::start(&["--postgres", &url, "--config", config.to_str().unwrap()]);
    for node in [&a, &b] {
        let sqs = node.sdk();
        let q = sqs
            .get_queue_url()
            .queue_name("declared")
            .send()
            .await
            .unwrap();
        assert_eq!(
            q.queue_url(),
            Some("https://sqs.example.test/000000000000/declared")
        );
        let attrs = sqs
            .get_queue_attributes()
            .queue_url(q.queue_url().unwrap())
            .attribute_names(Attr::VisibilityTimeout)
            .send()
            .await
            .unwrap();
        assert_eq!(attrs.attributes().unwrap()[&Attr::VisibilityTimeout], "45");
    }
}

/// R7 across nodes: a move task running on A is cancelled through B; A's
/// runner stops, moved messages stay moved, the rest stays in the DLQ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_cancel_through_another_node_stops_the_task() {
    let Some((a, b, _)) = two_nodes().await else {
        return;
    };
    let (sa, sb) = (a.sdk(), b.sdk());
    let other = create_queue(&sa, "other").await;
    const N: usize = 10;
    let (_, dlq) = dead_lettered(&sa, N).await;
    let started = sa
        .start_message_move_task()
        .source_arn(DLQ_ARN)
        .destination_arn("arn:aws:sqs:us-east-1:000000000000:other")
        .max_number_of_messages_per_second(1)
        .send()
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while approximate(&sb, &other, Attr::ApproximateNumberOfMessages).await == 0 {
        assert!(Instant::now() < deadline, "the task never moved a message");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sb.cancel_message_move_task()
        .task_handle(started.task_handle().unwrap())
        .send()
        .await
        .unwrap();
    // A's runner notices within a step; give it three, then nothing moves.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let moved = approximate(&sb, &other, Attr::ApproximateNumberOfMessages).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        approximate(&sb, &other, Attr::ApproximateNumberOfMessages).await,
        moved,
        "nothing moves after the cancel"
    );
    assert!(moved < N, "cancelled half-way ({moved} of {N})");
    assert_eq!(
        approximate(&sb, &dlq, Attr::ApproximateNumberOfMessages).await,
        N - moved,
        "the rest stays in the DLQ"
    );
    let list = sa
        .list_message_move_tasks()
        .source_arn(DLQ_ARN)
        .send()
        .await
        .unwrap();
    assert_eq!(list.results()[0].status(), Some("CANCELLED"));
}

/// F1, F2 across nodes: a FIFO queue fed and drained through both nodes
/// keeps each group's order (a group's next message is only handed out,
/// by either node, once the previous one is deleted), and a duplicate sent
/// through the other node is recognised.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f1_fifo_order_holds_across_nodes() {
    let Some((a, b, _)) = two_nodes().await else {
        return;
    };
    let clients = [a.sdk(), b.sdk()];
    let url = clients[0]
        .create_queue()
        .queue_name("orders.fifo")
        .attributes(Attr::FifoQueue, "true")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    const GROUPS: usize = 3;
    const PER_GROUP: usize = 15;
    for i in 0..PER_GROUP {
        for g in 0..GROUPS {
            let sqs = &clients[(i + g) % 2];
            sqs.send_message()
                .queue_url(&url)
                .message_group_id(format!("g{g}"))
                .message_deduplication_id(format!("g{g}-{i}"))
                .message_body(format!("g{g}:{i}"))
                .send()
                .await
                .unwrap();
        }
    }
    let dup = clients[1]
        .send_message()
        .queue_url(&url)
        .message_group_id("g0")
        .message_deduplication_id("g0-0")
        .message_body("duplicate")
        .send()
        .await
        .unwrap();
    assert!(dup.message_id().is_some());
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let consumers = (0..4).map(|c| {
        let sqs = clients[c % 2].clone();
        let (url, log) = (url.clone(), log.clone());
        tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut idle = 0;
            while Instant::now() < deadline && idle < 3 {
                let got = sqs
                    .receive_message()
                    .queue_url(&url)
                    .max_number_of_messages(3)
                    .visibility_timeout(600)
                    .wait_time_seconds(1)
                    .send()
                    .await
                    .unwrap();
                if got.messages().is_empty() {
                    idle += 1;
                    continue;
                }
                idle = 0;
                for m in got.messages() {
                    // Logged before the delete that unblocks the group.
                    log.lock().unwrap().push(m.body().unwrap().to_string());
                    sqs.delete_message()
                        .queue_url(&url)
                        .receipt_handle(m.receipt_handle().unwrap())
                        .send()
                        .await
                        .unwrap();
                }
            }
        })
    });
    for consumer in consumers.collect::<Vec<_>>() {
        consumer.await.unwrap();
    }
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log.len(),
        GROUPS * PER_GROUP,
        "each once, no duplicate: {log:?}"
    );
    for g in 0..GROUPS {
        let order: Vec<usize> = log
            .iter()
            .filter_map(|b| b.strip_prefix(&format!("g{g}:")))
            .map(|i| i.parse().unwrap())
            .collect();
        let expected: Vec<usize> = (0..PER_GROUP).collect();
        assert_eq!(order, expected, "group g{g} in send order");
    }
}
