//! Topics and their subscriptions (SNS), as every engine keeps them:
//! records the server reads whole and changes whole, each change atomic
//! against concurrent ones, durable before the call returns. What a
//! topic's or a subscription's attributes mean, and every SNS rule
//! (names, defaults, validation, confirmation, delivery), is the server's;
//! an engine only loads and stores, as it does a queue's metadata.
//!
//! Publishing needs no method here: a delivery to an SQS subscription is a
//! send to its queue ([`Broker::send_messages`](crate::Broker)), durable
//! before the publish is answered.

use std::collections::BTreeMap;
use std::future::Future;

use serde::{Deserialize, Serialize};
use sluice_core::clock::Millis;

use crate::error::EngineError;

/// A topic as an engine keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topic {
    /// The topic's key: its name in the server's own account and region,
    /// or `<region>/<account>/<name>` in another (as a queue's key).
    pub key: String,
    /// Its attributes as set, by name (`DisplayName`, `Policy`,
    /// `FifoTopic`, …); the defaults are the server's to add.
    pub attributes: BTreeMap<String, String>,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
    /// When it was created.
    pub created_at: Millis,
}

/// A subscription as an engine keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscription {
    /// Its id, the last part of its ARN (a UUID).
    pub id: String,
    /// The key of its topic.
    pub topic: String,
    /// `sqs`, `http`, `https`, …
    pub protocol: String,
    /// Where it delivers: a queue's ARN, a URL.
    pub endpoint: String,
    /// The account that subscribed it.
    pub owner: String,
    /// Its attributes as set (`RawMessageDelivery`, `FilterPolicy`,
    /// `RedrivePolicy`, …).
    pub attributes: BTreeMap<String, String>,
    /// The token that confirms it, while it waits for one; `None` once it
    /// is confirmed.
    pub pending_token: Option<String>,
    /// When it was made.
    pub created_at: Millis,
}

/// The topic and subscription operations, atomic per call, durable before
/// they return. Clones share the same engine.
pub trait Topics: Clone + Send + Sync + 'static {
    /// Stores `topic` unless a topic of its key exists; either way the
    /// topic as stored, and whether this call created it (the caller
    /// compares an existing topic's attributes and tags with its own).
    fn create_topic(
        &self,
        topic: Topic,
    ) -> impl Future<Output = Result<(Topic, bool), EngineError>> + Send;

    /// The topic of `key`; `TopicDoesNotExist`.
    fn get_topic(&self, key: &str) -> impl Future<Output = Result<Topic, EngineError>> + Send;

    /// The keys of every topic, sorted.
    fn list_topics(&self) -> impl Future<Output = Result<Vec<String>, EngineError>> + Send;

    /// Changes the topic of `key` with `change`, atomically against
    /// concurrent changes, and stores the result; the topic as stored. A
    /// change that refuses (its own error, inside) stores nothing. The
    /// key and creation time stay as stored, whatever `change` sets them
    /// to. `TopicDoesNotExist`.
    fn update_topic<E, F>(
        &self,
        key: &str,
        change: F,
    ) -> impl Future<Output = Result<Result<Topic, E>, EngineError>> + Send
    where
        E: Send + 'static,
        F: FnOnce(&mut Topic) -> Result<(), E> + Send + 'static;

    /// Deletes the topic of `key` and every subscription to it.
    /// `TopicDoesNotExist`.
    fn delete_topic(&self, key: &str) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Stores `subscription` unless its topic has one of the same protocol
    /// and endpoint; either way the subscription as stored, and whether
    /// this call made it. `TopicDoesNotExist` when its topic is gone.
    fn subscribe(
        &self,
        subscription: Subscription,
    ) -> impl Future<Output = Result<(Subscription, bool), EngineError>> + Send;

    /// The subscription of `id`; `SubscriptionDoesNotExist`.
    fn get_subscription(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Subscription, EngineError>> + Send;

    /// Changes the subscription of `id` with `change`, as
    /// [`Topics::update_topic`] changes a topic; its id, topic, protocol,
    /// endpoint and creation time stay as stored. `SubscriptionDoesNotExist`.
    fn update_subscription<E, F>(
        &self,
        id: &str,
        change: F,
    ) -> impl Future<Output = Result<Result<Subscription, E>, EngineError>> + Send
    where
        E: Send + 'static,
        F: FnOnce(&mut Subscription) -> Result<(), E> + Send + 'static;

    /// Deletes the subscription of `id`. `SubscriptionDoesNotExist`.
    fn delete_subscription(&self, id: &str)
    -> impl Future<Output = Result<(), EngineError>> + Send;

    /// The subscriptions of the topic of `topic`, or of every topic when
    /// `None`, oldest first (ties by id); none for a topic that does not
    /// exist.
    fn subscriptions(
        &self,
        topic: Option<&str>,
    ) -> impl Future<Output = Result<Vec<Subscription>, EngineError>> + Send;
}
