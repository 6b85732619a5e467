//! One function per SQS action. Find an action by its name:
//!
//! | action | file |
//! |---|---|
//! | CreateQueue, GetQueueUrl, ListQueues, DeleteQueue, PurgeQueue | `queues.rs` |
//! | GetQueueAttributes, SetQueueAttributes | `attributes.rs` |
//! | TagQueue, UntagQueue, ListQueueTags | `tags.rs` |
//! | AddPermission, RemovePermission | `permissions.rs` |
//! | SendMessage, SendMessageBatch | `send.rs` |
//! | ReceiveMessage | `receive.rs` |
//! | DeleteMessage, DeleteMessageBatch | `delete.rs` |
//! | ChangeMessageVisibility, ChangeMessageVisibilityBatch | `visibility.rs` |
//! | ListDeadLetterSourceQueues | `dead_letter.rs` |
//! | StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask | `move_tasks.rs` |
//! | NackMessage, PeekMessages, RedriveMessages (sluice's own) | `extensions.rs` |
//! | PutAlarm, DescribeAlarms, DeleteAlarms (sluice's own) | `alarms.rs` |
//!
//! `batch.rs` holds the rules every batch action shares (rule L2).

mod alarms;
mod attributes;
mod batch;
mod dead_letter;
mod delete;
mod extensions;
pub mod move_tasks;
mod permissions;
mod queues;
mod receive;
mod send;
mod tags;
mod visibility;

use sluice_broker::Broker;
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::requests::parse;
use sluice_protocol::{Output, Request};

use crate::service::{RequestContext, Service};

/// Runs `request` against the service.
pub async fn dispatch<B: Broker>(
    svc: &Service<B>,
    request: Request,
    ctx: &RequestContext,
) -> Result<Output, SqsError> {
    let input = request.input;
    let output = match request.action.as_str() {
        "ReceiveMessage" => {
            return receive::receive_message(svc, parse(input)?)
                .await
                .map(Output::Messages);
        }
        "CreateQueue" => queues::create_queue(svc, ctx, parse(input)?).await,
        "GetQueueUrl" => queues::get_queue_url(svc, ctx, parse(input)?).await,
        "ListQueues" => queues::list_queues(svc, ctx, parse(input)?).await,
        "DeleteQueue" => queues::delete_queue(svc, parse(input)?).await,
        "PurgeQueue" => queues::purge_queue(svc, parse(input)?).await,
        "GetQueueAttributes" => attributes::get_queue_attributes(svc, parse(input)?).await,
        "SetQueueAttributes" => attributes::set_queue_attributes(svc, parse(input)?).await,
        "TagQueue" => tags::tag_queue(svc, parse(input)?).await,
        "UntagQueue" => tags::untag_queue(svc, parse(input)?).await,
        "ListQueueTags" => tags::list_queue_tags(svc, parse(input)?).await,
        "AddPermission" => permissions::add_permission(svc, parse(input)?).await,
        "RemovePermission" => permissions::remove_permission(svc, parse(input)?).await,
        "SendMessage" => send::send_message(svc, ctx, parse(input)?).await,
        "SendMessageBatch" => {
            return send::send_message_batch(svc, ctx, parse(input)?)
                .await
                .map(Output::Batch);
        }
        "DeleteMessage" => delete::delete_message(svc, parse(input)?).await,
        "DeleteMessageBatch" => {
            return delete::delete_message_batch(svc, parse(input)?)
                .await
                .map(Output::Batch);
        }
        "ChangeMessageVisibility" => {
            visibility::change_message_visibility(svc, parse(input)?).await
        }
        "ChangeMessageVisibilityBatch" => {
            return visibility::change_message_visibility_batch(svc, parse(input)?)
                .await
                .map(Output::Batch);
        }
        "ListDeadLetterSourceQueues" => {
            dead_letter::list_dead_letter_source_queues(svc, ctx, parse(input)?).await
        }
        "StartMessageMoveTask" => move_tasks::start_message_move_task(svc, parse(input)?).await,
        "ListMessageMoveTasks" => move_tasks::list_message_move_tasks(svc, parse(input)?).await,
        "CancelMessageMoveTask" => move_tasks::cancel_message_move_task(svc, parse(input)?).await,
        "NackMessage" => extensions::nack_message(svc, parse(input)?).await,
        "PeekMessages" => extensions::peek_messages(svc, parse(input)?).await,
        "RedriveMessages" => extensions::redrive_messages(svc, parse(input)?).await,
        "PutAlarm" => alarms::put_alarm(svc, parse(input)?).await,
        "DescribeAlarms" => alarms::describe_alarms(svc, parse(input)?).await,
        "DeleteAlarms" => alarms::delete_alarms(svc, parse(input)?).await,
        other => Err(SqsError::new(
            ErrorCode::UnsupportedOperation,
            format!("{other} is not supported by this server yet."),
        )),
    };
    output.map(Output::Value)
}

