//! Delivery: which ready messages a receive gets, FIFO groups and fair
//! queues' quiet tenants first, and the rules (visibility,
//! maxReceiveCount) it applies.

use std::ops::Bound::{Excluded, Unbounded};

use sluice_core::clock::Millis;
use sluice_core::limits::BACK_OF_QUEUE_RECEIVES;
use sluice_core::retry_backoff::RetryBackoff;

use super::entry::{Delivery, Entry, HeadTurn, Order, Phase, fair_group};
use super::state::QueueState;
use crate::fair::FairReady;

/// How a receive treats the messages it takes.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeliveryRules {
    /// How long a delivered message stays hidden, milliseconds.
    pub(super) visibility_ms: u64,
    /// A redrive policy's maxReceiveCount: a message received that many
    /// times is taken out for the dead-letter queue instead (rule R2).
    pub(super) max_receives: Option<u32>,
    /// The queue's retry backoff: each failed attempt stays hidden longer.
    pub backoff: Option<RetryBackoff>,
    /// Standard queues whose maxReceiveCount is above 3: a message received
    /// this many times goes to the back of the queue when it is ready again
    /// (rule V12).
    pub(super) back_after: Option<u32>,
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

impl QueueState {
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
        if let Some(fair) = &mut self.fair {
            fair.observe(now);
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

    pub(super) fn is_ready(&self, seq: u64) -> bool {
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

    /// Starts telling tenants apart (rule V10), from the messages ready and
    /// in flight now.
    pub(super) fn enable_fairness(&mut self, now: Millis) {
        let mut fair = FairReady::default();
        fair.observe(now);
        for &order in &self.ready {
            if let Some(entry) = self.seq_at(order).and_then(|seq| self.entries.get(&seq)) {
                fair.add(fair_group(&self.groups, entry), order);
            }
        }
        for (_, seq) in &self.timers {
            if let Some(entry) = self.entries.get(seq)
                && entry.phase == Phase::InFlight
            {
                fair.in_flight_changed(fair_group(&self.groups, entry), true);
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
    pub(super) fn deliver_fifo(
        &mut self,
        out: &mut Delivery,
        max: usize,
        now: Millis,
        rules: &DeliveryRules,
    ) {
        // One step per group that can deliver, however deep the backlog and
        // however many groups are in flight.
        let mut after: Option<HeadTurn> = None;
        while out.delivered.len() < max {
            let next = match after {
                None => self.ready_heads.first(),
                Some(turn) => self.ready_heads.range((Excluded(turn), Unbounded)).next(),
            };
            let Some(&turn) = next else { break };
            after = Some(turn);
            let Some(group) = self
                .entries
                .get(&turn.2)
                .and_then(|e| e.group)
                .map(|g| self.groups.name(g).clone())
            else {
                continue;
            };
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
        }
    }

    /// Delivers one ready message, or takes it out as dead; true if delivered.
    pub(super) fn deliver_one(
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
}
