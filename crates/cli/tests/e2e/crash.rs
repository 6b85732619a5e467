//! Durability of the real binary across restarts and kill -9 (rule D1).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, MessageSystemAttributeName as Sys, QueueAttributeName as Attr,
    SendMessageBatchRequestEntry,
};

use crate::common::SluiceProcess;

async fn attr(sqs: &aws_sdk_sqs::Client, url: &str, name: Attr) -> String {
    let a = sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(name.clone())
        .send()
        .await
        .unwrap();
    a.attributes().unwrap()[&name].clone()
}

/// D1: after a graceful stop and a restart, queues, attributes, tags,
/// messages, receive counts and in-flight deadlines are all there, and
/// deleted messages stay deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d1_restart_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = SluiceProcess::start(&["--data-dir", data]);
    let sqs = server.sdk();
    let url = sqs
        .create_queue()
        .queue_name("kept")
        .attributes(Attr::VisibilityTimeout, "45")
        .tags("team", "core")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    for b in ["deleted", "in-flight", "visible"] {
        sqs.send_message()
            .queue_url(&url)
            .message_body(b)
            .send()
            .await
            .unwrap();
    }
    let mut handles = std::collections::HashMap::new();
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    assert_eq!(got.messages().len(), 3);
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .visibility_timeout(600)
        .send()
        .await
        .unwrap();
    for m in got.messages() {
        handles.insert(
            m.body().unwrap().to_string(),
            m.receipt_handle().unwrap().to_string(),
        );
    }
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(&handles["deleted"])
        .send()
        .await
        .unwrap();
    sqs.change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&handles["visible"])
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    assert!(server.terminate().success(), "graceful exit");

    let server = SluiceProcess::start(&["--data-dir", data]);
    let sqs = server.sdk();
    let url = sqs
        .get_queue_url()
        .queue_name("kept")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    assert_eq!(attr(&sqs, &url, Attr::VisibilityTimeout).await, "45");
    assert_eq!(
        attr(&sqs, &url, Attr::ApproximateNumberOfMessages).await,
        "1"
    );
    assert_eq!(
        attr(&sqs, &url, Attr::ApproximateNumberOfMessagesNotVisible).await,
        "1",
        "the in-flight deadline survived"
    );
    let tags = sqs.list_queue_tags().queue_url(&url).send().await.unwrap();
    assert_eq!(tags.tags().unwrap()["team"], "core");
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .message_system_attribute_names(Sys::ApproximateReceiveCount)
        .send()
        .await
        .unwrap();
    assert_eq!(got.messages().len(), 1);
    assert_eq!(got.messages()[0].body(), Some("visible"));
    assert_eq!(
        got.messages()[0].attributes().unwrap()[&Sys::ApproximateReceiveCount],
        "3",
        "receive counts survived"
    );
    // A handle issued before the restart still works.
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(&handles["in-flight"])
        .send()
        .await
        .unwrap();
    assert_eq!(
        attr(&sqs, &url, Attr::ApproximateNumberOfMessagesNotVisible).await,
        "1"
    );
}

#[derive(Default)]
struct Ledger {
    /// Ids whose send was acknowledged.
    sent: HashSet<String>,
    /// Ids whose delete was attempted.
    delete_attempted: HashSet<String>,
    /// Ids whose delete was acknowledged.
    deleted: HashSet<String>,
}

