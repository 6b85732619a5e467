//! Redrive: choosing messages of a dead-letter queue and moving them to
//! their destinations (rule R7).

use std::sync::Arc;

use sluice_broker::EngineError;
use sluice_broker::moves::{redrive_destination, refused_reason, replay_count, unmovable_reason};
use sluice_broker::{MessageFilter, Redrive, RedriveOutcome};

use crate::engine::EmbeddedBroker;
use crate::ids::uuid_string;
use crate::message::MessageData;
use crate::peek::{SCAN_CHUNK, Snapshot, peeked};
use crate::queue_state::{Order, Phase, Removed};

/// A redrive out of a dead-letter queue (StartMessageMoveTask's work, rule R7).
pub(crate) async fn redrive_messages(
    broker: &EmbeddedBroker,
    source: &str,
    redrive: &Redrive,
) -> Result<RedriveOutcome, EngineError> {
    let src = broker.queue(source)?;
    let inner = &broker.inner;
    let now = inner.now();
    let mut outcome = RedriveOutcome::default();
    let destination =
        |data: &MessageData| redrive_destination(redrive, source, &data.system_attributes);
    // Choose a page at a time: the index under the lock, then the data
    // (read from disk unless cached) without it.
    let mut chosen: Vec<(u64, u32, Arc<MessageData>)> = Vec::new();
    let mut after: Option<Order> = None;
    'scan: loop {
        let (page, fifo) = {
            let st = inner.lock_current(&src, now)?;
            let page: Vec<Snapshot> = st
                .ready_after(after, SCAN_CHUNK)
                .into_iter()
                .filter_map(|(order, seq)| Snapshot::of(&st, seq, Some(order)))
                .collect();
            (page, st.meta.config.fifo)
        };
        let Some(last) = page.last() else { break };
        after = last.order;
        let bodies = inner
            .load_bodies(
                src.id,
                page.iter().map(|p| (p.seq, p.body.clone())).collect(),
            )
            .await?;
        for (snap, data) in page.iter().zip(bodies) {
            // Not on disk yet (its move is still being written): the
            // next redrive takes it.
            let Some(data) = data else { continue };
            if chosen.len() + outcome.message_ids.len() >= redrive.max {
                break 'scan;
            }
            if redrive.filter != MessageFilter::default()
                && !redrive.filter.matches(&peeked(snap, &data, fifo))
            {
                continue;
            }
            let replays = replay_count(&data.attributes);
            if redrive.max_replays.is_some_and(|limit| replays >= limit) {
                outcome.refused += 1;
                outcome.reason = Some(refused_reason(&uuid_string(&data.message_id), replays));
                continue;
            }
            // A message with nowhere to go stays, is reported, and does
            // not count against `max`: the same in a dry run and a real one.
            let target = destination(&data);
            if !target
                .as_deref()
                .is_some_and(|t| inner.queues.read().contains_key(t))
            {
                outcome.unmovable += 1;
                outcome.reason = Some(unmovable_reason(target.as_deref()));
                continue;
            }
            if redrive.dry_run {
                outcome.message_ids.push(uuid_string(&data.message_id));
                continue;
            }
            chosen.push((snap.seq, snap.state.receive_count, data));
        }
    }
    if redrive.dry_run {
        outcome.moved = outcome.message_ids.len() as u64;
        return Ok(outcome);
    }
    // Take the chosen messages that are still ready as they were seen.
    let taken: Vec<(Removed, Arc<MessageData>)> = {
        let mut st = inner.lock_current(&src, now)?;
        let mut taken = Vec::with_capacity(chosen.len());
        for (seq, count, data) in chosen {
            let unchanged = st
                .get(seq)
                .is_some_and(|e| e.phase == Phase::Ready && e.receive_count == count);
            if let Some(removed) = unchanged.then(|| st.remove(seq)).flatten() {
                taken.push((removed, data));
            }
        }
        taken
    };
    // Group by destination, keeping each group's order.
    let mut by_destination: Vec<(Option<String>, crate::dead_letter::Chosen)> = Vec::new();
    for (removed, data) in taken {
        let target = destination(&data);
        match by_destination.iter_mut().find(|(t, _)| *t == target) {
            Some((_, list)) => list.push((removed, data)),
            None => by_destination.push((target, vec![(removed, data)])),
        }
    }
    // Every move is made before the first wait, so a caller that gives up
    // waiting leaves no message taken out of the DLQ and not put anywhere.
    let mut tickets = Vec::new();
    for (target, entries) in by_destination {
        let dest = target
            .as_deref()
            .and_then(|t| inner.queues.read().get(t).cloned());
        let Some(dest) = dest else {
            // Deleted since the choice.
            outcome.unmovable += entries.len() as u64;
            outcome.reason = Some(unmovable_reason(target.as_deref()));
            broker.put_back(&src, entries.into_iter().map(|(r, _)| r).collect(), now);
            continue;
        };
        match broker.redrive_into(&src, &dest, entries, redrive.mark_replay, now) {
            Ok((ids, ticket)) => {
                outcome.moved += ids.len() as u64;
                outcome.message_ids.extend(ids);
                tickets.push(ticket);
            }
            Err(entries) => {
                outcome.unmovable += entries.len() as u64;
                outcome.reason = Some(sluice_broker::moves::NON_EXISTENT_QUEUE.into());
                broker.put_back(&src, entries.into_iter().map(|(r, _)| r).collect(), now);
            }
        }
    }
    for ticket in tickets {
        ticket.wait().await?;
    }
    Ok(outcome)
}
