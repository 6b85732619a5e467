//! Idempotency records in the PostgreSQL engine (rule I1), in
//! `sluice_idempotency`, shared by every node. A claim is one statement:
//! an insert that takes the key when it is free (absent, expired, or its
//! claimer's time ran out), else the row as it stands, read in the same
//! statement; the row's lock orders two claims of a key, on any nodes.

use sluice_broker::EngineError;
use sluice_broker::idempotency::{Claim, ClaimStatus, IdempotencyKeys, IdempotencyRecord};

use crate::engine::{PostgresBroker, execute, query};
use crate::rows::col;

/// Takes the key when it is free and says so (`taken`); else returns the
/// row the statement began with. No row at all: a concurrent change came
/// between (a release, or a claim not yet visible), and the caller asks
/// again.
const CLAIM: &str = "WITH taken AS (
        INSERT INTO sluice_idempotency AS r (key, result, in_progress_until, expires_at, ttl_ms)
        VALUES ($1, NULL, $2::bigint + $3::bigint, $2::bigint + GREATEST($3::bigint, $4::bigint),
                $4::bigint)
        ON CONFLICT (key) DO UPDATE SET result = NULL,
            in_progress_until = EXCLUDED.in_progress_until,
            expires_at = EXCLUDED.expires_at, ttl_ms = EXCLUDED.ttl_ms
        WHERE r.expires_at <= $2 OR (r.result IS NULL AND r.in_progress_until <= $2)
        RETURNING r.result, r.in_progress_until, r.expires_at, r.ttl_ms, true AS taken
    )
    SELECT result, in_progress_until, expires_at, ttl_ms, taken FROM taken
    UNION ALL
    SELECT result, in_progress_until, expires_at, ttl_ms, false FROM sluice_idempotency
    WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM taken)";

/// Claims after which a key still changing under each is answered as in
/// progress: someone holds it.
const CLAIM_ATTEMPTS: usize = 5;

impl IdempotencyKeys for PostgresBroker {
    async fn claim_idempotency_key(
        &self,
        key: &str,
        claim: Claim,
    ) -> Result<ClaimStatus, EngineError> {
        let client = self.inner.client().await?;
        let in_progress = claim.in_progress_ms as i64;
        let ttl = claim.ttl_ms as i64;
        for _ in 0..CLAIM_ATTEMPTS {
            let now = self.inner.now();
            let rows = query(&client, CLAIM, &[&key, &now, &in_progress, &ttl]).await?;
            let Some(row) = rows.first() else { continue };
            let record = IdempotencyRecord {
                result: col(row, 0)?,
                in_progress_until: col::<i64>(row, 1)? as u64,
                expires_at: col::<i64>(row, 2)? as u64,
                ttl_ms: col::<i64>(row, 3)? as u64,
            };
            if col(row, 4)? {
                return Ok(ClaimStatus::Claimed {
                    in_progress_until: record.in_progress_until,
                });
            }
            match IdempotencyRecord::claim(Some(&record), claim, now as u64) {
                // Free by now: it expired since the statement began.
                (ClaimStatus::Claimed { .. }, _) => continue,
                (status, _) => return Ok(status),
            }
        }
        Ok(ClaimStatus::InProgress {
            in_progress_until: self.inner.now() as u64 + claim.in_progress_ms,
        })
    }

    async fn complete_idempotency_key(
        &self,
        key: &str,
        result: String,
    ) -> Result<bool, EngineError> {
        let client = self.inner.client().await?;
        let now = self.inner.now();
        let done = execute(
            &client,
            "UPDATE sluice_idempotency
             SET result = $2, in_progress_until = $3, expires_at = $3 + ttl_ms
             WHERE key = $1 AND result IS NULL AND expires_at > $3",
            &[&key, &result, &now],
        )
        .await?;
        Ok(done == 1)
    }

    async fn release_idempotency_key(&self, key: &str) -> Result<bool, EngineError> {
        let client = self.inner.client().await?;
        let now = self.inner.now();
        let gone = execute(
            &client,
            "DELETE FROM sluice_idempotency WHERE key = $1 AND result IS NULL AND expires_at > $2",
            &[&key, &now],
        )
        .await?;
        Ok(gone == 1)
    }

    async fn idempotency_keys_completed(&self, keys: &[String]) -> Result<Vec<bool>, EngineError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.inner.client().await?;
        let now = self.inner.now();
        // One statement for a whole batch.
        let rows = query(
            &client,
            "SELECT key FROM sluice_idempotency
             WHERE key = ANY($1) AND result IS NOT NULL AND expires_at > $2",
            &[&keys, &now],
        )
        .await?;
        let completed: std::collections::HashSet<String> = rows
            .iter()
            .map(|row| col::<String>(row, 0))
            .collect::<Result<_, _>>()?;
        Ok(keys.iter().map(|k| completed.contains(k)).collect())
    }
}
