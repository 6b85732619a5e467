//! Message data for an answer: the cached bodies, the rest read from the
//! store once the journal's applier holds them.

use std::sync::Arc;

use sluice_broker::EngineError;

use crate::engine::Inner;
use crate::message::MessageData;
use crate::store::StoreError;

impl Inner {
    /// The data of messages of queue `queue`: the bodies given are used,
    /// the others are read from the store in one read transaction. `None`
    /// where a message is no longer stored (deleted meanwhile).
    ///
    /// Call it after the changes that inserted the messages are
    /// acknowledged (after waiting on a later ticket), or accept `None` for
    /// messages whose insert is still on its way to disk. It waits for redb
    /// to hold every acknowledged change before it reads.
    pub(crate) async fn load_bodies(
        &self,
        queue: u64,
        wanted: Vec<(u64, Option<Arc<MessageData>>)>,
    ) -> Result<Vec<Option<Arc<MessageData>>>, EngineError> {
        let missing: Vec<u64> = wanted
            .iter()
            .filter(|(_, body)| body.is_none())
            .map(|&(seq, _)| seq)
            .collect();
        let store = if missing.is_empty() {
            None
        } else {
            self.journal.store()?
        };
        let read = match (store, missing.is_empty()) {
            (Some(store), false) => {
                let failed = |e: StoreError| {
                    tracing::error!(error = %e, "reading message bodies failed");
                    EngineError::Storage("The storage could not be read.".into())
                };
                // A message's data never changes once stored, so what redb
                // has already is right; only a message it lacks may be an
                // acknowledged send the applier has not reached. A backlog's
                // old messages are all found at once, without that wait.
                let mut read = store.read_messages(queue, &missing).map_err(failed)?;
                let absent: Vec<u64> = missing
                    .iter()
                    .zip(&read)
                    .filter(|(_, data)| data.is_none())
                    .map(|(&seq, _)| seq)
                    .collect();
                if !absent.is_empty() {
                    self.journal.readable().wait().await?;
                    let mut again = store
                        .read_messages(queue, &absent)
                        .map_err(failed)?
                        .into_iter();
                    for data in read.iter_mut().filter(|d| d.is_none()) {
                        *data = again.next().flatten();
                    }
                }
                read
            }
            _ => Vec::new(),
        };
        let mut read = read.into_iter();
        Ok(wanted
            .into_iter()
            .map(|(_, body)| body.or_else(|| read.next().flatten().map(Arc::new)))
            .collect())
    }
}
