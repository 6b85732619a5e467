//! SNS topics and subscriptions ([`Topics`]) in the shared database
//! (migration 0025): every node reads and changes the same records.
//!
//! A topic is a row of `sluice_topics`, its record as JSON; a
//! subscription a row of `sluice_subscriptions`, its record beside the
//! columns that make the rules hold in the database rather than in one
//! node: its topic's key (a foreign key that refuses a subscription to a
//! deleted topic and deletes a topic's subscriptions with it), its
//! protocol and endpoint (unique per topic, so two nodes subscribing one
//! endpoint at once store one subscription) and its creation time (the
//! listing order, which an index serves per topic). Each call is one
//! statement, or one transaction for a change: the row locked, the
//! caller's change applied here, the row written, committed; a refusal
//! rolls back.

use sluice_broker::{EngineError, Subscription, Topic, Topics};
use sluice_core::clock::Millis;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Json;

use crate::engine::{PostgresBroker, execute, query};
use crate::error;
use crate::rows::col;

/// How many times a create or a subscribe tries again when the row it
/// collided with was deleted before it could read it.
const RACES: usize = 5;

/// A time as its column holds it.
fn at(t: Millis) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

/// The records of column 0 of `rows`.
fn records<T>(rows: &[tokio_postgres::Row]) -> Result<Vec<T>, EngineError>
where
    T: serde::de::DeserializeOwned,
{
    rows.iter()
        .map(|row| col::<Json<T>>(row, 0).map(|Json(record)| record))
        .collect()
}

/// The topic of `key`, if there is one.
async fn read_topic<C: deadpool_postgres::GenericClient>(
    client: &C,
    key: &str,
    lock: &str,
) -> Result<Option<Topic>, EngineError> {
    let sql = format!("SELECT record FROM sluice_topics WHERE key = $1 {lock}");
    let rows = query(client, &sql, &[&key]).await?;
    Ok(records(&rows)?.pop())
}

/// The subscription of `id`, if there is one.
async fn read_subscription<C: deadpool_postgres::GenericClient>(
    client: &C,
    id: &str,
    lock: &str,
) -> Result<Option<Subscription>, EngineError> {
    let sql = format!("SELECT record FROM sluice_subscriptions WHERE id = $1 {lock}");
    let rows = query(client, &sql, &[&id]).await?;
    Ok(records(&rows)?.pop())
}

impl Topics for PostgresBroker {
    async fn create_topic(&self, topic: Topic) -> Result<(Topic, bool), EngineError> {
        let client = self.inner.client().await?;
        for _ in 0..RACES {
            let inserted = execute(
                &client,
                "INSERT INTO sluice_topics (key, record) VALUES ($1, $2)
                 ON CONFLICT (key) DO NOTHING",
                &[&topic.key, &Json(&topic)],
            )
            .await?;
            if inserted == 1 {
                return Ok((topic, true));
            }
            if let Some(stored) = read_topic(&client, &topic.key, "").await? {
                return Ok((stored, false));
            }
        }
        Err(error::unavailable())
    }

    async fn get_topic(&self, key: &str) -> Result<Topic, EngineError> {
        let client = self.inner.client().await?;
        read_topic(&client, key, "")
            .await?
            .ok_or(EngineError::TopicDoesNotExist)
    }

    async fn list_topics(&self) -> Result<Vec<String>, EngineError> {
        let client = self.inner.client().await?;
        let rows = query(&client, "SELECT key FROM sluice_topics ORDER BY key", &[]).await?;
        rows.iter().map(|row| col(row, 0)).collect()
    }

    async fn update_topic<E, F>(
        &self,
        key: &str,
        change: F,
    ) -> Result<Result<Topic, E>, EngineError>
    where
        E: Send + 'static,
        F: FnOnce(&mut Topic) -> Result<(), E> + Send + 'static,
    {
        let mut client = self.inner.client().await?;
        let tx = client.transaction().await.map_err(error::db)?;
        // Locked until the commit, so changes apply one after the other;
        // not against key share, so subscribing to it goes on meanwhile.
        let stored = read_topic(&tx, key, "FOR NO KEY UPDATE")
            .await?
            .ok_or(EngineError::TopicDoesNotExist)?;
        let mut changed = stored.clone();
        if let Err(e) = change(&mut changed) {
            // The transaction, dropped unfinished, rolls back.
            return Ok(Err(e));
        }
        changed.key.clone_from(&stored.key);
        changed.created_at = stored.created_at;
        if changed != stored {
            execute(
                &tx,
                "UPDATE sluice_topics SET record = $2 WHERE key = $1",
                &[&key, &Json(&changed)],
            )
            .await?;
            tx.commit().await.map_err(error::db)?;
        }
        Ok(Ok(changed))
    }

