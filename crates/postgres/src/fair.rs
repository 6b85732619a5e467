//! Fair queues on PostgreSQL (rule V10): which tenants of a queue are
//! noisy, as this node sees them (the rule itself is
//! [`sluice_core::fair_tenants`]).
//!
//! A node works a queue's noisy tenants out at most once a second (of the
//! engine's clock), from the database's messages in flight: their count
//! per group, and how long each has been in flight so far. The processing
//! time of messages already deleted is what this node saw deleted (a
//! delete returns the message's group and when it was received); with
//! several nodes behind one address each sees its share of the deletes, so
//! the shares it computes are the same. SQS calls its own thresholds
//! approximate; these are too.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use sluice_broker::EngineError;
use sluice_core::fair_tenants::{NOISY_SEND_WINDOW_MS, QueueLoad, TenantLoad, Usage};

use crate::rows::{QueueRow, UNGROUPED_IN_FAIR_QUEUE, col};
use crate::statements::query;

/// How long a node trusts the noisy tenants it worked out (ms).
pub(crate) const FAIR_REFRESH_MS: i64 = 1_000;

/// A queue whose tenants nobody asked about for this long (ms) is
/// forgotten: it was deleted on another node, or is no longer fair. Longer
/// than the five minutes a tenant's latest send counts for.
const FORGET_AFTER_MS: i64 = 10 * 60 * 1_000;

/// Each fair queue's tenants as this node knows them, by queue id.
#[derive(Default)]
pub(crate) struct FairTenants {
    queues: Mutex<HashMap<i64, QueueTenants>>,
}

#[derive(Default)]
struct QueueTenants {
    /// When a request last read or changed these (engine clock, ms).
    used_at: i64,
    /// When the noisy tenants were last worked out (engine clock, ms).
    refreshed_at: Option<i64>,
    /// The noisy tenants, the one with the fewest in flight first.
    noisy: Arc<Vec<String>>,
    /// Their messages in flight, in all, when worked out.
    noisy_in_flight: u64,
    /// Processing time of the messages this node saw deleted, by group
    /// and in all.
    done: HashMap<String, Usage>,
    done_total: Usage,
}

/// The noisy tenants and the quiet ones' share of the queue, for the
/// metrics: which groups, and how many of the in-flight messages are
/// theirs.
pub(crate) struct NoisyView {
    pub(crate) groups: Arc<Vec<String>>,
    pub(crate) in_flight: u64,
}

impl FairTenants {
    /// A message of `group` (none: ungrouped) received at `received_at`
    /// was deleted at `now`.
    pub(crate) fn finished(&self, queue_id: i64, now: i64, group: Option<&str>, received_at: i64) {
        let spent = (now - received_at).max(0) as f64;
        let now = now.max(0) as u64;
        let mut queues = self.queues.lock();
        let tenants = queues.entry(queue_id).or_default();
        tenants.used_at = tenants.used_at.max(now as i64);
        tenants.done_total.add(now, spent);
        if let Some(group) = group.filter(|g| *g != UNGROUPED_IN_FAIR_QUEUE) {
            match tenants.done.get_mut(group) {
                Some(usage) => usage.add(now, spent),
                None => {
                    let mut usage = Usage::default();
                    usage.add(now, spent);
                    tenants.done.insert(group.to_owned(), usage);
                }
            }
        }
    }

    /// Drops what this node knows of a deleted queue's tenants.
    pub(crate) fn forget(&self, queue_id: i64) {
        self.queues.lock().remove(&queue_id);
    }

    /// The noisy tenants of queue `queue_id` as last worked out, the one
    /// with the fewest in flight first, unless that was over
    /// [`FAIR_REFRESH_MS`] ago: then None, and the caller works them out
    /// again with [`refresh`](Self::refresh). Requests that find them stale
    /// while another is working them out keep the old answer.
    pub(crate) fn known(&self, queue_id: i64, now: i64) -> Option<NoisyView> {
        let mut queues = self.queues.lock();
        let tenants = queues.entry(queue_id).or_default();
        tenants.used_at = tenants.used_at.max(now);
        let view = NoisyView {
            groups: tenants.noisy.clone(),
            in_flight: tenants.noisy_in_flight,
        };
        if tenants
            .refreshed_at
            .is_some_and(|at| now - at < FAIR_REFRESH_MS)
        {
            return Some(view);
        }
        tenants.refreshed_at = Some(now);
        // At most once a second per queue: queues nobody asks about are
        // dropped here.
        queues.retain(|_, t| now - t.used_at < FORGET_AFTER_MS);
        None
    }

    /// Works out the noisy tenants of `q` now (after [`known`](Self::known)
    /// said None).
    pub(crate) async fn refresh<C: deadpool_postgres::GenericClient>(
        &self,
        client: &C,
        q: &QueueRow,
        now: i64,
    ) -> Result<NoisyView, EngineError> {
        let in_flight = in_flight_by_group(client, q, now).await?;
        let candidates = self.candidates(q.id, now, &in_flight);
        let mut noisy = confirm(client, q, now, candidates).await?;
        noisy.sort();
        let noisy_in_flight = noisy.iter().map(|(n, _)| n).sum();
        let groups: Arc<Vec<String>> = Arc::new(noisy.into_iter().map(|(_, g)| g).collect());
        let mut queues = self.queues.lock();
        let tenants = queues.entry(q.id).or_default();
        tenants.noisy = groups.clone();
        tenants.noisy_in_flight = noisy_in_flight;
        Ok(NoisyView {
            groups,
            in_flight: noisy_in_flight,
        })
    }

