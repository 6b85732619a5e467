//! Message move tasks (rule R7) through the official Rust SDK, and across a
//! restart of the real binary.

use std::time::{Duration, Instant};

use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::types::QueueAttributeName as Attr;

use crate::common::{
    DLQ_ARN, SluiceProcess, TestServer, approximate, create_queue, dead_lettered, send_bodies,
    until,
};

async fn wait_for_status(
    sqs: &aws_sdk_sqs::Client,
    status: &str,
) -> aws_sdk_sqs::types::ListMessageMoveTasksResultEntry {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let list = sqs
            .list_message_move_tasks()
            .source_arn(DLQ_ARN)
            .send()
            .await
            .unwrap();
        let task = list.results()[0].clone();
        if task.status() == Some(status) {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "task never reached {status}: {task:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// R7: a task returns every message to its source as a new message, and
/// reports its counts; the rules of starting one are enforced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_move_task_returns_messages_to_their_source_real_time() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let (src, dlq) = dead_lettered(&sqs, 3).await;
    assert_eq!(
        approximate(&sqs, &dlq, Attr::ApproximateNumberOfMessages).await,
        3
    );

    let e = sqs
        .start_message_move_task()
        .source_arn("arn:aws:sqs:us-east-1:000000000000:src")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        e.into_service_error().code(),
        Some("InvalidParameterValue"),
        "the source must be a DLQ"
    );
    let e = sqs
        .start_message_move_task()
        .source_arn("arn:aws:sqs:us-east-1:000000000000:nope")
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_resource_not_found_exception());
    let e = sqs
        .start_message_move_task()
        .source_arn(DLQ_ARN)
        .max_number_of_messages_per_second(501)
        .send()
        .await
        .unwrap_err();
    assert_eq!(e.into_service_error().code(), Some("InvalidParameterValue"));

    let started = sqs
        .start_message_move_task()
        .source_arn(DLQ_ARN)
        .send()
        .await
        .unwrap();
    assert!(started.task_handle().is_some());
    let done = wait_for_status(&sqs, "COMPLETED").await;
    assert_eq!(done.approximate_number_of_messages_moved(), 3);
    assert_eq!(done.approximate_number_of_messages_to_move(), Some(3));
    assert!(done.task_handle().is_none(), "a handle only while RUNNING");
    assert_eq!(
        approximate(&sqs, &dlq, Attr::ApproximateNumberOfMessages).await,
        0
    );
    assert_eq!(
        approximate(&sqs, &src, Attr::ApproximateNumberOfMessages).await,
        3,
        "back in their source"
    );
    let e = sqs
        .cancel_message_move_task()
        .task_handle(started.task_handle().unwrap())
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        e.into_service_error().code(),
        Some("AWS.SimpleQueueService.UnsupportedOperation"),
        "only RUNNING tasks cancel"
    );
}

/// R7: one active task per source; a cancelled task leaves moved messages
/// moved and the rest in the DLQ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_cancel_half_way_real_time() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let (src, dlq) = dead_lettered(&sqs, 5).await;
    let other = create_queue(&sqs, "other").await;
    let started = sqs
        .start_message_move_task()
        .source_arn(DLQ_ARN)
        .destination_arn("arn:aws:sqs:us-east-1:000000000000:other")
        .max_number_of_messages_per_second(1)
        .send()
        .await
        .unwrap();
    let e = sqs
        .start_message_move_task()
        .source_arn(DLQ_ARN)
        .send()
        .await
        .unwrap_err();
    // As AWS answers it (LocalStack snapshot test_sqs_move_task.py::
    // test_start_multiple_move_tasks).
    assert_eq!(e.into_service_error().code(), Some("InvalidParameterValue"));
    let running = sqs
        .list_message_move_tasks()
        .source_arn(DLQ_ARN)
        .send()
        .await
        .unwrap();
    assert_eq!(running.results()[0].status(), Some("RUNNING"));
    assert_eq!(
        running.results()[0].max_number_of_messages_per_second(),
        Some(1)
    );
    // Cancel once the first step has moved something (at 1 message/s the
    // task is far from done), however slow this machine is today.
    assert!(
        until(Duration::from_secs(10), async || {
            approximate(&sqs, &other, Attr::ApproximateNumberOfMessages).await > 0
        })
        .await,
        "the task never moved a message"
    );
    sqs.cancel_message_move_task()
        .task_handle(started.task_handle().unwrap())
        .send()
        .await
        .unwrap();
    let cancelled = wait_for_status(&sqs, "CANCELLED").await;
    let moved = cancelled.approximate_number_of_messages_moved() as usize;
    assert!(
        (1..5).contains(&moved),
        "moved {moved} of 5 before the cancel"
    );
    assert_eq!(
        approximate(&sqs, &other, Attr::ApproximateNumberOfMessages).await,
        moved
    );
    assert_eq!(
        approximate(&sqs, &dlq, Attr::ApproximateNumberOfMessages).await,
        5 - moved,
        "the rest stays in the DLQ"
    );
    assert_eq!(
        approximate(&sqs, &src, Attr::ApproximateNumberOfMessages).await,
        0
    );
}

