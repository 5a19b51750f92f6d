//! Log files a lazy load fetched whole, kept for the table's later replays.
//!
//! A lazily loaded table replays its log segment at each scan build. The load has already
//! fetched the commits and any small checkpoint whole, so a remote table paid the load's
//! round trips again at its first scan: the benchmark's table over HTTP at 50 ms a request
//! fetched its 21 KB checkpoint twice, one round trip more before the first data byte. The
//! load now keeps each log file it fetched whole, up to [`KEPT_LOG_BYTES`] in all, and the
//! replays are answered from them. Log files are immutable once written, so a kept copy is
//! the file; `_last_checkpoint`, which is rewritten, is never kept (a replay does not read
//! it). Ranged reads (the column chunks of a large Parquet checkpoint) are not kept.
//!
//! A lazily loaded table's store is a [`KeepingStore`] over the table's own. Native only:
//! the npm package loads its tables eagerly (nothing is replayed), and the wasm is within a
//! few hundred bytes of its size budget.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use crate::error::Result;
use crate::io::{BoxFuture, RangeRead, Store};

/// The most bytes of whole log files one lazily loaded table keeps.
pub const KEPT_LOG_BYTES: u64 = 4 << 20;

/// Whole log files kept, by path, and their total size.
#[derive(Debug, Default)]
pub(crate) struct KeptLog {
    files: Mutex<(HashMap<String, Bytes>, u64)>,
}

impl KeptLog {
    fn get(&self, path: &str) -> Option<Bytes> {
        let files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        files.0.get(path).cloned()
    }

    /// Keeps `data` as `path` while the total stays within [`KEPT_LOG_BYTES`].
    fn keep(&self, path: &str, data: &Bytes) {
        if !path.contains("_delta_log/") || path.ends_with("_last_checkpoint") {
            return;
        }
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        let (map, total) = &mut *files;
        let size = data.len() as u64;
        if map.contains_key(path) || *total + size > KEPT_LOG_BYTES {
            return;
        }
        *total += size;
        map.insert(path.to_string(), data.clone());
    }

    /// The total size of the files kept.
    #[cfg(test)]
    fn bytes(&self) -> u64 {
        self.files.lock().unwrap_or_else(PoisonError::into_inner).1
    }
}

/// A lazy table's store: `inner` with the log files kept in `kept`.
pub(crate) fn keeping(inner: &Store, kept: &Arc<KeptLog>) -> Store {
    Arc::new(KeepingStore::new(Arc::clone(inner), Arc::clone(kept)))
}

/// The table's store with its kept log files: a whole-file read of a kept file is answered
/// from memory, and any other whole-file read of a log file that succeeds is kept (within
/// the bound). Data files (a small one is read whole) pass through.
#[derive(Debug)]
pub(crate) struct KeepingStore {
    inner: Store,
    kept: Arc<KeptLog>,
}

impl KeepingStore {
    pub(crate) fn new(inner: Store, kept: Arc<KeptLog>) -> Self {
        KeepingStore { inner, kept }
    }
}

impl RangeRead for KeepingStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        self.inner.get_range(path, range)
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        if let Some(data) = self.kept.get(path) {
            return Box::pin(async move { Ok(data) });
        }
        let path = path.to_string();
        Box::pin(async move {
            let data = self.inner.get(&path).await?;
            self.kept.keep(&path, &data);
            Ok(data)
        })
    }

    crate::io::forward_to_inner!(inner);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{MemoryStore, MeteredStore};
    use futures::executor::block_on;

    #[test]
    fn whole_files_are_kept_once_within_the_bound_and_served_from_memory() {
        let mem = MemoryStore::new();
        mem.put("_delta_log/00000000000000000000.json", "commit");
        mem.put("_delta_log/_last_checkpoint", "{}");
        mem.put("part-0.parquet", "PAR1");
        mem.put(
            "_delta_log/big.checkpoint.parquet",
            vec![0u8; KEPT_LOG_BYTES as usize],
        );
        let metered = MeteredStore::new(Arc::new(mem));
        let counters = metered.counters();
        let kept = Arc::new(KeptLog::default());
        let store = KeepingStore::new(Arc::new(metered), Arc::clone(&kept));
        let commit = "_delta_log/00000000000000000000.json";
        for _ in 0..3 {
            let got = block_on(store.get(commit)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&got[..], b"commit");
        }
        assert_eq!(
            counters.snapshot().requests,
            1,
            "the commit is fetched once"
        );
        // `_last_checkpoint` is rewritten by writers: never kept.
        for _ in 0..2 {
            let _ = block_on(store.get("_delta_log/_last_checkpoint"));
        }
        assert_eq!(counters.snapshot().requests, 3);
        // A file that would pass the bound is read every time, and not kept.
        for _ in 0..2 {
            let got = block_on(store.get("_delta_log/big.checkpoint.parquet"));
            assert_eq!(got.map(|b| b.len()).ok(), Some(KEPT_LOG_BYTES as usize));
        }
        assert_eq!(counters.snapshot().requests, 5);
        assert_eq!(kept.bytes(), 6);
        // Data files are never kept.
        for _ in 0..2 {
            let got = block_on(store.get("part-0.parquet"));
            assert_eq!(got.map(|b| b.len()).ok(), Some(4));
        }
        assert_eq!(counters.snapshot().requests, 7);
        // Missing files are errors every time, ranges are never kept.
        assert!(block_on(store.get("_delta_log/missing.json")).is_err());
        let _ = block_on(store.get_range(commit, 0..3));
        let _ = block_on(store.get_range(commit, 0..3));
        assert_eq!(counters.snapshot().requests, 10);
    }

    #[test]
    fn forwards_what_the_store_can_do() {
        let inner: Store = Arc::new(crate::io::unusual::UnusualStore(MemoryStore::new()));
        let wrapper: Store = Arc::new(KeepingStore::new(inner, Arc::default()));
        crate::io::unusual::assert_forwards_capabilities(&wrapper);
    }
}
