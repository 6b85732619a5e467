//! Alarms on queue metrics (rule M2): "a DLQ without an alarm is a false
//! sense of safety".
//!
//! - [`definition`]: what an alarm is, and validation of PutAlarm input;
//! - [`evaluate`]: pure evaluation, samples in and a state out;
//! - [`series`]: recent per-queue stats and the metric samples read from them;
//! - [`store`]: alarms with their states and history; API alarms saved to a file;
//! - [`notify`]: the notification body and the background webhook sender;
//! - [`shared`]: alarms kept in storage several nodes share;
//! - [`tls`]: the certificates `https://` webhooks are checked against.
//!
//! A tick ([`Service::alarm_tick`]) samples every queue that has an alarm,
//! evaluates every alarm at the service clock's time and notifies each
//! state change. `sluice serve` ticks every `sample_interval`
//! ([`spawn_alarm_monitor`]); tests tick by hand with a manual clock. On
//! shared storage every node samples, one node evaluates and notifies
//! (see [`shared`]).

pub mod definition;
pub mod evaluate;
pub mod notify;
pub mod series;
pub mod shared;
pub mod store;
pub mod tls;

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use sluice_broker::{Broker, JobClaim, NewMessage, StoredAlarm};
use sluice_core::SqsError;
use sluice_core::clock::Millis;
use sluice_protocol::requests::PutAlarmInput;

use crate::service::Service;
use definition::{
    AlarmAction, AlarmDefinition, AlarmSource, AlarmState, Comparison, Metric, Statistic,
    TreatMissingData,
};
use notify::{NotificationCounters, WebhookPolicy, WebhookSender};
use series::QueueSeries;
use store::{AlarmEntry, AlarmStore, StoreError, Transition};
use tls::WebhookTls;

/// Alarm settings of a server.
#[derive(Debug, Clone)]
pub struct AlarmSettings {
    /// How often `sluice serve` samples queues and evaluates alarms.
    pub sample_interval: Duration,
    /// Give every dead-letter queue an alarm on visible depth ≥ 1.
    pub dlq_alarms: Option<DlqAlarmSettings>,
    /// How webhooks are delivered.
    pub webhook: WebhookPolicy,
    /// The roots `https://` webhooks are checked against: Mozilla's, plus
    /// those of the `webhook_ca_file` setting.
    pub webhook_tls: WebhookTls,
    /// Where API-defined alarms are saved (none: they are lost at exit).
    pub file: Option<PathBuf>,
}

impl Default for AlarmSettings {
    fn default() -> Self {
        Self {
            sample_interval: Duration::from_secs(10),
            dlq_alarms: None,
            webhook: WebhookPolicy::default(),
            webhook_tls: WebhookTls::default(),
            file: None,
        }
    }
}

/// The alarm every dead-letter queue gets when `dlq_alarms` is on.
#[derive(Debug, Clone)]
pub struct DlqAlarmSettings {
    /// Webhook URLs and queue ARNs to notify.
    pub actions: Vec<String>,
    /// Seconds per period (default 60).
    pub period_secs: u32,
    /// Periods that must breach (default 1).
    pub evaluation_periods: u32,
}

impl Default for DlqAlarmSettings {
    fn default() -> Self {
        Self {
            actions: Vec::new(),
            period_secs: 60,
            evaluation_periods: 1,
        }
    }
}

/// A state change one tick found: the alarm, the change, and on shared
/// storage the record to save with the time of the state it replaces.
type Evaluated = (AlarmDefinition, Transition, Option<(StoredAlarm, Millis)>);

/// The prefix of the alarms the `dlq_alarms` setting makes: `dlq-depth:<queue>`.
pub const DLQ_ALARM_PREFIX: &str = "dlq-depth:";

/// A server's alarms: definitions and states, recent samples, notifier.
pub struct Alarms {
    settings: AlarmSettings,
    store: Mutex<AlarmStore>,
    series: Mutex<HashMap<String, QueueSeries>>,
    webhooks: WebhookSender,
    ticking: tokio::sync::Mutex<()>,
    /// On shared storage, this node's claim to evaluate and notify.
    lead: tokio::sync::Mutex<Option<JobClaim>>,
    /// Whether the last tick evaluated (and notified).
    evaluating: AtomicBool,
}