    /// The tenants noisy by their shares, before their backlog and latest
    /// send are looked at, with their messages in flight; forgets the
    /// processing time that no longer counts.
    fn candidates(
        &self,
        queue_id: i64,
        now: i64,
        in_flight: &HashMap<String, (u64, f64)>,
    ) -> Vec<(String, TenantLoad)> {
        let at = now.max(0) as u64;
        let mut queues = self.queues.lock();
        let tenants = queues.entry(queue_id).or_default();
        tenants.done.retain(|_, usage| !usage.is_spent(at));
        let queue = QueueLoad {
            in_flight: in_flight.values().map(|(n, _)| n).sum(),
            usage: tenants.done_total.at(at, 0) + in_flight.values().map(|(_, e)| e).sum::<f64>(),
        };
        let mut groups: Vec<&String> = in_flight.keys().chain(tenants.done.keys()).collect();
        groups.sort();
        groups.dedup();
        groups
            .into_iter()
            .filter(|g| g.as_str() != UNGROUPED_IN_FAIR_QUEUE)
            .filter_map(|group| {
                let (count, elapsed) = in_flight.get(group).copied().unwrap_or((0, 0.0));
                let load = TenantLoad {
                    in_flight: count,
                    usage: tenants.done.get(group).map_or(0.0, |u| u.at(at, 0)) + elapsed,
                    // Looked at next, for the few that get this far.
                    backlog: true,
                    last_sent: at,
                };
                load.is_noisy(&queue, at).then(|| (group.clone(), load))
            })
            .collect()
    }
}

/// The messages in flight of each group of `q`, and for how long they
/// have been in flight so far in all (ms); ungrouped ones under
/// [`UNGROUPED_IN_FAIR_QUEUE`]. Reads only the rows in flight (and
/// delayed), through the receive index.
async fn in_flight_by_group<C: deadpool_postgres::GenericClient>(
    client: &C,
    q: &QueueRow,
    now: i64,
) -> Result<HashMap<String, (u64, f64)>, EngineError> {
    let rows = query(
        client,
        "SELECT coalesce(group_id, $3), count(*), sum($2 - last_receive_at)::float8
         FROM sluice_messages
         WHERE queue_id = $1 AND visible_at > $2 AND receive_count > 0
         GROUP BY 1",
        &[&q.id, &now, &UNGROUPED_IN_FAIR_QUEUE],
    )
    .await?;
    rows.iter()
        .map(|r| {
            let count: i64 = col(r, 1)?;
            let elapsed: Option<f64> = col(r, 2)?;
            Ok((
                col::<String>(r, 0)?,
                (count.max(0) as u64, elapsed.unwrap_or(0.0).max(0.0)),
            ))
        })
        .collect()
}

/// The candidates that are noisy once their backlog and latest send are
/// known: (messages in flight, group).
async fn confirm<C: deadpool_postgres::GenericClient>(
    client: &C,
    q: &QueueRow,
    now: i64,
    candidates: Vec<(String, TenantLoad)>,
) -> Result<Vec<(u64, String)>, EngineError> {
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<&str> = candidates.iter().map(|(g, _)| g.as_str()).collect();
    // One probe of the group index each: the newest message's send time,
    // and whether any message is receivable.
    let rows = query(
        client,
        "SELECT g,
            EXISTS (SELECT 1 FROM sluice_messages m
                    WHERE m.queue_id = $1 AND m.group_id = g AND m.visible_at <= $2),
            (SELECT m.sent_at FROM sluice_messages m
             WHERE m.queue_id = $1 AND m.group_id = g ORDER BY m.seq DESC LIMIT 1)
         FROM unnest($3::text[]) AS g",
        &[&q.id, &now, &names],
    )
    .await?;
    let at = now.max(0) as u64;
    let mut noisy = Vec::new();
    for r in &rows {
        let group: String = col(r, 0)?;
        let backlog: bool = col(r, 1)?;
        let last_sent: Option<i64> = col(r, 2)?;
        let Some((_, load)) = candidates.iter().find(|(g, _)| *g == group) else {
            continue;
        };
        // The shares were checked already: what is left is whether it has
        // a backlog and sent lately.
        let last_sent = last_sent.unwrap_or(0).max(0) as u64;
        if backlog && at.saturating_sub(last_sent) < NOISY_SEND_WINDOW_MS {
            noisy.push((load.in_flight, group));
        }
    }
    Ok(noisy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_nobody_asks_about_is_forgotten() {
        let tenants = FairTenants::default();
        tenants.finished(1, 1_000, Some("a"), 0);
        assert!(tenants.known(2, 1_000).is_none());
        assert_eq!(tenants.queues.lock().len(), 2);
        let later = 1_000 + FORGET_AFTER_MS;
        assert!(tenants.known(2, later).is_none());
        assert!(tenants.queues.lock().contains_key(&2));
        assert!(!tenants.queues.lock().contains_key(&1), "queue 1 forgotten");
        tenants.forget(2);
        assert!(tenants.queues.lock().is_empty());
    }
}
