//! The SNS topic and subscription operations ([`sluice_broker::Topics`])
//! of the embedded engine, over the engine's [`TopicSet`].
//!
//! Reads load the current set without a lock: a publish reading its
//! topic's subscriptions never waits for a change, nor for a disk. A
//! change takes the writer's turn, builds the next set from the current
//! one, writes it (durable mode: [`topic_set::write`], on a blocking
//! thread) and only then puts it in place, so an answer is never given
//! for a change that is not on disk, and a write that fails before its
//! rename leaves the set served as it was (one that fails after, in the
//! directory's sync, serves the new file, which a start would read too,
//! and answers the failure). The turn is held inside the blocking task:
//! a caller that stops waiting does not let another change start before
//! its write has ended.
//!
//! While the engine refuses writes (an earlier write to its storage
//! failed, rule D3, or it started on a full disk, rule D6) topic changes
//! are refused too, with the same retryable answer, and start the reopen
//! a refused send would.

use std::sync::Arc;

use sluice_broker::{EngineError, Subscription, Topic};

use crate::engine::{EmbeddedBroker, Inner};
use crate::topic_set::{self, TopicSet, WriteFailure};

/// What a change decided, seeing the current set.
enum Decision<T> {
    /// Nothing to store: answer this.
    Answer(T),
    /// Store this set, then answer this.
    Store(TopicSet, T),
}

/// The retryable answer to a change the storage could not record (the
/// words a refused queue change gets).
fn unavailable(why: impl std::fmt::Display) -> EngineError {
    EngineError::Unavailable(format!("The storage could not record this change: {why}"))
}

/// Runs `decide` on the current set in the writer's turn and stores what
/// it decides (see the module's doc).
async fn change<T, F>(b: &EmbeddedBroker, decide: F) -> Result<T, EngineError>
where
    T: Send + 'static,
    F: FnOnce(&TopicSet) -> Result<Decision<T>, EngineError> + Send + 'static,
{
    if b.inner.reopener.is_none() {
        // In memory: no write, nothing to wait for.
        return apply(&b.inner, decide);
    }
    let inner = b.inner.clone();
    tokio::task::spawn_blocking(move || apply(&inner, decide))
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "a topic change stopped");
            EngineError::Storage("The change stopped before it was recorded.".into())
        })?
}

fn apply<T, F>(inner: &Inner, decide: F) -> Result<T, EngineError>
where
    F: FnOnce(&TopicSet) -> Result<Decision<T>, EngineError>,
{
    let _turn = inner.topics.writer.lock();
    let current = inner.topics.current.load_full();
    let (next, answer) = match decide(&current)? {
        Decision::Answer(answer) => return Ok(answer),
        Decision::Store(next, answer) => (next, answer),
    };
    if let Some(r) = &inner.reopener {
        if let Some(why) = inner.journal.failure() {
            inner.reopen_if_due();
            return Err(unavailable(why));
        }
        match topic_set::write(&*r.storage, &r.dir, &next) {
            Ok(()) => {}
            Err(WriteFailure::Unwritten(e)) => {
                tracing::warn!(error = %e, "the topics could not be written; the change is refused");
                return Err(unavailable(e));
            }
            Err(WriteFailure::Unsynced(e)) => {
                // The new file is in place: what a start reads, so what
                // is served too; the caller hears that it may not last.
                tracing::warn!(error = %e, "the topics' directory could not be synced");
                inner.topics.current.store(Arc::new(next));
                return Err(unavailable(e));
            }
        }
    }
    inner.topics.current.store(Arc::new(next));
    Ok(answer)
}

/// The current set with `edit` applied.
fn edited(set: &TopicSet, edit: impl FnOnce(&mut TopicSet)) -> TopicSet {
    let mut next = set.clone();
    edit(&mut next);
    next
}

pub(crate) async fn create_topic(
    b: &EmbeddedBroker,
    topic: Topic,
) -> Result<(Topic, bool), EngineError> {
    if let Some(stored) = b.inner.topics.current.load().topic(&topic.key) {
        return Ok((stored.clone(), false));
    }
    change(b, move |set| {
        Ok(match set.topic(&topic.key) {
            Some(stored) => Decision::Answer((stored.clone(), false)),
            None => Decision::Store(
                edited(set, |next| next.put_topic(topic.clone())),
                (topic, true),
            ),
        })
    })
    .await
}

pub(crate) fn get_topic(b: &EmbeddedBroker, key: &str) -> Result<Topic, EngineError> {
    (b.inner.topics.current.load().topic(key).cloned()).ok_or(EngineError::TopicDoesNotExist)
}

pub(crate) fn list_topics(b: &EmbeddedBroker) -> Vec<String> {
    b.inner.topics.current.load().keys()
}

pub(crate) async fn update_topic<E, F>(
    b: &EmbeddedBroker,
    key: &str,
    change_topic: F,
) -> Result<Result<Topic, E>, EngineError>
where
    E: Send + 'static,
    F: FnOnce(&mut Topic) -> Result<(), E> + Send + 'static,
{
    let key = key.to_owned();
    change(b, move |set| {
        let stored = set.topic(&key).ok_or(EngineError::TopicDoesNotExist)?;
        let mut changed = stored.clone();
        if let Err(e) = change_topic(&mut changed) {
            return Ok(Decision::Answer(Err(e)));
        }
        changed.key.clone_from(&stored.key);
        changed.created_at = stored.created_at;
        if changed == *stored {
            return Ok(Decision::Answer(Ok(changed)));
        }
        let next = edited(set, |next| next.put_topic(changed.clone()));
        Ok(Decision::Store(next, Ok(changed)))
    })
    .await
}

