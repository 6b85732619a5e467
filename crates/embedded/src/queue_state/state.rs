//! One queue's state and its bookkeeping: inserting and removing
//! messages, their places among the ready ones, side maps, counts.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use sluice_broker::{FairStats, QueueCounts, QueueMeta};
use sluice_core::clock::Millis;

use super::entry::{Attempt, Entry, HeadTurn, Order, Phase, Removed, fair_group};
use crate::body_cache::BodyBudget;
use crate::dedup::DedupWindow;
use crate::fair::FairReady;
use crate::fifo::Lanes;
use crate::groups::GroupNames;
use crate::message::{MessageData, MessageState};
use crate::seq_hash::SeqMap;

/// One queue's state.
#[derive(Debug)]
pub struct QueueState {
    /// Configuration, tags, timestamps.
    pub meta: QueueMeta,
    /// Time of the last purge.
    pub last_purge: Option<Millis>,
    /// Set when the queue is deleted; operations that still hold it fail.
    pub deleted: bool,
    pub(super) entries: SeqMap<Entry>,
    /// Ready messages by their place: oldest first, best effort (rule V10).
    pub(super) ready: BTreeSet<Order>,
    /// Delayed and in-flight messages by the time they become ready.
    pub(super) timers: BTreeSet<(Millis, u64)>,
    /// All messages by the start of their retention clock (rule V7).
    pub(super) by_age: BTreeSet<(Millis, u64)>,
    pub(super) in_flight: usize,
    pub(super) delayed: usize,
    /// FIFO queues: each group's order.
    pub(super) lanes: Option<Lanes>,
    /// FIFO queues: the groups whose head is ready, in the order they take
    /// turns (rule F14), so a receive visits only groups it can serve
    /// however many groups are in flight.
    pub(super) ready_heads: BTreeSet<HeadTurn>,
    /// Standard queues once a message carries a group: turns between groups.
    pub(super) fair: Option<FairReady<Order>>,
    /// The names of the groups the messages carry.
    pub(super) groups: GroupNames,
    /// Failure reasons consumers gave (rule X2); few messages have one.
    pub(super) failures: SeqMap<Arc<str>>,
    /// First and latest receive time of the messages received at least once.
    pub(super) receive_times: SeqMap<(Millis, Millis)>,
    /// The place of messages sent to the back (rule V12); every other
    /// message's place is `(seq, 0)`; and back from place to sequence.
    pub(super) back_order: SeqMap<Order>,
    pub(super) back_seq: HashMap<Order, u64>,
    /// The highest sequence inserted, and how many messages went to the
    /// back after it (rule V12).
    pub(super) newest_seq: u64,
    pub(super) sent_back: u64,
    /// Durable mode: the shared budget of cached bodies, and this queue's
    /// cached sequences, oldest first, with when they were cached (entries
    /// whose body went meanwhile are skipped when they come up).
    pub(super) cache: Option<Arc<BodyBudget>>,
    pub(super) cached: VecDeque<(u64, Millis)>,
    pub(super) cached_live: usize,
    /// FIFO queues: deduplication ids of the last five minutes.
    pub dedup: DedupWindow,
    /// FIFO queues: receives by ReceiveRequestAttemptId, for retries.
    pub attempts: HashMap<String, Attempt>,
    /// Messages past retention held for the archive (rule X8): out of
    /// every index and count, kept (with their data on disk) until the
    /// archive has them.
    pub(super) expired: BTreeMap<u64, Removed>,
}

impl QueueState {
    /// An empty queue; `cache` is the body budget in durable mode, `None`
    /// in memory (bodies are then always kept).
    pub fn new(meta: QueueMeta, cache: Option<Arc<BodyBudget>>) -> Self {
        let meta_is_fifo = meta.config.fifo;
        Self {
            meta,
            last_purge: None,
            deleted: false,
            entries: SeqMap::default(),
            ready: BTreeSet::new(),
            timers: BTreeSet::new(),
            by_age: BTreeSet::new(),
            in_flight: 0,
            delayed: 0,
            lanes: meta_is_fifo.then(Lanes::default),
            ready_heads: BTreeSet::new(),
            fair: None,
            groups: GroupNames::default(),
            failures: SeqMap::default(),
            receive_times: SeqMap::default(),
            back_order: SeqMap::default(),
            back_seq: HashMap::new(),
            newest_seq: 0,
            sent_back: 0,
            cache,
            cached: VecDeque::new(),
            cached_live: 0,
            dedup: DedupWindow::default(),
            attempts: HashMap::new(),
            expired: BTreeMap::new(),
        }
    }

