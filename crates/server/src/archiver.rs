//! The archiver (rule X8): takes the messages the engine holds past their
//! queue's retention (queues with `SluiceArchiveExpired`), writes them to
//! the archive, and only once the archive has them durably tells the
//! engine to forget them. A crash between the two leaves a message in
//! both, never in neither: the next pass archives it again. On storage
//! other nodes share, one node archives at a time (a job claim), so the
//! archive directory should be shared too (docs/failure-handling.md).

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use sluice_archive::{Archive, ArchiveError, ArchivedMessage};
use sluice_broker::{Broker, EngineError, PeekedMessage};

use crate::archive_upload::upload_pending;
use crate::service::Service;

/// How often held messages are looked for.
const PASS_INTERVAL: Duration = Duration::from_secs(1);

/// Most passes between two rotations, retention sweeps and bucket copies
/// of the archive.
const HOUSEKEEPING_EVERY: u32 = 60;

/// Held messages read per round trip to the engine.
const BATCH: usize = 500;

/// Most batches one pass archives.
const MAX_ROUNDS: usize = 200;

/// The job claim that keeps archiving on one node at a time.
const JOB: &str = "archive-expired";

/// Why an archive pass stopped; what it did not archive stays held.
#[derive(Debug, thiserror::Error)]
pub enum ArchivePassError {
    /// The engine could not be read or told.
    #[error("engine: {0}")]
    Engine(#[from] EngineError),
    /// The archive could not be written.
    #[error("archive: {0}")]
    Archive(#[from] ArchiveError),
    /// The blocking task writing the archive did not finish.
    #[error("archive task: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// One queue's messages could not be archived (the others were).
    #[error("queue {queue}: {error}")]
    Queue {
        /// The queue's key.
        queue: String,
        /// What failed.
        error: Box<ArchivePassError>,
    },
}

/// Starts the archiver when the server keeps an archive; it stops when
/// the service is dropped.
pub fn spawn_archiver<B: Broker>(service: &Arc<Service<B>>) -> Option<tokio::task::JoinHandle<()>> {
    let archive = service.config.archive.clone()?;
    if service.config.archive_bucket.is_some() {
        service.metrics.archive.copied_to_bucket();
    }
    // Rotation is due as often as segments age out, at least every minute.
    let housekeeping_every = u32::try_from(archive.segment_max_age_ms() / 1000)
        .unwrap_or(u32::MAX)
        .clamp(1, HOUSEKEEPING_EVERY);
    let weak: Weak<Service<B>> = Arc::downgrade(service);
    Some(tokio::spawn(async move {
        let mut interval = tokio::time::interval(PASS_INTERVAL);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut passes: u32 = 0;
        loop {
            interval.tick().await;
            let Some(svc) = weak.upgrade() else { break };
            let housekeeping = passes.is_multiple_of(housekeeping_every);
            passes = passes.wrapping_add(1);
            if let Err(e) = archive_pass(&svc, &archive, housekeeping).await {
                svc.metrics.archive.failed();
                tracing::error!(error = %e, "archiving expired messages failed; they stay held until a pass succeeds");
            }
            // Outside the pass's job claim: a slow store holds up no
            // archiving, and a failed copy is tried again next time.
            if housekeeping
                && let Some(bucket) = &svc.config.archive_bucket
                && let Err(e) = upload_pending(&archive, bucket, &svc.metrics.archive).await
            {
                tracing::warn!(error = %e, bucket = %bucket.describe(), "copying the archive to its bucket failed; it is tried again");
            }
        }
    }))
}

/// One pass: archives every held message, then (with `housekeeping`)
/// rotates old segments and applies the archive's retention. Returns how
/// many messages it archived.
pub async fn archive_pass<B: Broker>(
    svc: &Service<B>,
    archive: &Arc<Archive>,
    housekeeping: bool,
) -> Result<usize, ArchivePassError> {
    let Some(_claim) = svc.broker.claim_job(JOB).await? else {
        return Ok(0);
    };
    let mut total = 0;
    // A queue whose archive fails is left out for the rest of the pass, so
    // that it holds up no other queue; the first failure is reported.
    let mut failing: Vec<String> = Vec::new();
    let mut first_failure: Option<ArchivePassError> = None;
    // Bounded, so that a pass always ends; the next one goes on.
    for _ in 0..MAX_ROUNDS {
        let held = svc.broker.expired_messages(BATCH, &failing).await?;
        let full = held.len() == BATCH;
        let mut by_queue: BTreeMap<String, Vec<PeekedMessage>> = BTreeMap::new();
        for m in held {
            by_queue.entry(m.queue).or_default().push(m.message);
        }
        for (queue, messages) in by_queue {
            match archive_queue(svc, archive, &queue, &messages).await {
                Ok(n) => total += n,
                Err(e) => {
                    first_failure.get_or_insert(ArchivePassError::Queue {
                        queue: queue.clone(),
                        error: Box::new(e),
                    });
                    failing.push(queue);
                }
            }
        }
        if !full {
            break;
        }
    }
    if housekeeping {
        let keeper = archive.clone();
        let now = svc.now();
        tokio::task::spawn_blocking(move || -> Result<(), ArchiveError> {
            // Retention applies even when a rotation failed.
            let rotated = keeper.rotate_due(now);
            let gone = keeper.expire(now)?;
            rotated?;
            if gone > 0 {
                tracing::info!(
                    segments = gone,
                    "archive segments past the archive's retention deleted"
                );
            }
            Ok(())
        })
        .await??;
    }
    match first_failure {
        Some(e) => Err(e),
        None => Ok(total),
    }
}

/// Archives `messages` of `queue`, then lets the engine forget them;
/// returns how many.
async fn archive_queue<B: Broker>(
    svc: &Service<B>,
    archive: &Arc<Archive>,
    queue: &str,
    messages: &[PeekedMessage],
) -> Result<usize, ArchivePassError> {
    let now = svc.now();
    let records: Vec<ArchivedMessage> = messages
        .iter()
        .map(|m| ArchivedMessage::from_peeked(queue, m, now))
        .collect();
    let writer = archive.clone();
    let key = queue.to_string();
    tokio::task::spawn_blocking(move || writer.append(&key, &records)).await??;
    // Only now, with the archive synced, may the queue let go.
    let positions: Vec<u64> = messages.iter().map(|m| m.position).collect();
    svc.broker.forget_archived(queue, &positions).await?;
    svc.metrics.archive.archived(queue, positions.len());
    tracing::info!(queue = %queue, messages = positions.len(), "archived expired messages");
    Ok(positions.len())
}
