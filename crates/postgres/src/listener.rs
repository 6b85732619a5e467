//! One LISTEN connection per node: a send through any node wakes the long
//! polls waiting on this one (rule V6) without polling the database.
//! The connection is re-opened when lost; every waiter is woken then, as
//! notifications may have been missed meanwhile. A database that refuses
//! LISTEN (some Postgres-wire engines) gets a short poll instead: every
//! waiter re-checks its queue every [`POLL_FALLBACK`].

use std::sync::Weak;
use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::error::SqlState;
use tokio_postgres::{AsyncMessage, NoTls};

use crate::engine::Inner;

/// The channel sends announce on; the payload is the queue name.
pub(crate) const CHANNEL: &str = "sluice_arrivals";

/// How often waiters re-check when the database does not support LISTEN.
pub(crate) const POLL_FALLBACK: Duration = Duration::from_millis(250);

/// Starts listening; the task ends when the engine is dropped.
pub(crate) fn spawn(
    config: tokio_postgres::Config,
    inner: Weak<Inner>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut failures = 0u32;
        loop {
            match listen(&config, &inner).await {
                Ok(()) => return,
                Err(Lost::Unsupported(e)) => {
                    tracing::warn!(error = %e, "LISTEN is not supported by this database; long polls re-check every 250 ms");
                    return poll_instead(&inner).await;
                }
                Err(Lost::Connection(e)) => {
                    failures += 1;
                    if failures == 1 || failures.is_multiple_of(30) {
                        tracing::warn!(error = %e, "notification listener lost its connection; reconnecting");
                    }
                }
            }
            if inner.strong_count() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
}

/// Why listening stopped.
enum Lost {
    /// The connection failed or could not be made: try again.
    Connection(tokio_postgres::Error),
    /// The database refused LISTEN itself.
    Unsupported(tokio_postgres::Error),
}

impl From<tokio_postgres::Error> for Lost {
    fn from(e: tokio_postgres::Error) -> Self {
        Lost::Connection(e)
    }
}

/// Listens until the connection fails (`Err`) or the engine is gone (`Ok`).
async fn listen(config: &tokio_postgres::Config, inner: &Weak<Inner>) -> Result<(), Lost> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if tx.send(Some(n.payload().to_string())).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "listener connection ended");
                    break;
                }
            }
        }
        let _ = tx.send(None);
    });
    let listened = client.batch_execute(&format!("LISTEN {CHANNEL}")).await;
    if let Err(e) = listened {
        driver.abort();
        let refused = e.code().is_some_and(|c| {
            [
                SqlState::FEATURE_NOT_SUPPORTED,
                SqlState::SYNTAX_ERROR,
                SqlState::UNDEFINED_FUNCTION,
            ]
            .contains(c)
        });
        return Err(if refused {
            Lost::Unsupported(e)
        } else {
            Lost::Connection(e)
        });
    }
    // Sends made while no listener was connected were not heard.
    match inner.upgrade() {
        Some(inner) => inner.wake_all(),
        None => return Ok(()),
    }
    while let Some(Some(queue)) = rx.recv().await {
        match inner.upgrade() {
            Some(inner) => inner.wake(&queue),
            None => {
                driver.abort();
                return Ok(());
            }
        }
    }
    driver.abort();
    // The connection ended: report it as a failure to reconnect.
    client.batch_execute("SELECT 1").await?;
    Ok(())
}

/// Wakes every waiter regularly, for databases without LISTEN.
async fn poll_instead(inner: &Weak<Inner>) {
    let mut ticks = tokio::time::interval(POLL_FALLBACK);
    loop {
        ticks.tick().await;
        match inner.upgrade() {
            Some(inner) => inner.wake_all(),
            None => return,
        }
    }
}
