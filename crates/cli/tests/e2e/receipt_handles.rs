//! Sealed receipt handles (rule A3) through real clients: an edited handle
//! is refused as SQS refuses a malformed one, whatever character changed;
//! a handle works only on the queue that gave it; handles survive a
//! kill -9 and restart of the embedded engine, and work on every node of
//! a PostgreSQL cluster.

use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry,
    QueueAttributeName as Attr,
};
use sluice_postgres::testing;

use crate::common::{SluiceProcess, TestServer, code, create_queue};

/// Receives one message of `url` for `visibility` seconds; its handle.
async fn receive_one(sqs: &aws_sdk_sqs::Client, url: &str, visibility: i32) -> String {
    let got = sqs
        .receive_message()
        .queue_url(url)
        .visibility_timeout(visibility)
        .send()
        .await
        .unwrap();
    got.messages()[0].receipt_handle().unwrap().to_string()
}

async fn send(sqs: &aws_sdk_sqs::Client, url: &str, body: &str) {
    sqs.send_message()
        .queue_url(url)
        .message_body(body)
        .send()
        .await
        .unwrap();
}

async fn in_flight(sqs: &aws_sdk_sqs::Client, url: &str) -> String {
    let a = sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(Attr::ApproximateNumberOfMessagesNotVisible)
        .send()
        .await
        .unwrap();
    a.attributes().unwrap()[&Attr::ApproximateNumberOfMessagesNotVisible].clone()
}

/// Every one-character edit of `handle`: at each position, the next
/// character of a ring of base64's two alphabets, and the one after.
fn one_character_edits(handle: &str) -> Vec<String> {
    let ring: Vec<char> = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/"
        .chars()
        .collect();
    let chars: Vec<char> = handle.chars().collect();
    let mut edits = Vec::new();
    for i in 0..chars.len() {
        let at = ring.iter().position(|&c| c == chars[i]).unwrap_or(0);
        for step in [1, 2] {
            let mut edited = chars.clone();
            edited[i] = ring[(at + step) % ring.len()];
            edits.push(edited.into_iter().collect());
        }
    }
    edits
}

/// A3: two consumers each hold a message in flight; every one-character
/// edit of the first's handle, at every position, is refused
/// (ReceiptHandleIsInvalid, naming the edited handle), by DeleteMessage,
/// DeleteMessageBatch and ChangeMessageVisibilityBatch, and neither
/// message is touched; the real handle then works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_every_one_character_edit_of_a_handle_is_refused() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "edits").await;
    send(&sqs, &url, "mine").await;
    send(&sqs, &url, "theirs").await;
    let mine = receive_one(&sqs, &url, 600).await;
    let _theirs = receive_one(&sqs, &url, 600).await;
    let edits = one_character_edits(&mine);
    assert!(edits.len() >= 2 * 20, "{mine}");

    let first = &edits[0];
    let e = sqs
        .delete_message()
        .queue_url(&url)
        .receipt_handle(first)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ReceiptHandleIsInvalid");
    assert_eq!(
        e.as_service_error().and_then(|s| s.meta().message()),
        Some(
            format!("The input receipt handle \"{first}\" is not a valid receipt handle.").as_str()
        )
    );
    for chunk in edits.chunks(10) {
        let entries = chunk.iter().enumerate().map(|(i, h)| {
            DeleteMessageBatchRequestEntry::builder()
                .id(i.to_string())
                .receipt_handle(h)
                .build()
                .unwrap()
        });
        let r = sqs
            .delete_message_batch()
            .queue_url(&url)
            .set_entries(Some(entries.collect()))
            .send()
            .await
            .unwrap();
        assert!(r.successful().is_empty(), "an edit was accepted: {r:?}");
        assert!(
            r.failed()
                .iter()
                .all(|f| f.code() == "ReceiptHandleIsInvalid"),
            "{r:?}"
        );
        let entries = chunk.iter().enumerate().map(|(i, h)| {
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id(i.to_string())
                .receipt_handle(h)
                .visibility_timeout(0)
                .build()
                .unwrap()
        });
        let r = sqs
            .change_message_visibility_batch()
            .queue_url(&url)
            .set_entries(Some(entries.collect()))
            .send()
            .await
            .unwrap();
        assert!(r.successful().is_empty(), "an edit was accepted: {r:?}");
    }
    assert_eq!(
        in_flight(&sqs, &url).await,
        "2",
        "no edit touched a message"
    );
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(&mine)
        .send()
        .await
        .unwrap();
    assert_eq!(in_flight(&sqs, &url).await, "1");
}