    /// Adds a message, placing it by its state relative to `now`. `body`
    /// is its data when in memory; in durable mode it is cached within the
    /// body budget, unless more messages are ready ahead of it than the
    /// budget holds (a receive would find it evicted).
    pub fn insert(
        &mut self,
        seq: u64,
        body: Option<Arc<MessageData>>,
        enqueued_at: Millis,
        group: Option<&str>,
        state: MessageState,
        now: Millis,
    ) {
        let phase = if state.visible_at <= now {
            Phase::Ready
        } else if state.receive_count == 0 {
            Phase::Delayed
        } else {
            Phase::InFlight
        };
        self.by_age.insert((enqueued_at, seq));
        let group = group.map(|name| self.groups.intern(name));
        if let (Some(lanes), Some(group)) = (&mut self.lanes, group) {
            let name = self.groups.name(group);
            let head = lanes.at(name, 0);
            lanes.insert(name, seq);
            // Recovery and dead-letter put-backs may go ahead of the head.
            if let Some(old) = head.filter(|&old| old > seq)
                && let Some(old_entry) = self.entries.get(&old)
            {
                self.ready_heads.remove(&old_entry.head_turn(old));
            }
        }
        if self.lanes.is_none() && self.fair.is_none() && group.is_some() {
            self.enable_fairness(now);
        }
        if let (Some(fair), Some(group)) = (&mut self.fair, group) {
            fair.sent(self.groups.name(group), enqueued_at);
        }
        self.newest_seq = self.newest_seq.max(seq);
        let body = match (&self.cache, body) {
            (Some(cache), Some(data))
                if !cache.reachable(self.ready.len(), BodyBudget::weight(&data)) =>
            {
                None
            }
            (_, body) => body,
        };
        let cached = body.is_some() && self.cache.is_some();
        if state.first_receive_at != 0 || state.last_receive_at != 0 {
            self.receive_times
                .insert(seq, (state.first_receive_at, state.last_receive_at));
        }
        let entry = Entry {
            body,
            enqueued_at,
            visible_at: state.visible_at,
            receive_count: state.receive_count,
            group,
            phase,
            at_back: false,
        };
        self.place(seq, &entry);
        if cached {
            self.count_cached(seq, &entry, now);
        }
        if let Some(old) = self.entries.insert(seq, entry) {
            // Never happens (sequences are unique); keep the counts right.
            self.uncount_cached(&old);
        }
        if cached {
            self.evict_over_budget();
        }
    }

    /// Puts a message taken out by [`remove`](Self::remove) back.
    pub fn insert_removed(&mut self, removed: Removed, now: Millis) {
        let Removed {
            seq,
            body,
            enqueued_at,
            state,
            group,
            failure,
        } = removed;
        self.insert(seq, body, enqueued_at, group.as_deref(), state, now);
        if let Some(reason) = failure {
            self.failures.insert(seq, reason);
        }
    }

    /// A message's place among the ready ones.
    pub(super) fn order(&self, seq: u64) -> Order {
        self.back_order.get(&seq).copied().unwrap_or((seq, 0))
    }

    /// The message at a place among the ready ones.
    pub(super) fn seq_at(&self, order: Order) -> Option<u64> {
        if order.1 == 0 {
            Some(order.0)
        } else {
            self.back_seq.get(&order).copied()
        }
    }

    /// Forgets a message's place at the back, if it had one.
    pub(super) fn forget_back(&mut self, seq: u64) {
        if let Some(order) = self.back_order.remove(&seq) {
            self.back_seq.remove(&order);
        }
    }

    /// Whether `seq` is at the head of its FIFO group.
    fn is_head(&self, seq: u64, entry: &Entry) -> bool {
        match (&self.lanes, entry.group) {
            (Some(lanes), Some(group)) => lanes.at(self.groups.name(group), 0) == Some(seq),
            _ => false,
        }
    }