/// Parses an integer parameter into a range, or SQS's InvalidParameterValue.
pub(crate) fn in_range(name: &str, value: i64, min: i64, max: i64) -> Result<u32, SqsError> {
    if (min..=max).contains(&value) {
        Ok(value as u32)
    } else {
        Err(SqsError::invalid_value(
            name,
            value,
            &format!("Must be between {min} and {max}, if provided."),
        ))
    }
}

/// Pagination in name order: a page of at most `max` after `token` (rule W8).
pub(crate) fn paginate(
    mut names: Vec<String>,
    max_results: Option<i64>,
    next_token: Option<&str>,
) -> Result<(Vec<String>, Option<String>), SqsError> {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let max = match max_results {
        Some(m) => in_range(
            "MaxResults",
            m,
            1,
            i64::from(sluice_core::limits::MAX_LIST_RESULTS),
        )? as usize,
        None => sluice_core::limits::MAX_LIST_RESULTS as usize,
    };
    let after = match next_token {
        Some(t) => {
            let bytes = URL_SAFE_NO_PAD
                .decode(t)
                .map_err(|_| SqsError::invalid_parameter("Invalid NextToken value."))?;
            Some(
                String::from_utf8(bytes)
                    .map_err(|_| SqsError::invalid_parameter("Invalid NextToken value."))?,
            )
        }
        None => None,
    };
    // Pages follow name order whatever order the engine lists in (rule W8;
    // AWS recorded answer, test_sqs.py::test_list_queues_pagination).
    names.sort();
    let mut rest: Vec<String> = names
        .into_iter()
        .filter(|n| after.as_ref().is_none_or(|a| n > a))
        .collect();
    let more = rest.len() > max;
    rest.truncate(max);
    // SQS gives a NextToken only when the caller asked for pages.
    let token = (more && max_results.is_some())
        .then(|| {
            rest.last()
                .map(|last| URL_SAFE_NO_PAD.encode(last.as_bytes()))
        })
        .flatten();
    Ok((rest, token))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// W8: ten names, pages of two then of ten: name order, a NextToken only
    /// while more follow and only when MaxResults was given (AWS recorded
    /// answer, LocalStack snapshot test_sqs.py::test_list_queues_pagination).
    #[test]
    fn w8_pages_in_name_order() {
        let names: Vec<String> = (0..10).rev().map(|i| format!("q-{i}")).collect();
        let (all, token) = paginate(names.clone(), None, None).unwrap();
        assert_eq!(all.len(), 10);
        assert_eq!(all[0], "q-0");
        assert!(token.is_none());
        let (first, token) = paginate(names.clone(), Some(2), None).unwrap();
        assert_eq!(first, ["q-0", "q-1"]);
        let token = token.unwrap();
        let (rest, token) = paginate(names, Some(10), Some(&token)).unwrap();
        assert_eq!(rest.len(), 8);
        assert_eq!(rest[0], "q-2");
        assert!(token.is_none());
    }
}