/// A3: a handle of queue A is refused on queue B (DeleteMessage,
/// ChangeMessageVisibility), though B has a message in flight, and works
/// on A.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_a_handle_works_only_on_its_own_queue() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let a = create_queue(&sqs, "queue-a").await;
    let b = create_queue(&sqs, "queue-b").await;
    send(&sqs, &a, "a").await;
    send(&sqs, &b, "b").await;
    let of_a = receive_one(&sqs, &a, 600).await;
    let _of_b = receive_one(&sqs, &b, 600).await;
    let e = sqs
        .delete_message()
        .queue_url(&b)
        .receipt_handle(&of_a)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ReceiptHandleIsInvalid");
    let e = sqs
        .change_message_visibility()
        .queue_url(&b)
        .receipt_handle(&of_a)
        .visibility_timeout(0)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ReceiptHandleIsInvalid");
    assert_eq!(in_flight(&sqs, &b).await, "1");
    sqs.delete_message()
        .queue_url(&a)
        .receipt_handle(&of_a)
        .send()
        .await
        .unwrap();
}

/// A3, D1: a handle given out before a kill -9 deletes its message after
/// the restart (the key is kept in the store); an edit of it is still
/// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_handles_survive_kill_9_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = SluiceProcess::start(&["--data-dir", data]);
    let sqs = server.sdk();
    let url = create_queue(&sqs, "kept").await;
    send(&sqs, &url, "x").await;
    let handle = receive_one(&sqs, &url, 600).await;
    server.kill_9();

    let server = SluiceProcess::start(&["--data-dir", data]);
    let sqs = server.sdk();
    let edited = &one_character_edits(&handle)[0];
    let e = sqs
        .delete_message()
        .queue_url(&url)
        .receipt_handle(edited)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ReceiptHandleIsInvalid");
    sqs.change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&handle)
        .visibility_timeout(300)
        .send()
        .await
        .expect("the handle from before the restart works");
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(&handle)
        .send()
        .await
        .expect("the handle from before the restart deletes");
    assert_eq!(in_flight(&sqs, &url).await, "0");
}

/// A3 across nodes: a handle one PostgreSQL node gave out works on the
/// other (both nodes seal with the one key in the database). Without
/// PostgreSQL's binaries it says SKIPPED and passes, as the other
/// multi-node tests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_handles_work_on_every_postgres_node() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let db = cluster.fresh_database().await;
    let a = SluiceProcess::start(&["--postgres", &db, "--postgres-pool-size", "4"]);
    let b = SluiceProcess::start(&["--postgres", &db, "--postgres-pool-size", "4"]);
    let (sa, sb) = (a.sdk(), b.sdk());
    let url = create_queue(&sa, "shared-handles").await;
    send(&sa, &url, "one").await;
    send(&sa, &url, "two").await;
    let from_a = receive_one(&sa, &url, 600).await;
    let from_b = receive_one(&sb, &url, 600).await;
    sb.change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&from_a)
        .visibility_timeout(300)
        .send()
        .await
        .expect("A's handle works on B");
    sb.delete_message()
        .queue_url(&url)
        .receipt_handle(&from_a)
        .send()
        .await
        .expect("A's handle deletes on B");
    sa.delete_message()
        .queue_url(&url)
        .receipt_handle(&from_b)
        .send()
        .await
        .expect("B's handle deletes on A");
    let e = sa
        .delete_message()
        .queue_url(&url)
        .receipt_handle(&one_character_edits(&from_b)[1])
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ReceiptHandleIsInvalid");
}