/// R7, D1: a task running when the server stops ends FAILED with a reason
/// after the restart; it does not vanish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_task_interrupted_by_restart_is_failed_with_reason() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = SluiceProcess::start(&["--data-dir", data]);
    let sqs = server.sdk();
    dead_lettered(&sqs, 20).await;
    sqs.start_message_move_task()
        .source_arn(DLQ_ARN)
        .max_number_of_messages_per_second(1)
        .send()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.kill_9();
    let server = SluiceProcess::start(&["--data-dir", data]);
    let sqs = server.sdk();
    let list = sqs
        .list_message_move_tasks()
        .source_arn(DLQ_ARN)
        .send()
        .await
        .unwrap();
    let task = &list.results()[0];
    assert_eq!(task.status(), Some("FAILED"));
    assert!(task.failure_reason().unwrap().contains("restarted"));
    // A new task can start and finishes the job.
    sqs.start_message_move_task()
        .source_arn(DLQ_ARN)
        .send()
        .await
        .unwrap();
    wait_for_status(&sqs, "COMPLETED").await;
}

/// R9: the handle AWS hands out decodes to the task id and the source
/// ARN; cancelling with a handle that does not decode, that names an
/// unknown queue, or an unknown task, gets AWS's three answers (AWS
/// recorded answers, LocalStack snapshot test_sqs_move_task.py::
/// test_basic_move_task_workflow and test_cancel_with_invalid_*).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r9_task_handles_and_cancel_errors_real_time() {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let (_src, _dlq) = dead_lettered(&sqs, 3).await;
    create_queue(&sqs, "other").await;
    let handle = sqs
        .start_message_move_task()
        .source_arn(DLQ_ARN)
        .destination_arn("arn:aws:sqs:us-east-1:000000000000:other")
        .max_number_of_messages_per_second(1)
        .send()
        .await
        .unwrap()
        .task_handle
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&STANDARD.decode(&handle).unwrap()).unwrap();
    assert_eq!(doc["sourceArn"], DLQ_ARN);
    let task_id = doc["taskId"].as_str().unwrap().to_string();
    assert_eq!(task_id.len(), 36, "a UUID: {task_id}");

    let handle_for = |id: &str, arn: &str| {
        STANDARD.encode(format!(r#"{{"taskId":"{id}","sourceArn":"{arn}"}}"#))
    };
    let cases = [
        (
            "foobared".to_string(),
            400,
            "InvalidParameterValue",
            "Value for parameter TaskHandle is invalid.",
        ),
        (
            handle_for(&task_id, "arn:aws:sqs:us-east-1:878966065785:nope"),
            404,
            "ResourceNotFoundException",
            "The resource that you specified for the SourceArn parameter doesn't exist.",
        ),
        (
            handle_for("10f57157-fc38-4da9-a113-4de7e12d05aa", DLQ_ARN),
            404,
            "ResourceNotFoundException",
            "Task does not exist.",
        ),
    ];
    for (bad, status, code, message) in cases {
        let e = sqs
            .cancel_message_move_task()
            .task_handle(&bad)
            .send()
            .await
            .unwrap_err();
        let raw = e.raw_response().map(|r| r.status().as_u16());
        let e = e.into_service_error();
        assert_eq!(
            (raw, e.code(), e.message()),
            (Some(status), Some(code), Some(message)),
            "{bad}"
        );
    }
    let out = sqs
        .cancel_message_move_task()
        .task_handle(&handle)
        .send()
        .await
        .unwrap();
    assert!(out.approximate_number_of_messages_moved() <= 3);
}

/// A standard queue `name` with a RedrivePolicy naming `dlq_arn`, so that
/// the queue behind it counts as a DLQ (StartMessageMoveTask wants one).
async fn source_of(sqs: &aws_sdk_sqs::Client, name: &str, dlq_arn: &str, fifo: bool) {
    let mut create = sqs.create_queue().queue_name(name).attributes(
        Attr::RedrivePolicy,
        format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":1}}"#),
    );
    if fifo {
        create = create.attributes(Attr::FifoQueue, "true");
    }
    create.send().await.expect("create the source queue");
}

fn arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:000000000000:{name}")
}

