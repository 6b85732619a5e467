//! The actions' calls: the message loop the bench drives (typed, borrowing
//! requests from `wire.rs`, encoded without copying bodies twice) and the
//! queue look-ups of the operator commands.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use hyper::header::HeaderValue;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::client::Client;
use crate::error::ClientError;
use crate::wire::{
    DeleteEntry, DeleteMessageBatchRequest, DeleteMessageBatchResponse, ReceiveMessageRequest,
    ReceiveMessageResponse, ReceivedMessage, SendEntry, SendMessageBatchRequest,
    SendMessageBatchResponse,
};

/// The header the bench's null server puts on every response, so a run can
/// tell it is not talking to a real queue.
pub const NULL_SERVER_HEADER: &str = "x-sluice-null-server";

/// A queue the endpoint created or already had.
#[derive(Debug, Clone)]
pub struct CreatedQueue {
    /// Its URL, as the endpoint gave it.
    pub url: String,
    /// Whether the endpoint is sluice's null server.
    pub null_server: bool,
}

impl Client {
    /// CreateQueue, with `attributes`; falls back to GetQueueUrl when the
    /// queue exists with other attributes.
    pub async fn create_queue(
        &self,
        name: &str,
        attributes: &[(&str, &str)],
    ) -> Result<CreatedQueue, ClientError> {
        let attrs: serde_json::Map<String, serde_json::Value> = attributes
            .iter()
            .map(|(k, v)| ((*k).to_string(), serde_json::Value::from(*v)))
            .collect();
        let mut input = serde_json::json!({ "QueueName": name });
        if !attrs.is_empty() {
            input["Attributes"] = serde_json::Value::Object(attrs);
        }
        let created = self
            .call::<Value>("AmazonSQS.CreateQueue", &input, self.request_timeout)
            .await;
        let (output, headers) = match created {
            Err(ClientError::Service { code, .. })
                if code == "QueueAlreadyExists" || code == "QueueNameExists" =>
            {
                self.call::<Value>(
                    "AmazonSQS.GetQueueUrl",
                    &json!({ "QueueName": name }),
                    self.request_timeout,
                )
                .await?
            }
            other => other?,
        };
        let url = output
            .get("QueueUrl")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| ClientError::Decode {
                action: "CreateQueue".into(),
                detail: "no QueueUrl in the response".into(),
            })?
            .to_string();
        Ok(CreatedQueue {
            url,
            null_server: headers.contains_key(NULL_SERVER_HEADER),
        })
    }

    /// PurgeQueue.
    pub async fn purge_queue(&self, url: &str) -> Result<(), ClientError> {
        self.call::<Value>(
            "AmazonSQS.PurgeQueue",
            &json!({ "QueueUrl": url }),
            self.request_timeout,
        )
        .await
        .map(|_| ())
    }

    /// SendMessageBatch.
    pub async fn send_message_batch(
        &self,
        url: &str,
        entries: Vec<SendEntry<'_>>,
    ) -> Result<SendMessageBatchResponse, ClientError> {
        let input = SendMessageBatchRequest {
            queue_url: Cow::Borrowed(url),
            entries,
        };
        let target = "AmazonSQS.SendMessageBatch";
        let (bytes, _) = self
            .post(
                HeaderValue::from_static(target),
                input.to_json(),
                self.request_timeout,
            )
            .await?;
        decode(target, &bytes)
    }

    /// ReceiveMessage of up to `max` messages, waiting up to `wait_seconds`.
    /// The answer is parsed by [`ReceiveOutput::messages`], borrowing from it.
    pub async fn receive_message(
        &self,
        url: &str,
        max: u32,
        wait_seconds: u32,
    ) -> Result<ReceiveOutput, ClientError> {
        let input = ReceiveMessageRequest {
            queue_url: Cow::Borrowed(url),
            max_number_of_messages: Some(max),
            wait_time_seconds: Some(wait_seconds),
        };
        let timeout = self.request_timeout + Duration::from_secs(u64::from(wait_seconds));
        self.exchange("AmazonSQS.ReceiveMessage", &input, timeout)
            .await
            .map(|(bytes, _)| ReceiveOutput(bytes))
    }

    /// DeleteMessageBatch.
    pub async fn delete_message_batch(
        &self,
        url: &str,
        entries: Vec<DeleteEntry<'_>>,
    ) -> Result<DeleteMessageBatchResponse, ClientError> {
        let input = DeleteMessageBatchRequest {
            queue_url: Cow::Borrowed(url),
            entries,
        };
        self.call("AmazonSQS.DeleteMessageBatch", &input, self.request_timeout)
            .await
            .map(|(output, _)| output)
    }

    /// POSTs one action and decodes its output, or its SQS error.
    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        target: &'static str,
        input: &impl serde::Serialize,
        timeout: Duration,
    ) -> Result<(T, hyper::HeaderMap), ClientError> {
        let (bytes, headers) = self.exchange(target, input, timeout).await?;
        let output = decode(target, &bytes)?;
        Ok((output, headers))
    }

    /// POSTs one action (a static target) with an input serde writes.
    async fn exchange(
        &self,
        target: &'static str,
        input: &impl serde::Serialize,
        timeout: Duration,
    ) -> Result<(Bytes, hyper::HeaderMap), ClientError> {
        let body = serde_json::to_vec(input).map_err(|e| ClientError::Decode {
            action: target.into(),
            detail: e.to_string(),
        })?;
        self.post(HeaderValue::from_static(target), body, timeout)
            .await
    }

    /// Every queue URL (ListQueues, all pages).
    pub async fn list_queue_urls(&self) -> Result<Vec<String>, ClientError> {
        let mut urls = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut input = json!({ "MaxResults": 1000 });
            if let Some(t) = &token {
                input["NextToken"] = json!(t);
            }
            let out = self.sqs("ListQueues", input).await?;
            urls.extend(strings(&out["QueueUrls"]));
            match out["NextToken"].as_str() {
                Some(t) if !t.is_empty() => token = Some(t.to_string()),
                _ => return Ok(urls),
            }
        }
    }

    /// The URL of a queue given by name, URL or ARN (a URL is checked to
    /// name an existing queue).
    pub async fn queue_url(&self, queue: &str) -> Result<String, ClientError> {
        let name = if queue.starts_with("http://") || queue.starts_with("https://") {
            self.queue_attributes(queue, &["QueueArn"]).await?;
            return Ok(queue.to_string());
        } else if queue.starts_with("arn:") {
            queue.rsplit(':').next().unwrap_or(queue)
        } else {
            queue
        };
        let out = self
            .sqs("GetQueueUrl", json!({ "QueueName": name }))
            .await?;
        out["QueueUrl"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| ClientError::Decode {
                action: "GetQueueUrl".into(),
                detail: "no QueueUrl".into(),
            })
    }

    /// GetQueueAttributes of the named attributes (`All` for every one).
    pub async fn queue_attributes(
        &self,
        url: &str,
        names: &[&str],
    ) -> Result<BTreeMap<String, String>, ClientError> {
        let out = self
            .sqs(
                "GetQueueAttributes",
                json!({ "QueueUrl": url, "AttributeNames": names }),
            )
            .await?;
        Ok(string_map(&out["Attributes"]))
    }

    /// ListQueueTags.
    pub async fn queue_tags(&self, url: &str) -> Result<BTreeMap<String, String>, ClientError> {
        let out = self
            .sqs("ListQueueTags", json!({ "QueueUrl": url }))
            .await?;
        Ok(string_map(&out["Tags"]))
    }

    /// The ARN of a queue given by name, URL or ARN.
    pub async fn queue_arn(&self, queue: &str) -> Result<String, ClientError> {
        let url = self.queue_url(queue).await?;
        let attrs = self.queue_attributes(&url, &["QueueArn"]).await?;
        attrs
            .get("QueueArn")
            .cloned()
            .ok_or_else(|| ClientError::Decode {
                action: "GetQueueAttributes".into(),
                detail: "no QueueArn".into(),
            })
    }
}

/// The strings of a JSON array (others skipped).
pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A JSON object of strings as a map (non-strings skipped).
pub fn string_map(value: &Value) -> BTreeMap<String, String> {
    value
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The body of a ReceiveMessage answer, parsed on demand so the messages can
/// borrow from it.
pub struct ReceiveOutput(Bytes);

impl ReceiveOutput {
    /// The messages received (none when the queue had nothing ready).
    pub fn messages(&self) -> Result<Vec<ReceivedMessage<'_>>, ClientError> {
        decode::<ReceiveMessageResponse>("AmazonSQS.ReceiveMessage", &self.0)
            .map(|output| output.messages)
    }
}

/// Parses the JSON output of `target`.
fn decode<'a, T: Deserialize<'a>>(target: &str, bytes: &'a [u8]) -> Result<T, ClientError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let shown: String = String::from_utf8_lossy(bytes).chars().take(300).collect();
        ClientError::Decode {
            action: target.into(),
            detail: format!("{e}: {shown}"),
        }
    })
}
