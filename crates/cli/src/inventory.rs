//! Every queue of a server with its attributes and tags, and which of them
//! are dead-letter queues (the targets of some queue's RedrivePolicy or
//! SluiceDeadLetterRoutes).

use std::collections::BTreeMap;

use sluice_core::attributes::RedrivePolicy;
use sluice_core::dead_letter_routes::{self, DeadLetterRoute, DeadLetterRoutes};

use sluice_client::{Client, ClientError};

/// One queue as GetQueueAttributes (All) and ListQueueTags show it.
#[derive(Debug, Clone, Default)]
pub struct QueueInfo {
    /// Queue URL.
    pub url: String,
    /// Queue name.
    pub name: String,
    /// Queue ARN.
    pub arn: String,
    /// Every attribute, as strings.
    pub attributes: BTreeMap<String, String>,
    /// Tags (empty unless asked for).
    pub tags: BTreeMap<String, String>,
}

impl QueueInfo {
    /// A numeric attribute, 0 when absent or not a number.
    pub fn number(&self, name: &str) -> u64 {
        self.attributes
            .get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// Whether it is a FIFO queue.
    pub fn fifo(&self) -> bool {
        self.attributes
            .get("FifoQueue")
            .is_some_and(|v| v == "true")
    }

    /// Its redrive policy, when it has a valid one.
    pub fn redrive(&self) -> Option<RedrivePolicy> {
        self.attributes
            .get("RedrivePolicy")
            .filter(|d| !d.is_empty())
            .and_then(|d| RedrivePolicy::parse(d).ok())
    }
}

impl QueueInfo {
    /// Its failure classes' dead-letter queues (rule X7), in the order
    /// given.
    pub fn routes(&self) -> Vec<DeadLetterRoute> {
        self.parsed_routes().unwrap_or_default().0
    }

    fn parsed_routes(&self) -> Option<DeadLetterRoutes> {
        self.attributes
            .get(dead_letter_routes::ATTRIBUTE)
            .filter(|d| !d.is_empty())
            .and_then(|d| DeadLetterRoutes::parse(d).ok())
    }

    /// Every dead-letter queue it sends messages to: its RedrivePolicy's
    /// and its failure classes', each once.
    pub fn dead_letter_targets(&self) -> Vec<String> {
        dead_letter_routes::dead_letter_targets(
            self.redrive().map(|p| p.dead_letter_target_arn),
            self.routes().into_iter().map(|r| r.dead_letter_target_arn),
        )
    }
}

/// The queue name at the end of an ARN or URL.
pub fn name_of(arn_or_url: &str) -> &str {
    arn_or_url.rsplit([':', '/']).next().unwrap_or(arn_or_url)
}

/// Every queue, sorted by name; tags too when `with_tags`. A queue deleted
/// while this runs is left out.
pub async fn all_queues(client: &Client, with_tags: bool) -> Result<Vec<QueueInfo>, ClientError> {
    let mut queues = Vec::new();
    for url in client.list_queue_urls().await? {
        let attributes = match client.queue_attributes(&url, &["All"]).await {
            Ok(a) => a,
            Err(e) if is_gone(&e) => continue,
            Err(e) => return Err(e),
        };
        let tags = if with_tags {
            match client.queue_tags(&url).await {
                Ok(t) => t,
                Err(e) if is_gone(&e) => continue,
                Err(e) => return Err(e),
            }
        } else {
            BTreeMap::new()
        };
        let arn = attributes.get("QueueArn").cloned().unwrap_or_default();
        queues.push(QueueInfo {
            name: name_of(&url).to_string(),
            url,
            arn,
            attributes,
            tags,
        });
    }
    queues.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(queues)
}

fn is_gone(e: &ClientError) -> bool {
    matches!(
        e.code(),
        Some("QueueDoesNotExist" | "AWS.SimpleQueueService.NonExistentQueue")
    )
}

/// The dead-letter queues among `queues` (those some queue's RedrivePolicy
/// or SluiceDeadLetterRoutes targets), each with the indexes of its
/// sources, in name order.
pub fn dead_letter_queues(queues: &[QueueInfo]) -> Vec<(usize, Vec<usize>)> {
    let mut out: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, q) in queues.iter().enumerate() {
        for target in q.dead_letter_targets() {
            if let Some(d) = queues.iter().position(|d| d.arn == target) {
                out.entry(d).or_default().push(i);
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(name: &str, redrive_to: Option<&str>) -> QueueInfo {
        let mut attributes = BTreeMap::new();
        if let Some(d) = redrive_to {
            attributes.insert(
                "RedrivePolicy".to_string(),
                format!(
                    r#"{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:{d}","maxReceiveCount":5}}"#
                ),
            );
        }
        QueueInfo {
            url: format!("http://localhost:9324/000000000000/{name}"),
            name: name.into(),
            arn: format!("arn:aws:sqs:us-east-1:000000000000:{name}"),
            attributes,
            tags: BTreeMap::new(),
        }
    }

    #[test]
    fn dead_letter_queues_are_the_targets_of_redrive_policies() {
        let queues = vec![
            queue("a", Some("dlq")),
            queue("b", Some("dlq")),
            queue("c", Some("missing")),
            queue("dlq", None),
            queue("plain", None),
        ];
        assert_eq!(dead_letter_queues(&queues), vec![(3, vec![0, 1])]);
        assert_eq!(
            name_of("arn:aws:sqs:us-east-1:000000000000:x.fifo"),
            "x.fifo"
        );
        assert_eq!(name_of("http://h:1/000000000000/x"), "x");
    }
}
