//! The queue actions and the look-ups the operator commands build on them
//! (a queue by name, URL or ARN; every queue; a queue's attributes).

use std::collections::BTreeMap;

use sluice_protocol::requests::{
    CreateQueueInput, GetQueueAttributesInput, GetQueueUrlInput, ListQueuesInput, QueueUrlInput,
};

use crate::client::{Client, decode};
use crate::error::ClientError;
use crate::responses::{
    Empty, GetQueueAttributesOutput, ListQueueTagsOutput, ListQueuesOutput, QueueUrlOutput,
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
        let input = CreateQueueInput {
            queue_name: Some(name.to_string()),
            attributes: (!attributes.is_empty()).then(|| {
                attributes
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                    .collect()
            }),
            tags: None,
        };
        let target = "AmazonSQS.CreateQueue";
        let body = self.encode(target, &input)?;
        let (bytes, headers) = match self.post(target, body, self.request_timeout).await {
            Err(ClientError::Service { code, .. })
                if code == "QueueAlreadyExists" || code == "QueueNameExists" =>
            {
                let target = "AmazonSQS.GetQueueUrl";
                let input = GetQueueUrlInput {
                    queue_name: Some(name.to_string()),
                    queue_owner_aws_account_id: None,
                };
                let body = self.encode(target, &input)?;
                self.post(target, body, self.request_timeout).await?
            }
            other => other?,
        };
        let output: QueueUrlOutput = decode(target, &bytes)?;
        Ok(CreatedQueue {
            url: output.queue_url,
            null_server: headers.contains_key(NULL_SERVER_HEADER),
        })
    }

    /// GetQueueUrl.
    pub async fn get_queue_url(
        &self,
        input: &GetQueueUrlInput,
    ) -> Result<QueueUrlOutput, ClientError> {
        self.call("AmazonSQS.GetQueueUrl", input).await
    }

    /// ListQueues: one page.
    pub async fn list_queues(
        &self,
        input: &ListQueuesInput,
    ) -> Result<ListQueuesOutput, ClientError> {
        self.call("AmazonSQS.ListQueues", input).await
    }

    /// GetQueueAttributes.
    pub async fn get_queue_attributes(
        &self,
        input: &GetQueueAttributesInput,
    ) -> Result<GetQueueAttributesOutput, ClientError> {
        self.call("AmazonSQS.GetQueueAttributes", input).await
    }

    /// ListQueueTags.
    pub async fn list_queue_tags(
        &self,
        input: &QueueUrlInput,
    ) -> Result<ListQueueTagsOutput, ClientError> {
        self.call("AmazonSQS.ListQueueTags", input).await
    }

    /// PurgeQueue.
    pub async fn purge_queue(&self, url: &str) -> Result<(), ClientError> {
        let input = QueueUrlInput {
            queue_url: Some(url.to_string()),
        };
        self.call::<Empty>("AmazonSQS.PurgeQueue", &input)
            .await
            .map(|_| ())
    }

    /// Every queue URL (ListQueues, all pages).
    pub async fn list_queue_urls(&self) -> Result<Vec<String>, ClientError> {
        let mut urls = Vec::new();
        let mut input = ListQueuesInput {
            max_results: Some(1000),
            ..Default::default()
        };
        loop {
            let page = self.list_queues(&input).await?;
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
        let input = GetQueueUrlInput {
            queue_name: Some(name.to_string()),
            queue_owner_aws_account_id: None,
        };
        Ok(self.get_queue_url(&input).await?.queue_url)
    }

    /// GetQueueAttributes of the named attributes (`All` for every one).
    pub async fn queue_attributes(
        &self,
        url: &str,
        names: &[&str],
    ) -> Result<BTreeMap<String, String>, ClientError> {
        let input = GetQueueAttributesInput {
            queue_url: Some(url.to_string()),
            attribute_names: Some(names.iter().map(|n| (*n).to_string()).collect()),
        };
        Ok(self.get_queue_attributes(&input).await?.attributes)
    }

    /// The tags of a queue (ListQueueTags).
    pub async fn queue_tags(&self, url: &str) -> Result<BTreeMap<String, String>, ClientError> {
        let input = QueueUrlInput {
            queue_url: Some(url.to_string()),
        };
        Ok(self.list_queue_tags(&input).await?.tags)
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
