//! Alarm notifications published to topics (rule M2, an alarm action that
//! is a topic ARN): the alarms hand the notification to this publisher,
//! which publishes it as Publish would, without a request: its envelopes'
//! URLs start with `sns_base_url` (or `base_url`).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use sluice_alarms::publish::TopicPublisher;
use sluice_broker::Broker;
use sluice_protocol::sns::SnsError;

use super::errors::engine;
use super::fanout;
use super::outgoing::Outgoing;
use super::topic_attributes::is_fifo;
use crate::service::{RequestContext, Service};

/// The message group of alarm notifications on a FIFO topic.
const ALARM_GROUP: &str = "sluice-alarms";

/// Lets `service`'s alarms publish to its topics.
pub fn connect<B: Broker>(service: &Arc<Service<B>>) {
    let publisher = Publisher {
        service: Arc::downgrade(service),
    };
    service.alarms.set_topic_publisher(Arc::new(publisher));
}

/// Publishes for the alarms; holds the service weakly, as the service
/// holds the alarms.
struct Publisher<B> {
    service: Weak<Service<B>>,
}

impl<B: Broker> TopicPublisher for Publisher<B> {
    fn publish(
        &self,
        topic: String,
        subject: String,
        message: String,
    ) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>> {
        let service = self.service.clone();
        Box::pin(async move {
            let svc = service
                .upgrade()
                .ok_or_else(|| "the server has stopped".to_string())?;
            publish(&svc, &topic, subject, message)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

/// Publishes `message` with `subject` to the topic stored under `key`.
async fn publish<B: Broker>(
    svc: &Service<B>,
    key: &str,
    subject: String,
    message: String,
) -> Result<(), SnsError> {
    let topic = svc.broker.get_topic(key).await.map_err(engine)?;
    let fifo = is_fifo(&topic);
    let mut outgoing = Outgoing {
        message_id: String::new(),
        sequence_number: None,
        size: message.len() + subject.len(),
        message,
        by_protocol: None,
        subject: Some(subject),
        attributes: Vec::new(),
        group_id: fifo.then(|| ALARM_GROUP.to_string()),
        // Each notification is new: its own deduplication id.
        dedup_id: fifo.then(|| uuid::Uuid::new_v4().simple().to_string()),
    };
    let assigned = svc.sns.assign(
        &topic,
        outgoing.group_id.as_deref(),
        outgoing.dedup_id.as_deref(),
        svc.now(),
    );
    outgoing.message_id = assigned.message_id;
    outgoing.sequence_number = assigned.sequence_number;
    let ctx = RequestContext::default();
    fanout::deliver(svc, &ctx, &topic, std::slice::from_ref(&outgoing)).await?;
    svc.metrics.topics.published(&topic.key, 1);
    Ok(())
}
