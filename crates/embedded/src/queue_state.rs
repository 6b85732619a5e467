//! One queue's in-memory index: which messages are ready, delayed or in
//! flight, and when each next changes state.
//!
//! Pure and synchronous: it takes the current time as an argument and does
//! no I/O, so the engine can hold its lock only for these calls and hand the
//! resulting changes to the journal.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use sluice_broker::{QueueCounts, QueueMeta};

use crate::body_cache::BodyBudget;
use crate::dedup::DedupWindow;
use crate::fair::FairReady;
use crate::fifo::Lanes;
use crate::groups::{GroupId, GroupNames};
use crate::message::{MessageData, MessageState};
use crate::seq_hash::SeqMap;

/// The group a message takes turns with; ungrouped messages share one.
fn fair_group<'a>(groups: &'a GroupNames, entry: &Entry) -> &'a str {
    entry.group.map_or("", |g| groups.name(g))
}
use sluice_core::clock::Millis;
use sluice_core::limits::BACK_OF_QUEUE_RECEIVES;
use sluice_core::retry_backoff::RetryBackoff;

/// A ready message's place in its queue: `(sequence, 0)` normally, and
/// `(newest sequence so far, n)` for a message sent to the back (rule V12),
/// so it comes after every message already there and before later sends.
pub type Order = (u64, u64);

/// How a receive treats the messages it takes.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeliveryRules {
    /// How long a delivered message stays hidden, milliseconds.
    pub visibility_ms: u64,
    /// A redrive policy's maxReceiveCount: a message received that many
    /// times is taken out for the dead-letter queue instead (rule R2).
    pub max_receives: Option<u32>,
    /// The queue's retry backoff: each failed attempt stays hidden longer.
    pub backoff: Option<RetryBackoff>,
    /// Standard queues whose maxReceiveCount is above 3: a message received
    /// this many times goes to the back of the queue when it is ready again
    /// (rule V12).
    pub back_after: Option<u32>,
}

impl DeliveryRules {
    /// The rules for a queue of this configuration.
    pub fn new(
        config: &sluice_core::attributes::QueueConfig,
        visibility_ms: u64,
        max_receives: Option<u32>,
    ) -> Self {
        Self {
            visibility_ms,
            max_receives,
            backoff: config.backoff(),
            back_after: (!config.fifo && max_receives.is_some_and(|n| n > BACK_OF_QUEUE_RECEIVES))
                .then_some(BACK_OF_QUEUE_RECEIVES),
        }
    }
}

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Receivable now.
    Ready,
    /// Not yet receivable because of a delay, never received.
    Delayed,
    /// Received, hidden until its visibility timeout ends.
    InFlight,
}

/// A message in the index: what delivery decisions need, and its body
/// only while cached (durable mode) or always (in-memory mode). Kept small
/// on purpose: a backlog costs this much memory per waiting message.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The immutable data when held in memory; `None` means "read it from
    /// the store".
    pub body: Option<Arc<MessageData>>,
    /// Start of its retention clock.
    pub enqueued_at: Millis,
    /// When it is (again) receivable.
    pub visible_at: Millis,
    /// Receives so far (the receive times are in a side map: most waiting
    /// messages were never received).
    pub receive_count: u32,
    /// Its message group, interned in the queue's [`GroupNames`].
    group: Option<GroupId>,
    /// Which index holds it.
    pub phase: Phase,
    /// Received often enough to go to the back when ready again (V12).
    pub at_back: bool,
}

/// A message taken out of a queue's index, with all it needs to be put
/// into another one (or back).
#[derive(Debug, Clone)]
pub struct Removed {
    /// Its sequence in the queue it left.
    pub seq: u64,
    /// Its data, when it was in memory.
    pub body: Option<Arc<MessageData>>,
    /// Start of its retention clock.
    pub enqueued_at: Millis,
    /// Delivery state.
    pub state: MessageState,
    /// Message group.
    pub group: Option<Arc<str>>,
    /// The last failure reason a consumer gave (rule X2).
    pub failure: Option<Arc<str>>,
}

