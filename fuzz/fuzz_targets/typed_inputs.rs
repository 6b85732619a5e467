// Shared by the request targets: every action's typed input, parsed from a
// decoded request as the server's actions parse them.
#![allow(dead_code)]

use sluice_protocol::Request;
use sluice_protocol::requests::{self as r, parse};

/// The actions the targets pick from, by the input's first byte.
pub const ACTIONS: &[&str] = &[
    "CreateQueue",
    "GetQueueUrl",
    "ListQueues",
    "DeleteQueue",
    "GetQueueAttributes",
    "SetQueueAttributes",
    "SendMessage",
    "SendMessageBatch",
    "ReceiveMessage",
    "DeleteMessage",
    "DeleteMessageBatch",
    "ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch",
    "TagQueue",
    "UntagQueue",
    "AddPermission",
    "RemovePermission",
    "ListDeadLetterSourceQueues",
    "StartMessageMoveTask",
    "ListMessageMoveTasks",
    "CancelMessageMoveTask",
    "PurgeQueue",
];

/// Parses `request` into its action's typed input, and runs the message
/// checks a send runs on what parsed.
pub fn parse_typed(request: Request) {
    let input = request.input;
    match request.action.as_str() {
        "CreateQueue" => drop(parse::<r::CreateQueueInput>(input)),
        "GetQueueUrl" => drop(parse::<r::GetQueueUrlInput>(input)),
        "ListQueues" => drop(parse::<r::ListQueuesInput>(input)),
        "GetQueueAttributes" => drop(parse::<r::GetQueueAttributesInput>(input)),
        "SetQueueAttributes" => drop(parse::<r::SetQueueAttributesInput>(input)),
        "SendMessage" => {
            if let Ok(send) = parse::<r::SendMessageInput>(input) {
                check_message(&send.message);
            }
        }
        "SendMessageBatch" => {
            if let Ok(batch) = parse::<r::SendMessageBatchInput>(input) {
                for entry in batch.entries.iter().flatten() {
                    check_message(entry);
                }
            }
        }
        "ReceiveMessage" => drop(parse::<r::ReceiveMessageInput>(input)),
        "DeleteMessage" => drop(parse::<r::DeleteMessageInput>(input)),
        "DeleteMessageBatch" | "ChangeMessageVisibilityBatch" => {
            drop(parse::<r::HandleBatchInput>(input))
        }
        "ChangeMessageVisibility" => drop(parse::<r::ChangeMessageVisibilityInput>(input)),
        "TagQueue" => drop(parse::<r::TagQueueInput>(input)),
        "UntagQueue" => drop(parse::<r::UntagQueueInput>(input)),
        "AddPermission" => drop(parse::<r::AddPermissionInput>(input)),
        "RemovePermission" => drop(parse::<r::RemovePermissionInput>(input)),
        "ListDeadLetterSourceQueues" => drop(parse::<r::ListDeadLetterSourceQueuesInput>(input)),
        "StartMessageMoveTask" => drop(parse::<r::StartMessageMoveTaskInput>(input)),
        "ListMessageMoveTasks" => drop(parse::<r::ListMessageMoveTasksInput>(input)),
        "CancelMessageMoveTask" => drop(parse::<r::CancelMessageMoveTaskInput>(input)),
        _ => drop(parse::<r::QueueUrlInput>(input)),
    }
}

/// The body check, and the attribute checks and digest of string values.
fn check_message(message: &r::MessageInput) {
    if let Some(body) = &message.message_body {
        let _ = sluice_core::message::validate_body(body);
        let _ = sluice_core::digest::md5_of_body(body);
    }
}
