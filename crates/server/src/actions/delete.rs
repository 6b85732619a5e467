//! DeleteMessage and DeleteMessageBatch (rule V4).

use serde_json::{Value, json};
use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_protocol::batch_result::BatchResult;
use sluice_protocol::requests::{DeleteMessageInput, HandleBatchInput, required};

use super::batch;
use crate::receipts::in_client_terms;
use crate::service::Service;

/// DeleteMessage.
pub async fn delete_message<B: Broker>(
    svc: &Service<B>,
    input: DeleteMessageInput,
) -> Result<Value, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let handle = required(input.receipt_handle, "ReceiptHandle")?;
    let name = &*svc.queue_name(&url)?;
    let inner = svc.handle_sealer().await?.unseal(name, &handle)?;
    let mut results = svc
        .broker
        .delete_messages(name, vec![inner.clone()])
        .await?;
    results
        .pop()
        .unwrap_or(Ok(()))
        .map_err(|e| in_client_terms(e, &inner, &handle))?;
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
    let sealer = svc.handle_sealer().await?;
    batch::run_entries(
        &ids,
        &entries,
        |e| {
            let sealed = required(e.receipt_handle.clone(), "ReceiptHandle")?;
            Ok((sealer.unseal(name, &sealed)?, sealed))
        },
        async |handles: Vec<(String, String)>| {
            let inner = handles.iter().map(|(h, _)| h.clone()).collect();
            let results = svc.broker.delete_messages(name, inner).await?;
            Ok(batch::in_client_terms(results, &handles))
        },
    )
    .await
}
