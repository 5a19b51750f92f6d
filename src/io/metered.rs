//! [`MeteredStore`]: wraps a store and counts what goes through it.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use super::{BoxFuture, ListEntry, RangeRead, Store};
use crate::error::Result;

/// Counts of the requests made through a [`MeteredStore`].
#[derive(Debug, Default)]
pub struct IoCounters {
    requests: AtomicU64,
    list_requests: AtomicU64,
    get_requests: AtomicU64,
    range_requests: AtomicU64,
    bytes_requested: AtomicU64,
    bytes_received: AtomicU64,
    not_found: AtomicU64,
}

/// A point-in-time copy of [`IoCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IoSnapshot {
    /// All requests (lists, whole gets, ranged gets, size queries).
    pub requests: u64,
    /// Listing requests.
    pub list_requests: u64,
    /// Whole-object gets.
    pub get_requests: u64,
    /// Ranged gets.
    pub range_requests: u64,
    /// Bytes asked for by ranged gets (whole gets ask for what they receive).
    pub bytes_requested: u64,
    /// Bytes received.
    pub bytes_received: u64,
    /// Requests answered "not found".
    pub not_found: u64,
}

impl IoCounters {
    /// A copy of the counts now.
    pub fn snapshot(&self) -> IoSnapshot {
        IoSnapshot {
            requests: self.requests.load(Ordering::Relaxed),
            list_requests: self.list_requests.load(Ordering::Relaxed),
            get_requests: self.get_requests.load(Ordering::Relaxed),
            range_requests: self.range_requests.load(Ordering::Relaxed),
            bytes_requested: self.bytes_requested.load(Ordering::Relaxed),
            bytes_received: self.bytes_received.load(Ordering::Relaxed),
            not_found: self.not_found.load(Ordering::Relaxed),
        }
    }

    fn record<T>(&self, result: &Result<T>, received: u64) {
        match result {
            Ok(_) => {
                self.bytes_received.fetch_add(received, Ordering::Relaxed);
            }
            Err(e) if e.code() == "not_found" => {
                self.not_found.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {}
        }
    }
}

/// A store that counts every request it forwards.
#[derive(Debug, Clone)]
pub struct MeteredStore {
    inner: Store,
    counters: Arc<IoCounters>,
}

impl MeteredStore {
    /// Wraps `inner`.
    pub fn new(inner: Store) -> Self {
        MeteredStore {
            inner,
            counters: Arc::new(IoCounters::default()),
        }
    }

    /// Wraps `inner`, counting into `counters` (shared with another metered store).
    pub fn with_counters(inner: Store, counters: Arc<IoCounters>) -> Self {
        MeteredStore { inner, counters }
    }

    /// The live counters, shared with every clone of this store.
    pub fn counters(&self) -> Arc<IoCounters> {
        Arc::clone(&self.counters)
    }
}

impl RangeRead for MeteredStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        let c = &self.counters;
        c.requests.fetch_add(1, Ordering::Relaxed);
        c.range_requests.fetch_add(1, Ordering::Relaxed);
        c.bytes_requested
            .fetch_add(range.end.saturating_sub(range.start), Ordering::Relaxed);
        let fut = self.inner.get_range(path, range);
        Box::pin(async move {
            let r = fut.await;
            let n = r.as_ref().map(|b| b.len() as u64).unwrap_or(0);
            c.record(&r, n);
            r
        })
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        let c = &self.counters;
        c.requests.fetch_add(1, Ordering::Relaxed);
        c.get_requests.fetch_add(1, Ordering::Relaxed);
        let fut = self.inner.get(path);
        Box::pin(async move {
            let r = fut.await;
            let n = r.as_ref().map(|b| b.len() as u64).unwrap_or(0);
            if r.is_ok() {
                c.bytes_requested.fetch_add(n, Ordering::Relaxed);
            }
            c.record(&r, n);
            r
        })
    }

    fn can_list(&self) -> bool {
        self.inner.can_list()
    }

    fn reads_local_files(&self) -> bool {
        self.inner.reads_local_files()
    }

    fn read_ahead_gap(&self) -> u64 {
        self.inner.read_ahead_gap()
    }

    fn missing_log_answers(&self) -> (u64, u64) {
        self.inner.missing_log_answers()
    }

    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let fut = self.inner.size(path);
        let c = &self.counters;
        Box::pin(async move {
            let r = fut.await;
            c.record(&r, 0);
            r
        })
    }

    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<ListEntry>>>> {
        let c = &self.counters;
        c.requests.fetch_add(1, Ordering::Relaxed);
        c.list_requests.fetch_add(1, Ordering::Relaxed);
        let fut = self.inner.list(prefix, start_after);
        Box::pin(async move {
            let r = fut.await;
            c.record(&r, 0);
            r
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemoryStore;
    use futures::executor::block_on;

    #[test]
    fn forwards_what_the_store_can_do() {
        let inner: Store = Arc::new(crate::io::unusual::UnusualStore(MemoryStore::new()));
        let wrapper: Store = Arc::new(MeteredStore::new(inner));
        crate::io::unusual::assert_forwards_capabilities(&wrapper);
    }

    #[test]
    fn counts_requests_and_bytes() {
        let mem = MemoryStore::new();
        mem.put("f", "0123456789");
        let store = MeteredStore::new(Arc::new(mem));
        let _ = block_on(store.get_range("f", 2..6));
        let _ = block_on(store.get("f"));
        let _ = block_on(store.get("missing"));
        let _ = block_on(store.list("", None));
        let s = store.counters().snapshot();
        assert_eq!(s.requests, 4);
        assert_eq!(s.range_requests, 1);
        assert_eq!(s.get_requests, 2);
        assert_eq!(s.list_requests, 1);
        assert_eq!(s.bytes_requested, 14);
        assert_eq!(s.bytes_received, 14);
        assert_eq!(s.not_found, 1);
    }
}
