//! What each SQS request names for the access check (rule A2), as an
//! exhaustive match: a new operation does not compile until it is decided
//! what it names.

use sluice_protocol::sqs::Request;

use crate::authorize::Named;

/// The queues, ARNs and handles `request` names.
pub fn named(request: &Request) -> Named<'_> {
    match request {
        Request::CreateQueue(r) => Named {
            queue_name: r.queue_name.as_deref().map(|n| (n, None)),
            redrive_policy: r
                .attributes
                .as_ref()
                .and_then(|a| a.get("RedrivePolicy"))
                .map(String::as_str),
            ..Named::default()
        },
        Request::GetQueueUrl(r) => Named {
            queue_name: (r.queue_name.as_deref())
                .map(|n| (n, r.queue_owner_aws_account_id.as_deref())),
            ..Named::default()
        },
        Request::SetQueueAttributes(r) => Named {
            queue_url: r.queue_url.as_deref(),
            redrive_policy: r
                .attributes
                .as_ref()
                .and_then(|a| a.get("RedrivePolicy"))
                .map(String::as_str),
            ..Named::default()
        },
        Request::StartMessageMoveTask(r) => Named {
            arns: [&r.source_arn, &r.destination_arn]
                .into_iter()
                .filter_map(|a| a.as_deref())
                .collect(),
            ..Named::default()
        },
        Request::ListMessageMoveTasks(r) => Named {
            arns: r.source_arn.as_deref().into_iter().collect(),
            ..Named::default()
        },
        Request::CancelMessageMoveTask(r) => Named {
            task_handle: r.task_handle.as_deref(),
            ..Named::default()
        },
        Request::ListQueues(_) => Named::default(),
        Request::AddPermission(r) => url(&r.queue_url),
        Request::ChangeMessageVisibility(r) => url(&r.queue_url),
        Request::ChangeMessageVisibilityBatch(r) => url(&r.queue_url),
        Request::DeleteMessage(r) => url(&r.queue_url),
        Request::DeleteMessageBatch(r) => url(&r.queue_url),
        Request::DeleteQueue(r) => url(&r.queue_url),
        Request::GetQueueAttributes(r) => url(&r.queue_url),
        Request::ListDeadLetterSourceQueues(r) => url(&r.queue_url),
        Request::ListQueueTags(r) => url(&r.queue_url),
        Request::PurgeQueue(r) => url(&r.queue_url),
        Request::ReceiveMessage(r) => url(&r.queue_url),
        Request::RemovePermission(r) => url(&r.queue_url),
        Request::SendMessage(r) => url(&r.queue_url),
        Request::SendMessageBatch(r) => url(&r.queue_url),
        Request::TagQueue(r) => url(&r.queue_url),
        Request::UntagQueue(r) => url(&r.queue_url),
    }
}

/// A request that names one queue by its URL.
fn url(queue_url: &Option<String>) -> Named<'_> {
    Named {
        queue_url: queue_url.as_deref(),
        ..Named::default()
    }
}
