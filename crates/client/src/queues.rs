//! The look-ups the operator commands and the bench build on the queue
//! actions: a queue created or found, a queue by name, URL or ARN, every
//! queue, a queue's attributes and tags. Each is one or more
//! [`Client::call`]s of the generated SQS types.

use std::collections::BTreeMap;

use sluice_protocol::Call;
use sluice_protocol::sqs::{
    CreateQueueRequest, GetQueueAttributesRequest, GetQueueUrlRequest, GetQueueUrlResult,
    ListQueueTagsRequest, ListQueuesRequest,
};

use crate::client::{Client, decode_output};
use crate::error::ClientError;

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
        let input = CreateQueueRequest {
            queue_name: Some(name.to_string()),
            attributes: (!attributes.is_empty()).then(|| {
                attributes
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                    .collect()
            }),
            tags: None,
        };
        // Posted rather than called: the answer's headers tell the null
        // server apart.
        let target = CreateQueueRequest::TARGET;
        let body = self.encode(target, &input)?;
        let (bytes, headers) = match self.post(target, body, self.request_timeout).await {
            Err(ClientError::Service { code, .. })
                if code == "QueueAlreadyExists" || code == "QueueNameExists" =>
            {
                let input = GetQueueUrlRequest {
                    queue_name: Some(name.to_string()),
                    queue_owner_aws_account_id: None,
                };
                let body = self.encode(GetQueueUrlRequest::TARGET, &input)?;
                self.post(GetQueueUrlRequest::TARGET, body, self.request_timeout)
                    .await?
            }
            other => other?,
        };
        // CreateQueue's and GetQueueUrl's outputs have the one member.
        let output: GetQueueUrlResult = decode_output(target, &bytes)?;
        Ok(CreatedQueue {
            url: required_url(target, output.queue_url)?,
            null_server: headers.contains_key(NULL_SERVER_HEADER),
        })
    }

    /// Every queue URL (ListQueues, all pages).
    pub async fn list_queue_urls(&self) -> Result<Vec<String>, ClientError> {
        let mut urls = Vec::new();
        let mut input = ListQueuesRequest {
            max_results: Some(1000),
            ..Default::default()
        };
        loop {
            let page = self.call(&input).await?;
            urls.extend(page.queue_urls);
            match page.next_token {
                Some(t) if !t.is_empty() => input.next_token = Some(t),
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
        let input = GetQueueUrlRequest {
            queue_name: Some(name.to_string()),
            queue_owner_aws_account_id: None,
        };
        let output = self.call(&input).await?;
        required_url(GetQueueUrlRequest::TARGET, output.queue_url)
    }

    /// GetQueueAttributes of the named attributes (`All` for every one).
    pub async fn queue_attributes(
        &self,
        url: &str,
        names: &[&str],
    ) -> Result<BTreeMap<String, String>, ClientError> {
        let input = GetQueueAttributesRequest {
            queue_url: Some(url.to_string()),
            attribute_names: Some(names.iter().map(|n| (*n).to_string()).collect()),
        };
        Ok(self.call(&input).await?.attributes)
    }

    /// The tags of a queue (ListQueueTags).
    pub async fn queue_tags(&self, url: &str) -> Result<BTreeMap<String, String>, ClientError> {
        let input = ListQueueTagsRequest {
            queue_url: Some(url.to_string()),
        };
        Ok(self.call(&input).await?.tags)
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

/// The queue URL of an answer: the model leaves it optional, a queue's
/// look-up has no use for an answer without one.
fn required_url(target: &str, url: Option<String>) -> Result<String, ClientError> {
    url.ok_or_else(|| ClientError::Decode {
        action: target.into(),
        detail: "no QueueUrl".into(),
    })
}