/// What [`QueueState::deliver`] did.
#[derive(Debug, Default)]
pub struct Delivery {
    /// Sequences delivered, now in flight.
    pub delivered: Vec<u64>,
    /// Messages over their queue's maxReceiveCount, removed from the index.
    pub dead: Vec<Removed>,
}

/// One queue's state.
#[derive(Debug)]
pub struct QueueState {
    /// Configuration, tags, timestamps.
    pub meta: QueueMeta,
    /// Time of the last purge.
    pub last_purge: Option<Millis>,
    /// Set when the queue is deleted; operations that still hold it fail.
    pub deleted: bool,
    entries: SeqMap<Entry>,
    /// Ready messages by their place: oldest first, best effort (rule V10).
    ready: BTreeSet<Order>,
    /// Delayed and in-flight messages by the time they become ready.
    timers: BTreeSet<(Millis, u64)>,
    /// All messages by the start of their retention clock (rule V7).
    by_age: BTreeSet<(Millis, u64)>,
    in_flight: usize,
    delayed: usize,
    /// FIFO queues: each group's order.
    lanes: Option<Lanes>,
    /// Standard queues once a message carries a group: turns between groups.
    fair: Option<FairReady<Order>>,
    /// The names of the groups the messages carry.
    groups: GroupNames,
    /// Failure reasons consumers gave (rule X2); few messages have one.
    failures: SeqMap<Arc<str>>,
    /// First and latest receive time of the messages received at least once.
    receive_times: SeqMap<(Millis, Millis)>,
    /// The place of messages sent to the back (rule V12); every other
    /// message's place is `(seq, 0)`; and back from place to sequence.
    back_order: SeqMap<Order>,
    back_seq: HashMap<Order, u64>,
    /// The highest sequence inserted, and how many messages went to the
    /// back after it (rule V12).
    newest_seq: u64,
    sent_back: u64,
    /// Durable mode: the shared budget of cached bodies, and this queue's
    /// cached sequences, oldest first, with when they were cached (entries
    /// whose body went meanwhile are skipped when they come up).
    cache: Option<Arc<BodyBudget>>,
    cached: VecDeque<(u64, Millis)>,
    cached_live: usize,
    /// FIFO queues: deduplication ids of the last five minutes.
    pub dedup: DedupWindow,
    /// FIFO queues: receives by ReceiveRequestAttemptId, for retries.
    pub attempts: HashMap<String, Attempt>,
}

