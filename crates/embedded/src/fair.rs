//! Fair delivery for standard queues whose messages carry a
//! `MessageGroupId` (SQS "fair queues", rule V10): quiet tenants are
//! served first, oldest message first, as in any standard queue; noisy
//! tenants (see [`sluice_core::fair_tenants`]) get what is left, the one
//! with the fewest messages in flight first. A tenant is a message group;
//! each message without a group is a tenant of its own, and a tenant of one
//! message never builds the backlog that makes a tenant noisy, so ungrouped
//! messages are always served as quiet ones.
//!
//! Whether a tenant is noisy is decided when its oldest ready message comes
//! up for delivery, and again for every noisy tenant at each delivery, so
//! the work per delivered message is bounded by the number of noisy tenants
//! (at most about twenty: each holds over a tenth of something), not by the
//! backlog or the number of tenants.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use sluice_core::clock::Millis;
use sluice_core::fair_tenants::{NOISY_SEND_WINDOW_MS, QueueLoad, TenantLoad, Usage};

/// How often tenants with nothing left to say are forgotten.
const SWEEP_EVERY_MS: Millis = 60_000;

/// One message group's part of the queue.
#[derive(Debug)]
struct Tenant<K> {
    /// Its ready messages, oldest first.
    ready: BTreeSet<K>,
    in_flight: u64,
    usage: Usage,
    last_sent: Millis,
    /// Set while its head waits among the noisy instead of the quiet.
    noisy: bool,
}

impl<K> Default for Tenant<K> {
    fn default() -> Self {
        Self {
            ready: BTreeSet::new(),
            in_flight: 0,
            usage: Usage::default(),
            last_sent: 0,
            noisy: false,
        }
    }
}

impl<K> Tenant<K> {
    fn load(&self, now: Millis) -> TenantLoad {
        TenantLoad {
            in_flight: self.in_flight,
            usage: self.usage.at(now, self.in_flight),
            backlog: !self.ready.is_empty(),
            last_sent: self.last_sent,
        }
    }
}

/// Counts of a fair queue's quiet tenants, for the metrics SQS publishes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuietCounts {
    /// Tenants noisy now.
    pub noisy_groups: u64,
    /// Messages of quiet tenants ready to be received.
    pub visible: u64,
    /// Messages of quiet tenants in flight.
    pub in_flight: u64,
}

/// Ready messages (by their place in the queue, `K`) by tenant, and which
/// tenants are noisy.
#[derive(Debug)]
pub struct FairReady<K> {
    tenants: HashMap<Arc<str>, Tenant<K>>,
    /// The oldest ready message of each quiet tenant: a group's head, or a
    /// message without a group.
    quiet: BTreeMap<K, Option<Arc<str>>>,
    /// The tenants found noisy, whose heads are not in `quiet`.
    noisy: Vec<Arc<str>>,
    in_flight: u64,
    usage: Usage,
    /// The latest time the queue was told of.
    now: Millis,
    swept_at: Millis,
}

impl<K> Default for FairReady<K> {
    fn default() -> Self {
        Self {
            tenants: HashMap::new(),
            quiet: BTreeMap::new(),
            noisy: Vec::new(),
            in_flight: 0,
            usage: Usage::default(),
            now: 0,
            swept_at: 0,
        }
    }
}

impl<K: Ord + Copy> FairReady<K> {
    /// Time moved on to `now`; tenants gone idle are forgotten once a
    /// minute.
    pub fn observe(&mut self, now: Millis) {
        self.now = self.now.max(now);
        if self.now.saturating_sub(self.swept_at) >= SWEEP_EVERY_MS {
            self.swept_at = self.now;
            self.sweep();
        }
    }

    /// A message of `group` was sent at `at`.
    pub fn sent(&mut self, group: &Arc<str>, at: Millis) {
        let tenant = self.tenants.entry(group.clone()).or_default();
        tenant.last_sent = tenant.last_sent.max(at);
    }

