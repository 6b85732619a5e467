//! PeekMessages: reading a queue's messages without receiving them (rule
//! X1), filtered as a selective redrive filters them (rule X3).

use crate::encryption::message_rows;
use sluice_broker::{EngineError, MessageFilter, PeekPage};

use crate::engine::{PostgresBroker, expire, queue_row};
use crate::error;
use crate::rows;

pub(crate) async fn peek_messages(
    b: &PostgresBroker,
    name: &str,
    filter: &MessageFilter,
    after: Option<u64>,
    limit: usize,
) -> Result<PeekPage, EngineError> {
    let inner = &b.inner;
    let now = inner.now();
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let q = queue_row(&tx, name, "").await?;
    expire(inner, &tx, &q, now).await?;
    let mut page = PeekPage::default();
    let mut from = after.unwrap_or(0).min(i64::MAX as u64) as i64;
    const CHUNK: i64 = 500;
    let sql = format!(
        "SELECT {} FROM sluice_messages WHERE queue_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        rows::MESSAGE_COLUMNS
    );
    'pages: loop {
        let chunk = message_rows(&b.inner.data_keys, &tx, &sql, &[&q.id, &from, &CHUNK]).await?;
        let done = (chunk.len() as i64) < CHUNK;
        for m in chunk {
            from = m.seq;
            if page.messages.len() == limit {
                page.next = page.messages.last().map(|m| m.position);
                break 'pages;
            }
            let peeked = m.peeked(now, q.config.fifo);
            if filter.matches(&peeked) {
                page.messages.push(peeked);
            }
        }
        if done {
            break;
        }
    }
    tx.commit().await.map_err(error::db)?;
    Ok(page)
}
