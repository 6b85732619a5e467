//! Expired messages held for the archive in this engine (rule X8): the
//! statement that expires a message of a queue that keeps what expires
//! moves it to `sluice_expired` (`engine::expire`, the sweep), where it is
//! out of its queue and every count; it is deleted from there once the
//! archive holds it. Every node may read them; the server archives on one
//! node at a time.

use sluice_broker::{EngineError, ExpiredMessage, ExpiredMessages};

use crate::encryption::message_rows;
use crate::engine::{PostgresBroker, execute, query};
use crate::rows::{MESSAGE_COLUMNS, col};

impl ExpiredMessages for PostgresBroker {
    async fn expired_messages(
        &self,
        max: usize,
        skip: &[String],
    ) -> Result<Vec<ExpiredMessage>, EngineError> {
        let inner = &self.inner;
        let now = inner.now();
        let client = inner.client().await?;
        let queues = query(
            &client,
            "SELECT q.id, q.name, (q.config->>'fifo')::boolean FROM sluice_queues q
             WHERE EXISTS (SELECT 1 FROM sluice_expired e WHERE e.queue_id = q.id)
               AND NOT q.name = ANY($1)
             ORDER BY q.id",
            &[&skip],
        )
        .await?;
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM sluice_expired WHERE queue_id = $1
             ORDER BY seq LIMIT $2"
        );
        let mut out = Vec::new();
        for row in &queues {
            let left = max.saturating_sub(out.len());
            if left == 0 {
                break;
            }
            let id: i64 = col(row, 0)?;
            let name: String = col(row, 1)?;
            let fifo: bool = col(row, 2)?;
            let limit = left as i64;
            for m in message_rows(&inner.data_keys, &client, &sql, &[&id, &limit]).await? {
                out.push(ExpiredMessage::new(name.clone(), m.peeked(now, fifo)));
            }
        }
        Ok(out)
    }

    async fn forget_archived(&self, queue: &str, positions: &[u64]) -> Result<(), EngineError> {
        let client = self.inner.client().await?;
        let seqs: Vec<i64> = positions.iter().map(|&p| p as i64).collect();
        execute(
            &client,
            "DELETE FROM sluice_expired e USING sluice_queues q
             WHERE q.name = $1 AND e.queue_id = q.id AND e.seq = ANY($2)",
            &[&queue, &seqs],
        )
        .await?;
        Ok(())
    }
}