    /// A message became ready.
    pub fn add(&mut self, group: Option<&Arc<str>>, order: K) {
        let Some(group) = group else {
            self.quiet.insert(order, None);
            return;
        };
        let tenant = self.tenants.entry(group.clone()).or_default();
        let old_head = tenant.ready.first().copied();
        tenant.ready.insert(order);
        if tenant.noisy || old_head.is_some_and(|head| head < order) {
            return;
        }
        if let Some(head) = old_head {
            self.quiet.remove(&head);
        }
        self.quiet.insert(order, Some(group.clone()));
    }

    /// A message stopped being ready.
    pub fn remove(&mut self, group: Option<&Arc<str>>, order: K) {
        let Some(group) = group else {
            self.quiet.remove(&order);
            return;
        };
        let Some(tenant) = self.tenants.get_mut(group) else {
            return;
        };
        let was_head = tenant.ready.first() == Some(&order);
        tenant.ready.remove(&order);
        if was_head && !tenant.noisy {
            self.quiet.remove(&order);
            if let Some(&head) = tenant.ready.first() {
                self.quiet.insert(head, Some(group.clone()));
            }
        }
    }

    /// A message of `group` went in flight (`up`) or came out of it.
    pub fn in_flight_changed(&mut self, group: Option<&Arc<str>>, up: bool) {
        let now = self.now;
        self.usage.advance(now, self.in_flight);
        self.in_flight = step(self.in_flight, up);
        if let Some(group) = group {
            let tenant = self.tenants.entry(group.clone()).or_default();
            tenant.usage.advance(now, tenant.in_flight);
            tenant.in_flight = step(tenant.in_flight, up);
        }
    }

    /// The message to deliver next: the oldest of the quiet tenants', or
    /// else the oldest of the noisy tenant with the fewest in flight.
    pub fn next(&mut self) -> Option<K> {
        let now = self.now;
        let queue = QueueLoad {
            in_flight: self.in_flight,
            usage: self.usage.at(now, self.in_flight),
        };
        // Noisy tenants that calmed down take their place among the quiet.
        let tenants = &mut self.tenants;
        let quiet = &mut self.quiet;
        self.noisy.retain(|group| {
            let Some(tenant) = tenants.get_mut(group) else {
                return false;
            };
            if tenant.load(now).is_noisy(&queue, now) {
                return true;
            }
            tenant.noisy = false;
            if let Some(&head) = tenant.ready.first() {
                quiet.insert(head, Some(group.clone()));
            }
            false
        });
        while let Some((&order, group)) = self.quiet.first_key_value() {
            let Some(group) = group.clone() else {
                return Some(order);
            };
            let Some(tenant) = self.tenants.get_mut(&group) else {
                return Some(order);
            };
            if !tenant.load(now).is_noisy(&queue, now) {
                return Some(order);
            }
            tenant.noisy = true;
            self.quiet.remove(&order);
            self.noisy.push(group);
        }
        self.noisy
            .iter()
            .filter_map(|group| self.tenants.get(group))
            .filter_map(|tenant| tenant.ready.first().map(|&head| (tenant.in_flight, head)))
            .min()
            .map(|(_, head)| head)
    }

    /// The tenants noisy now, and the quiet tenants' messages.
    pub fn quiet_counts(&self) -> QuietCounts {
        let now = self.now;
        let queue = QueueLoad {
            in_flight: self.in_flight,
            usage: self.usage.at(now, self.in_flight),
        };
        let mut counts = QuietCounts {
            visible: self.quiet.values().filter(|g| g.is_none()).count() as u64,
            in_flight: self.in_flight,
            ..QuietCounts::default()
        };
        for tenant in self.tenants.values() {
            if tenant.load(now).is_noisy(&queue, now) {
                counts.noisy_groups += 1;
                counts.in_flight = counts.in_flight.saturating_sub(tenant.in_flight);
            } else {
                counts.visible += tenant.ready.len() as u64;
            }
        }
        counts
    }

    /// The oldest ready message of the quiet tenants.
    pub fn oldest_quiet(&self) -> Option<K> {
        self.quiet
            .iter()
            .find(|(_, group)| group.as_deref().is_none_or(|g| !self.is_noisy(g)))
            .map(|(&order, _)| order)
    }

