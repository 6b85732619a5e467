//! Rules every batch action shares (rule L2): 1–10 entries, distinct ids of
//! `[A-Za-z0-9_-]{1,80}`, and per-entry results.

use sluice_broker::EngineError;
use sluice_core::limits::{MAX_BATCH_ENTRIES, MAX_BATCH_ID};
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::sqs::BatchResultErrorEntry;

/// Checks a batch's entry ids; `kind` names the entry type in messages.
pub fn check_ids<'a>(
    ids: impl ExactSizeIterator<Item = Option<&'a str>>,
    kind: &str,
) -> Result<Vec<&'a str>, SqsError> {
    let n = ids.len();
    if n == 0 {
        return Err(SqsError::new(
            ErrorCode::EmptyBatchRequest,
            format!("There should be at least one {kind} in the request."),
        ));
    }
    if n > MAX_BATCH_ENTRIES {
        return Err(SqsError::new(
            ErrorCode::TooManyEntriesInBatchRequest,
            format!(
                "Maximum number of entries per request are {MAX_BATCH_ENTRIES}. You have sent {n}."
            ),
        ));
    }
    let mut out: Vec<&str> = Vec::with_capacity(n);
    for id in ids {
        let id = id.ok_or_else(|| SqsError::missing(&format!("{kind}.Id")))?;
        let valid = !id.is_empty()
            && id.len() <= MAX_BATCH_ID
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Err(SqsError::new(
                ErrorCode::InvalidBatchEntryId,
                "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
            ));
        }
        // At most ten: comparing is cheaper than hashing.
        if out.contains(&id) {
            return Err(SqsError::new(
                ErrorCode::BatchEntryIdsNotDistinct,
                format!("Id {id} repeated."),
            ));
        }
        out.push(id);
    }
    Ok(out)
}

/// A `Failed` entry of a batch result.
pub fn failed(id: &str, error: &SqsError) -> BatchResultErrorEntry {
    BatchResultErrorEntry {
        id: id.to_string(),
        sender_fault: error.code.is_sender_fault(),
        code: error.code.query_code().to_string(),
        message: Some(error.message.clone()),
    }
}

/// Per-entry engine results about handles, worded with the handles the
/// client sent: `handles` pairs each engine handle with its sealed form
/// (rule A3).
pub fn in_client_terms(
    results: Vec<Result<(), EngineError>>,
    handles: &[(String, String)],
) -> Vec<Result<(), SqsError>> {
    results
        .into_iter()
        .zip(handles)
        .map(|(r, (inner, sealed))| {
            r.map_err(|e| sluice_broker::receipts::in_client_terms(e, inner, sealed))
        })
        .collect()
}

/// The outcome of a batch whose entries carry only their ids: the ids
/// that succeeded, and the entries that failed.
pub struct Outcome {
    /// The ids of the entries applied, in request order.
    pub successful: Vec<String>,
    /// The entries refused, with why.
    pub failed: Vec<BatchResultErrorEntry>,
}

/// Runs the entries of a batch that the broker applies together: `check`
/// turns each entry into the broker's input or its own failure, `apply` runs
/// the accepted ones, and each per-entry result becomes a successful id or
/// a `Failed` entry.
pub async fn run_entries<E, T>(
    ids: &[&str],
    entries: &[E],
    check: impl Fn(&E) -> Result<T, SqsError>,
    apply: impl AsyncFnOnce(Vec<T>) -> Result<Vec<Result<(), SqsError>>, SqsError>,
) -> Result<Outcome, SqsError> {
    let mut failed = Vec::new();
    let mut accepted_ids = Vec::with_capacity(ids.len());
    let mut accepted = Vec::with_capacity(ids.len());
    for (id, entry) in ids.iter().zip(entries) {
        match check(entry) {
            Ok(input) => {
                accepted_ids.push(*id);
                accepted.push(input);
            }
            Err(e) => failed.push(self::failed(id, &e)),
        }
    }
    let results = apply(accepted).await?;
    let mut successful = Vec::with_capacity(accepted_ids.len());
    for (id, r) in accepted_ids.into_iter().zip(results) {
        match r {
            Ok(()) => successful.push(id.to_string()),
            Err(e) => failed.push(self::failed(id, &e)),
        }
    }
    Ok(Outcome { successful, failed })
}