/// R16 (SQS Developer Guide, "Learn how to configure a dead-letter queue
/// redrive": the redrive destination must be of the DLQ's type): a
/// standard DLQ does not redrive into a FIFO queue, nor a FIFO DLQ into a
/// standard one; nothing is started, and the messages stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r16_a_task_moves_only_between_queues_of_one_type() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let (_, dlq) = dead_lettered(&sqs, 2).await;
    let fifo_dlq = sqs
        .create_queue()
        .queue_name("dlq.fifo")
        .attributes(Attr::FifoQueue, "true")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    source_of(&sqs, "src.fifo", &arn("dlq.fifo"), true).await;
    sqs.create_queue()
        .queue_name("other.fifo")
        .attributes(Attr::FifoQueue, "true")
        .send()
        .await
        .unwrap();
    create_queue(&sqs, "other").await;
    for (source, destination) in [
        (DLQ_ARN.to_string(), "other.fifo"),
        (arn("dlq.fifo"), "other"),
    ] {
        let e = sqs
            .start_message_move_task()
            .source_arn(&source)
            .destination_arn(arn(destination))
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(
            e.code(),
            Some("InvalidParameterValue"),
            "{source} → {destination}"
        );
        assert!(
            e.message().unwrap_or_default().contains("same type"),
            "{:?}",
            e.message()
        );
        let listed = sqs
            .list_message_move_tasks()
            .source_arn(&source)
            .send()
            .await
            .unwrap();
        assert!(listed.results().is_empty(), "a refused task was stored");
    }
    assert_eq!(
        approximate(&sqs, &dlq, Attr::ApproximateNumberOfMessages).await,
        2
    );
    assert_eq!(
        approximate(&sqs, &fifo_dlq, Attr::ApproximateNumberOfMessages).await,
        0
    );
    // Same types move.
    sqs.start_message_move_task()
        .source_arn(arn("dlq.fifo"))
        .destination_arn(arn("other.fifo"))
        .send()
        .await
        .expect("FIFO to FIFO starts");
}

/// R16 (SQS Developer Guide, dead-letter queue redrive: at most 100 active
/// redrive tasks per account): the 101st active task is `OverLimit`; one
/// slot freed by a cancel lets the next start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r16_at_most_100_active_tasks_per_account() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    // Sent straight to the DLQs, the messages have no source to go back to.
    create_queue(&sqs, "other").await;
    let mut handles = Vec::new();
    for i in 0..=100 {
        let dlq = create_queue(&sqs, &format!("dlq{i}")).await;
        source_of(&sqs, &format!("src{i}"), &arn(&format!("dlq{i}")), false).await;
        // Enough messages at 1 a second that every task stays RUNNING.
        send_bodies(
            &sqs,
            &dlq,
            &(0..10).map(|n| n.to_string()).collect::<Vec<_>>(),
        )
        .await;
        if i == 100 {
            break;
        }
        let started = sqs
            .start_message_move_task()
            .source_arn(arn(&format!("dlq{i}")))
            .destination_arn(arn("other"))
            .max_number_of_messages_per_second(1)
            .send()
            .await
            .expect("one of the first 100 tasks");
        handles.push(started.task_handle().unwrap().to_string());
    }
    let e = sqs
        .start_message_move_task()
        .source_arn(arn("dlq100"))
        .destination_arn(arn("other"))
        .max_number_of_messages_per_second(1)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("OverLimit"), "{e:?}");
    sqs.cancel_message_move_task()
        .task_handle(&handles[0])
        .send()
        .await
        .unwrap();
    // CANCELLING is still active; the slot frees once the task is CANCELLED.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let listed = sqs
            .list_message_move_tasks()
            .source_arn(arn("dlq0"))
            .send()
            .await
            .unwrap();
        if listed.results()[0].status() == Some("CANCELLED") {
            break;
        }
        assert!(Instant::now() < deadline, "never cancelled: {listed:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    sqs.start_message_move_task()
        .source_arn(arn("dlq100"))
        .destination_arn(arn("other"))
        .max_number_of_messages_per_second(1)
        .send()
        .await
        .expect("a slot freed by a cancel");
    for handle in &handles[1..] {
        sqs.cancel_message_move_task()
            .task_handle(handle)
            .send()
            .await
            .unwrap();
    }
}

/// R16 (SQS Developer Guide, dead-letter queue redrive: a task runs at
/// most 36 hours): a task still moving after 36 hours ends FAILED with a
/// reason; what it moved stays moved and the rest stays in the DLQ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r16_a_task_ends_after_36_hours() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let (src, dlq) = dead_lettered(&sqs, 10).await;
    sqs.start_message_move_task()
        .source_arn(DLQ_ARN)
        .max_number_of_messages_per_second(1)
        .send()
        .await
        .unwrap();
    assert!(
        until(Duration::from_secs(10), async || {
            approximate(&sqs, &src, Attr::ApproximateNumberOfMessages).await > 0
        })
        .await,
        "the task never moved a message"
    );
    server.clock.advance_secs(36 * 3600);
    let failed = wait_for_status(&sqs, "FAILED").await;
    assert!(
        failed
            .failure_reason()
            .unwrap_or_default()
            .contains("36 hours"),
        "{failed:?}"
    );
    let moved = failed.approximate_number_of_messages_moved() as usize;
    assert!((1..10).contains(&moved), "moved {moved}");
    assert_eq!(
        approximate(&sqs, &src, Attr::ApproximateNumberOfMessages).await,
        moved
    );
    assert_eq!(
        approximate(&sqs, &dlq, Attr::ApproximateNumberOfMessages).await,
        10 - moved
    );
}