    pub(super) fn place(&mut self, seq: u64, entry: &Entry) {
        match entry.phase {
            Phase::Ready => {
                let order = self.order(seq);
                self.ready.insert(order);
                if let Some(fair) = &mut self.fair {
                    fair.add(fair_group(&self.groups, entry), order);
                }
                if self.is_head(seq, entry) {
                    self.ready_heads.insert(entry.head_turn(seq));
                }
            }
            Phase::Delayed => {
                self.delayed += 1;
                self.timers.insert((entry.visible_at, seq));
            }
            Phase::InFlight => {
                self.in_flight += 1;
                self.timers.insert((entry.visible_at, seq));
                if let Some(fair) = &mut self.fair {
                    fair.in_flight_changed(fair_group(&self.groups, entry), true);
                }
            }
        }
    }

    pub(super) fn unplace(&mut self, seq: u64, entry: &Entry) {
        match entry.phase {
            Phase::Ready => {
                let order = self.order(seq);
                self.ready.remove(&order);
                if let Some(fair) = &mut self.fair {
                    fair.remove(fair_group(&self.groups, entry), order);
                }
                if self.lanes.is_some() {
                    self.ready_heads.remove(&entry.head_turn(seq));
                }
            }
            Phase::Delayed => {
                self.delayed -= 1;
                self.timers.remove(&(entry.visible_at, seq));
            }
            Phase::InFlight => {
                self.in_flight -= 1;
                self.timers.remove(&(entry.visible_at, seq));
                self.left_flight(entry);
            }
        }
    }

    /// Counts a message out of flight among its tenant's.
    pub(super) fn left_flight(&mut self, entry: &Entry) {
        if let Some(fair) = &mut self.fair {
            fair.in_flight_changed(fair_group(&self.groups, entry), false);
        }
    }

    /// Removes a message; `None` if it is not here.
    pub fn remove(&mut self, seq: u64) -> Option<Removed> {
        let entry = self.entries.remove(&seq)?;
        self.unplace(seq, &entry);
        self.uncount_cached(&entry);
        self.by_age.remove(&(entry.enqueued_at, seq));
        self.forget_back(seq);
        let group = entry.group.map(|g| {
            let name = self.groups.name(g).clone();
            if let Some(lanes) = &mut self.lanes {
                lanes.remove(&name, seq);
                // The next message of the group may be its ready head now.
                if let Some(next) = lanes.at(&name, 0)
                    && let Some(next_entry) = self.entries.get(&next)
                    && next_entry.phase == Phase::Ready
                {
                    self.ready_heads.insert(next_entry.head_turn(next));
                }
            }
            self.groups.release(g);
            name
        });
        let (first_receive_at, last_receive_at) = self.receive_times.remove(&seq).unwrap_or((0, 0));
        Some(Removed {
            seq,
            body: entry.body,
            enqueued_at: entry.enqueued_at,
            state: MessageState {
                visible_at: entry.visible_at,
                receive_count: entry.receive_count,
                first_receive_at,
                last_receive_at,
            },
            group,
            failure: self.failures.remove(&seq),
        })
    }

    /// The message with this sequence.
    pub fn get(&self, seq: u64) -> Option<&Entry> {
        self.entries.get(&seq)
    }

    /// The delivery state of a message, as stored.
    pub fn message_state(&self, seq: u64) -> Option<MessageState> {
        let entry = self.entries.get(&seq)?;
        let (first_receive_at, last_receive_at) =
            self.receive_times.get(&seq).copied().unwrap_or((0, 0));
        Some(MessageState {
            visible_at: entry.visible_at,
            receive_count: entry.receive_count,
            first_receive_at,
            last_receive_at,
        })
    }

    /// Repacks the ordered sets after a bulk load: inserting in order leaves
    /// B-tree nodes about half full, rebuilding them from sorted input fills
    /// them, which is most of the index's memory after a restart.
    pub fn compact(&mut self) {
        self.ready = std::mem::take(&mut self.ready).into_iter().collect();
        self.timers = std::mem::take(&mut self.timers).into_iter().collect();
        self.by_age = std::mem::take(&mut self.by_age).into_iter().collect();
        self.entries.shrink_to_fit();
    }