    /// Whether `group` is noisy now.
    pub fn is_noisy(&self, group: &str) -> bool {
        let now = self.now;
        let queue = QueueLoad {
            in_flight: self.in_flight,
            usage: self.usage.at(now, self.in_flight),
        };
        self.tenants
            .get(group)
            .is_some_and(|t| t.load(now).is_noisy(&queue, now))
    }

    /// Tenants the queue keeps track of.
    #[cfg(test)]
    pub fn tenants(&self) -> usize {
        self.tenants.len()
    }

    /// Forgets tenants with nothing ready or in flight whose recent
    /// processing time no longer counts and who have not sent lately.
    fn sweep(&mut self) {
        let now = self.now;
        let total = self.usage.at(now, self.in_flight);
        self.tenants.retain(|_, t| {
            let usage = t.usage.at(now, 0);
            !t.ready.is_empty()
                || t.in_flight > 0
                || t.noisy
                || (usage >= 1.0 && usage * 100.0 >= total)
                || now.saturating_sub(t.last_sent) < NOISY_SEND_WINDOW_MS
        });
    }

    /// Forgets every message (the tenants' recent history stays).
    pub fn clear(&mut self) {
        self.quiet.clear();
        self.noisy.clear();
        self.in_flight = 0;
        for tenant in self.tenants.values_mut() {
            tenant.ready.clear();
            tenant.in_flight = 0;
            tenant.noisy = false;
        }
    }
}

fn step(count: u64, up: bool) -> u64 {
    if up {
        count + 1
    } else {
        count.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    /// Takes the next message as delivered: out of ready, into flight.
    fn take(f: &mut FairReady<u64>, groups: &HashMap<u64, Option<Arc<str>>>) -> Option<u64> {
        let seq = f.next()?;
        let group = groups[&seq].clone();
        f.remove(group.as_ref(), seq);
        f.in_flight_changed(group.as_ref(), true);
        Some(seq)
    }

    #[test]
    fn quiet_tenants_are_served_oldest_first() {
        let mut f = FairReady::<u64>::default();
        f.observe(1_000);
        let mut groups = HashMap::new();
        for seq in 1..=6 {
            let g = (seq % 2 == 0).then(|| name("a"));
            if let Some(g) = &g {
                f.sent(g, 1_000);
            }
            f.add(g.as_ref(), seq);
            groups.insert(seq, g);
        }
        let order: Vec<u64> = std::iter::from_fn(|| take(&mut f, &groups)).collect();
        assert_eq!(order, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_tenant_with_thirty_in_flight_waits_behind_quiet_ones() {
        let mut f = FairReady::<u64>::default();
        f.observe(1_000);
        let noisy = name("noisy");
        let mut groups = HashMap::new();
        for seq in 1..=100 {
            f.sent(&noisy, 1_000);
            f.add(Some(&noisy), seq);
            groups.insert(seq, Some(noisy.clone()));
        }
        for seq in 101..=103 {
            f.add(None, seq);
            groups.insert(seq, None);
        }
        let first: Vec<u64> = (0..30).filter_map(|_| take(&mut f, &groups)).collect();
        assert_eq!(first, (1..=30).collect::<Vec<_>>());
        assert!(f.is_noisy("noisy"));
        let next: Vec<u64> = (0..4).filter_map(|_| take(&mut f, &groups)).collect();
        assert_eq!(next, [101, 102, 103, 31], "quiet first, then the noisy");
        assert_eq!(f.quiet_counts().noisy_groups, 1);
    }

    #[test]
    fn idle_tenants_are_forgotten() {
        let mut f = FairReady::<u64>::default();
        f.observe(1_000);
        let g = name("g");
        f.sent(&g, 1_000);
        f.add(Some(&g), 1);
        f.remove(Some(&g), 1);
        f.observe(1_000 + SWEEP_EVERY_MS);
        assert_eq!(f.tenants(), 1, "sent lately");
        f.observe(1_000 + NOISY_SEND_WINDOW_MS + SWEEP_EVERY_MS);
        assert_eq!(f.tenants(), 0);
    }
}
