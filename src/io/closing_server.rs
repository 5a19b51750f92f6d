//! [`ClosingServer`]: fewer requests at once to a server that closes its connection after
//! every answer (native HTTP).
//!
//! A load asks for up to its log concurrency (512) of commits at once. An HTTP/1.1 server
//! keeps connections open, and the client's pool reuses them. A server that answers
//! `HTTP/1.0` without keep-alive, or sends `Connection: close`, takes a new connection for
//! every request, and the simplest of them keep a short listen queue: Python's
//! `http.server` (the server of many tutorials) queues 5. The kernel then drops the
//! connections past the queue, and each dropped one is tried again after 1 s, then 3 s, 7 s:
//! a 26-commit table opened in 2.5 s instead of 0.2 s, a 2,000-commit log in 127 s.
//!
//! So once a store's server answers that way, the store's later requests go
//! [`CLOSING_SERVER_REQUESTS`] at a time, each holding its place until its body is read
//! (the connection lives that long). The first requests, sent before any answer came, are
//! not held back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use http::header::CONNECTION;
use http::{HeaderMap, Version};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Requests at once to a server that closes every connection: below Python `http.server`'s
/// listen queue of 5, and below the 6 connections a browser opens to one host.
pub(crate) const CLOSING_SERVER_REQUESTS: usize = 4;

/// Whether a store's server closes its connections, and the places of its requests once it
/// does. Shared by every client of one store.
#[derive(Debug)]
pub(crate) struct ClosingServer {
    closes: AtomicBool,
    places: Arc<Semaphore>,
}

impl Default for ClosingServer {
    fn default() -> Self {
        ClosingServer {
            closes: AtomicBool::new(false),
            places: Arc::new(Semaphore::new(CLOSING_SERVER_REQUESTS)),
        }
    }
}

impl ClosingServer {
    /// A place for one request, held until its answer's body is dropped; `None` (no wait)
    /// while the server is not known to close its connections.
    pub(crate) async fn place(&self) -> Option<OwnedSemaphorePermit> {
        if !self.closes.load(Ordering::Relaxed) {
            return None;
        }
        // The semaphore is never closed: an error cannot happen, and would mean no limit.
        Arc::clone(&self.places).acquire_owned().await.ok()
    }

    /// Notes an answer: one of `HTTP/1.0` without keep-alive, or with `Connection: close`,
    /// limits the requests from now on.
    pub(crate) fn note_answer(&self, version: Version, headers: &HeaderMap) {
        if closes_connection(version, headers) {
            self.closes.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the server was seen to close its connections.
    #[cfg(test)]
    pub(crate) fn closes(&self) -> bool {
        self.closes.load(Ordering::Relaxed)
    }
}

/// Whether an answer ends its connection: `Connection: close`, or an answer older than
/// HTTP/1.1 without `Connection: keep-alive`.
fn closes_connection(version: Version, headers: &HeaderMap) -> bool {
    let says = |token: &str| {
        headers.get_all(CONNECTION).iter().any(|v| {
            v.to_str()
                .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        })
    };
    if says("close") {
        return true;
    }
    matches!(version, Version::HTTP_09 | Version::HTTP_10) && !says("keep-alive")
}

#[cfg(test)]
mod tests {
    use std::future::Future;

    use http::HeaderValue;

    use super::*;

    fn headers(connection: Option<&'static str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(c) = connection {
            h.insert(CONNECTION, HeaderValue::from_static(c));
        }
        h
    }

    #[test]
    fn answers_that_close_their_connection_are_told_apart() {
        assert!(closes_connection(Version::HTTP_10, &headers(None)));
        assert!(!closes_connection(
            Version::HTTP_10,
            &headers(Some("Keep-Alive"))
        ));
        assert!(closes_connection(Version::HTTP_11, &headers(Some("close"))));
        assert!(closes_connection(
            Version::HTTP_11,
            &headers(Some("upgrade, Close"))
        ));
        assert!(!closes_connection(Version::HTTP_11, &headers(None)));
        assert!(!closes_connection(
            Version::HTTP_11,
            &headers(Some("keep-alive"))
        ));
        assert!(!closes_connection(Version::HTTP_2, &headers(None)));
    }

    #[test]
    fn places_are_limited_once_the_server_closes_connections() {
        let server = ClosingServer::default();
        let free = futures::executor::block_on(server.place());
        assert!(free.is_none(), "no limit before any closing answer");
        server.note_answer(Version::HTTP_11, &headers(None));
        assert!(!server.closes());
        server.note_answer(Version::HTTP_10, &headers(None));
        assert!(server.closes());
        let held: Vec<_> = (0..CLOSING_SERVER_REQUESTS)
            .map(|_| futures::executor::block_on(server.place()))
            .collect();
        assert!(held.iter().all(Option::is_some));
        // All places taken: the next request waits until one is given back.
        let mut next = Box::pin(server.place());
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(next.as_mut().poll(&mut cx).is_pending());
        drop(held);
        assert!(matches!(
            next.as_mut().poll(&mut cx),
            std::task::Poll::Ready(Some(_))
        ));
    }
}
