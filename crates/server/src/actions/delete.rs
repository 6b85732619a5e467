//! DeleteMessage and DeleteMessageBatch (rule V4).

use serde_json::{Value, json};
use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_protocol::batch_result::BatchResult;
use sluice_protocol::requests::{DeleteMessageInput, HandleBatchInput, required};

use super::by_handle;
use crate::service::Service;

/// DeleteMessage.
pub async fn delete_message<B: Broker>(
    svc: &Service<B>,
    input: DeleteMessageInput,
) -> Result<Value, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let handle = required(input.receipt_handle, "ReceiptHandle")?;
    by_handle::one(svc, &url, &handle, async |name, inner| {
        by_handle::only(svc.broker.delete_messages(name, vec![inner.into()]).await?)
    })
    .await?;
    Ok(json!({}))
}

/// DeleteMessageBatch: each entry succeeds or fails on its own.
pub async fn delete_message_batch<B: Broker>(
    svc: &Service<B>,
    input: HandleBatchInput,
) -> Result<BatchResult, SqsError> {
    by_handle::batch(
        svc,
        input,
        "DeleteMessageBatchRequestEntry",
        |_| Ok(()),
        async |name, handles: Vec<(String, ())>| {
            let inner = handles.into_iter().map(|(h, ())| h).collect();
            svc.broker.delete_messages(name, inner).await
        },
    )
    .await
}
