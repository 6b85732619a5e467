//! What each of sluice's own requests names for the access check (rule
//! A2), as an exhaustive match: a new operation does not compile until it
//! is decided what it names.

use sluice_protocol::sluice::Request;

use crate::authorize::Named;

/// The queues, ARNs, consumers and alarms `request` names.
pub fn named(request: &Request) -> Named<'_> {
    match request {
        Request::ListConsumers(r) => url(&r.queue_url),
        // A new consumer is reached through the queue it reads; a changed
        // one through that queue and the one it moves to.
        Request::CreateConsumer(r) => url(&r.queue_url),
        Request::UpdateConsumer(r) => Named {
            queue_url: r.queue_url.as_deref(),
            consumer: r.name.as_deref(),
            ..Named::default()
        },
        Request::DeleteConsumer(r) => consumer(&r.name),
        Request::PauseConsumer(r) => consumer(&r.name),
        Request::ResumeConsumer(r) => consumer(&r.name),
        Request::NackMessage(r) => url(&r.queue_url),
        Request::PeekMessages(r) => url(&r.queue_url),
        Request::RedriveMessages(r) => Named {
            queue_url: r.queue_url.as_deref(),
            arns: r.destination_arn.as_deref().into_iter().collect(),
            ..Named::default()
        },
        Request::PutAlarm(r) => Named {
            queue_url: r.queue_url.as_deref(),
            alarm_actions: r.actions.as_deref().unwrap_or_default(),
            ..Named::default()
        },
        // Alarms are listed only on queues the key may reach (the action
        // filters them), so naming them reaches nothing.
        Request::DescribeAlarms(r) => url(&r.queue_url),
        Request::DeleteAlarms(r) => Named {
            alarm_names: r.alarm_names.as_deref().unwrap_or_default(),
            ..Named::default()
        },
        Request::GetDepthHistory(r) => url(&r.queue_url),
        // A backup copies the whole server; its key is checked for the
        // action alone.
        Request::CreateBackup(_) => Named::default(),
        // Topics are listed of the key's own account only (the action
        // filters them); they are no queues.
        Request::DescribeTopics(_) => Named::default(),
        // Idempotency keys are the key's own account's; they are no queues.
        Request::ClaimIdempotencyKey(_)
        | Request::CompleteIdempotencyKey(_)
        | Request::ReleaseIdempotencyKey(_) => Named::default(),
        Request::ListArchivedMessages(r) => url(&r.queue_url),
        // A restore reaches the archived queue and the one it sends to.
        Request::RestoreArchivedMessages(r) => Named {
            queue_url: r.queue_url.as_deref(),
            destination_url: r.destination_queue_url.as_deref(),
            ..Named::default()
        },
    }
}

/// A request that names one queue by its URL.
fn url(queue_url: &Option<String>) -> Named<'_> {
    Named {
        queue_url: queue_url.as_deref(),
        ..Named::default()
    }
}

/// A request that names a push consumer.
fn consumer(name: &Option<String>) -> Named<'_> {
    Named {
        consumer: name.as_deref(),
        ..Named::default()
    }
}
