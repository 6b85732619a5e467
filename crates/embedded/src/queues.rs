//! Queue operations: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue,
//! Get/SetQueueAttributes, Tag/UntagQueue, PurgeQueue.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use sluice_broker::EngineError;
use sluice_broker::tags;
use sluice_broker::{CreateQueue, MetaChange, QueueCounts, QueueMeta};
use sluice_core::limits::PURGE_INTERVAL_SECS;

use crate::change::Change;
use crate::engine::deleted_error;
use crate::engine::{EmbeddedBroker, QueueCell};
use crate::journal::Ticket;
use crate::queue_state::QueueState;

/// CreateQueue: a new queue, or the existing one when the attributes match (rule V9).
pub(crate) async fn create_queue(
    broker: &EmbeddedBroker,
    spec: CreateQueue,
) -> Result<QueueMeta, EngineError> {
    let inner = &broker.inner;
    let now = inner.now();
    // While writes are refused the index may hold a queue whose creation
    // failed: a retry must not find it and answer it as created (rule D5).
    if inner.journal.failure().is_some()
        && let Some(refused) = inner.submit(Vec::new()).refusal()
    {
        return Err(refused);
    }
    // Lock order: a queue's lock may be held while reading the registry
    // (receive looks up its dead-letter queue), so the registry is never
    // held while waiting for a queue's lock.
    let existing = inner.queues.read().get(&spec.name).cloned();
    if let Some(cell) = existing {
        let st = cell.state.lock();
        if !st.deleted {
            // QueueAlreadyExists names the differing attribute (rule V13).
            return match st.meta.config.first_mismatch(&spec.name, &spec.requested) {
                None => Ok(st.meta.clone()),
                Some(attribute) => Err(EngineError::QueueNameExists { attribute }),
            };
        }
    }
    {
        // A deleted name is free again only a minute later (rule V19).
        let hold = inner.deleted_name_hold_ms.load(Ordering::Relaxed);
        let mut deleted = inner.deleted.lock();
        deleted.retain(|_, at| now < at.saturating_add(hold));
        if deleted.contains_key(&spec.name) {
            return Err(EngineError::QueueDeletedRecently);
        }
    }
    let (meta, ticket): (QueueMeta, Ticket) = {
        let mut queues = inner.queues.write();
        if queues.contains_key(&spec.name) {
            // Created by a concurrent request since the check above.
            return Err(EngineError::QueueExists {
                name: spec.name.clone(),
            });
        }
        tags::check_tags(&spec.name, &spec.tags)?;
        let id = inner.next_queue_id.fetch_add(1, Ordering::SeqCst);
        let meta = QueueMeta {
            name: spec.name.clone(),
            config: spec.config,
            tags: spec.tags,
            created_at: now,
            modified_at: now,
        };
        let st = QueueState::new(meta.clone(), inner.budget.clone());
        let mut changes = Vec::new();
        inner.put_queue(id, &st, &mut changes);
        let ticket = inner.submit(changes);
        queues.insert(spec.name, Arc::new(QueueCell::new(id, st)));
        (meta, ticket)
    };
    ticket.wait().await?;
    Ok(meta)
}

/// GetQueueUrl and GetQueueAttributes: a live queue's description.
pub(crate) async fn get_queue(
    broker: &EmbeddedBroker,
    name: &str,
) -> Result<QueueMeta, EngineError> {
    live_meta(broker, name, QueueMeta::clone)
}

/// A queue's `Policy`, copied alone (the access check's read, on every
/// authenticated request), from the cell's copy rather than under the
/// queue's lock. A deleted queue is out of the map before its delete
/// answers, so a cell found here is live, or being deleted by a request
/// this read runs before.
pub(crate) fn queue_policy(
    broker: &EmbeddedBroker,
    name: &str,
) -> Result<Option<String>, EngineError> {
    let cell = broker.queue(name)?;
    Ok(cell.policy().map(|p| String::clone(&p)))
}

