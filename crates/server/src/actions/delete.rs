//! DeleteMessage and DeleteMessageBatch (rule V4).

use serde_json::{Value, json};
use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_protocol::batch_result::BatchResult;
use sluice_protocol::requests::{DeleteMessageInput, HandleBatchInput, required};

use super::batch;
use crate::service::Service;

/// DeleteMessage.
pub async fn delete_message<B: Broker>(
    svc: &Service<B>,
    input: DeleteMessageInput,
) -> Result<Value, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let handle = required(input.receipt_handle, "ReceiptHandle")?;
    let name = &*svc.queue_name(&url)?;
    let mut results = svc.broker.delete_messages(name, vec![handle]).await?;
    results.pop().unwrap_or(Ok(()))?;
    Ok(json!({}))
}

/// DeleteMessageBatch: each entry succeeds or fails on its own.
pub async fn delete_message_batch<B: Broker>(
    svc: &Service<B>,
    input: HandleBatchInput,
) -> Result<BatchResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    // The Query protocol sends an empty list as no parameters at all.
    let entries = input.entries.unwrap_or_default();
    let ids = batch::check_ids(
        entries.iter().map(|e| e.id.as_deref()),
        "DeleteMessageBatchRequestEntry",
    )?;
    let name = &*svc.queue_name(&url)?;
    batch::run_entries(
        &ids,
        &entries,
        |e| required(e.receipt_handle.clone(), "ReceiptHandle"),
        async |handles| svc.broker.delete_messages(name, handles).await,
    )
    .await
}
