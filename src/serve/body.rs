//! The response body as hyper sends it: counted into [`ServeStats`], cut short when the
//! `truncate_body` fault asks for it, and sent in slow pieces for `slow_body`.
//!
//! A cut body yields the bytes allowed, pauses briefly so that hyper flushes them to the
//! socket, then fails: hyper drops the connection with the `Content-Length` unmet, which is
//! what a client sees when a server dies mid-body. A slow body hands hyper one piece at a
//! time and sleeps before each further piece.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::Sleep;

use super::faults::SlowBody;
use super::stats::ServeStats;

/// A response body before metering: a file or a short text.
pub(crate) type Inner = UnsyncBoxBody<Bytes, io::Error>;

/// How long a cut body waits, after its last bytes, before it fails. Long enough for hyper
/// to write a few kilobytes to a loopback socket.
const FLUSH_PAUSE: Duration = Duration::from_millis(20);

/// A body that counts the bytes it hands to hyper, optionally cut after a number of bytes
/// or sent slowly.
pub(crate) struct Metered {
    inner: Inner,
    stats: ServeStats,
    /// Bytes still allowed when the body is to be cut.
    left: Option<u64>,
    /// Set once cut: the pause before failing.
    cut: Option<Pin<Box<Sleep>>>,
    /// The pace of a slow body.
    slow: Option<SlowBody>,
    /// Bytes of a slow body not yet handed out.
    pending: Bytes,
    /// The pause before the next piece of a slow body.
    pause: Option<Pin<Box<Sleep>>>,
}

impl Metered {
    pub(crate) fn new(
        inner: Inner,
        stats: ServeStats,
        truncate: Option<u64>,
        slow: Option<SlowBody>,
    ) -> Self {
        Metered {
            inner,
            stats,
            left: truncate,
            cut: None,
            slow,
            pending: Bytes::new(),
            pause: None,
        }
    }

    /// The next piece of a slow body's pending bytes, after its pause.
    fn poll_piece(&mut self, cx: &mut Context<'_>, slow: SlowBody) -> Poll<Bytes> {
        if let Some(pause) = &mut self.pause {
            ready!(pause.as_mut().poll(cx));
        }
        let piece = self
            .pending
            .split_to(slow.chunk.max(1).min(self.pending.len()));
        self.pause = Some(Box::pin(tokio::time::sleep(slow.pause)));
        Poll::Ready(piece)
    }
}

impl Body for Metered {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = &mut *self;
        if let (Some(slow), false) = (this.slow, this.pending.is_empty()) {
            let piece = ready!(this.poll_piece(cx, slow));
            return Poll::Ready(Some(Ok(Frame::data(piece))));
        }
        if let Some(pause) = &mut this.cut {
            ready!(pause.as_mut().poll(cx));
            let err = io::Error::other("response body cut short (injected fault)");
            return Poll::Ready(Some(Err(err)));
        }
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => frame,
            other => return Poll::Ready(other),
        };
        let mut data = match frame.into_data() {
            Ok(data) => data,
            Err(frame) => return Poll::Ready(Some(Ok(frame))),
        };
        if let Some(left) = &mut this.left {
            let len = data.len() as u64;
            if len > *left {
                data.truncate(usize::try_from(*left).unwrap_or(usize::MAX));
                this.cut = Some(Box::pin(tokio::time::sleep(FLUSH_PAUSE)));
            }
            *left = left.saturating_sub(len);
        }
        this.stats.add_bytes(data.len() as u64);
        if let Some(slow) = this.slow {
            this.pending = data;
            let piece = ready!(this.poll_piece(cx, slow));
            return Poll::Ready(Some(Ok(Frame::data(piece))));
        }
        Poll::Ready(Some(Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.cut.is_none() && self.pending.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let mut hint = self.inner.size_hint();
        let pending = self.pending.len() as u64;
        hint.set_lower(hint.lower() + pending);
        if let Some(upper) = hint.upper() {
            hint.set_upper(upper + pending);
        }
        hint
    }
}
