//! One queue's in-memory index: which messages are ready, delayed or in
//! flight, and when each next changes state.
//!
//! Pure and synchronous: it takes the current time as an argument and does
//! no I/O, so the engine can hold its lock only for these calls and hand the
//! resulting changes to the journal.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use sluice_broker::{QueueCounts, QueueMeta};

use crate::dedup::DedupWindow;
use crate::fair::FairReady;
use crate::fifo::Lanes;
use crate::seq_hash::SeqMap;

/// The group a message takes turns with; ungrouped messages share one.
fn fair_group(entry: &Entry) -> &str {
    entry.data.group_id.as_deref().unwrap_or("")
}
use sluice_core::clock::Millis;
use sluice_core::limits::BACK_OF_QUEUE_RECEIVES;
use sluice_core::message::MessageAttributes;
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

/// What never changes about a stored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageData {
    /// The message id (a UUID's bytes).
    pub message_id: [u8; 16],
    /// When the message was sent.
    pub sent_at: Millis,
    /// Start of its retention clock.
    pub enqueued_at: Millis,
    /// The body.
    pub body: String,
    /// User attributes.
    pub attributes: MessageAttributes,
    /// System attributes (`AWSTraceHeader`).
    pub system_attributes: MessageAttributes,
    /// Message group id.
    pub group_id: Option<String>,
    /// Deduplication id.
    pub dedup_id: Option<String>,
    /// The body's MD5 as the sender computed it; not stored on disk (a
    /// recovered message has none and its receives hash the body).
    pub body_md5: Option<[u8; 16]>,
}

/// What changes with each delivery; persisted on every change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageState {
    /// When the message is (again) receivable.
    pub visible_at: Millis,
    /// Receives so far.
    pub receive_count: u32,
    /// Time of the first receive, 0 before it.
    pub first_receive_at: Millis,
    /// Time of the latest receive, 0 before the first.
    pub last_receive_at: Millis,
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

/// A message in the index.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Immutable data, shared with deliveries.
    pub data: Arc<MessageData>,
    /// Delivery state.
    pub state: MessageState,
    /// Which index holds it.
    pub phase: Phase,
    /// The last failure reason a consumer gave (rule X2).
    pub failure: Option<Arc<str>>,
    /// Its place among the ready messages.
    pub order: Order,
    /// Received often enough to go to the back when ready again (V12).
    pub at_back: bool,
}

/// What [`QueueState::deliver`] did.
#[derive(Debug, Default)]
pub struct Delivery {
    /// Sequences delivered, now in flight.
    pub delivered: Vec<u64>,
    /// Messages over their queue's maxReceiveCount, removed from the index.
    pub dead: Vec<(u64, Entry)>,
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
    ready: BTreeMap<Order, u64>,
    /// Delayed and in-flight messages by the time they become ready.
    timers: BTreeSet<(Millis, u64)>,
    /// All messages by the start of their retention clock (rule V7).
    by_age: BTreeSet<(Millis, u64)>,
    in_flight: usize,
    delayed: usize,
    /// FIFO queues: each group's order and in-flight count.
    lanes: Option<Lanes>,
    /// Standard queues once a message carries a group: turns between groups.
    fair: Option<FairReady<Order>>,
    /// The highest sequence inserted, and how many messages went to the
    /// back after it (rule V12).
    newest_seq: u64,
    sent_back: u64,
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
    /// An empty queue.
    pub fn new(meta: QueueMeta) -> Self {
        let meta_is_fifo = meta.config.fifo;
        Self {
            meta,
            last_purge: None,
            deleted: false,
            entries: SeqMap::default(),
            ready: BTreeMap::new(),
            timers: BTreeSet::new(),
            by_age: BTreeSet::new(),
            in_flight: 0,
            delayed: 0,
            lanes: meta_is_fifo.then(Lanes::default),
            fair: None,
            newest_seq: 0,
            sent_back: 0,
            dedup: DedupWindow::default(),
            attempts: HashMap::new(),
        }
    }

    /// Adds a message, placing it by its state relative to `now`.
    pub fn insert(&mut self, seq: u64, data: Arc<MessageData>, state: MessageState, now: Millis) {
        let phase = if state.visible_at <= now {
            Phase::Ready
        } else if state.receive_count == 0 {
            Phase::Delayed
        } else {
            Phase::InFlight
        };
        self.by_age.insert((data.enqueued_at, seq));
        if let (Some(lanes), Some(group)) = (&mut self.lanes, &data.group_id) {
            lanes.insert(group, seq);
        }
        if self.lanes.is_none() && self.fair.is_none() && data.group_id.is_some() {
            self.enable_fairness();
        }
        self.newest_seq = self.newest_seq.max(seq);
        let entry = Entry {
            data,
            state,
            phase,
            failure: None,
            order: (seq, 0),
            at_back: false,
        };
        self.place(seq, &entry);
        self.entries.insert(seq, entry);
    }

    fn place(&mut self, seq: u64, entry: &Entry) {
        match entry.phase {
            Phase::Ready => {
                self.ready.insert(entry.order, seq);
                if let Some(fair) = &mut self.fair {
                    fair.add(fair_group(entry), entry.order);
                }
            }
            Phase::Delayed => {
                self.delayed += 1;
                self.timers.insert((entry.state.visible_at, seq));
            }
            Phase::InFlight => {
                self.in_flight += 1;
                self.timers.insert((entry.state.visible_at, seq));
                self.count_group_flight(entry, true);
            }
        }
    }

