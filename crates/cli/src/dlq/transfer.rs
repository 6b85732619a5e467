//! `dlq export` and `dlq import` (rule X4): a queue's messages as JSON
//! Lines, one PeekMessages message per line, and back with SendMessageBatch.
//!
//! A line holds `MessageId`, `Body`, `MD5OfBody`, `State`, `ReceiveCount`,
//! `SentTimestamp`, the receive times, `MessageGroupId` (FIFO),
//! `FailureReason`, `Attributes` (system attributes, provenance included)
//! and `MessageAttributes` (`DataType` with `StringValue`, or `BinaryValue`
//! in base64), exactly as PeekMessages answers: nothing is lost.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};

use serde::Serialize;

use super::args::{ExportArgs, ImportArgs};
use super::browse::peek_page;
use crate::admin::{outln, print_json};
use crate::inventory::name_of;
use crate::table::or_null;
use sluice_client::Client;
use sluice_client::sluice::PeekedMessage;
use sluice_client::sqs::{
    MessageSystemAttributeValue, SendMessageBatchRequest, SendMessageBatchRequestEntry,
};

/// Most entries in one SendMessageBatch.
const BATCH: usize = 10;

/// `dlq export`: pages through the queue with PeekMessages, so nothing is
/// received, hidden or counted.
pub async fn export(client: &Client, args: ExportArgs) -> anyhow::Result<u8> {
    let url = client.queue_url(&args.queue).await?;
    let filter = args.filter.to_input(client).await?;
    let mut out: Box<dyn Write> = match &args.out {
        Some(path) => {
            Box::new(BufWriter::new(File::create(path).map_err(|e| {
                anyhow::anyhow!("cannot write {}: {e}", path.display())
            })?))
        }
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    let mut count = 0u64;
    let mut token: Option<String> = None;
    loop {
        let (page, next) = peek_page(client, &url, &filter, 100, token.as_deref()).await?;
        for m in &page {
            serde_json::to_writer(&mut out, m)?;
            out.write_all(b"\n")?;
            count += 1;
        }
        match next {
            Some(t) => token = Some(t),
            None => break,
        }
    }
    out.flush()?;
    let target = args
        .out
        .as_ref()
        .map_or("standard output".to_string(), |p| p.display().to_string());
    eprintln!(
        "exported {count} message(s) from {} to {target}",
        name_of(&url)
    );
    Ok(0)
}

/// `dlq import`.
pub async fn import(client: &Client, args: ImportArgs) -> anyhow::Result<u8> {
    let url = client.queue_url(&args.queue).await?;
    let attrs = client
        .queue_attributes(&url, &["FifoQueue", "ContentBasedDeduplication"])
        .await?;
    let fifo = attrs.get("FifoQueue").is_some_and(|v| v == "true");
    let reader: Box<dyn BufRead> = match &args.input {
        Some(path) => {
            Box::new(BufReader::new(File::open(path).map_err(|e| {
                anyhow::anyhow!("cannot read {}: {e}", path.display())
            })?))
        }
        None => Box::new(BufReader::new(std::io::stdin().lock())),
    };
    let source = args
        .input
        .as_ref()
        .map_or("standard input".to_string(), |p| p.display().to_string());
    // Every line is checked before the first send, so a bad file sends nothing.
    let mut entries: Vec<SendMessageBatchRequestEntry> = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| anyhow::anyhow!("cannot read {source}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let message =
            exported_message(&line).map_err(|e| anyhow::anyhow!("{source} line {n}: {e}"))?;
        let entry =
            send_entry(message, n, fifo).map_err(|e| anyhow::anyhow!("{source} line {n}: {e}"))?;
        entries.push(entry);
    }
    let mut sent = 0u64;
    let mut failed = Vec::new();
    for chunk in entries.chunks(BATCH) {
        let input = SendMessageBatchRequest {
            queue_url: Some(url.clone()),
            entries: Some(chunk.to_vec()),
        };
        let out = client.send_message_batch(&input).await?;
        sent += out.successful.len() as u64;
        for f in out.failed {
            let line =
                f.id.strip_prefix("line-")
                    .and_then(|n| n.parse::<u64>().ok());
            failed.push(FailedLine {
                line,
                code: f.code,
                message: f.message,
            });
        }
    }
    if args.json {
        print_json(&Imported {
            queue_url: &url,
            sent,
            failed: &failed,
        });
    } else {
        outln!("sent {sent} message(s) from {source} to {}", name_of(&url));
        for f in &failed {
            outln!(
                "  line {}: {}: {}",
                or_null(f.line),
                f.code,
                f.message.as_deref().unwrap_or("")
            );
        }
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}

/// `dlq import --json`.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Imported<'a> {
    queue_url: &'a str,
    sent: u64,
    failed: &'a [FailedLine],
}

/// A line the queue refused.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct FailedLine {
    /// Its line number in the file.
    line: Option<u64>,
    /// The SQS error code.
    code: String,
    /// The server's message.
    message: Option<String>,
}