    async fn delete_topic(&self, key: &str) -> Result<(), EngineError> {
        let client = self.inner.client().await?;
        // Its subscriptions go with it (ON DELETE CASCADE).
        let deleted = execute(&client, "DELETE FROM sluice_topics WHERE key = $1", &[&key]).await?;
        if deleted == 0 {
            return Err(EngineError::TopicDoesNotExist);
        }
        Ok(())
    }

    async fn subscribe(
        &self,
        subscription: Subscription,
    ) -> Result<(Subscription, bool), EngineError> {
        let s = subscription;
        let client = self.inner.client().await?;
        let insert = client
            .prepare_cached(
                "INSERT INTO sluice_subscriptions
                     (id, topic, protocol, endpoint, created_at, record)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (topic, protocol, endpoint) DO NOTHING",
            )
            .await
            .map_err(error::db)?;
        for _ in 0..RACES {
            let inserted = client
                .execute(
                    &insert,
                    &[
                        &s.id,
                        &s.topic,
                        &s.protocol,
                        &s.endpoint,
                        &at(s.created_at),
                        &Json(&s),
                    ],
                )
                .await
                .map_err(|e| {
                    // The topic's row is not there (or was just deleted).
                    if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) {
                        EngineError::TopicDoesNotExist
                    } else {
                        error::db(e)
                    }
                })?;
            if inserted == 1 {
                return Ok((s, true));
            }
            let rows = query(
                &client,
                "SELECT record FROM sluice_subscriptions
                 WHERE topic = $1 AND protocol = $2 AND endpoint = $3",
                &[&s.topic, &s.protocol, &s.endpoint],
            )
            .await?;
            if let Some(stored) = records(&rows)?.pop() {
                return Ok((stored, false));
            }
        }
        Err(error::unavailable())
    }

    async fn get_subscription(&self, id: &str) -> Result<Subscription, EngineError> {
        let client = self.inner.client().await?;
        read_subscription(&client, id, "")
            .await?
            .ok_or(EngineError::SubscriptionDoesNotExist)
    }

    async fn update_subscription<E, F>(
        &self,
        id: &str,
        change: F,
    ) -> Result<Result<Subscription, E>, EngineError>
    where
        E: Send + 'static,
        F: FnOnce(&mut Subscription) -> Result<(), E> + Send + 'static,
    {
        let mut client = self.inner.client().await?;
        let tx = client.transaction().await.map_err(error::db)?;
        let stored = read_subscription(&tx, id, "FOR NO KEY UPDATE")
            .await?
            .ok_or(EngineError::SubscriptionDoesNotExist)?;
        let mut changed = stored.clone();
        if let Err(e) = change(&mut changed) {
            // The transaction, dropped unfinished, rolls back.
            return Ok(Err(e));
        }
        // What the row's columns hold stays: the record agrees with them.
        changed.id.clone_from(&stored.id);
        changed.topic.clone_from(&stored.topic);
        changed.protocol.clone_from(&stored.protocol);
        changed.endpoint.clone_from(&stored.endpoint);
        changed.created_at = stored.created_at;
        if changed != stored {
            execute(
                &tx,
                "UPDATE sluice_subscriptions SET record = $2 WHERE id = $1",
                &[&id, &Json(&changed)],
            )
            .await?;
            tx.commit().await.map_err(error::db)?;
        }
        Ok(Ok(changed))
    }

    async fn delete_subscription(&self, id: &str) -> Result<(), EngineError> {
        let client = self.inner.client().await?;
        let deleted = execute(
            &client,
            "DELETE FROM sluice_subscriptions WHERE id = $1",
            &[&id],
        )
        .await?;
        if deleted == 0 {
            return Err(EngineError::SubscriptionDoesNotExist);
        }
        Ok(())
    }

    async fn subscriptions(&self, topic: Option<&str>) -> Result<Vec<Subscription>, EngineError> {
        let client = self.inner.client().await?;
        let rows = match topic {
            Some(key) => {
                query(
                    &client,
                    "SELECT record FROM sluice_subscriptions WHERE topic = $1
                     ORDER BY created_at, id",
                    &[&key],
                )
                .await?
            }
            None => {
                query(
                    &client,
                    "SELECT record FROM sluice_subscriptions ORDER BY created_at, id",
                    &[],
                )
                .await?
            }
        };
        records(&rows)
    }
}
