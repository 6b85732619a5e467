//! One alarm tick: sample the queues, evaluate every alarm, save and
//! notify the state changes; and the background task that ticks.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use sluice_broker::{Broker, Coordination, NewMessage, StoredAlarm};
use sluice_core::SqsError;
use sluice_core::clock::Millis;

use super::definition::{AlarmAction, AlarmDefinition, AlarmSource};
use super::notify::{self, NotificationCounters};
use super::publish;
use super::store::{AlarmEntry, Transition};
use super::{Alarms, DlqAlarmSettings, dlq_alarm, evaluate, notifies, shared};

/// A state change one tick found: the alarm, the change, and on shared
/// storage the record to save with the time of the state it replaces.
type Evaluated = (AlarmDefinition, Transition, Option<(StoredAlarm, Millis)>);

impl<B: Broker> Alarms<B> {
    /// Samples the queues, evaluates every alarm at the clock's time and
    /// notifies each state change; returns the changes.
    pub async fn tick(&self) -> Vec<(AlarmDefinition, Transition)> {
        let alarms = self;
        let _one_at_a_time = alarms.ticking.lock().await;
        let now = self.clock.now();
        let shared = self.broker.is_shared();
        if let Err(e) = self.refresh_shared().await {
            tracing::warn!(error = %e, "cannot read the shared alarms; retrying next tick");
            return Vec::new();
        }
        let leading = self.leads().await;
        alarms.evaluating.store(leading, Ordering::Relaxed);
        if leading && let Some(dlq) = &alarms.settings.dlq_alarms {
            self.sync_dlq_alarms(dlq, now).await;
        }
        let queues: BTreeSet<String> = alarms
            .store()
            .entries()
            .map(|e| e.def.queue.clone())
            .collect();
        let mut snapshots = Vec::with_capacity(queues.len());
        for q in &queues {
            if let Ok(stats) = self.broker.cluster_queue_stats(q).await {
                snapshots.push((q.clone(), stats));
            }
        }
        let transitions = {
            let mut store = alarms.store();
            let mut series = alarms.series();
            series.retain(|q, _| queues.contains(q));
            for (q, stats) in snapshots {
                series.entry(q).or_default().record(now, stats);
            }
            // Keep what the longest alarm on each queue reads, one period more.
            let mut keep: HashMap<&str, u64> = HashMap::new();
            for e in store.entries() {
                let range = e.def.range_ms() + u64::from(e.def.period_secs) * 1000;
                let k = keep.entry(e.def.queue.as_str()).or_default();
                *k = (*k).max(range);
            }
            for (q, s) in series.iter_mut() {
                s.prune(now.saturating_sub(keep.get(q.as_str()).copied().unwrap_or(0)));
            }
            let mut transitions = Vec::new();
            if !leading {
                // Sampled, so that this node can take over with recent samples.
                return Vec::new();
            }
            for e in store.entries_mut() {
                let samples = series
                    .get(&e.def.queue)
                    .map(|s| s.samples(e.def.metric))
                    .unwrap_or_default();
                let ev = evaluate::evaluate(&e.def, &samples, now, e.state);
                let before = e.updated_at;
                if let Some(t) = e.apply(ev.state, ev.reason, now) {
                    tracing::info!(
                        alarm = e.def.name,
                        queue = e.def.queue,
                        from = t.old.as_str(),
                        to = t.new.as_str(),
                        reason = t.reason,
                        "alarm state changed"
                    );
                    let stored = if shared {
                        match shared::to_stored(e) {
                            Ok(s) => Some((s, before)),
                            Err(err) => {
                                tracing::error!(alarm = e.def.name, error = %err, "alarm state not saved");
                                continue;
                            }
                        }
                    } else {
                        None
                    };
                    transitions.push((e.def.clone(), t, stored));
                }
            }
            transitions
        };
        let transitions = self.save_shared_transitions(transitions).await;
        for (def, t) in &transitions {
            if notifies(t) {
                self.notify(def, t).await;
            }
        }
        transitions
    }

    /// Gives every dead-letter queue (a RedrivePolicy's or a failure
    /// class's) its alarm and removes the alarms of queues none targets any
    /// more.
    async fn sync_dlq_alarms(&self, settings: &DlqAlarmSettings, now: Millis) {
        let Ok(names) = self.broker.list_queues().await else {
            return;
        };
        let mut dlqs = BTreeSet::new();
        for name in &names {
            let Ok(meta) = self.broker.get_queue(name).await else {
                continue;
            };
            for arn in meta.config.dead_letter_targets() {
                if let Some(target) = self.account.key_from_any_arn(&arn)
                    && names.binary_search_by(|n| n.as_str().cmp(&target)).is_ok()
                {
                    dlqs.insert(target);
                }
            }
        }
        let (stale, new) = {
            let store = self.store();
            let stale: Vec<String> = store
                .entries()
                .filter(|e| e.source == AlarmSource::DlqAlarms && !dlqs.contains(&e.def.queue))
                .map(|e| e.def.name.clone())
                .collect();
            let new: Vec<AlarmDefinition> = dlqs
                .iter()
                .map(|q| dlq_alarm(q, settings))
                .filter(|def| match store.get(&def.name) {
                    // An alarm of that name defined by people wins.
                    Some(e) if e.source != AlarmSource::DlqAlarms => false,
                    Some(e) => e.def != *def,
                    None => true,
                })
                .collect();
            (stale, new)
        };
        if stale.is_empty() && new.is_empty() {
            return;
        }
        if self.broker.is_shared() {
            if let Err(e) = self.store_dlq_alarms(stale, new, now).await {
                tracing::warn!(error = %e, "cannot update the dlq_alarms alarms; retrying next tick");
            }
            return;
        }
        let mut store = self.store();
        for name in stale {
            store.remove(&name);
        }
        for def in new {
            let _ = store.put(def, AlarmSource::DlqAlarms, now);
        }
    }

