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

use serde_json::{Map, Value, json};

use super::browse::peek_page;
use super::{ExportArgs, ImportArgs};
use crate::admin::{outln, print_json};
use crate::inventory::name_of;
use sluice_client::Client;

/// Most entries in one SendMessageBatch.
const BATCH: usize = 10;

/// `dlq export`: pages through the queue with PeekMessages, so nothing is
/// received, hidden or counted.
pub async fn export(client: &Client, args: ExportArgs) -> anyhow::Result<u8> {
    let url = client.queue_url(&args.queue).await?;
    let filter = args.filter.to_params(client).await?;
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
    let mut entries: Vec<(usize, Value)> = Vec::new();
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
        let list: Vec<Value> = chunk.iter().map(|(_, e)| e.clone()).collect();
        let out = client
            .sqs(
                "SendMessageBatch",
                json!({ "QueueUrl": url, "Entries": list }),
            )
            .await?;
        sent += out["Successful"].as_array().map_or(0, |a| a.len() as u64);
        for f in out["Failed"].as_array().into_iter().flatten() {
            let line = f["Id"]
                .as_str()
                .and_then(|id| id.strip_prefix("line-"))
                .and_then(|n| n.parse::<u64>().ok());
            failed.push(json!({
                "Line": line,
                "Code": f["Code"],
                "Message": f["Message"],
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

/// The SendMessageBatch entry for one exported message.
fn send_entry(m: &Value, line: usize, fifo: bool) -> Result<Value, String> {
    let body = m["Body"]
        .as_str()
        .ok_or("no Body (is this a `sluice dlq export` file?)")?;
    let mut e = Map::new();
    e.insert("Id".into(), json!(format!("line-{line}")));
    e.insert("MessageBody".into(), json!(body));
    if let Some(attrs) = m["MessageAttributes"].as_object()
        && !attrs.is_empty()
    {
        e.insert("MessageAttributes".into(), Value::Object(attrs.clone()));
    }
    // The only system attribute a sender may set.
    if let Some(trace) = m["Attributes"]["AWSTraceHeader"].as_str() {
        e.insert(
            "MessageSystemAttributes".into(),
            json!({ "AWSTraceHeader": { "DataType": "String", "StringValue": trace } }),
        );
    }
    let group = m["MessageGroupId"]
        .as_str()
        .or(m["Attributes"]["MessageGroupId"].as_str());
    if let Some(g) = group {
        e.insert("MessageGroupId".into(), json!(g));
    }
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
        e.insert("MessageDeduplicationId".into(), json!(dedup));
    }
    Ok(Value::Object(e))
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
        assert_eq!(e["Id"], "line-7");
        assert_eq!(e["MessageBody"], "héllo");
        assert_eq!(e["MessageAttributes"]["b"]["BinaryValue"], "AAEC");
        assert_eq!(
            e["MessageSystemAttributes"]["AWSTraceHeader"]["StringValue"],
            "Root=1"
        );
        assert_eq!(e["MessageGroupId"], "g1");
        assert_eq!(e["MessageDeduplicationId"], "m-1");
        let standard = send_entry(&m, 7, false).unwrap();
        assert!(standard.get("MessageDeduplicationId").is_none());
    }

    #[test]
    fn bad_lines_are_refused() {
        assert!(send_entry(&json!({"MessageId": "x"}), 1, false).is_err());
        assert!(send_entry(&json!({"Body": "x"}), 1, true).is_err());
    }
}
