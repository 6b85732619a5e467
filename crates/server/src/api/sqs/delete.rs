//! DeleteMessage and DeleteMessageBatch (rule V4).

use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{
    DeleteMessageBatchRequest, DeleteMessageBatchResult, DeleteMessageBatchResultEntry,
    DeleteMessageRequest,
};

use super::by_handle;
use crate::service::Service;

/// DeleteMessage.
pub async fn delete_message<B: Broker>(
    svc: &Service<B>,
    input: DeleteMessageRequest,
) -> Result<(), SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let handle = required(input.receipt_handle, "ReceiptHandle")?;
    by_handle::one(svc, &url, &handle, async |name, inner| {
        by_handle::only(svc.broker.delete_messages(name, vec![inner.into()]).await?)
    })
    .await
}

/// DeleteMessageBatch: each entry succeeds or fails on its own.
pub async fn delete_message_batch<B: Broker>(
    svc: &Service<B>,
    input: DeleteMessageBatchRequest,
) -> Result<DeleteMessageBatchResult, SqsError> {
    let outcome = by_handle::batch(
        svc,
        (input.queue_url, input.entries),
        "DeleteMessageBatchRequestEntry",
        |_| Ok(()),
        async |name, handles: Vec<(String, ())>| {
            let inner = handles.into_iter().map(|(h, ())| h).collect();
            svc.broker.delete_messages(name, inner).await
        },
    )
    .await?;
    Ok(DeleteMessageBatchResult {
        successful: (outcome.successful.into_iter())
            .map(|id| DeleteMessageBatchResultEntry { id })
            .collect(),
        failed: outcome.failed,
    })
}