    /// Records the reason a consumer gave for failing a message (rule X2).
    pub fn set_failure(&mut self, seq: u64, reason: Arc<str>) {
        if self.entries.contains_key(&seq) {
            self.failures.insert(seq, reason);
        }
    }

    /// The last failure reason of a message.
    pub fn failure(&self, seq: u64) -> Option<&Arc<str>> {
        self.failures.get(&seq)
    }

    /// Messages in sequence order from `after` (exclusive), for peeking.
    pub fn iter_from(&self, after: u64) -> impl Iterator<Item = (u64, &Entry)> {
        let mut seqs: Vec<u64> = self
            .entries
            .keys()
            .copied()
            .filter(|&s| s > after)
            .collect();
        seqs.sort_unstable();
        seqs.into_iter()
            .filter_map(move |s| self.entries.get(&s).map(|e| (s, e)))
    }

    /// Counts for GetQueueAttributes (call [`tick`](Self::tick) first).
    pub fn counts(&self) -> QueueCounts {
        QueueCounts {
            visible: self.ready.len() as u64,
            in_flight: self.in_flight as u64,
            delayed: self.delayed as u64,
        }
    }

    /// The start of the oldest message's retention clock, leaving out the
    /// messages sent to the back (rules V12, M3), as SQS's
    /// ApproximateAgeOfOldestMessage does.
    pub fn oldest_enqueued_at(&self) -> Option<Millis> {
        self.by_age
            .iter()
            .find(|(_, seq)| self.entries.get(seq).is_some_and(|e| !e.at_back))
            .map(|&(at, _)| at)
    }

    /// FIFO queues: the message groups with a message in flight; 0 for a
    /// standard queue. Reads every message in flight or delayed: for the
    /// metrics, not for a request path.
    pub fn groups_in_flight(&self) -> u64 {
        if self.lanes.is_none() {
            return 0;
        }
        let groups: std::collections::HashSet<_> = self
            .timers
            .iter()
            .filter_map(|(_, seq)| self.entries.get(seq))
            .filter(|e| e.phase == Phase::InFlight)
            .filter_map(|e| e.group)
            .collect();
        groups.len() as u64
    }

    /// Fair queues: the noisy tenants and the quiet ones' messages (rule
    /// V10); zeros for any other queue. Reads every delayed message: for
    /// the metrics, not for a request path.
    pub fn fair_stats(&self, now: Millis) -> FairStats {
        let Some(fair) = &self.fair else {
            return FairStats::default();
        };
        let counts = fair.quiet_counts();
        let quiet_delayed = self
            .timers
            .iter()
            .filter_map(|(_, seq)| self.entries.get(seq))
            .filter(|e| e.phase == Phase::Delayed)
            .filter(|e| fair_group(&self.groups, e).is_none_or(|g| !fair.is_noisy(g)))
            .count() as u64;
        let oldest = fair
            .oldest_quiet()
            .and_then(|order| self.seq_at(order))
            .and_then(|seq| self.entries.get(&seq));
        FairStats {
            noisy_groups: counts.noisy_groups,
            quiet_visible: counts.visible,
            quiet_in_flight: counts.in_flight,
            quiet_delayed,
            quiet_oldest_age_ms: oldest.map_or(0, |e| now.saturating_sub(e.enqueued_at)),
        }
    }

    /// Number of messages in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// True when a message is ready.
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Removes every message; returns how many.
    pub fn clear(&mut self) -> usize {
        let n = self.entries.len();
        if let Some(cache) = &self.cache {
            let cached: usize = self
                .entries
                .values()
                .filter_map(|e| e.body.as_deref())
                .map(BodyBudget::weight)
                .sum();
            cache.sub(cached);
        }
        self.entries.clear();
        self.ready.clear();
        self.timers.clear();
        self.by_age.clear();
        self.groups.clear();
        self.failures.clear();
        self.receive_times.clear();
        self.back_order.clear();
        self.back_seq.clear();
        self.cached.clear();
        self.cached_live = 0;
        self.in_flight = 0;
        self.delayed = 0;
        if let Some(lanes) = &mut self.lanes {
            lanes.clear();
        }
        self.ready_heads.clear();
        if let Some(fair) = &mut self.fair {
            fair.clear();
        }
        // A purge deletes what waits for the archive too: the client asked
        // for every message to go.
        self.expired.clear();
        n
    }
}
