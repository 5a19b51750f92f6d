//! A connection's stream with a record of when it last moved a byte, and the watchdog that
//! closes a connection once it has moved none for the idle timeout.
//!
//! hyper times out a slow request head but has no timeout while it writes: a client that
//! asks for a large file and never reads it would hold its connection (and its task) for
//! good. The watchdog covers that and every other stall with one rule, bytes moved in
//! either direction.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

/// When a connection last moved a byte, in milliseconds since it was accepted.
#[derive(Debug, Clone)]
pub(crate) struct LastProgress {
    start: Instant,
    at_ms: Arc<AtomicU64>,
    /// Requests the server itself holds back (the added latency): not the client's idling.
    held: Arc<AtomicU64>,
}

/// A request held by the server; the connection counts as moving until it is dropped.
pub(crate) struct Held(LastProgress);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.held.fetch_sub(1, Ordering::Relaxed);
        self.0.mark();
    }
}

impl LastProgress {
    pub(crate) fn new() -> Self {
        LastProgress {
            start: Instant::now(),
            at_ms: Arc::new(AtomicU64::new(0)),
            held: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Marks the connection busy while the server delays an answer on purpose, so that a
    /// latency longer than the idle timeout does not close it.
    pub(crate) fn hold(&self) -> Held {
        self.held.fetch_add(1, Ordering::Relaxed);
        Held(self.clone())
    }

    fn mark(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.at_ms.store(ms, Ordering::Relaxed);
    }

    /// How long since the last byte moved.
    fn quiet_for(&self) -> Duration {
        let at = Duration::from_millis(self.at_ms.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(at)
    }

    /// Returns once no byte has moved for `idle`.
    pub(crate) async fn stalled(&self, idle: Duration) {
        let tick = (idle / 4).max(Duration::from_millis(5));
        loop {
            if self.held.load(Ordering::Relaxed) > 0 {
                tokio::time::sleep(tick).await;
                continue;
            }
            let quiet = self.quiet_for();
            if quiet >= idle {
                return;
            }
            tokio::time::sleep((idle - quiet).min(tick)).await;
        }
    }
}

/// A stream that marks [`LastProgress`] whenever a read or write moves bytes.
pub(crate) struct Watched<S> {
    inner: S,
    progress: LastProgress,
}

impl<S> Watched<S> {
    pub(crate) fn new(inner: S, progress: LastProgress) -> Self {
        Watched { inner, progress }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.progress.mark();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.progress.mark();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.progress.mark();
        }
        polled
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
