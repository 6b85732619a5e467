//! Rule W4 for batches: every body of a SendMessageBatch gets its own MD5,
//! in the send's answer (both wire protocols) and in the receive's, whatever
//! the mix of lengths and whichever entries fail. The server hashes a
//! batch's bodies side by side in vector lanes; the expected digests here
//! come from `md5_of_body`, which hashes one body at a time with the `md-5`
//! crate, and from the SQS documentation's rule that `MD5OfMessageBody` and
//! `MD5OfBody` are the hex MD5 of the body's UTF-8 bytes. In memory, on the
//! durable engine (which keeps each digest) and on PostgreSQL (which does
//! not, so its receives hash the bodies again, together).

use std::collections::BTreeMap;

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use sluice_core::digest::md5_of_body;

use crate::common::{
    RawClient, SluiceProcess, TestServer, create_queue, on_durable, on_postgres, sdk_client,
};

/// A body of `bytes` UTF-8 bytes, told apart by `tag`, some with
/// two-byte characters.
fn body(tag: usize, bytes: usize) -> String {
    let mut b = format!("{tag}:");
    if tag % 2 == 1 {
        while b.len() + 2 <= bytes.min(40) {
            b.push('é');
        }
    }
    while b.len() < bytes {
        b.push((b'a' + (b.len() % 26) as u8) as char);
    }
    b
}

/// Lengths on both sides of where MD5's padding needs a second block
/// (55, 56) and of whole 64-byte blocks, and a long one.
const LENGTHS: [usize; 9] = [3, 55, 56, 63, 64, 65, 119, 120, 4000];

async fn batch_digests(sqs: &aws_sdk_sqs::Client, raw: &RawClient) {
    let url = create_queue(sqs, "digests").await;
    let bodies: Vec<String> = LENGTHS
        .iter()
        .enumerate()
        .map(|(i, &n)| body(i, n))
        .collect();
    let mut entries: Vec<SendMessageBatchRequestEntry> = bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            SendMessageBatchRequestEntry::builder()
                .id(format!("e{i}"))
                .message_body(b)
                .build()
                .expect("entry")
        })
        .collect();
    // A failing entry among them leaves the others' digests in place.
    entries.insert(
        4,
        SendMessageBatchRequestEntry::builder()
            .id("bad")
            .message_body("\u{1}")
            .build()
            .expect("entry"),
    );
    let sent = sqs
        .send_message_batch()
        .queue_url(&url)
        .set_entries(Some(entries))
        .send()
        .await
        .expect("send batch");
    assert_eq!(sent.failed().len(), 1, "{:?}", sent.failed());
    assert_eq!(sent.failed()[0].id(), "bad");
    assert_eq!(sent.successful().len(), bodies.len());
    for entry in sent.successful() {
        let i: usize = entry.id()[1..].parse().expect("id");
        assert_eq!(
            entry.md5_of_message_body(),
            md5_of_body(&bodies[i]),
            "entry {} ({} bytes)",
            entry.id(),
            bodies[i].len()
        );
    }

    // The Query protocol's answer carries the same digests, in order.
    let query_bodies: Vec<String> = LENGTHS[..3]
        .iter()
        .enumerate()
        .map(|(i, &n)| body(100 + i, n))
        .collect();
    let mut params = vec![("Action".to_string(), "SendMessageBatch".to_string())];
    for (i, b) in query_bodies.iter().enumerate() {
        let n = i + 1;
        params.push((
            format!("SendMessageBatchRequestEntry.{n}.Id"),
            format!("q{i}"),
        ));
        params.push((
            format!("SendMessageBatchRequestEntry.{n}.MessageBody"),
            b.clone(),
        ));
    }
    let params: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    // The queue URL's path: http://host:port/<account>/<name>.
    let path = url.splitn(4, '/').nth(3).expect("queue URL path");
    let answer = raw.query(&format!("/{path}"), &params);
    assert_eq!(answer.status, 200, "{}", answer.body);
    let want: Vec<String> = query_bodies.iter().map(|b| md5_of_body(b)).collect();
    assert_eq!(answer.xml_all("MD5OfMessageBody"), want);

    // Every delivery shows its body's digest.
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for _ in 0..20 {
        let got = sqs
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .send()
            .await
            .expect("receive");
        for m in got.messages() {
            let b = m.body().expect("body").to_string();
            seen.insert(b, m.md5_of_body().expect("digest").to_string());
        }
        if seen.len() == bodies.len() + 3 {
            break;
        }
    }
    assert_eq!(seen.len(), bodies.len() + 3, "every message received");
    for (b, digest) in &seen {
        assert_eq!(*digest, md5_of_body(b), "{} bytes", b.len());
    }
}

/// W4 for batches, in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w4_each_batch_entry_has_its_own_digest() {
    let server = TestServer::start().await;
    batch_digests(&server.sdk(), &server.raw()).await;
}

/// W4 for batches on the durable engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w4_each_batch_entry_has_its_own_digest_durable() {
    on_durable(async |args: &[&str]| {
        let server = SluiceProcess::start(args);
        batch_digests(&sdk_client(&server.endpoint), &server.raw()).await;
    })
    .await;
}

/// W4 for batches on a PostgreSQL node. Without PostgreSQL's binaries it
/// says SKIPPED, and fails instead with SLUICE_REQUIRE_POSTGRES=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w4_each_batch_entry_has_its_own_digest_on_postgres() {
    on_postgres(async |args: &[&str]| {
        let server = SluiceProcess::start(args);
        batch_digests(&sdk_client(&server.endpoint), &server.raw()).await;
    })
    .await;
}