    fn count_group_flight(&mut self, entry: &Entry, entering: bool) {
        if let (Some(lanes), Some(group)) = (&mut self.lanes, &entry.data.group_id) {
            lanes.set_in_flight(group, entering);
        }
    }

    fn unplace(&mut self, seq: u64, entry: &Entry) {
        match entry.phase {
            Phase::Ready => {
                self.ready.remove(&entry.order);
                if let Some(fair) = &mut self.fair {
                    fair.remove(fair_group(entry), entry.order);
                }
            }
            Phase::Delayed => {
                self.delayed -= 1;
                self.timers.remove(&(entry.state.visible_at, seq));
            }
            Phase::InFlight => {
                self.in_flight -= 1;
                self.timers.remove(&(entry.state.visible_at, seq));
                self.count_group_flight(entry, false);
            }
        }
    }

    /// Removes a message; `None` if it is not here.
    pub fn remove(&mut self, seq: u64) -> Option<Entry> {
        let entry = self.entries.remove(&seq)?;
        self.unplace(seq, &entry);
        self.by_age.remove(&(entry.data.enqueued_at, seq));
        if let (Some(lanes), Some(group)) = (&mut self.lanes, &entry.data.group_id) {
            lanes.remove(group, seq);
        }
        Some(entry)
    }

    /// The message with this sequence.
    pub fn get(&self, seq: u64) -> Option<&Entry> {
        self.entries.get(&seq)
    }

    /// Records the reason a consumer gave for failing a message (rule X2).
    pub fn set_failure(&mut self, seq: u64, reason: Arc<str>) {
        if let Some(entry) = self.entries.get_mut(&seq) {
            entry.failure = Some(reason);
        }
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
            self.remove(seq);
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
                    Phase::InFlight => {
                        self.in_flight -= 1;
                        self.count_group_flight(&entry, false);
                    }
                    Phase::Ready => {}
                }
                self.make_ready(&mut entry);
                self.place(seq, &entry);
                self.entries.insert(seq, entry);
                woke = true;
            }
        }
        (expired, woke)
    }

    /// Marks a message ready, at the back of the queue if it has earned it.
    fn make_ready(&mut self, entry: &mut Entry) {
        entry.phase = Phase::Ready;
        if entry.at_back {
            self.sent_back += 1;
            entry.order = (self.newest_seq, self.sent_back);
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
                None => self.ready.first_key_value().map(|(&order, _)| order),
            };
            let Some(seq) = next.and_then(|order| self.ready.get(&order).copied()) else {
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

    /// Ready messages, oldest first, for a redrive to choose from (rule R7).
    pub fn ready_entries(&self) -> impl Iterator<Item = (u64, &Entry)> {
        self.ready
            .values()
            .filter_map(|&seq| self.entries.get(&seq).map(|e| (seq, e)))
    }

    /// Starts taking turns between groups, from the messages ready now.
    fn enable_fairness(&mut self) {
        let mut fair = FairReady::default();
        for &seq in self.ready.values() {
            if let Some(entry) = self.entries.get(&seq) {
                fair.add(fair_group(entry), entry.order);
            }
        }
        self.fair = Some(fair);
    }

    /// FIFO delivery (rule F1): in sequence order, a message is deliverable
    /// when it is the next of its group and no message of its group is in
    /// flight from an earlier receive; one receive may take several
    /// consecutive messages of a group.
    fn deliver_fifo(&mut self, out: &mut Delivery, max: usize, now: Millis, rules: &DeliveryRules) {
        // Groups that can deliver now: none of theirs in flight and the head
        // ready; the group with the oldest head goes first. This costs one
        // step per group, not per message, however deep the backlog.
        let Some(lanes) = &self.lanes else { return };
        let mut groups: Vec<(u64, String)> = lanes
            .heads()
            .filter(|&(group, head)| !lanes.is_blocked(group) && self.is_ready(head))
            .map(|(group, head)| (head, group.to_string()))
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
        let Some(receive_count) = self.entries.get(&seq).map(|e| e.state.receive_count) else {
            return false;
        };
        if rules
            .max_receives
            .is_some_and(|limit| receive_count >= limit)
        {
            if let Some(entry) = self.remove(seq) {
                out.dead.push((seq, entry));
            }
            return false;
        }
        let Some(mut entry) = self.entries.remove(&seq) else {
            return false;
        };
        self.unplace(seq, &entry);
        entry.state.receive_count += 1;
        if entry.state.first_receive_at == 0 {
            entry.state.first_receive_at = now;
        }
        entry.state.last_receive_at = now;
        let count = entry.state.receive_count;
        let backoff = rules.backoff.map_or(0, |b| b.delay_for(count, seq, now));
        entry.state.visible_at = now + rules.visibility_ms + backoff;
        entry.at_back |= rules.back_after.is_some_and(|n| count >= n);
        entry.phase = Phase::InFlight;
        self.place(seq, &entry);
        self.entries.insert(seq, entry);
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
        entry.state.visible_at = visible_at;
        if visible_at <= now {
            self.make_ready(&mut entry);
        } else {
            entry.phase = Phase::InFlight;
        }
        self.place(seq, &entry);
        self.entries.insert(seq, entry);
    }

    /// Removes every message; returns how many.
    pub fn clear(&mut self) -> usize {
        let n = self.entries.len();
        self.entries.clear();
        self.ready.clear();
        self.timers.clear();
        self.by_age.clear();
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
