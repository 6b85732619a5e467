//! ChangeMessageVisibility and ChangeMessageVisibilityBatch (rule V5).

use serde_json::{Value, json};
use sluice_broker::{Broker, VisibilityChange};
use sluice_core::SqsError;
use sluice_core::limits::MAX_VISIBILITY_TIMEOUT;
use sluice_protocol::batch_result::BatchResult;
use sluice_protocol::requests::{ChangeMessageVisibilityInput, HandleBatchInput, required};

use super::batch;
use crate::params::in_range;
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
    let mut results = svc
        .broker
        .change_visibility(
            name,
            vec![VisibilityChange {
                receipt_handle: handle,
                visibility_timeout,
            }],
        )
        .await?;
    results.pop().unwrap_or(Ok(()))?;
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
    batch::run_entries(
        &ids,
        &entries,
        |e| {
            Ok(VisibilityChange {
                receipt_handle: required(e.receipt_handle.clone(), "ReceiptHandle")?,
                visibility_timeout: timeout(e.visibility_timeout)?,
            })
        },
        async |changes| svc.broker.change_visibility(name, changes).await,
    )
    .await
}