pub(crate) async fn delete_topic(b: &EmbeddedBroker, key: &str) -> Result<(), EngineError> {
    let key = key.to_owned();
    change(b, move |set| {
        let mut next = set.clone();
        if !next.remove_topic(&key) {
            return Err(EngineError::TopicDoesNotExist);
        }
        Ok(Decision::Store(next, ()))
    })
    .await
}

pub(crate) async fn subscribe(
    b: &EmbeddedBroker,
    s: Subscription,
) -> Result<(Subscription, bool), EngineError> {
    let current = b.inner.topics.current.load();
    if let Some(stored) = current.same_endpoint(&s.topic, &s.protocol, &s.endpoint) {
        return Ok((stored.clone(), false));
    }
    drop(current);
    change(b, move |set| {
        if set.topic(&s.topic).is_none() {
            return Err(EngineError::TopicDoesNotExist);
        }
        if let Some(stored) = set.same_endpoint(&s.topic, &s.protocol, &s.endpoint) {
            return Ok(Decision::Answer((stored.clone(), false)));
        }
        if set.subscription(&s.id).is_some() {
            // Ids are UUIDs the server makes: a repeat is its fault.
            tracing::error!(id = %s.id, "a new subscription's id is taken");
            return Err(EngineError::Storage(
                "A subscription of this id exists already.".into(),
            ));
        }
        let next = edited(set, |next| next.put_subscription(s.clone()));
        Ok(Decision::Store(next, (s, true)))
    })
    .await
}

pub(crate) fn get_subscription(b: &EmbeddedBroker, id: &str) -> Result<Subscription, EngineError> {
    let current = b.inner.topics.current.load();
    (current.subscription(id).cloned()).ok_or(EngineError::SubscriptionDoesNotExist)
}

pub(crate) async fn update_subscription<E, F>(
    b: &EmbeddedBroker,
    id: &str,
    change_subscription: F,
) -> Result<Result<Subscription, E>, EngineError>
where
    E: Send + 'static,
    F: FnOnce(&mut Subscription) -> Result<(), E> + Send + 'static,
{
    let id = id.to_owned();
    change(b, move |set| {
        let stored = set
            .subscription(&id)
            .ok_or(EngineError::SubscriptionDoesNotExist)?;
        let mut changed = stored.clone();
        if let Err(e) = change_subscription(&mut changed) {
            return Ok(Decision::Answer(Err(e)));
        }
        // What places it in its topic's list stays.
        changed.id.clone_from(&stored.id);
        changed.topic.clone_from(&stored.topic);
        changed.protocol.clone_from(&stored.protocol);
        changed.endpoint.clone_from(&stored.endpoint);
        changed.created_at = stored.created_at;
        if changed == *stored {
            return Ok(Decision::Answer(Ok(changed)));
        }
        let next = edited(set, |next| next.put_subscription(changed.clone()));
        Ok(Decision::Store(next, Ok(changed)))
    })
    .await
}

pub(crate) async fn delete_subscription(b: &EmbeddedBroker, id: &str) -> Result<(), EngineError> {
    let id = id.to_owned();
    change(b, move |set| {
        let mut next = set.clone();
        if !next.remove_subscription(&id) {
            return Err(EngineError::SubscriptionDoesNotExist);
        }
        Ok(Decision::Store(next, ()))
    })
    .await
}

pub(crate) fn subscriptions(b: &EmbeddedBroker, topic: Option<&str>) -> Vec<Subscription> {
    let current = b.inner.topics.current.load();
    match topic {
        Some(key) => current.subscriptions_of(key).to_vec(),
        None => current.all_subscriptions().into_iter().cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use sluice_core::ManualClock;

    use super::*;

    /// Reads answer while a change holds the writer's turn (in durable
    /// mode, for as long as its write and syncs take): a publish reading
    /// its topic's subscriptions never waits for a change.
    #[tokio::test]
    #[allow(
        clippy::await_holding_lock,
        reason = "the turn is held on purpose: what is awaited must not take it"
    )]
    async fn reads_do_not_wait_for_a_change() {
        let b = EmbeddedBroker::in_memory(Arc::new(ManualClock::default()));
        let topic = Topic {
            key: "t".into(),
            attributes: BTreeMap::new(),
            tags: BTreeMap::new(),
            created_at: 1,
        };
        create_topic(&b, topic.clone()).await.unwrap();
        let s = Subscription {
            id: "s".into(),
            topic: "t".into(),
            protocol: "sqs".into(),
            endpoint: "q".into(),
            owner: "o".into(),
            attributes: BTreeMap::new(),
            pending_token: None,
            created_at: 1,
        };
        subscribe(&b, s.clone()).await.unwrap();
        let turn = b.inner.topics.writer.lock();
        assert_eq!(subscriptions(&b, Some("t")), std::slice::from_ref(&s));
        assert_eq!(get_subscription(&b, "s").unwrap(), s);
        assert_eq!(get_topic(&b, "t").unwrap(), topic);
        assert_eq!(list_topics(&b), ["t"]);
        // What needs no change answers too.
        assert_eq!(
            create_topic(&b, topic.clone()).await.unwrap(),
            (topic, false)
        );
        assert_eq!(subscribe(&b, s.clone()).await.unwrap(), (s, false));
        drop(turn);
    }
}
