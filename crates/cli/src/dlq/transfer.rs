//! `dlq export` and `dlq import` (rule X4): a queue's messages as JSON
//! Lines, one PeekMessages message per line, and back with SendMessageBatch.
//!
//! A line holds `MessageId`, `Body`, `MD5OfBody`, `State`, `ReceiveCount`,
//! `SentTimestamp`, the receive times, `MessageGroupId` (FIFO),
//! `FailureReason`, `Attributes` (system attributes, provenance included)
//! and `MessageAttributes` (`DataType` with `StringValue`, or `BinaryValue`
//! in base64), exactly as PeekMessages answers: nothing is lost.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};

use serde_json::{Value, json};

use super::args::{ExportArgs, ImportArgs};
use super::browse::peek_page;
use crate::admin::{outln, print_json};
use crate::inventory::name_of;
use sluice_client::Client;
use sluice_client::requests::{
    MessageInput, SendMessageBatchInput, WireAttributeValue, WireAttributes,
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
    let mut entries: Vec<(usize, MessageInput)> = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| anyhow::anyhow!("cannot read {source}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let message: Value = serde_json::from_str(&line)
            .map_err(|e| anyhow::anyhow!("{source} line {n}: not JSON: {e}"))?;
        let entry =
            send_entry(&message, n, fifo).map_err(|e| anyhow::anyhow!("{source} line {n}: {e}"))?;
        entries.push((n, entry));
    }
    let mut sent = 0u64;
    let mut failed = Vec::new();
    for chunk in entries.chunks(BATCH) {
        let input = SendMessageBatchInput {
            queue_url: Some(url.clone()),
            entries: Some(chunk.iter().map(|(_, e)| e.clone()).collect()),
        };
        let out = client.send_message_batch(&input).await?;
        sent += out.successful.len() as u64;
        for f in out.failed {
            let line =
                f.id.strip_prefix("line-")
                    .and_then(|n| n.parse::<u64>().ok());
            failed.push(json!({
                "Line": line,
                "Code": f.code,
                "Message": f.message,
            }));
        }
    }
    if args.json {
        print_json(&json!({ "QueueUrl": url, "Sent": sent, "Failed": failed }));
    } else {
        outln!("sent {sent} message(s) from {source} to {}", name_of(&url));
        for f in &failed {
            outln!(
                "  line {}: {}: {}",
                f["Line"],
                f["Code"].as_str().unwrap_or(""),
                f["Message"].as_str().unwrap_or("")
            );
        }
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}

/// The SendMessageBatch entry of one exported message.
fn send_entry(m: &Value, line: usize, fifo: bool) -> Result<MessageInput, String> {
    let body = m["Body"]
        .as_str()
        .ok_or("no Body (is this a `sluice dlq export` file?)")?;
    let message_attributes = match m["MessageAttributes"].as_object() {
        Some(attrs) if !attrs.is_empty() => Some(
            serde_json::from_value::<WireAttributes>(Value::Object(attrs.clone()))
                .map_err(|e| format!("MessageAttributes: {e}"))?,
        ),
        _ => None,
    };
    // The only system attribute a sender may set.
    let message_system_attributes = m["Attributes"]["AWSTraceHeader"].as_str().map(|trace| {
        let value = WireAttributeValue {
            data_type: Some("String".into()),
            string_value: Some(trace.to_string()),
            ..Default::default()
        };
        WireAttributes::from([("AWSTraceHeader".to_string(), value)])
    });
    let group = m["MessageGroupId"]
        .as_str()
        .or(m["Attributes"]["MessageGroupId"].as_str());
    let mut message_deduplication_id = None;
    if fifo {
        if group.is_none() {
            return Err("no MessageGroupId, which a FIFO queue needs".into());
        }
        // The exported dedup id when there is one, else the original message
        // id: importing the same file twice within 5 minutes adds nothing.
        let dedup = m["MessageDeduplicationId"]
            .as_str()
            .or(m["Attributes"]["MessageDeduplicationId"].as_str())
            .or(m["MessageId"].as_str())
            .ok_or("no MessageDeduplicationId and no MessageId")?;
        message_deduplication_id = Some(dedup.to_string());
    }
    Ok(MessageInput {
        id: Some(format!("line-{line}")),
        message_body: Some(body.to_string()),
        delay_seconds: None,
        message_attributes,
        message_system_attributes,
        message_deduplication_id,
        message_group_id: group.map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_attributes_and_fifo_fields() {
        let m = json!({
            "MessageId": "m-1",
            "Body": "héllo",
            "MessageGroupId": "g1",
            "MessageAttributes": {"b": {"DataType": "Binary", "BinaryValue": "AAEC"}},
            "Attributes": {"AWSTraceHeader": "Root=1", "DeadLetterQueueSourceArn": "arn"}
        });
        let e = send_entry(&m, 7, true).unwrap();
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
        let standard = send_entry(&m, 7, false).unwrap();
        assert!(standard.message_deduplication_id.is_none());
    }

    #[test]
    fn bad_lines_are_refused() {
        assert!(send_entry(&json!({"MessageId": "x"}), 1, false).is_err());
        assert!(send_entry(&json!({"Body": "x"}), 1, true).is_err());
    }
}
