//! The steps every action that names messages by receipt handle shares
//! (DeleteMessage, ChangeMessageVisibility and their batches): the queue
//! from its URL, each handle unsealed for it (rule A3), and the engine's
//! answers worded with the handles the client sent.

use sluice_broker::{Broker, EngineError};
use sluice_core::SqsError;
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry,
};

use super::batch;
use crate::service::Service;
use sluice_broker::receipts::in_client_terms;

/// One handle's action: `apply` gets the queue's key and the engine's
/// handle; its error is worded with the handle the client sent.
pub async fn one<B: Broker>(
    svc: &Service<B>,
    url: &str,
    sealed: &str,
    apply: impl AsyncFnOnce(&str, &str) -> Result<(), EngineError>,
) -> Result<(), SqsError> {
    let name = &*svc.queue_name(url)?;
    let inner = svc.handle_sealer().await?.unseal(name, sealed)?;
    apply(name, &inner)
        .await
        .map_err(|e| in_client_terms(e, &inner, sealed))
}

/// A batch entry that names a message by its receipt handle.
pub trait HandleEntry {
    /// The entry's id.
    fn id(&self) -> Option<&str>;
    /// The receipt handle it names.
    fn receipt_handle(&self) -> Option<&str>;
}

impl HandleEntry for DeleteMessageBatchRequestEntry {
    fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    fn receipt_handle(&self) -> Option<&str> {
        self.receipt_handle.as_deref()
    }
}

impl HandleEntry for ChangeMessageVisibilityBatchRequestEntry {
    fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    fn receipt_handle(&self) -> Option<&str> {
        self.receipt_handle.as_deref()
    }
}

/// The one result of an engine call given one handle.
pub fn only(results: Vec<Result<(), EngineError>>) -> Result<(), EngineError> {
    results.into_iter().next().unwrap_or(Ok(()))
}

/// A batch's action (rule L2): `check` reads each entry's other members
/// (before its handle is unsealed, so its errors come first as they
/// would in SQS's order of members), and `apply` gets the queue's key and
/// the accepted entries' engine handles with what `check` read, and gives
/// the engine's per-entry results. `kind` names the entry type in errors.
pub async fn batch<B: Broker, E: HandleEntry, T>(
    svc: &Service<B>,
    (url, entries): (Option<String>, Option<Vec<E>>),
    kind: &str,
    check: impl Fn(&E) -> Result<T, SqsError>,
    apply: impl AsyncFnOnce(&str, Vec<(String, T)>) -> Result<Vec<Result<(), EngineError>>, EngineError>,
) -> Result<batch::Outcome, SqsError> {
    let url = required(url, "QueueUrl")?;
    // The Query protocol sends an empty list as no parameters at all.
    let entries = entries.unwrap_or_default();
    let ids = batch::check_ids(entries.iter().map(HandleEntry::id), kind)?;
    let name = &*svc.queue_name(&url)?;
    let sealer = svc.handle_sealer().await?;
    batch::run_entries(
        &ids,
        &entries,
        |e| {
            let sealed = required(e.receipt_handle(), "ReceiptHandle")?.to_string();
            let read = check(e)?;
            Ok((sealer.unseal(name, &sealed)?, sealed, read))
        },
        async |accepted: Vec<(String, String, T)>| {
            let mut handles = Vec::with_capacity(accepted.len());
            let mut inputs = Vec::with_capacity(accepted.len());
            for (inner, sealed, read) in accepted {
                inputs.push((inner.clone(), read));
                handles.push((inner, sealed));
            }
            let results = apply(name, inputs).await?;
            Ok(batch::in_client_terms(results, &handles))
        },
    )
    .await
}
