//! Which messages retention deletes (rule V7), as SQL: for the sweep and
//! for the retention a read applies first (`engine::expire`); and where a
//! queue that keeps what expires puts them instead (rule X8).

use crate::rows::MESSAGE_COLUMNS;

/// SQL keeping the rows a CTE named `gone` returned (columns `queue_id`
/// then [`MESSAGE_COLUMNS`]) for the archive, those of queues for which
/// `keep` (a condition on `gone`) holds.
pub(crate) fn keep_expired(keep: &str) -> String {
    format!(
        "INSERT INTO sluice_expired (queue_id, {MESSAGE_COLUMNS})
         SELECT queue_id, {MESSAGE_COLUMNS} FROM gone WHERE {keep}"
    )
}

/// [`MESSAGE_COLUMNS`], each prefixed with `alias.`.
pub(crate) fn message_columns_of(alias: &str) -> String {
    MESSAGE_COLUMNS
        .split(',')
        .map(|c| format!("{alias}.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// SQL for the seqs of queue `queue`'s messages enqueued at or before
/// `cut` (expressions), at most `limit` of each kind, through indexes only:
/// - messages moved in (`moved`), whose enqueue time may be older than the
///   messages stored before them (rule R3), through the age index, which
///   holds them alone;
/// - the others, in seq order, before the first message of the queue
///   enqueued after `cut`, through the primary key. A message gets its seq
///   when it is stored, and is enqueued then unless moved, when its enqueue
///   time can only be older: every message after that first one was stored
///   after `cut`. Sends on several nodes, or combined in one statement, may
///   store a message a few milliseconds out of order; one expired just
///   behind an unexpired one waits for the next pass, and no receive
///   delivers it meanwhile (they skip expired messages).
pub(crate) fn expired_seqs(queue: &str, cut: &str, limit: &str) -> String {
    format!(
        "(SELECT seq FROM sluice_messages
          WHERE queue_id = {queue} AND moved AND enqueued_at <= {cut} LIMIT {limit})
         UNION ALL
         (SELECT seq FROM sluice_messages
          WHERE queue_id = {queue} AND NOT moved AND enqueued_at <= {cut}
            AND seq < COALESCE((SELECT f.seq FROM sluice_messages f
                                WHERE f.queue_id = {queue} AND f.enqueued_at > {cut}
                                ORDER BY f.seq LIMIT 1), {max})
          ORDER BY seq LIMIT {limit})",
        max = i64::MAX
    )
}
