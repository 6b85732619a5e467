//! ListArchivedMessages and RestoreArchivedMessages (rule X8): reading the
//! archive of a queue's expired messages, filtered as PeekMessages
//! filters, and sending archived messages back to a queue with their
//! message id, their provenance and a replay mark.
//! Documented with examples in docs/extensions.md.

use std::collections::HashSet;
use std::sync::Arc;

use sluice_archive::{Archive, ArchiveCursor, ArchiveError, ArchivedEntry};
use sluice_broker::moves::mark_replay;
use sluice_broker::{Broker, NewMessage};
use sluice_core::SqsError;
use sluice_core::limits::in_range;
use sluice_protocol::decode::required;
use sluice_protocol::sluice::{
    ArchivedMessage, ListArchivedMessagesRequest, ListArchivedMessagesResult,
    RestoreArchivedMessagesRequest, RestoreArchivedMessagesResult,
};

use super::messages::{Filter, message_attributes, message_filter, system_attributes};
use crate::service::Service;

/// Most messages one RestoreArchivedMessages sends back.
const MAX_RESTORE: usize = 10_000;

/// Messages sent per call to the engine: SQS's batch size.
const SEND_CHUNK: usize = 10;

/// The server's archive, or the error saying there is none.
fn archive_of<B: Broker>(svc: &Service<B>) -> Result<Arc<Archive>, SqsError> {
    svc.config.archive.clone().ok_or_else(|| {
        SqsError::invalid_parameter(
            "This server keeps no archive: start it with --archive-dir (archive_dir).",
        )
    })
}

fn archive_failed(e: ArchiveError) -> SqsError {
    tracing::error!(error = %e, "reading the archive failed");
    SqsError::internal("The archive could not be read.")
}

/// Runs `f` on the archive off the request's thread.
async fn on_archive<T: Send + 'static>(
    archive: Arc<Archive>,
    f: impl FnOnce(&Archive) -> Result<T, ArchiveError> + Send + 'static,
) -> Result<T, SqsError> {
    tokio::task::spawn_blocking(move || f(&archive))
        .await
        .map_err(|e| SqsError::internal(e.to_string()))?
        .map_err(archive_failed)
}

/// ListArchivedMessages: a page of a queue's archived messages, oldest
/// first. The queue need not exist any more: its archive outlives it.
pub async fn list_archived_messages<B: Broker>(
    svc: &Service<B>,
    input: ListArchivedMessagesRequest,
) -> Result<ListArchivedMessagesResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let key = svc.queue_name(&url)?.into_owned();
    let archive = archive_of(svc)?;
    let limit = match input.max_results {
        Some(m) => in_range("MaxResults", m, 1, 100)? as usize,
        None => 10,
    };
    let after = input
        .next_token
        .map(|t| {
            ArchiveCursor::from_token(&t)
                .map_err(|_| SqsError::invalid_parameter("Invalid NextToken value."))
        })
        .transpose()?;
    let filter = message_filter(Filter {
        sent_after: input.sent_after,
        sent_before: input.sent_before,
        body_contains: input.body_contains,
        attribute_name: input.attribute_name,
        attribute_value: input.attribute_value,
        source_queue_arn: input.source_queue_arn,
        failure_reason_contains: input.failure_reason_contains,
        failure_class: input.failure_class,
    })?;
    let page = on_archive(archive, move |a| {
        a.list(&key, after.as_ref(), limit, &|m| {
            filter.matches(&m.peeked())
        })
    })
    .await?;
    Ok(ListArchivedMessagesResult {
        messages: page.entries.iter().map(archived).collect(),
        next_token: page.next.map(|c| c.to_token()),
    })
}

/// An archived message as ListArchivedMessages answers it.
fn archived(entry: &ArchivedEntry) -> ArchivedMessage {
    let m = &entry.message;
    let received = m.first_receive_at > 0;
    ArchivedMessage {
        message_id: Some(m.message_id.clone()),
        body: Some(m.body.clone()),
        md5_of_body: Some(sluice_core::digest::md5_of_body(&m.body)),
        receive_count: Some(i64::from(m.receive_count)),
        sent_timestamp: Some(m.sent_at as i64),
        first_receive_timestamp: received.then_some(m.first_receive_at as i64),
        last_receive_timestamp: received.then_some(m.last_receive_at as i64),
        archived_timestamp: Some(m.archived_at as i64),
        restored_timestamp: entry.restored_at.map(|t| t as i64),
        message_group_id: m.group_id.clone(),
        message_deduplication_id: m.dedup_id.clone(),
        sequence_number: m.sequence_number.clone(),
        failure_reason: m.failure_reason.clone(),
        failure_class: m.failure_class.clone(),
        attributes: system_attributes(&m.system_attributes),
        message_attributes: message_attributes(&m.attributes),
    }
}