/// A FIFO receive remembered for retries with the same attempt id (rule F4).
#[derive(Debug, Clone)]
pub struct Attempt {
    /// When the attempt id is forgotten.
    pub expires_at: Millis,
    /// (sequence, receive count) of each message delivered.
    pub seqs: Vec<(u64, u32)>,
    /// What was answered.
    pub messages: Vec<sluice_broker::ReceivedMessage>,
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
            lanes.insert(self.groups.name(group), seq);
        }
        if self.lanes.is_none() && self.fair.is_none() && group.is_some() {
            self.enable_fairness();
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

    fn count_cached(&mut self, seq: u64, entry: &Entry, now: Millis) {
        let (Some(cache), Some(body)) = (&self.cache, &entry.body) else {
            return;
        };
        cache.add(BodyBudget::weight(body));
        self.cached.push_back((seq, now));
        self.cached_live += 1;
        // Deleted messages leave stale sequences behind; sweep them out
        // before they outnumber the live ones.
        if self.cached.len() > 2 * self.cached_live + 1024 {
            let entries = &self.entries;
            self.cached
                .retain(|(s, _)| *s == seq || entries.get(s).is_some_and(|e| e.body.is_some()));
        }
    }

    fn uncount_cached(&mut self, entry: &Entry) {
        if let (Some(cache), Some(body)) = (&self.cache, &entry.body) {
            cache.sub(BodyBudget::weight(body));
            self.cached_live -= 1;
        }
    }

    /// Drops this queue's oldest cached bodies while the budget is over.
    fn evict_over_budget(&mut self) {
        while self.cache.as_ref().is_some_and(|c| c.over()) {
            if !self.evict_oldest() {
                break;
            }
        }
    }

    /// Drops the oldest cached body; false when none is left.
    fn evict_oldest(&mut self) -> bool {
        while let Some((seq, _)) = self.cached.pop_front() {
            if let Some(entry) = self.entries.get_mut(&seq)
                && let Some(body) = entry.body.take()
            {
                if let Some(cache) = &self.cache {
                    cache.sub(BodyBudget::weight(&body));
                }
                self.cached_live -= 1;
                return true;
            }
        }
        false
    }

    /// Lets go of bodies cached before `before` while more than half the
    /// budget is in use, so a queue nobody reads does not keep the budget
    /// from the busy ones. Returns how many were dropped.
    pub fn trim_cache(&mut self, before: Millis) -> usize {
        let mut dropped = 0;
        while self.cache.as_ref().is_some_and(|c| c.over_half())
            && self.cached.front().is_some_and(|&(_, at)| at < before)
        {
            if !self.evict_oldest() {
                break;
            }
            dropped += 1;
        }
        dropped
    }

    /// Bodies cached now (for tests).
    #[cfg(test)]
    pub fn cached_bodies(&self) -> usize {
        self.cached_live
    }

    /// A message's place among the ready ones.
    fn order(&self, seq: u64) -> Order {
        self.back_order.get(&seq).copied().unwrap_or((seq, 0))
    }

    /// The message at a place among the ready ones.
    fn seq_at(&self, order: Order) -> Option<u64> {
        if order.1 == 0 {
            Some(order.0)
        } else {
            self.back_seq.get(&order).copied()
        }
    }

    /// Forgets a message's place at the back, if it had one.
    fn forget_back(&mut self, seq: u64) {
        if let Some(order) = self.back_order.remove(&seq) {
            self.back_seq.remove(&order);
        }
    }

    fn place(&mut self, seq: u64, entry: &Entry) {
        match entry.phase {
            Phase::Ready => {
                let order = self.order(seq);
                self.ready.insert(order);
                if let Some(fair) = &mut self.fair {
                    fair.add(fair_group(&self.groups, entry), order);
                }
            }
            Phase::Delayed => {
                self.delayed += 1;
                self.timers.insert((entry.visible_at, seq));
            }
            Phase::InFlight => {
                self.in_flight += 1;
                self.timers.insert((entry.visible_at, seq));
            }
        }
    }

    fn unplace(&mut self, seq: u64, entry: &Entry) {
        match entry.phase {
            Phase::Ready => {
                let order = self.order(seq);
                self.ready.remove(&order);
                if let Some(fair) = &mut self.fair {
                    fair.remove(fair_group(&self.groups, entry), order);
                }
            }
            Phase::Delayed => {
                self.delayed -= 1;
                self.timers.remove(&(entry.visible_at, seq));
            }
            Phase::InFlight => {
                self.in_flight -= 1;
                self.timers.remove(&(entry.visible_at, seq));
            }
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

    /// Moves due timers to ready and removes messages past retention.
    /// Returns the sequences removed by retention (to delete durably) and
    /// whether any message became ready.
    pub fn tick(&mut self, now: Millis) -> (Vec<u64>, bool) {
        let retention_ms = u64::from(self.meta.config.message_retention_period) * 1000;
        let mut expired = Vec::new();
        while let Some(&(enqueued_at, seq)) = self.by_age.first() {
            if enqueued_at.saturating_add(retention_ms) > now {
                break;
            }
            if self.remove(seq).is_none() {
                // Not indexed: drop the stray age entry rather than spin.
                self.by_age.pop_first();
            }
            expired.push(seq);
        }
        let mut woke = false;
        while let Some(&(due, seq)) = self.timers.first() {
            if due > now {
                break;
            }
            self.timers.pop_first();
            if let Some(mut entry) = self.entries.remove(&seq) {
                match entry.phase {
                    Phase::Delayed => self.delayed -= 1,
                    Phase::InFlight => self.in_flight -= 1,
                    Phase::Ready => {}
                }
                self.make_ready(seq, &mut entry);
                self.place(seq, &entry);
                self.entries.insert(seq, entry);
                woke = true;
            }
        }
        (expired, woke)
    }

    /// Marks a message ready, at the back of the queue if it has earned it.
    fn make_ready(&mut self, seq: u64, entry: &mut Entry) {
        entry.phase = Phase::Ready;
        if entry.at_back {
            self.sent_back += 1;
            let order = (self.newest_seq, self.sent_back);
            self.back_order.insert(seq, order);
            self.back_seq.insert(order, seq);
        }
    }

    /// When the next delayed or in-flight message becomes ready.
    pub fn next_due(&self) -> Option<Millis> {
        self.timers.first().map(|&(due, _)| due)
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

    /// Number of messages in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// True when a message is ready.
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Delivers up to `max` ready messages: each is hidden until
    /// `now + visibility_ms` (plus the retry backoff of its attempt), its
    /// receive count goes up and its first receive time is set (rule V2).
    ///
    /// With `max_receives` (a redrive policy's maxReceiveCount), a ready
    /// message already received that many times is not delivered but taken
    /// out of the queue and returned in [`Delivery::dead`] for the caller to
    /// move to the dead-letter queue (rule R2).
    pub fn deliver(&mut self, max: usize, now: Millis, rules: &DeliveryRules) -> Delivery {
        let mut out = Delivery {
            delivered: Vec::with_capacity(max),
            dead: Vec::new(),
        };
        if self.lanes.is_some() {
            self.deliver_fifo(&mut out, max, now, rules);
            return out;
        }
        while out.delivered.len() < max {
            let next = match &mut self.fair {
                Some(fair) => fair.next(),
                None => self.ready.first().copied(),
            };
            let Some(seq) = next
                .filter(|order| self.ready.contains(order))
                .and_then(|order| self.seq_at(order))
            else {
                break;
            };
            self.deliver_one(seq, &mut out, now, rules);
        }
        out
    }

    fn is_ready(&self, seq: u64) -> bool {
        self.entries
            .get(&seq)
            .is_some_and(|e| e.phase == Phase::Ready)
    }

    /// Up to `n` ready messages after the place `after` (exclusive), oldest
    /// first, for a redrive to choose from (rule R7) a page at a time.
    pub fn ready_after(&self, after: Option<Order>, n: usize) -> Vec<(Order, u64)> {
        let range = match after {
            Some(order) => self
                .ready
                .range((std::ops::Bound::Excluded(order), std::ops::Bound::Unbounded)),
            None => self.ready.range(..),
        };
        range
            .filter_map(|&order| self.seq_at(order).map(|seq| (order, seq)))
            .take(n)
            .collect()
    }

    /// Starts taking turns between groups, from the messages ready now.
    fn enable_fairness(&mut self) {
        let mut fair = FairReady::default();
        for &order in &self.ready {
            if let Some(entry) = self.seq_at(order).and_then(|seq| self.entries.get(&seq)) {
                fair.add(fair_group(&self.groups, entry), order);
            }
        }
        self.fair = Some(fair);
    }

    /// FIFO delivery (rules F1, F13, F14): a group delivers from its head,
    /// the run of consecutive ready messages up to the first one still in
    /// flight (or delayed), and not at all while its head is in flight; one
    /// receive may take several messages of a group. Groups take turns in
    /// the order their heads became receivable: a group whose head became
    /// visible again (visibility timeout over, changed to 0, received with
    /// a zero timeout) comes after the groups already waiting.
    fn deliver_fifo(&mut self, out: &mut Delivery, max: usize, now: Millis, rules: &DeliveryRules) {
        // One step per group, not per message, however deep the backlog.
        let Some(lanes) = &self.lanes else { return };
        let mut groups: Vec<((Millis, bool, u64), String)> = lanes
            .heads()
            .filter_map(|(group, head)| {
                let entry = self.entries.get(&head)?;
                (entry.phase == Phase::Ready).then(|| {
                    // When the head became receivable; at the same moment
                    // a message never received has waited longer.
                    let since = (entry.visible_at, entry.receive_count > 0, head);
                    (since, group.to_string())
                })
            })
            .collect();
        groups.sort_unstable();
        for (_, group) in groups {
            // Consecutive ready messages from the head of the group.
            let mut position = 0;
            while out.delivered.len() < max {
                let next = self.lanes.as_ref().and_then(|l| l.at(&group, position));
                let Some(seq) = next.filter(|&s| self.is_ready(s)) else {
                    break;
                };
                // A dead message leaves the lane, so the position stays.
                if self.deliver_one(seq, out, now, rules) {
                    position += 1;
                }
            }
            if out.delivered.len() >= max {
                break;
            }
        }
    }

    /// Delivers one ready message, or takes it out as dead; true if delivered.
    fn deliver_one(
        &mut self,
        seq: u64,
        out: &mut Delivery,
        now: Millis,
        rules: &DeliveryRules,
    ) -> bool {
        // One lookup in the map, which in a backlog of millions is a cache
        // miss; the placement sets only need copies of the entry's fields.
        let Some(entry) = self.entries.get_mut(&seq) else {
            return false;
        };
        if rules
            .max_receives
            .is_some_and(|limit| entry.receive_count >= limit)
        {
            if let Some(removed) = self.remove(seq) {
                out.dead.push(removed);
            }
            return false;
        }
        let before = Entry {
            body: None,
            ..*entry
        };
        entry.receive_count += 1;
        let count = entry.receive_count;
        let backoff = rules.backoff.map_or(0, |b| b.delay_for(count, seq, now));
        entry.visible_at = now + rules.visibility_ms + backoff;
        entry.at_back |= rules.back_after.is_some_and(|n| count >= n);
        entry.phase = Phase::InFlight;
        let after = Entry {
            body: None,
            ..*entry
        };
        self.unplace(seq, &before);
        self.forget_back(seq);
        self.place(seq, &after);
        let times = self.receive_times.entry(seq).or_insert((now, now));
        if times.0 == 0 {
            times.0 = now;
        }
        times.1 = now;
        out.delivered.push(seq);
        true
    }

    /// Sets an in-flight message's visibility to end at `visible_at`
    /// (rule V5); at or before `now` it is ready at once.
    pub fn set_visibility(&mut self, seq: u64, visible_at: Millis, now: Millis) {
        let Some(mut entry) = self.entries.remove(&seq) else {
            return;
        };
        self.unplace(seq, &entry);
        entry.visible_at = visible_at;
        if visible_at <= now {
            self.make_ready(seq, &mut entry);
        } else {
            entry.phase = Phase::InFlight;
        }
        self.place(seq, &entry);
        self.entries.insert(seq, entry);
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
        if let Some(fair) = &mut self.fair {
            fair.clear();
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_core::attributes::QueueConfig;

    fn queue(cache: Option<Arc<BodyBudget>>) -> QueueState {
        QueueState::new(
            QueueMeta {
                name: "q".into(),
                config: QueueConfig::for_create("q", &Default::default()).expect("config"),
                tags: Default::default(),
                created_at: 0,
                modified_at: 0,
            },
            cache,
        )
    }

    fn data(body: &str) -> Arc<MessageData> {
        Arc::new(MessageData {
            message_id: [1; 16],
            sent_at: 0,
            enqueued_at: 0,
            body: body.into(),
            attributes: Default::default(),
            system_attributes: Default::default(),
            group_id: None,
            dedup_id: None,
            body_md5: None,
        })
    }

    fn fresh() -> MessageState {
        MessageState {
            visible_at: 0,
            receive_count: 0,
            first_receive_at: 0,
            last_receive_at: 0,
        }
    }

    /// The index entry is what a backlog costs per message; a field added
    /// carelessly shows up here before it shows up in a memory figure.
    #[test]
    fn an_index_entry_stays_small() {
        assert!(
            std::mem::size_of::<Entry>() <= 40,
            "{}",
            std::mem::size_of::<Entry>()
        );
    }

    #[test]
    fn the_body_budget_keeps_the_newest_bodies() {
        let one = BodyBudget::weight(&data("x"));
        let budget = Arc::new(BodyBudget::new(3 * one));
        let mut q = queue(Some(budget.clone()));
        let rules = DeliveryRules {
            visibility_ms: 30_000,
            ..Default::default()
        };
        for seq in 1..=5 {
            q.insert(seq, Some(data("x")), 0, None, fresh(), 0);
            // Received at once: nothing waits ahead of the next send.
            assert_eq!(q.deliver(1, 0, &rules).delivered, vec![seq]);
        }
        assert_eq!(q.cached_bodies(), 3);
        assert_eq!(budget.used(), 3 * one);
        assert!(q.get(1).is_some_and(|e| e.body.is_none()));
        assert!(q.get(2).is_some_and(|e| e.body.is_none()));
        assert!(q.get(5).is_some_and(|e| e.body.is_some()));
        // Removing a cached message gives its bytes back.
        assert!(q.remove(5).is_some_and(|r| r.body.is_some()));
        assert_eq!(budget.used(), 2 * one);
        q.clear();
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn a_body_behind_more_ready_messages_than_the_budget_holds_is_not_cached() {
        let one = BodyBudget::weight(&data("x"));
        let budget = Arc::new(BodyBudget::new(3 * one));
        let mut q = queue(Some(budget.clone()));
        for seq in 1..=6 {
            q.insert(seq, Some(data("x")), 0, None, fresh(), 0);
        }
        // Four waiting ahead of the fifth: it would be evicted before a
        // receive reached it, so it is not cached, and nothing older is
        // evicted for it.
        let cached: Vec<u64> = (1..=6)
            .filter(|&s| q.get(s).is_some_and(|e| e.body.is_some()))
            .collect();
        assert_eq!(cached, vec![2, 3, 4]);
        assert_eq!(budget.used(), 3 * one);
        // Once receives drain the queue, sends are cached again.
        let rules = DeliveryRules {
            visibility_ms: 30_000,
            ..Default::default()
        };
        assert_eq!(q.deliver(6, 0, &rules).delivered.len(), 6);
        q.insert(7, Some(data("x")), 0, None, fresh(), 0);
        assert!(q.get(7).is_some_and(|e| e.body.is_some()));
    }

    #[test]
    fn in_memory_bodies_are_never_evicted() {
        let mut q = queue(None);
        for seq in 1..=100 {
            q.insert(seq, Some(data("x")), 0, None, fresh(), 0);
        }
        assert!((1..=100).all(|s| q.get(s).is_some_and(|e| e.body.is_some())));
    }

    #[test]
    fn trimming_lets_go_of_old_bodies_only_when_the_budget_is_half_used() {
        let one = BodyBudget::weight(&data("x"));
        let budget = Arc::new(BodyBudget::new(10 * one));
        let mut q = queue(Some(budget.clone()));
        for seq in 1..=4 {
            q.insert(seq, Some(data("x")), 0, None, fresh(), seq * 10);
        }
        assert_eq!(q.trim_cache(1_000), 0, "under half the budget: kept");
        for seq in 5..=8 {
            q.insert(seq, Some(data("x")), 0, None, fresh(), seq * 10);
        }
        // Over half: bodies cached before 35 go until half is left.
        assert_eq!(q.trim_cache(35), 3);
        assert_eq!(q.cached_bodies(), 5);
    }
}
