//! ChangeMessageVisibility and ChangeMessageVisibilityBatch (rule V5).

use serde_json::{Value, json};
use sluice_broker::{Broker, VisibilityChange};
use sluice_core::SqsError;
use sluice_core::limits::MAX_VISIBILITY_TIMEOUT;
use sluice_protocol::batch_result::BatchResult;
use sluice_protocol::requests::{ChangeMessageVisibilityInput, HandleBatchInput, required};

use super::batch;
use crate::params::in_range;
use crate::receipts::in_client_terms;
use crate::service::Service;

fn timeout(value: Option<i64>) -> Result<u32, SqsError> {
    in_range(
        "VisibilityTimeout",
        required(value, "VisibilityTimeout")?,
        0,
        i64::from(MAX_VISIBILITY_TIMEOUT),
    )
}

/// ChangeMessageVisibility.
pub async fn change_message_visibility<B: Broker>(
    svc: &Service<B>,
    input: ChangeMessageVisibilityInput,
) -> Result<Value, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let handle = required(input.receipt_handle, "ReceiptHandle")?;
    let visibility_timeout = timeout(input.visibility_timeout)?;
    let name = &*svc.queue_name(&url)?;
    let inner = svc.handle_sealer().await?.unseal(name, &handle)?;
    let mut results = svc
        .broker
        .change_visibility(
            name,
            vec![VisibilityChange {
                receipt_handle: inner.clone(),
                visibility_timeout,
            }],
        )
        .await?;
    results
        .pop()
        .unwrap_or(Ok(()))
        .map_err(|e| in_client_terms(e, &inner, &handle))?;
    Ok(json!({}))
}

/// ChangeMessageVisibilityBatch: each entry succeeds or fails on its own.
pub async fn change_message_visibility_batch<B: Broker>(
    svc: &Service<B>,
    input: HandleBatchInput,
) -> Result<BatchResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    // The Query protocol sends an empty list as no parameters at all.
    let entries = input.entries.unwrap_or_default();
    let ids = batch::check_ids(
        entries.iter().map(|e| e.id.as_deref()),
        "ChangeMessageVisibilityBatchRequestEntry",
    )?;
    let name = &*svc.queue_name(&url)?;
    let sealer = svc.handle_sealer().await?;
    batch::run_entries(
        &ids,
        &entries,
        |e| {
            let sealed = required(e.receipt_handle.clone(), "ReceiptHandle")?;
            let visibility_timeout = timeout(e.visibility_timeout)?;
            Ok((sealer.unseal(name, &sealed)?, sealed, visibility_timeout))
        },
        async |changes: Vec<(String, String, u32)>| {
            let requested = changes
                .iter()
                .map(|(inner, _, visibility_timeout)| VisibilityChange {
                    receipt_handle: inner.clone(),
                    visibility_timeout: *visibility_timeout,
                })
                .collect();
            let results = svc.broker.change_visibility(name, requested).await?;
            let handles: Vec<(String, String)> = changes
                .into_iter()
                .map(|(inner, sealed, _)| (inner, sealed))
                .collect();
            Ok(batch::in_client_terms(results, &handles))
        },
    )
    .await
}