/// D1: under a load of concurrent sends and deletes, kill -9 at a random
/// moment; after restart every acknowledged message is there unless its
/// delete was attempted, and no acknowledged delete comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d1_kill_9_under_load_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap().to_string();
    let server = SluiceProcess::start(&["--data-dir", &data]);
    let url = server
        .sdk()
        .create_queue()
        .queue_name("load")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let stop_at = Instant::now() + Duration::from_secs(30);
    let mut tasks = Vec::new();
    for p in 0..4 {
        let (sqs, url, ledger) = (server.sdk(), url.clone(), ledger.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < stop_at {
                let entries: Vec<_> = (0..10)
                    .map(|i| {
                        SendMessageBatchRequestEntry::builder()
                            .id(format!("e{i}"))
                            .message_body(format!("p{p}-{n}-{i}"))
                            .build()
                            .unwrap()
                    })
                    .collect();
                n += 1;
                match sqs
                    .send_message_batch()
                    .queue_url(&url)
                    .set_entries(Some(entries))
                    .send()
                    .await
                {
                    Ok(r) => {
                        let mut l = ledger.lock().unwrap();
                        l.sent
                            .extend(r.successful().iter().map(|s| s.message_id().to_string()));
                    }
                    Err(_) => break,
                }
            }
        }));
    }
    for _ in 0..2 {
        let (sqs, url, ledger) = (server.sdk(), url.clone(), ledger.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < stop_at {
                let Ok(got) = sqs
                    .receive_message()
                    .queue_url(&url)
                    .max_number_of_messages(10)
                    .visibility_timeout(1)
                    .send()
                    .await
                else {
                    break;
                };
                if got.messages().is_empty() {
                    continue;
                }
                let entries: Vec<_> = got
                    .messages()
                    .iter()
                    .enumerate()
                    .map(|(i, m)| {
                        DeleteMessageBatchRequestEntry::builder()
                            .id(format!("d{i}"))
                            .receipt_handle(m.receipt_handle().unwrap())
                            .build()
                            .unwrap()
                    })
                    .collect();
                let ids: Vec<String> = got
                    .messages()
                    .iter()
                    .map(|m| m.message_id().unwrap().to_string())
                    .collect();
                ledger
                    .lock()
                    .unwrap()
                    .delete_attempted
                    .extend(ids.iter().cloned());
                match sqs
                    .delete_message_batch()
                    .queue_url(&url)
                    .set_entries(Some(entries))
                    .send()
                    .await
                {
                    Ok(r) => {
                        let mut l = ledger.lock().unwrap();
                        for s in r.successful() {
                            let i: usize = s.id()[1..].parse().unwrap();
                            l.deleted.insert(ids[i].clone());
                        }
                    }
                    Err(_) => break,
                }
            }
        }));
    }
    // Let the load run, then pull the plug without warning.
    let kill_after = Duration::from_millis(1500 + u64::from(std::process::id() % 1000));
    tokio::time::sleep(kill_after).await;
    server.kill_9();
    for t in tasks {
        t.await.unwrap();
    }
    let ledger = Arc::try_unwrap(ledger).ok().unwrap().into_inner().unwrap();
    assert!(
        ledger.sent.len() >= 100,
        "the load ran ({} sends acknowledged)",
        ledger.sent.len()
    );
    assert!(!ledger.deleted.is_empty(), "the load deleted messages");

    let server = SluiceProcess::start(&["--data-dir", &data]);
    let sqs = server.sdk();
    let mut present = HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = sqs
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .visibility_timeout(600)
            .wait_time_seconds(1)
            .send()
            .await
            .unwrap();
        present.extend(
            got.messages()
                .iter()
                .map(|m| m.message_id().unwrap().to_string()),
        );
        let visible: u64 = attr(&sqs, &url, Attr::ApproximateNumberOfMessages)
            .await
            .parse()
            .unwrap();
        let hidden_before_crash: u64 =
            attr(&sqs, &url, Attr::ApproximateNumberOfMessagesNotVisible)
                .await
                .parse()
                .unwrap();
        if got.messages().is_empty()
            && visible == 0
            && hidden_before_crash as usize == present.len()
        {
            break;
        }
        assert!(Instant::now() < deadline, "drained the queue in time");
    }
    let must_exist: Vec<&String> = ledger
        .sent
        .iter()
        .filter(|id| !ledger.delete_attempted.contains(*id))
        .collect();
    let lost: Vec<&&String> = must_exist
        .iter()
        .filter(|id| !present.contains(**id))
        .collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged messages lost, e.g. {:?}",
        lost.len(),
        lost.first()
    );
    let resurrected: Vec<&String> = ledger
        .deleted
        .iter()
        .filter(|id| present.contains(*id))
        .collect();
    assert!(
        resurrected.is_empty(),
        "{} deleted messages came back",
        resurrected.len()
    );
    eprintln!(
        "kill -9 after {kill_after:?}: {} sent, {} deleted, {} present after restart",
        ledger.sent.len(),
        ledger.deleted.len(),
        present.len()
    );
}
