//! ChangeMessageVisibility and ChangeMessageVisibilityBatch (rule V5).

use sluice_broker::{Broker, VisibilityChange};
use sluice_core::SqsError;
use sluice_core::limits::MAX_VISIBILITY_TIMEOUT;
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{
    ChangeMessageVisibilityBatchRequest, ChangeMessageVisibilityBatchResult,
    ChangeMessageVisibilityBatchResultEntry, ChangeMessageVisibilityRequest,
};

use super::by_handle;
use crate::service::Service;
use sluice_core::limits::in_range;

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
    input: ChangeMessageVisibilityRequest,
) -> Result<(), SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let handle = required(input.receipt_handle, "ReceiptHandle")?;
    let visibility_timeout = timeout(input.visibility_timeout)?;
    by_handle::one(svc, &url, &handle, async |name, inner| {
        let change = VisibilityChange {
            receipt_handle: inner.into(),
            visibility_timeout,
        };
        by_handle::only(svc.broker.change_visibility(name, vec![change]).await?)
    })
    .await
}

/// ChangeMessageVisibilityBatch: each entry succeeds or fails on its own.
pub async fn change_message_visibility_batch<B: Broker>(
    svc: &Service<B>,
    input: ChangeMessageVisibilityBatchRequest,
) -> Result<ChangeMessageVisibilityBatchResult, SqsError> {
    let outcome = by_handle::batch(
        svc,
        (input.queue_url, input.entries),
        "ChangeMessageVisibilityBatchRequestEntry",
        |e| timeout(e.visibility_timeout),
        async |name, changes: Vec<(String, u32)>| {
            let requested = changes
                .into_iter()
                .map(|(receipt_handle, visibility_timeout)| VisibilityChange {
                    receipt_handle,
                    visibility_timeout,
                })
                .collect();
            svc.broker.change_visibility(name, requested).await
        },
    )
    .await?;
    Ok(ChangeMessageVisibilityBatchResult {
        successful: (outcome.successful.into_iter())
            .map(|id| ChangeMessageVisibilityBatchResultEntry { id })
            .collect(),
        failed: outcome.failed,
    })
}
