//! What one connection may cost: how long it may take to send a request's
//! headers, how long it may sit idle between requests, how many connections
//! are served at once, and the listening socket's backlog.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpSocket};

/// The limits that keep slow, silent or too many clients from holding the
/// server's connections and file descriptors (docs/reliability.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Longest time from a request's first byte (or the connection's
    /// opening) to the end of its headers.
    pub header_timeout: Duration,
    /// Longest time to receive a request's whole body.
    pub body_timeout: Duration,
    /// Longest time a connection may wait between requests.
    pub idle_timeout: Duration,
    /// Most connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
}

impl ConnectionLimits {
    /// Default header timeout.
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default body timeout.
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default idle keep-alive timeout.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
    /// Default connection limit: well under the usual 1,024 open files,
    /// leaving room for the store's files, the log and PostgreSQL.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 900;
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// The listen backlog: connections over the limit wait here (the usual
/// default of 128 refuses or drops a burst of new clients).
pub const LISTEN_BACKLOG: u32 = 1024;

/// Listens on `addr` with a backlog of [`LISTEN_BACKLOG`].
pub fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As TcpListener::bind does: a restart may bind while old sockets linger.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Why a connection was closed by its watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// A request's headers did not arrive in time.
    Headers,
    /// No request came in time.
    Idle,
}

/// What a connection is doing, as its watch sees it: requests in progress,
/// whether bytes of a next request have arrived, and since when.
#[derive(Debug)]
pub struct Activity {
    opened: Instant,
    in_progress: AtomicUsize,
    /// Milliseconds since `opened` of the last request's end, or of the
    /// first byte of the request being received.
    since_ms: AtomicU64,
    /// Whether a request's headers are being received (true at first: an
    /// opened connection owes its first request's headers).
    receiving: AtomicBool,
}

impl Activity {
    /// A connection opened now.
    pub fn new() -> Self {
        Self {
            opened: Instant::now(),
            in_progress: AtomicUsize::new(0),
            since_ms: AtomicU64::new(0),
            receiving: AtomicBool::new(true),
        }
    }

    fn now_ms(&self) -> u64 {
        self.opened.elapsed().as_millis() as u64
    }

    /// A request's headers were read: it is in progress until it ends.
    pub fn request_started(&self) {
        self.in_progress.fetch_add(1, Ordering::Relaxed);
        self.receiving.store(false, Ordering::Relaxed);
    }

    /// A request was answered: the connection is idle from now.
    pub fn request_ended(&self) {
        self.since_ms.store(self.now_ms(), Ordering::Relaxed);
        self.in_progress.fetch_sub(1, Ordering::Relaxed);
    }

    fn bytes_arrived(&self) {
        if self.in_progress.load(Ordering::Relaxed) == 0 && !self.receiving.load(Ordering::Relaxed)
        {
            self.since_ms.store(self.now_ms(), Ordering::Relaxed);
            self.receiving.store(true, Ordering::Relaxed);
        }
    }

    /// Resolves when the connection is to be closed: a request's headers
    /// took longer than `header`, or no request came for `idle`. A request
    /// in progress (a long poll) is never idle.
    pub async fn expired(&self, header: Duration, idle: Duration) -> Expiry {
        let header_ms = header.as_millis() as u64;
        let idle_ms = idle.as_millis() as u64;
        // While a request is in progress the watch only looks again later:
        // the end of a request then closes an idle connection up to this
        // much late.
        let recheck_ms = header_ms.min(idle_ms).max(1);
        loop {
            let now = self.now_ms();
            let wait_ms = if self.in_progress.load(Ordering::Relaxed) > 0 {
                recheck_ms
            } else {
                let receiving = self.receiving.load(Ordering::Relaxed);
                let limit = if receiving { header_ms } else { idle_ms };
                let deadline = self.since_ms.load(Ordering::Relaxed) + limit;
                if now >= deadline {
                    return if receiving {
                        Expiry::Headers
                    } else {
                        Expiry::Idle
                    };
                }
                deadline - now
            };
            tokio::time::sleep(Duration::from_millis(wait_ms)).await;
        }
    }
}

impl Default for Activity {
    fn default() -> Self {
        Self::new()
    }
}

/// A connection's byte stream, telling its [`Activity`] when bytes of a
/// new request arrive.
pub struct WatchedIo<T> {
    inner: T,
    activity: Arc<Activity>,
}

impl<T> WatchedIo<T> {
    /// Watches `inner` for `activity`.
    pub fn new(inner: T, activity: Arc<Activity>) -> Self {
        Self { inner, activity }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WatchedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.bytes_arrived();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WatchedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Logs that the connection limit is reached, at most once a minute.
#[derive(Debug, Default)]
pub struct LimitLog {
    last: Option<Instant>,
    waited: u64,
}

impl LimitLog {
    const EVERY: Duration = Duration::from_secs(60);

    /// Notes that a new connection waits for a free slot.
    pub fn reached(&mut self, max_connections: usize) {
        self.waited += 1;
        if self.last.is_none_or(|t| t.elapsed() >= Self::EVERY) {
            tracing::warn!(
                max_connections,
                waits_since_last_warning = self.waited,
                "connection limit reached: new connections wait in the listen backlog"
            );
            self.last = Some(Instant::now());
            self.waited = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection with a request in progress never expires; once it
    /// ends, the idle limit applies; a new connection owes its headers.
    #[tokio::test]
    async fn expiry_follows_the_connection_state() {
        let a = Activity::new();
        let header = Duration::from_millis(50);
        let idle = Duration::from_millis(300);
        assert_eq!(a.expired(header, idle).await, Expiry::Headers);
        a.request_started();
        let long_poll = tokio::time::timeout(Duration::from_millis(600), a.expired(header, idle));
        assert!(
            long_poll.await.is_err(),
            "a request in progress is not idle"
        );
        a.request_ended();
        let started = Instant::now();
        assert_eq!(a.expired(header, idle).await, Expiry::Idle);
        assert!(started.elapsed() >= idle);
        let mut log = LimitLog::default();
        log.reached(5);
        log.reached(5);
        assert_eq!(
            log.waited, 1,
            "the second wait within a minute is counted, not logged"
        );
    }
}
