//! How far a scan has read its data files, in bytes: [`FileCredit`] credits one file's bytes
//! to the scan's [`DeltaScanMetrics`] as they arrive, and [`CreditingStore`] is the store a
//! file task reads through so that every byte it receives is seen.
//!
//! A file task counts its bytes received (footer, pages, its deletion vector), at most its
//! share: the file's size, or its byte range's length when the file is read in ranges; when
//! its stream ends, whatever is left of its share is credited, because a projection or
//! pruned row groups leave bytes that will never be read. So the scan's
//! [`DeltaScanMetrics::file_bytes_done`] grows steadily while files are read and equals the
//! total size of the files once every file is read, however they were cut.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use crate::error::Result;
use crate::io::{BoxFuture, RangeRead, Store};
use crate::read::metrics::DeltaScanMetrics;

/// The bytes of one data file credited to its scan so far.
#[derive(Debug)]
pub(crate) struct FileCredit {
    size: u64,
    credited: AtomicU64,
    metrics: Arc<DeltaScanMetrics>,
}

impl FileCredit {
    /// The credit of a file of `size` bytes, counting into `metrics`.
    pub(crate) fn new(size: u64, metrics: Arc<DeltaScanMetrics>) -> Arc<Self> {
        Arc::new(FileCredit {
            size,
            credited: AtomicU64::new(0),
            metrics,
        })
    }

    /// `bytes` more received, credited up to the file's size.
    fn received(&self, bytes: u64) {
        let mut granted = 0;
        let _ = self
            .credited
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |done| {
                granted = bytes.min(self.size.saturating_sub(done));
                Some(done + granted)
            });
        self.metrics.file_bytes_read(granted);
    }

    /// The file was read to its end: the rest of its size is credited.
    pub(crate) fn complete(&self) {
        self.received(self.size);
    }
}

/// Forwards to `inner` and credits every byte received to one file's [`FileCredit`].
#[derive(Debug)]
pub(crate) struct CreditingStore {
    inner: Store,
    credit: Arc<FileCredit>,
}

impl CreditingStore {
    pub(crate) fn new(inner: Store, credit: Arc<FileCredit>) -> Self {
        CreditingStore { inner, credit }
    }

    fn credited<'a>(&'a self, fut: BoxFuture<'a, Result<Bytes>>) -> BoxFuture<'a, Result<Bytes>> {
        Box::pin(async move {
            let result = fut.await;
            if let Ok(bytes) = &result {
                self.credit.received(bytes.len() as u64);
            }
            result
        })
    }
}

impl RangeRead for CreditingStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        self.credited(self.inner.get_range(path, range))
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        self.credited(self.inner.get(path))
    }

    crate::io::forward_to_inner!(inner);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{IoCounters, MemoryStore};

    #[test]
    fn forwards_what_the_store_can_do() {
        let inner: Store = Arc::new(crate::io::unusual::UnusualStore(MemoryStore::new()));
        let metrics = Arc::new(DeltaScanMetrics::new(Arc::new(IoCounters::default())));
        let wrapper: Store = Arc::new(CreditingStore::new(inner, FileCredit::new(1, metrics)));
        crate::io::unusual::assert_forwards_capabilities(&wrapper);
    }

    #[test]
    fn bytes_are_credited_up_to_the_size_then_completed() {
        let metrics = Arc::new(DeltaScanMetrics::new(Arc::new(IoCounters::default())));
        let memory = MemoryStore::new();
        memory.put("a.parquet", Bytes::from(vec![7u8; 100]));
        let credit = FileCredit::new(60, Arc::clone(&metrics));
        let store = CreditingStore::new(Arc::new(memory), Arc::clone(&credit));
        let got = futures::executor::block_on(store.get_range("a.parquet", 0..40));
        assert_eq!(got.map(|b| b.len()).ok(), Some(40));
        assert_eq!(metrics.file_bytes_done(), 40);
        // More than the file's size is never credited.
        let _ = futures::executor::block_on(store.get_range("a.parquet", 40..100));
        assert_eq!(metrics.file_bytes_done(), 60);
        credit.complete();
        assert_eq!(metrics.file_bytes_done(), 60);
        let other = FileCredit::new(30, Arc::clone(&metrics));
        other.complete();
        assert_eq!(metrics.file_bytes_done(), 90);
    }
}
