//! The schema, created and migrated by the server itself: numbered SQL
//! files embedded in the binary, applied in order, each in its own
//! transaction, and recorded in `sluice_schema_migrations`. Every
//! migration not yet recorded is applied, not only those above the newest
//! recorded one: migrations written on parallel branches may be numbered
//! out of order of their arrival. Nodes starting
//! together take turns under an advisory lock.

use tokio_postgres::Client;

use crate::error::PgError;
use crate::locks;

/// The migrations, in order: (version, SQL).
const MIGRATIONS: &[(i32, &str)] = &[
    (1, include_str!("../migrations/0001_initial.sql")),
    (2, include_str!("../migrations/0002_group_index.sql")),
    (3, include_str!("../migrations/0003_back_of_queue.sql")),
    (5, include_str!("../migrations/0005_shared_background.sql")),
    (
        6,
        include_str!("../migrations/0006_receive_order_index.sql"),
    ),
    (
        7,
        include_str!("../migrations/0007_group_index_only_groups.sql"),
    ),
    (
        8,
        include_str!("../migrations/0008_age_index_only_moved.sql"),
    ),
    (13, include_str!("../migrations/0013_deleted_queues.sql")),
    (21, include_str!("../migrations/0021_secrets.sql")),
    (24, include_str!("../migrations/0024_consumers.sql")),
    (25, include_str!("../migrations/0025_topics.sql")),
    (
        26,
        include_str!("../migrations/0026_messages_without_foreign_keys.sql"),
    ),
    (27, include_str!("../migrations/0027_data_keys.sql")),
    (28, include_str!("../migrations/0028_idempotency.sql")),
    (29, include_str!("../migrations/0029_expired.sql")),
];

/// The newest schema version this build knows: the last migration's.
pub const SCHEMA_VERSION: i32 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// Brings the schema up to [`SCHEMA_VERSION`]; returns the versions applied.
pub(crate) async fn migrate(client: &mut Client) -> Result<Vec<i32>, PgError> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&locks::MIGRATIONS])
        .await?;
    let result = apply_pending(client).await;
    // Unlocked on every path; the session ending would release it anyway.
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&locks::MIGRATIONS])
        .await;
    let applied = result?;
    unlocked?;
    Ok(applied)
}

async fn apply_pending(client: &mut Client) -> Result<Vec<i32>, PgError> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS sluice_schema_migrations (
                version    INTEGER PRIMARY KEY,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )",
        )
        .await?;
    let recorded: Vec<i32> = client
        .query("SELECT version FROM sluice_schema_migrations", &[])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let newest = recorded.iter().copied().max().unwrap_or(0);
    if newest > SCHEMA_VERSION {
        return Err(PgError::SchemaTooNew {
            found: newest,
            known: SCHEMA_VERSION,
        });
    }
    let mut applied = Vec::new();
    for &(version, sql) in MIGRATIONS.iter().filter(|(v, _)| !recorded.contains(v)) {
        let tx = client.transaction().await?;
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO sluice_schema_migrations (version) VALUES ($1)",
            &[&version],
        )
        .await?;
        tx.commit().await?;
        tracing::info!(version, "applied database migration");
        applied.push(version);
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order_up_to_the_version() {
        let versions: Vec<i32> = MIGRATIONS.iter().map(|(v, _)| *v).collect();
        assert_eq!(versions.first(), Some(&1));
        assert!(
            versions.windows(2).all(|w| w[0] < w[1]),
            "strictly increasing: {versions:?}"
        );
        assert_eq!(versions.last(), Some(&SCHEMA_VERSION));
    }
}