/// RestoreArchivedMessages: sends archived messages of a queue back to it
/// (or to DestinationQueueUrl): those named by MessageIds, or every one not
/// restored before. Each keeps its message id and provenance and is
/// marked as a replay; the archive keeps it and notes the restore.
pub async fn restore_archived_messages<B: Broker>(
    svc: &Service<B>,
    input: RestoreArchivedMessagesRequest,
) -> Result<RestoreArchivedMessagesResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let key = svc.queue_name(&url)?.into_owned();
    let archive = archive_of(svc)?;
    let destination_url = input.destination_queue_url.unwrap_or_else(|| url.clone());
    let destination = svc.queue_name(&destination_url)?.into_owned();
    let fifo = svc.broker.get_queue(&destination).await?.config.fifo;
    let (entries, not_found) = match input.message_ids {
        Some(ids) => {
            if ids.is_empty() || ids.len() > MAX_RESTORE {
                return Err(SqsError::invalid_parameter(format!(
                    "MessageIds must name 1 to {MAX_RESTORE} messages."
                )));
            }
            let (k, wanted) = (key.clone(), ids.clone());
            let found = on_archive(archive.clone(), move |a| a.find(&k, &wanted)).await?;
            let have: HashSet<&str> = found
                .iter()
                .map(|e| e.message.message_id.as_str())
                .collect();
            let missing: Vec<String> = ids
                .iter()
                .filter(|id| !have.contains(id.as_str()))
                .cloned()
                .collect();
            (found, missing)
        }
        None => {
            let k = key.clone();
            let all = on_archive(archive.clone(), move |a| not_restored(a, &k)).await?;
            (all, Vec::new())
        }
    };
    if fifo && let Some(e) = entries.iter().find(|e| e.message.group_id.is_none()) {
        return Err(SqsError::invalid_parameter(format!(
            "Message {} has no MessageGroupId; the FIFO queue it would go to needs one.",
            e.message.message_id
        )));
    }
    let mut restored = Vec::with_capacity(entries.len());
    for chunk in entries.chunks(SEND_CHUNK) {
        let messages = chunk.iter().map(|e| restored_message(e, fifo)).collect();
        svc.broker.send_messages(&destination, messages).await?;
        let ids: Vec<String> = chunk.iter().map(|e| e.message.message_id.clone()).collect();
        let (k, d, at) = (key.clone(), destination_url.clone(), svc.now());
        let noted = ids.clone();
        on_archive(archive.clone(), move |a| {
            a.mark_restored(&k, &noted, &d, at)
        })
        .await?;
        restored.extend(ids);
    }
    svc.metrics.archive.restored(&key, restored.len());
    Ok(RestoreArchivedMessagesResult {
        restored: Some(restored.len() as i64),
        message_ids: restored,
        not_found,
    })
}

/// Every archived message of `queue` not restored yet, oldest first, at
/// most [`MAX_RESTORE`], each once.
fn not_restored(archive: &Archive, queue: &str) -> Result<Vec<ArchivedEntry>, ArchiveError> {
    let mut out: Vec<ArchivedEntry> = Vec::new();
    let mut seen = HashSet::new();
    let mut after: Option<ArchiveCursor> = None;
    loop {
        let page = archive.list(queue, after.as_ref(), 1000, &|_| true)?;
        for e in page.entries {
            if e.restored_at.is_none() && seen.insert(e.message.message_id.clone()) {
                out.push(e);
                if out.len() == MAX_RESTORE {
                    return Ok(out);
                }
            }
        }
        match page.next {
            Some(next) => after = Some(next),
            None => return Ok(out),
        }
    }
}

/// The message a restore sends: the archived one with its id, group,
/// deduplication id and provenance, counted as one more replay.
fn restored_message(entry: &ArchivedEntry, fifo: bool) -> NewMessage {
    let m = &entry.message;
    let mut attributes = m.attributes.clone();
    mark_replay(&mut attributes);
    NewMessage {
        body: m.body.clone(),
        attributes,
        system_attributes: m.system_attributes.clone(),
        group_id: m.group_id.clone(),
        // A FIFO queue deduplicates: the archived message's id stands in
        // for a deduplication id it never had.
        dedup_id: if fifo {
            m.dedup_id.clone().or_else(|| Some(m.message_id.clone()))
        } else {
            None
        },
        keep_id: uuid::Uuid::parse_str(&m.message_id)
            .ok()
            .map(|id| *id.as_bytes()),
        ..NewMessage::default()
    }
}
