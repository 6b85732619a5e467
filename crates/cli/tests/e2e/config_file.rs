//! `sluice serve --config FILE`: account, region, base URL and declared queues.

use aws_sdk_sqs::types::QueueAttributeName as Attr;

use crate::common::{SluiceProcess, sdk_client_in};

/// W3, V11: the config file sets the account and region of URLs and ARNs,
/// the public base URL, and creates queues with attributes and tags, also
/// bringing an existing queue to the declared attributes on the next start.
/// Clients sign for the configured region, where the declared queues live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_file_declares_queues_and_naming() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("sluice.toml");
    let write = |visibility: u32| {
        std::fs::write(
            &config,
            format!(
                r#"
account_id = "123456789012"
region = "eu-west-1"
base_url = "https://sqs.example.test/"
data_dir = "{}"

[[queues]]
name = "orders-dlq"

[[queues]]
name = "orders"
attributes = {{ VisibilityTimeout = {visibility}, RedrivePolicy = '{{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:123456789012:orders-dlq","maxReceiveCount":5}}' }}
tags = {{ team = "payments" }}
"#,
                data.display()
            ),
        )
        .unwrap();
    };
    write(60);
    let cfg = config.to_str().unwrap();
    let server = SluiceProcess::start(&["--config", cfg]);
    let sqs = sdk_client_in(&server.endpoint, "eu-west-1");
    let url = sqs
        .get_queue_url()
        .queue_name("orders")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    assert_eq!(url, "https://sqs.example.test/123456789012/orders");
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::All)
        .send()
        .await
        .unwrap();
    let attrs = attrs.attributes().unwrap();
    assert_eq!(attrs[&Attr::VisibilityTimeout], "60");
    assert_eq!(
        attrs[&Attr::QueueArn],
        "arn:aws:sqs:eu-west-1:123456789012:orders"
    );
    assert!(attrs[&Attr::RedrivePolicy].contains("orders-dlq"));
    let tags = sqs.list_queue_tags().queue_url(&url).send().await.unwrap();
    assert_eq!(tags.tags().unwrap()["team"], "payments");
    sqs.send_message()
        .queue_url(&url)
        .message_body("kept")
        .send()
        .await
        .unwrap();
    assert!(server.terminate().success());

    write(90);
    let server = SluiceProcess::start(&["--config", cfg]);
    let sqs = sdk_client_in(&server.endpoint, "eu-west-1");
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(Attr::VisibilityTimeout)
        .attribute_names(Attr::ApproximateNumberOfMessages)
        .send()
        .await
        .unwrap();
    let attrs = attrs.attributes().unwrap();
    assert_eq!(
        attrs[&Attr::VisibilityTimeout],
        "90",
        "the declared value wins at start-up"
    );
    assert_eq!(
        attrs[&Attr::ApproximateNumberOfMessages],
        "1",
        "the queue was kept, not recreated"
    );
}

/// A config file with an unknown key, a bad queue or a bad consumer is
/// refused at start-up.
#[test]
fn bad_config_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (text, needle) in [
        ("bogus = 1\n", "unknown field"),
        (
            "in_memory = true\n[[queues]]\nname = \"bad name\"\n",
            "bad name",
        ),
        ("in_memory = true\naccount_id = \"12\"\n", "12 digits"),
        // C4: a consumer whose handler may outlast the visibility timeout.
        (
            "in_memory = true\n[[queues]]\nname = \"orders\"\nattributes = { VisibilityTimeout = 10 }\n\
             [[consumers]]\nname = \"w\"\nqueue = \"orders\"\nurl = \"http://127.0.0.1:9/\"\ntimeout_seconds = 30\n",
            "consumer w: timeout_seconds (30) exceeds the visibility timeout of queue orders (10 s)",
        ),
        (
            "in_memory = true\n[[consumers]]\nname = \"w\"\nqueue = \"missing\"\nurl = \"http://127.0.0.1:9/\"\n",
            "consumer w: queue missing",
        ),
        // C3: Lambda's FIFO batch limit.
        (
            "in_memory = true\n[[queues]]\nname = \"jobs.fifo\"\nattributes = { FifoQueue = true }\n\
             [[consumers]]\nname = \"w\"\nqueue = \"jobs.fifo\"\nurl = \"http://127.0.0.1:9/\"\n\
             batch_size = 11\nbatching_window_seconds = 1\n",
            "consumer w: batch_size must be 1 to 10 for FIFO queue jobs.fifo",
        ),
        // C6, C7: a large batch needs a window; Lambda's concurrency range.
        (
            "in_memory = true\n[[consumers]]\nname = \"w\"\nqueue = \"q\"\nurl = \"http://127.0.0.1:9/\"\nbatch_size = 100\n",
            "consumer w: batch_size 100 above 10 needs batching_window_seconds",
        ),
        (
            "in_memory = true\n[[consumers]]\nname = \"w\"\nqueue = \"q\"\nurl = \"http://127.0.0.1:9/\"\nmax_concurrency = 1\n",
            "consumer w: max_concurrency must be 2 to 1000, got 1",
        ),
    ] {
        let config = dir.path().join("bad.toml");
        std::fs::write(&config, text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--config",
                config.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{text}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{text}: {stderr}");
    }
}

/// V19: a deleted queue's name stays taken for a minute, as on SQS, unless
/// `--deleted-queue-name-hold-secs 0` frees it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v19_deleted_queue_name_hold_can_be_turned_off() {
    for (hold, recreated) in [(None, false), (Some("0"), true)] {
        let mut args = vec!["--in-memory"];
        if let Some(secs) = hold {
            args.extend(["--deleted-queue-name-hold-secs", secs]);
        }
        let server = SluiceProcess::start(&args);
        let sqs = server.sdk();
        let url = sqs
            .create_queue()
            .queue_name("again")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        sqs.delete_queue().queue_url(&url).send().await.unwrap();
        let again = sqs.create_queue().queue_name("again").send().await;
        match again {
            Ok(_) => assert!(recreated, "recreated despite the hold"),
            Err(e) => {
                assert!(!recreated, "hold {hold:?}: {e:?}");
                let e = e.into_service_error();
                assert_eq!(
                    crate::common::code(&e),
                    "AWS.SimpleQueueService.QueueDeletedRecently"
                );
            }
        }
        server.kill_9();
    }
}