/// What `read` takes from a live queue's description, under its lock.
fn live_meta<T>(
    broker: &EmbeddedBroker,
    name: &str,
    read: impl FnOnce(&QueueMeta) -> T,
) -> Result<T, EngineError> {
    let cell = broker.queue(name)?;
    let st = cell.state.lock();
    if st.deleted {
        return Err(deleted_error());
    }
    Ok(read(&st.meta))
}

/// ListQueues: every queue name, in name order.
pub(crate) async fn list_queues(broker: &EmbeddedBroker) -> Result<Vec<String>, EngineError> {
    let mut names: Vec<String> = (broker.inner.queues.read().keys())
        .filter(|k| !sluice_core::queue_name::is_internal_key(k))
        .cloned()
        .collect();
    names.sort();
    Ok(names)
}

/// DeleteQueue: the queue, its messages, and its name held for a minute (rule V19).
pub(crate) async fn delete_queue(broker: &EmbeddedBroker, name: &str) -> Result<(), EngineError> {
    let inner = &broker.inner;
    let cell = broker.queue(name)?;
    let ticket = {
        let mut st = cell.state.lock();
        if st.deleted {
            return Err(EngineError::QueueDoesNotExist);
        }
        st.deleted = true;
        st.clear();
        let changes = if inner.journal.is_durable() {
            vec![Change::DeleteQueue { id: cell.id }]
        } else {
            Vec::new()
        };
        let ticket = inner.submit(changes);
        // Unregistered under the queue's lock, after the submission: a
        // reopen of the storage (which takes every queue's lock) sees the
        // queue and its delete together, or neither.
        let mut queues = inner.queues.write();
        if queues.get(name).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            queues.remove(name);
        }
        inner.deleted.lock().insert(name.to_string(), inner.now());
        // Its data keys go with it (the store deletes their records).
        inner.data_keys.forget_queue(cell.id);
        ticket
    };
    cell.arrivals.notify_waiters();
    ticket.wait().await
}

/// The approximate message counts of GetQueueAttributes.
pub(crate) async fn queue_counts(
    broker: &EmbeddedBroker,
    name: &str,
) -> Result<QueueCounts, EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    let now = inner.now();
    let st = inner.lock_current(&cell, now)?;
    Ok(st.counts())
}

/// SetQueueAttributes, TagQueue, UntagQueue: the change applied under the
/// queue's lock, and its record journaled.
pub(crate) async fn update_queue(
    broker: &EmbeddedBroker,
    name: &str,
    change: MetaChange,
) -> Result<QueueMeta, EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    let (meta, ticket) = {
        let mut st = cell.state.lock();
        if st.deleted {
            return Err(deleted_error());
        }
        change.apply(name, &mut st.meta, inner.now())?;
        cell.publish_policy(&st);
        let mut changes = Vec::new();
        inner.put_queue(cell.id, &st, &mut changes);
        (st.meta.clone(), inner.submit(changes))
    };
    ticket.wait().await?;
    Ok(meta)
}

/// PurgeQueue: every message, and the deduplication window (rule F11).
pub(crate) async fn purge_queue(broker: &EmbeddedBroker, name: &str) -> Result<(), EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    let now = inner.now();
    let ticket = {
        let mut st = cell.state.lock();
        if st.deleted {
            return Err(deleted_error());
        }
        if let Some(last) = st.last_purge
            && now < last + PURGE_INTERVAL_SECS * 1000
        {
            return Err(EngineError::PurgeQueueInProgress {
                queue: name.to_owned(),
            });
        }
        st.clear();
        st.last_purge = Some(now);
        // A purge also ends the deduplication window (rule F11).
        let forgotten = st.dedup.clear();
        st.attempts.clear();
        let mut changes = Vec::new();
        if inner.journal.is_durable() {
            changes.push(Change::Purge {
                queue: cell.id,
                below: inner.next_seq.load(Ordering::SeqCst),
            });
            changes.extend(forgotten.into_iter().map(|key| Change::DeleteDedup {
                queue: cell.id,
                key,
            }));
        }
        inner.put_queue(cell.id, &st, &mut changes);
        inner.submit(changes)
    };
    ticket.wait().await
}
