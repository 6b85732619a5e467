//! Alarms on queue metrics (rule M2): "a DLQ without an alarm is a false
//! sense of safety".
//!
//! - [`definition`]: what an alarm is, and validation of PutAlarm input;
//! - [`evaluate`]: pure evaluation, samples in and a state out;
//! - [`series`]: recent per-queue stats and the metric samples read from them;
//! - [`store`]: alarms with their states and history; API alarms saved to a file;
//! - [`notify`]: the notification body and the background webhook sender;
//! - [`publish`]: publishing a notification to a topic, through the server;
//! - [`shared`]: alarms kept in storage several nodes share.
//!
//! Webhooks go out through `sluice-outbound`'s client, `https://` ones
//! checked against Mozilla's roots plus the `webhook_ca_file` setting.
//!
//! [`Alarms`] is the component the server's service holds: its actions
//! (`crates/server/src/actions/alarms.rs`) call it, and it knows nothing
//! of requests or of the server. A tick
//! ([`Alarms::tick`], in `tick.rs`) samples every queue that has an alarm,
//! evaluates every alarm at the service clock's time and notifies each
//! state change. `sluice serve` ticks every `sample_interval`
//! ([`tick::spawn_alarm_monitor`]); tests tick by hand with a manual clock. On
//! shared storage every node samples, one node evaluates and notifies
//! (see [`shared`]).

pub mod definition;
pub mod evaluate;
pub mod notify;
pub mod publish;
pub mod series;
pub mod shared;
pub mod store;
pub mod tick;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use sluice_broker::{Broker, Coordination, JobClaim};
use sluice_core::SqsError;
use sluice_core::clock::Clock;
use sluice_core::queue_name::Account;
use sluice_protocol::sluice::PutAlarmRequest as PutAlarmInput;

use definition::{
    AlarmAction, AlarmDefinition, AlarmSource, AlarmState, Comparison, Metric, Statistic,
    TreatMissingData,
};
use notify::{WebhookPolicy, WebhookSender};
use series::QueueSeries;
use sluice_outbound::OutboundTls;
use store::{AlarmEntry, AlarmStore, StoreError, Transition};

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
    pub webhook_tls: OutboundTls,
    /// Where API-defined alarms are saved (none: they are lost at exit).
    pub file: Option<PathBuf>,
}

impl Default for AlarmSettings {
    fn default() -> Self {
        Self {
            sample_interval: Duration::from_secs(10),
            dlq_alarms: None,
            webhook: WebhookPolicy::default(),
            webhook_tls: OutboundTls::default(),
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

/// The prefix of the alarms the `dlq_alarms` setting makes: `dlq-depth:<queue>`.
pub const DLQ_ALARM_PREFIX: &str = "dlq-depth:";

/// A server's alarms: definitions and states, recent samples, notifier,
/// and the engine, account and clock they are evaluated with.
pub struct Alarms<B> {
    broker: B,
    account: Account,
    clock: Arc<dyn Clock>,
    settings: AlarmSettings,
    store: Mutex<AlarmStore>,
    series: Mutex<HashMap<String, QueueSeries>>,
    webhooks: WebhookSender,
    ticking: tokio::sync::Mutex<()>,
    /// On shared storage, this node's claim to evaluate and notify.
    lead: tokio::sync::Mutex<Option<JobClaim>>,
    /// Whether the last tick evaluated (and notified).
    evaluating: AtomicBool,
    /// What publishes to topics, once the service is served.
    topics: OnceLock<Arc<dyn publish::TopicPublisher>>,
}

impl<B> Alarms<B> {
    /// Alarms with `settings` on the queues of `broker`, starting with the
    /// saved API alarms.
    pub fn new(
        broker: B,
        account: Account,
        clock: Arc<dyn Clock>,
        settings: AlarmSettings,
    ) -> Self {
        Self {
            store: Mutex::new(AlarmStore::open(settings.file.clone(), clock.now())),
            broker,
            account,
            clock,
            series: Mutex::new(HashMap::new()),
            webhooks: WebhookSender::new(settings.webhook.clone(), settings.webhook_tls.clone()),
            ticking: tokio::sync::Mutex::new(()),
            lead: tokio::sync::Mutex::new(None),
            evaluating: AtomicBool::new(false),
            topics: OnceLock::new(),
            settings,
        }
    }

    /// Sets what publishes the notifications of topic actions; the first
    /// one set stays.
    pub fn set_topic_publisher(&self, publisher: Arc<dyn publish::TopicPublisher>) {
        let _ = self.topics.set(publisher);
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

impl<B: Broker> Alarms<B> {
    /// Creates or replaces an alarm (PutAlarm, or the config file).
    /// `queue` is the key of the queue the input's `QueueUrl` names.
    pub async fn put(
        &self,
        queue: String,
        input: PutAlarmInput,
        source: AlarmSource,
    ) -> Result<(), SqsError> {
        self.broker.get_queue(&queue).await?;
        let def = AlarmDefinition::from_input(input, &queue, &self.account)?;
        for action in def.parsed_actions(&self.account) {
            match action {
                AlarmAction::Queue(q) if self.broker.get_queue(&q).await.is_err() => {
                    return Err(SqsError::invalid_value(
                        "Actions",
                        self.account.queue_arn(&q),
                        "The queue does not exist.",
                    ));
                }
                AlarmAction::Topic(t) if self.broker.get_topic(&t).await.is_err() => {
                    return Err(SqsError::invalid_value(
                        "Actions",
                        self.account.topic_arn(&t),
                        "The topic does not exist.",
                    ));
                }
                _ => {}
            }
        }
        let now = self.clock.now();
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
            return self.refresh_shared().await;
        }
        self.store().put(def, source, now).map_err(store_error)
    }
}

/// What only the shared storage holds: the alarms of every node.
impl<B: Coordination> Alarms<B> {
    /// Deletes API alarms, all or none.
    pub async fn delete(&self, names: &[String]) -> Result<(), SqsError> {
        if self.broker.is_shared() {
            self.refresh_shared().await?;
            self.store().check_deletable(names).map_err(store_error)?;
            self.broker.delete_stored_alarms(names.to_vec()).await?;
            return self.refresh_shared().await;
        }
        self.store().delete_api(names).map_err(store_error)
    }

    /// On shared storage, replaces this node's copy of the alarms by the
    /// stored ones (nothing to do otherwise).
    pub async fn refresh_shared(&self) -> Result<(), SqsError> {
        if !self.broker.is_shared() {
            return Ok(());
        }
        let stored = self.broker.stored_alarms().await?;
        let entries = stored.into_iter().filter_map(shared::from_stored).collect();
        self.store().replace_all(entries);
        Ok(())
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
