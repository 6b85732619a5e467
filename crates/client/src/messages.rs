//! The message loop the bench drives and `dlq import` sends with, on the
//! generated SQS types: SendMessageBatch (encoded without serde's
//! byte-by-byte escaping) and ReceiveMessage (given the time its long
//! poll may wait, its answer parsed or left as bytes). DeleteMessageBatch
//! needs nothing beyond [`Client::call`].

use std::time::Duration;

use bytes::Bytes;
use sluice_protocol::Call;
use sluice_protocol::json_writer::write_str;
use sluice_protocol::sqs::{
    ReceiveMessageRequest, ReceiveMessageResult, SendMessageBatchRequest,
    SendMessageBatchRequestEntry, SendMessageBatchResult,
};

use crate::client::{Client, decode_output};
use crate::error::ClientError;

/// The entry ids `"0"` to `"9"`, so batches need not format them.
pub const ENTRY_IDS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

/// The position in its batch of an entry named by [`ENTRY_IDS`].
pub fn entry_index(id: &str) -> Option<usize> {
    ENTRY_IDS.iter().position(|candidate| *candidate == id)
}

impl Client {
    /// SendMessageBatch, written by the faster encoder below when it can.
    pub async fn send_message_batch(
        &self,
        input: &SendMessageBatchRequest,
    ) -> Result<SendMessageBatchResult, ClientError> {
        let target = SendMessageBatchRequest::TARGET;
        let body = match send_batch_json(input) {
            Some(body) => body,
            None => self.encode(target, input)?,
        };
        let (bytes, _) = self.post(target, body, self.request_timeout).await?;
        decode_output(target, &bytes)
    }

    /// ReceiveMessage, given the request timeout plus its `WaitTimeSeconds`
    /// to answer (a long poll on an empty queue answers only then).
    pub async fn receive_message(
        &self,
        input: &ReceiveMessageRequest,
    ) -> Result<ReceiveMessageResult, ClientError> {
        let bytes = self.receive_message_bytes(input).await?;
        decode_output(ReceiveMessageRequest::TARGET, &bytes)
    }

    /// [`Client::receive_message`]'s answer unparsed: the JSON of a
    /// [`ReceiveMessageResult`], for a reader that borrows the bodies from
    /// it instead of copying them (the bench's consumers).
    pub async fn receive_message_bytes(
        &self,
        input: &ReceiveMessageRequest,
    ) -> Result<Bytes, ClientError> {
        let target = ReceiveMessageRequest::TARGET;
        let wait = input.wait_time_seconds.unwrap_or(0).clamp(0, 3600);
        let timeout = self.request_timeout + Duration::from_secs(wait.unsigned_abs());
        let body = self.encode(target, input)?;
        let (bytes, _) = self.post(target, body, timeout).await?;
        Ok(bytes)
    }
}

/// The request as JSON, byte for byte what serde_json writes, with the
/// strings escaped by sluice-protocol's writer: serde_json's byte-by-byte
/// escaping of the bodies was 28 % of the load generator's instructions,
/// CPU taken from the server it measures. `None` for entries with members
/// besides id, body, group and deduplication id (serde writes those).
fn send_batch_json(input: &SendMessageBatchRequest) -> Option<Vec<u8>> {
    let queue_url = input.queue_url.as_deref()?;
    let entries = input.entries.as_deref()?;
    if !entries.iter().all(is_plain) {
        return None;
    }
    let bodies: usize = entries
        .iter()
        .map(|e| e.message_body.as_ref().map_or(0, String::len) + 64)
        .sum();
    let mut out = Vec::with_capacity(queue_url.len() + bodies + 32);
    out.extend_from_slice(b"{\"QueueUrl\":");
    write_str(&mut out, queue_url);
    out.extend_from_slice(b",\"Entries\":[");
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        let members = [
            ("\"Id\":", &entry.id),
            ("\"MessageBody\":", &entry.message_body),
            (
                "\"MessageDeduplicationId\":",
                &entry.message_deduplication_id,
            ),
            ("\"MessageGroupId\":", &entry.message_group_id),
        ];
        let mut first = true;
        for (name, value) in members {
            if let Some(value) = value {
                if !first {
                    out.push(b',');
                }
                first = false;
                out.extend_from_slice(name.as_bytes());
                write_str(&mut out, value);
            }
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
    Some(out)
}

/// An entry of only string members the fast writer knows.
fn is_plain(entry: &SendMessageBatchRequestEntry) -> bool {
    entry.delay_seconds.is_none()
        && entry.message_attributes.is_none()
        && entry.message_system_attributes.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(
        id: &str,
        body: &str,
        group: Option<&str>,
        dedup: Option<&str>,
    ) -> SendMessageBatchRequestEntry {
        SendMessageBatchRequestEntry {
            id: Some(id.into()),
            message_body: Some(body.into()),
            message_group_id: group.map(Into::into),
            message_deduplication_id: dedup.map(Into::into),
            ..Default::default()
        }
    }

    #[test]
    fn send_batch_json_is_what_serde_json_writes() {
        let request = SendMessageBatchRequest {
            queue_url: Some("http://127.0.0.1:9324/000000000000/q".into()),
            entries: Some(vec![
                entry(
                    "0",
                    "plain body padded to more than sixteen bytes",
                    None,
                    None,
                ),
                entry(
                    "1",
                    "quote \" backslash \\ newline \n tab \t nul \u{0} é 😀",
                    Some("group \"7\""),
                    Some("dedup-1"),
                ),
                entry("2", "x", None, Some("only-dedup")),
            ]),
        };
        assert_eq!(
            String::from_utf8(send_batch_json(&request).unwrap()).unwrap(),
            serde_json::to_string(&request).unwrap()
        );
    }

    #[test]
    fn entries_with_attributes_are_left_to_serde() {
        let mut with_delay = entry("0", "b", None, None);
        with_delay.delay_seconds = Some(5);
        let request = SendMessageBatchRequest {
            queue_url: Some("u".into()),
            entries: Some(vec![with_delay]),
        };
        assert!(send_batch_json(&request).is_none());
    }
}