/// One line of an export: a PeekMessages message.
fn exported_message(line: &str) -> Result<PeekedMessage, String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    serde_json::from_value(value).map_err(|e| format!("not a message of `sluice dlq export`: {e}"))
}

/// The SendMessageBatch entry of one exported message.
fn send_entry(
    m: PeekedMessage,
    line: usize,
    fifo: bool,
) -> Result<SendMessageBatchRequestEntry, String> {
    let body = m
        .body
        .ok_or("no Body (is this a `sluice dlq export` file?)")?;
    let message_attributes = Some(m.message_attributes).filter(|a| !a.is_empty());
    // The only system attribute a sender may set.
    let message_system_attributes = m.attributes.get("AWSTraceHeader").map(|trace| {
        let value = MessageSystemAttributeValue {
            data_type: Some("String".into()),
            string_value: Some(trace.clone()),
            ..Default::default()
        };
        BTreeMap::from([("AWSTraceHeader".to_string(), value)])
    });
    let group = (m.message_group_id).or_else(|| m.attributes.get("MessageGroupId").cloned());
    let mut message_deduplication_id = None;
    if fifo {
        if group.is_none() {
            return Err("no MessageGroupId, which a FIFO queue needs".into());
        }
        // The exported dedup id when there is one, else the original message
        // id: importing the same file twice within 5 minutes adds nothing.
        let dedup = (m.message_deduplication_id)
            .or_else(|| m.attributes.get("MessageDeduplicationId").cloned())
            .or(m.message_id)
            .ok_or("no MessageDeduplicationId and no MessageId")?;
        message_deduplication_id = Some(dedup);
    }
    Ok(SendMessageBatchRequestEntry {
        id: Some(format!("line-{line}")),
        message_body: Some(body),
        delay_seconds: None,
        message_attributes,
        message_system_attributes,
        message_deduplication_id,
        message_group_id: group,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_client::sqs::MessageAttributeValue;

    fn exported() -> PeekedMessage {
        PeekedMessage {
            message_id: Some("m-1".into()),
            body: Some("héllo".into()),
            message_group_id: Some("g1".into()),
            message_attributes: BTreeMap::from([(
                "b".to_string(),
                MessageAttributeValue {
                    data_type: Some("Binary".into()),
                    binary_value: Some("AAEC".into()),
                    ..Default::default()
                },
            )]),
            attributes: BTreeMap::from([
                ("AWSTraceHeader".to_string(), "Root=1".to_string()),
                ("DeadLetterQueueSourceArn".to_string(), "arn".to_string()),
            ]),
            ..Default::default()
        }
    }

    #[test]
    fn entries_keep_attributes_and_fifo_fields() {
        let e = send_entry(exported(), 7, true).unwrap();
        let e = serde_json::to_value(e).unwrap();
        assert_eq!(e["Id"], "line-7");
        assert_eq!(e["MessageBody"], "héllo");
        assert_eq!(e["MessageAttributes"]["b"]["BinaryValue"], "AAEC");
        assert_eq!(e["MessageAttributes"]["b"]["DataType"], "Binary");
        assert_eq!(
            e["MessageSystemAttributes"]["AWSTraceHeader"]["StringValue"],
            "Root=1"
        );
        assert_eq!(e["MessageGroupId"], "g1");
        assert_eq!(e["MessageDeduplicationId"], "m-1");
        let standard = send_entry(exported(), 7, false).unwrap();
        assert!(standard.message_deduplication_id.is_none());
    }

    #[test]
    fn exported_lines_read_back_as_they_were_written() {
        let line = serde_json::to_string(&exported()).unwrap();
        assert_eq!(exported_message(&line).unwrap(), exported());
        assert!(
            exported_message("{nope")
                .unwrap_err()
                .starts_with("not JSON: ")
        );
        assert!(exported_message(r#"{"Body": 5}"#).is_err());
    }

    #[test]
    fn bad_lines_are_refused() {
        let no_body = PeekedMessage {
            message_id: Some("x".into()),
            ..Default::default()
        };
        assert!(send_entry(no_body, 1, false).is_err());
        let no_group = PeekedMessage {
            body: Some("x".into()),
            ..Default::default()
        };
        assert!(send_entry(no_group, 1, true).is_err());
    }
}
