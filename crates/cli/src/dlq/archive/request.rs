//! The requests `dlq archive` makes: which URL names a queue's archive
//! (even once the queue is gone), and a filtered ListArchivedMessages.

use sluice_client::sluice::ListArchivedMessagesRequest;
use sluice_client::{Client, ClientError};

use crate::dlq::filter::MessageFilter;

/// The largest ListArchivedMessages page.
pub(super) const MAX_PAGE: usize = 100;

/// The URL of the queue whose archive to read. The archive outlives its
/// queue, so a queue the server no longer knows still gets a URL the
/// server reads the archive's key from (the host does not matter to it).
pub(super) async fn archive_queue_url(client: &Client, queue: &str) -> anyhow::Result<String> {
    match client.queue_url(queue).await {
        Ok(url) => Ok(url),
        Err(e) if is_missing_queue(&e) => Ok(gone_queue_url(client.endpoint(), queue)),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn is_missing_queue(e: &ClientError) -> bool {
    matches!(
        e.code(),
        Some("QueueDoesNotExist" | "AWS.SimpleQueueService.NonExistentQueue")
    )
}

/// A URL naming a queue that no longer exists: a URL as given, an ARN as
/// `…/<region>/<account>/<name>` (valid in any region), a name bare (the
/// server's own region and account).
fn gone_queue_url(endpoint: &str, queue: &str) -> String {
    if queue.starts_with("http://") || queue.starts_with("https://") {
        return queue.to_string();
    }
    let parts: Vec<&str> = queue.split(':').collect();
    if let ["arn", _, _, region, account, name] = parts.as_slice() {
        return format!(
            "{}/{region}/{account}/{name}",
            endpoint.trim_end_matches('/')
        );
    }
    queue.to_string()
}

/// A ListArchivedMessages request of the queue at `url` with this filter:
/// the members PeekMessages filters with, under the same names.
pub(super) fn list_request(filter: &MessageFilter, url: &str) -> ListArchivedMessagesRequest {
    let f = filter.clone();
    ListArchivedMessagesRequest {
        queue_url: Some(url.to_string()),
        sent_after: f.sent_after,
        sent_before: f.sent_before,
        body_contains: f.body_contains,
        attribute_name: f.attribute_name,
        attribute_value: f.attribute_value,
        source_queue_arn: f.source_queue_arn,
        failure_reason_contains: f.failure_reason_contains,
        failure_class: f.failure_class,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_is_filtered_as_peek_filters() {
        let filter = MessageFilter {
            sent_after: Some(1),
            sent_before: Some(2),
            body_contains: Some("b".into()),
            attribute_name: Some("n".into()),
            attribute_value: Some("v".into()),
            source_queue_arn: Some("arn".into()),
            failure_reason_contains: Some("r".into()),
            failure_class: Some("c".into()),
        };
        let listed = serde_json::to_value(list_request(&filter, "u")).unwrap();
        let peeked = serde_json::to_value(filter.peek("u")).unwrap();
        assert_eq!(listed, peeked);
    }

    #[test]
    fn a_deleted_queue_still_has_a_url() {
        let e = "http://h:9324";
        assert_eq!(gone_queue_url(e, "orders"), "orders");
        assert_eq!(
            gone_queue_url(e, "http://x/000000000000/orders"),
            "http://x/000000000000/orders"
        );
        assert_eq!(
            gone_queue_url(e, "arn:aws:sqs:eu-west-1:000000000000:orders"),
            "http://h:9324/eu-west-1/000000000000/orders"
        );
    }
}