impl Alarms {
    /// Alarms with `settings`, starting with the saved API alarms.
    pub fn new(settings: AlarmSettings, now: Millis) -> Self {
        Self {
            store: Mutex::new(AlarmStore::open(settings.file.clone(), now)),
            series: Mutex::new(HashMap::new()),
            webhooks: WebhookSender::new(settings.webhook.clone(), settings.webhook_tls.clone()),
            ticking: tokio::sync::Mutex::new(()),
            lead: tokio::sync::Mutex::new(None),
            evaluating: AtomicBool::new(false),
            settings,
        }
    }

    /// The settings.
    pub fn settings(&self) -> &AlarmSettings {
        &self.settings
    }

    /// The alarms, locked (never held across an await).
    pub fn store(&self) -> MutexGuard<'_, AlarmStore> {
        // A panic elsewhere cannot leave the store half-written: recover it.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether this node evaluated the alarms at its last tick: always
    /// alone on its storage, one node of those sharing it.
    pub fn is_evaluating(&self) -> bool {
        self.evaluating.load(Ordering::Relaxed)
    }

    /// What became of notifications, by outcome.
    pub fn notification_counts(&self) -> [(&'static str, u64); 4] {
        self.webhooks.counters().snapshot()
    }

    fn series(&self) -> MutexGuard<'_, HashMap<String, QueueSeries>> {
        self.series.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The alarm `dlq_alarms` gives dead-letter queue `queue`.
pub fn dlq_alarm(queue: &str, settings: &DlqAlarmSettings) -> AlarmDefinition {
    AlarmDefinition {
        name: format!("{DLQ_ALARM_PREFIX}{queue}"),
        queue: queue.to_string(),
        metric: Metric::ApproximateNumberOfMessagesVisible,
        statistic: Statistic::Maximum,
        period_secs: settings.period_secs,
        evaluation_periods: settings.evaluation_periods,
        datapoints_to_alarm: settings.evaluation_periods,
        threshold: 1.0,
        comparison: Comparison::GreaterThanOrEqualToThreshold,
        treat_missing: TreatMissingData::NotBreaching,
        actions: settings.actions.clone(),
        description: Some(
            "Messages in a dead-letter queue need a person (dlq_alarms setting).".into(),
        ),
    }
}

/// Is a change worth telling people? Every change is in the history; the
/// first evaluation of a healthy alarm (INSUFFICIENT_DATA to OK, as at
/// every start) is not notified.
pub fn notifies(t: &Transition) -> bool {
    !(t.old == AlarmState::InsufficientData && t.new == AlarmState::Ok)
}

impl<B: Broker> Service<B> {
    /// Creates or replaces an alarm (PutAlarm, or the config file).
    pub async fn put_alarm(
        &self,
        input: PutAlarmInput,
        source: AlarmSource,
    ) -> Result<(), SqsError> {
        let url = sluice_protocol::requests::required(input.queue_url.clone(), "QueueUrl")?;
        let queue = self.queue_name(&url)?.to_string();
        self.broker.get_queue(&queue).await?;
        let def = AlarmDefinition::from_input(input, &queue, &self.config.account)?;
        for action in def.parsed_actions(&self.config.account) {
            if let AlarmAction::Queue(q) = action
                && self.broker.get_queue(&q).await.is_err()
            {
                return Err(SqsError::invalid_value(
                    "Actions",
                    self.queue_arn(&q),
                    "The queue does not exist.",
                ));
            }
        }
        let now = self.now();
        if self.broker.is_shared() {
            let name = def.name.clone();
            let stored = shared::to_stored(&AlarmEntry::new(def, source, now))?;
            if let Some(existing) = self
                .broker
                .put_stored_alarm(stored, shared::replaceable_by(source))
                .await?
            {
                return Err(store_error(StoreError::NotApiAlarm(
                    name,
                    shared::source_named(&existing),
                )));
            }
            return self.refresh_shared_alarms().await;
        }
        self.alarms
            .store()
            .put(def, source, now)
            .map_err(store_error)
    }

    /// Deletes API alarms, all or none.
    pub async fn delete_alarms(&self, names: &[String]) -> Result<(), SqsError> {
        if self.broker.is_shared() {
            self.refresh_shared_alarms().await?;
            self.alarms
                .store()
                .check_deletable(names)
                .map_err(store_error)?;
            self.broker.delete_stored_alarms(names.to_vec()).await?;
            return self.refresh_shared_alarms().await;
        }
        self.alarms.store().delete_api(names).map_err(store_error)
    }

    /// On shared storage, replaces this node's copy of the alarms by the
    /// stored ones (nothing to do otherwise).
    pub async fn refresh_shared_alarms(&self) -> Result<(), SqsError> {
        if !self.broker.is_shared() {
            return Ok(());
        }
        let stored = self.broker.stored_alarms().await?;
        let entries = stored.into_iter().filter_map(shared::from_stored).collect();
        self.alarms.store().replace_all(entries);
        Ok(())
    }

    /// On shared storage, whether this node holds (or now takes) the claim
    /// to evaluate and notify; always true otherwise.
    async fn leads_alarms(&self) -> bool {
        if !self.broker.is_shared() {
            return true;
        }
        let mut lead = self.alarms.lead.lock().await;
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

    /// Samples the queues, evaluates every alarm at the clock's time and
    /// notifies each state change; returns the changes.
    pub async fn alarm_tick(&self) -> Vec<(AlarmDefinition, Transition)> {
        let alarms = &self.alarms;
        let _one_at_a_time = alarms.ticking.lock().await;
        let now = self.now();
        let shared = self.broker.is_shared();
        if let Err(e) = self.refresh_shared_alarms().await {
            tracing::warn!(error = %e, "cannot read the shared alarms; retrying next tick");
            return Vec::new();
        }
        let leading = self.leads_alarms().await;
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

    /// Gives every dead-letter queue its alarm and removes the alarms of
    /// queues no RedrivePolicy targets any more.
    async fn sync_dlq_alarms(&self, settings: &DlqAlarmSettings, now: Millis) {
        let Ok(names) = self.broker.list_queues().await else {
            return;
        };
        let mut dlqs = BTreeSet::new();
        for name in &names {
            let Ok(meta) = self.broker.get_queue(name).await else {
                continue;
            };
            if let Some(policy) = meta.config.redrive()
                && let Some(target) = self
                    .config
                    .account
                    .key_from_any_arn(&policy.dead_letter_target_arn)
                && names.binary_search_by(|n| n.as_str().cmp(&target)).is_ok()
            {
                dlqs.insert(target);
            }
        }
        let (stale, new) = {
            let store = self.alarms.store();
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
        let mut store = self.alarms.store();
        for name in stale {
            store.remove(&name);
        }
        for def in new {
            let _ = store.put(def, AlarmSource::DlqAlarms, now);
        }
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
        self.refresh_shared_alarms().await
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

    /// Runs an alarm's actions for one change, without blocking on receivers.
    async fn notify(&self, def: &AlarmDefinition, t: &Transition) {
        let body = notify::body(def, t);
        for action in def.parsed_actions(&self.config.account) {
            match action {
                AlarmAction::Webhook(url) => self.alarms.webhooks.send(&url, &body),
                AlarmAction::Queue(queue) => {
                    let message = NewMessage {
                        body: body.to_string(),
                        group_id: sluice_core::queue_name::is_fifo_name(&queue)
                            .then(|| "sluice-alarms".to_string()),
                        dedup_id: sluice_core::queue_name::is_fifo_name(&queue)
                            .then(|| format!("{}:{}:{}", def.name, t.at, t.new.as_str())),
                        ..Default::default()
                    };
                    let counters = self.alarms.webhooks.counters();
                    match self.broker.send_messages(&queue, vec![message]).await {
                        Ok(_) => NotificationCounters::add(&counters.delivered),
                        Err(e) => {
                            NotificationCounters::add(&counters.failed);
                            tracing::error!(alarm = def.name, queue, error = %e, "alarm notification not sent to its queue");
                        }
                    }
                }
            }
        }
    }
}

fn store_error(e: StoreError) -> SqsError {
    match e {
        StoreError::NotApiAlarm(name, source) => SqsError::invalid_value(
            "AlarmName",
            name,
            &format!(
                "The alarm is defined by the {} and can only be changed there.",
                match source {
                    AlarmSource::Config => "config file",
                    _ => "dlq_alarms setting",
                }
            ),
        ),
        StoreError::Unknown(name) => SqsError::new(
            sluice_core::ErrorCode::ResourceNotFoundException,
            format!("The alarm {name} does not exist."),
        ),
        StoreError::Save(e) => SqsError::internal(format!("The alarms could not be saved: {e}")),
    }
}

/// Ticks the alarms of `service` every sample interval, in the background.
pub fn spawn_alarm_monitor<B: Broker>(service: Arc<Service<B>>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(service.alarms.settings.sample_interval);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            service.alarm_tick().await;
        }
    })
}
