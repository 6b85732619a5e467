//! ClaimIdempotencyKey, CompleteIdempotencyKey, ReleaseIdempotencyKey
//! (sluice's own, rule I1): a consumer claims a key before a piece of
//! work, completes it with the work's result or releases it when the work
//! failed; a message delivered again finds the key completed and its
//! result. Keys belong to the caller's account.

use sluice_broker::Broker;
use sluice_broker::idempotency::{
    Claim, ClaimStatus, DEFAULT_IN_PROGRESS_SECONDS, MAX_IN_PROGRESS_SECONDS, MAX_KEY_CHARS,
    MAX_TTL_SECONDS,
};
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::decode::required;
use sluice_protocol::sluice::{
    ClaimIdempotencyKeyRequest, ClaimIdempotencyKeyResult, CompleteIdempotencyKeyRequest,
    ReleaseIdempotencyKeyRequest,
};

use crate::service::{RequestContext, Service};

/// The longest `Result`, in bytes: what a message may carry.
const MAX_RESULT_BYTES: usize = 262_144;

/// ClaimIdempotencyKey: `CLAIMED` (the caller owns the key now),
/// `IN_PROGRESS` (another caller does) or `COMPLETED` (with its `Result`).
pub async fn claim_idempotency_key<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ClaimIdempotencyKeyRequest,
) -> Result<ClaimIdempotencyKeyResult, SqsError> {
    let key = engine_key(svc, ctx, input.key)?;
    let ttl = seconds(input.ttl_seconds, "TtlSeconds", None, MAX_TTL_SECONDS)?;
    let in_progress = seconds(
        input.in_progress_seconds,
        "InProgressSeconds",
        Some(DEFAULT_IN_PROGRESS_SECONDS),
        MAX_IN_PROGRESS_SECONDS,
    )?;
    let claim = Claim {
        ttl_ms: u64::from(ttl) * 1000,
        in_progress_ms: u64::from(in_progress) * 1000,
    };
    let status = svc.broker.claim_idempotency_key(&key, claim).await?;
    let name = status.name().to_string();
    Ok(match status {
        ClaimStatus::Claimed { in_progress_until }
        | ClaimStatus::InProgress { in_progress_until } => ClaimIdempotencyKeyResult {
            status: Some(name),
            result: None,
            in_progress_expiry_timestamp: Some(in_progress_until as i64),
        },
        ClaimStatus::Completed { result } => ClaimIdempotencyKeyResult {
            status: Some(name),
            result: Some(result),
            in_progress_expiry_timestamp: None,
        },
    })
}

/// CompleteIdempotencyKey: stores the work's result; the key answers
/// `COMPLETED` for its TTL from now. A key not in progress (never claimed,
/// expired, released, completed) is ResourceNotFoundException.
pub async fn complete_idempotency_key<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: CompleteIdempotencyKeyRequest,
) -> Result<(), SqsError> {
    let key = engine_key(svc, ctx, input.key)?;
    let result = input.result.unwrap_or_default();
    if result.len() > MAX_RESULT_BYTES {
        return Err(SqsError::invalid_parameter(format!(
            "Result must be at most {MAX_RESULT_BYTES} bytes long."
        )));
    }
    match svc.broker.complete_idempotency_key(&key, result).await? {
        true => Ok(()),
        false => Err(not_in_progress(&key)),
    }
}

/// ReleaseIdempotencyKey: the work failed, the next claim takes the key.
/// A key not in progress is ResourceNotFoundException (a completed key
/// keeps its result).
pub async fn release_idempotency_key<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ReleaseIdempotencyKeyRequest,
) -> Result<(), SqsError> {
    let key = engine_key(svc, ctx, input.key)?;
    match svc.broker.release_idempotency_key(&key).await? {
        true => Ok(()),
        false => Err(not_in_progress(&key)),
    }
}

/// The engine's key of the caller's `Key`: its account's id, `/`, the key.
fn engine_key<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    key: Option<String>,
) -> Result<String, SqsError> {
    let key = required(key, "Key")?;
    let chars = key.chars().count();
    if chars == 0 || chars > MAX_KEY_CHARS || key.chars().any(char::is_control) {
        return Err(SqsError::invalid_parameter(format!(
            "Key must be 1 to {MAX_KEY_CHARS} characters, none of them a control character."
        )));
    }
    Ok(format!("{}/{key}", svc.request_account(ctx)))
}

/// A whole number of seconds from 1 to `max`; `default` when absent
/// (`None`: required).
fn seconds(
    value: Option<i64>,
    name: &str,
    default: Option<u32>,
    max: u32,
) -> Result<u32, SqsError> {
    let value = match (value, default) {
        (Some(v), _) => v,
        (None, Some(d)) => return Ok(d),
        (None, None) => return Err(SqsError::missing(name)),
    };
    u32::try_from(value)
        .ok()
        .filter(|v| (1..=max).contains(v))
        .ok_or_else(|| {
            SqsError::invalid_parameter(format!(
                "{name} must be from 1 to {max} seconds, not {value}."
            ))
        })
}

fn not_in_progress(engine_key: &str) -> SqsError {
    let key = engine_key.split_once('/').map_or(engine_key, |(_, k)| k);
    SqsError::new(
        ErrorCode::ResourceNotFoundException,
        format!(
            "The idempotency key {key} is not claimed: never claimed, expired, released or completed."
        ),
    )
}