    /// Runs an alarm's actions for one change, without blocking on receivers.
    async fn notify(&self, def: &AlarmDefinition, t: &Transition) {
        let body = notify::body(def, t);
        for action in def.parsed_actions(&self.account) {
            match action {
                AlarmAction::Webhook(url) => self.webhooks.send(&url, &body),
                AlarmAction::Queue(queue) => {
                    let message = NewMessage {
                        body: body.to_string(),
                        group_id: sluice_core::queue_name::is_fifo_name(&queue)
                            .then(|| "sluice-alarms".to_string()),
                        dedup_id: sluice_core::queue_name::is_fifo_name(&queue)
                            .then(|| format!("{}:{}:{}", def.name, t.at, t.new.as_str())),
                        ..Default::default()
                    };
                    let counters = self.webhooks.counters();
                    match self.broker.send_messages(&queue, vec![message]).await {
                        Ok(_) => NotificationCounters::add(&counters.delivered),
                        Err(e) => {
                            NotificationCounters::add(&counters.failed);
                            tracing::error!(alarm = def.name, queue, error = %e, "alarm notification not sent to its queue");
                        }
                    }
                }
                AlarmAction::Topic(topic) => {
                    let counters = self.webhooks.counters();
                    let published = match self.topics.get() {
                        Some(publisher) => {
                            let subject = publish::subject(t.new.as_str(), &def.name);
                            publisher
                                .publish(topic.clone(), subject, body.to_string())
                                .await
                        }
                        None => Err("this server publishes to no topic".to_string()),
                    };
                    match published {
                        Ok(()) => NotificationCounters::add(&counters.delivered),
                        Err(e) => {
                            NotificationCounters::add(&counters.failed);
                            tracing::error!(
                                alarm = def.name,
                                topic,
                                error = e,
                                "alarm notification not published to its topic"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// The coordination of the nodes sharing storage: who evaluates, and
/// saving what it finds so each change is notified once.
impl<B: Coordination> Alarms<B> {
    /// On shared storage, whether this node holds (or now takes) the claim
    /// to evaluate and notify; always true otherwise.
    async fn leads(&self) -> bool {
        if !self.broker.is_shared() {
            return true;
        }
        let mut lead = self.lead.lock().await;
        if lead.as_ref().is_some_and(|c| !c.is_held()) {
            tracing::warn!("lost the claim to evaluate alarms (database session ended)");
            *lead = None;
        }
        if lead.is_none() {
            match self.broker.claim_job(shared::ALARM_JOB).await {
                Ok(Some(claim)) => {
                    tracing::info!("this node now evaluates the alarms and sends notifications");
                    *lead = Some(claim);
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "cannot claim alarm evaluation"),
            }
        }
        lead.is_some()
    }

    /// Applies the `dlq_alarms` setting's changes to the shared alarms.
    async fn store_dlq_alarms(
        &self,
        stale: Vec<String>,
        new: Vec<AlarmDefinition>,
        now: Millis,
    ) -> Result<(), SqsError> {
        if !stale.is_empty() {
            self.broker.delete_stored_alarms(stale).await?;
        }
        for def in new {
            let stored = shared::to_stored(&AlarmEntry::new(def, AlarmSource::DlqAlarms, now))?;
            let replaces = shared::replaceable_by(AlarmSource::DlqAlarms);
            self.broker.put_stored_alarm(stored, replaces).await?;
        }
        self.refresh_shared().await
    }

    /// On shared storage, saves each state change unless another node
    /// changed the alarm first; the changes to notify. Otherwise all of them.
    async fn save_shared_transitions(
        &self,
        transitions: Vec<Evaluated>,
    ) -> Vec<(AlarmDefinition, Transition)> {
        let mut saved = Vec::with_capacity(transitions.len());
        for (def, t, stored) in transitions {
            let Some((stored, before)) = stored else {
                saved.push((def, t));
                continue;
            };
            let expected = t.old.as_str().to_string();
            match self.broker.save_alarm_state(stored, expected, before).await {
                Ok(true) => saved.push((def, t)),
                // The next refresh brings this node's copy up to date.
                Ok(false) => {
                    tracing::info!(
                        alarm = def.name,
                        "alarm changed by another node; not notified here"
                    )
                }
                Err(e) => {
                    tracing::warn!(alarm = def.name, error = %e, "alarm state change not saved; evaluated again next tick")
                }
            }
        }
        saved
    }
}

/// Ticks `alarms` every sample interval, in the background.
pub fn spawn_alarm_monitor<B: Broker>(alarms: Arc<Alarms<B>>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(alarms.settings.sample_interval);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            alarms.tick().await;
        }
    })
}
