//! [`KeptBytesStore`]: a store for one data file whose bytes, once fetched, serve the file's
//! later ranges (other paths, such as deletion vectors, pass through).
//!
//! - **Whole** (a file under `parquet_full_file_read_threshold_bytes`): the first read
//!   fetches the whole object once, as the range of the size the log gives (`0..size`, so a
//!   store that answers more fails at once), and every range is served from memory.
//! - **Tail** (larger remote files): the first range read that ends at the file's end (the
//!   footer read, `footer::read_metadata`, of the last `FOOTER_HINT` bytes) is kept; a later
//!   range inside it is served from it, and one that runs into it fetches only the bytes
//!   before it (when they are at most [`MAX_JOINED_HEAD`]). Without it the last row group's
//!   pages, which that tail holds, were fetched a second time: 14% of the bytes of a full
//!   scan in Node of files of 1.8 MB (a 256 KiB tail on wasm32).

use bytes::Bytes;
use std::ops::Range;

use crate::error::Result;
use crate::io::{BoxFuture, RangeRead};

type Store = std::sync::Arc<dyn RangeRead>;

/// The longest head joined to the kept tail: joining copies the head, and a range of many
/// MiB (the read ahead of a large file) copied to save a 256 KiB tail's part grew the page's
/// wasm memory by the range (27.6 → 44.4 MiB on a 115 MB file's full scan), where fetching
/// that part again costs 0.2% of the file.
const MAX_JOINED_HEAD: u64 = 4 << 20;

/// Bytes `range` of a file out of `held`, its bytes from `start` on, when they hold all of
/// them (no copy).
pub(crate) fn held_range(start: u64, held: &Bytes, range: &Range<u64>) -> Option<Bytes> {
    let from = usize::try_from(range.start.checked_sub(start)?).ok()?;
    let to = usize::try_from(range.end.checked_sub(start)?).ok()?;
    held.get(from..to).map(|piece| held.slice_ref(piece))
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct KeptBytesStore {
    inner: Store,
    path: String,
    size: u64,
    /// Whether the first read fetches the whole file (else the tail is kept).
    whole: bool,
    /// The bytes kept: where they start, and them (the whole file from 0, or its tail).
    held: futures::lock::Mutex<Option<(u64, Bytes)>>,
}

impl KeptBytesStore {
    /// A store for the file at `path` of `size` bytes, read `whole` or keeping its tail.
    pub(crate) fn new(inner: Store, path: String, size: u64, whole: bool) -> Self {
        KeptBytesStore {
            inner,
            path,
            size,
            whole,
            held: futures::lock::Mutex::new(None),
        }
    }

    /// The bytes kept; for a whole file, fetched by the first caller while the others wait.
    async fn held(&self) -> Result<Option<(u64, Bytes)>> {
        let mut held = self.held.lock().await;
        if self.whole && held.is_none() {
            let bytes = self.inner.get_range(&self.path, 0..self.size).await?;
            *held = Some((0, bytes));
        }
        Ok(held.clone())
    }

    async fn read(&self, range: Range<u64>) -> Result<Bytes> {
        let held = self.held().await?;
        // Inside what is held: from memory.
        if let Some(bytes) = held
            .as_ref()
            .and_then(|(start, bytes)| held_range(*start, bytes, &range))
        {
            return Ok(bytes);
        }
        match held {
            // Running into the tail: the bytes before it, then the tail's (a long head is
            // fetched with the tail's part again rather than copied once more).
            Some((start, tail))
                if range.start < start
                    && range.end > start
                    && start - range.start <= MAX_JOINED_HEAD =>
            {
                let head = self.inner.get_range(&self.path, range.start..start).await?;
                let held = usize::try_from(range.end.min(self.size) - start).unwrap_or(usize::MAX);
                let Some(rest) = tail.get(..held) else {
                    return self.inner.get_range(&self.path, range).await;
                };
                let mut joined = Vec::with_capacity(head.len() + rest.len());
                joined.extend_from_slice(&head);
                joined.extend_from_slice(rest);
                Ok(Bytes::from(joined))
            }
            held => {
                let bytes = self.inner.get_range(&self.path, range.clone()).await?;
                if held.is_none() && range.end == self.size {
                    self.held
                        .lock()
                        .await
                        .get_or_insert_with(|| (range.start, bytes.clone()));
                }
                Ok(bytes)
            }
        }
    }
}

impl RangeRead for KeptBytesStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        if path != self.path {
            return self.inner.get_range(path, range);
        }
        Box::pin(self.read(range))
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        if path != self.path || !self.whole {
            return self.inner.get(path);
        }
        Box::pin(self.read(0..self.size))
    }

    crate::io::forward_to_inner!(inner);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // tests: block_on

    use std::sync::Arc;

    use futures::executor::block_on;

    use super::*;
    use crate::io::{MemoryStore, MeteredStore};

    #[test]
    fn later_ranges_inside_or_into_the_tail_fetch_only_what_it_lacks() {
        let mem = MemoryStore::new();
        let file: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        mem.put("f.parquet", file.clone());
        mem.put("dv.bin", vec![7; 10]);
        let metered = Arc::new(MeteredStore::new(Arc::new(mem)));
        let store = KeptBytesStore::new(metered.clone(), "f.parquet".into(), 1000, false);
        let read = |r: Range<u64>| {
            block_on(store.get_range("f.parquet", r))
                .map(|b| b.to_vec())
                .ok()
        };
        let want = |r: Range<usize>| file.get(r).map(<[u8]>::to_vec);
        // The footer read: the tail is kept.
        assert_eq!(read(900..1000), want(900..1000));
        let after_tail = metered.counters().snapshot();
        assert_eq!(after_tail.bytes_received, 100);
        // Inside it: no request.
        assert_eq!(read(950..990), want(950..990));
        assert_eq!(metered.counters().snapshot().requests, after_tail.requests);
        // Into it: only the bytes before it.
        assert_eq!(read(500..960), want(500..960));
        assert_eq!(
            metered.counters().snapshot().bytes_received,
            after_tail.bytes_received + 400
        );
        // Before it, another path: as asked.
        assert_eq!(read(0..10), want(0..10));
        let dv = block_on(store.get_range("dv.bin", 0..10))
            .map(|b| b.to_vec())
            .ok();
        assert_eq!(dv, Some(vec![7; 10]));
    }

    #[test]
    fn a_head_past_the_bound_is_fetched_with_the_tails_part_not_joined() {
        let size = MAX_JOINED_HEAD + 1000;
        let mem = MemoryStore::new();
        mem.put("big.parquet", vec![3u8; size as usize]);
        let metered = Arc::new(MeteredStore::new(Arc::new(mem)));
        let store = KeptBytesStore::new(metered.clone(), "big.parquet".into(), size, false);
        let read = |r: Range<u64>| {
            block_on(store.get_range("big.parquet", r))
                .map(|b| b.len())
                .ok()
        };
        assert_eq!(read(size - 100..size), Some(100));
        let before = metered.counters().snapshot().bytes_received;
        // The head (all but the tail) is past the bound: the whole range is asked for.
        assert_eq!(read(0..size - 50), Some(size as usize - 50));
        let after = metered.counters().snapshot().bytes_received;
        assert_eq!(after - before, size - 50);
    }

    #[test]
    fn a_whole_file_is_fetched_once_and_serves_every_range() {
        let mem = MemoryStore::new();
        let file: Vec<u8> = (0..100u8).collect();
        mem.put("f.parquet", file.clone());
        let metered = Arc::new(MeteredStore::new(Arc::new(mem)));
        let store = KeptBytesStore::new(metered.clone(), "f.parquet".into(), 100, true);
        for range in [90..100, 0..10, 40..60, 0..100] {
            let got = block_on(store.get_range("f.parquet", range.clone())).map(|b| b.to_vec());
            assert_eq!(
                got.ok(),
                file.get(range.start as usize..range.end as usize)
                    .map(<[u8]>::to_vec)
            );
        }
        let io = metered.counters().snapshot();
        assert_eq!((io.requests, io.bytes_received), (1, 100));
        assert!(
            block_on(store.get_range("f.parquet", 90..101)).is_err(),
            "past the end"
        );
    }

    #[test]
    fn the_kept_bytes_store_forwards_what_the_store_can_do() {
        for whole in [false, true] {
            let inner: Store = Arc::new(crate::io::unusual::UnusualStore(MemoryStore::new()));
            let wrapper: Store = Arc::new(KeptBytesStore::new(inner, "f".into(), 1, whole));
            crate::io::unusual::assert_forwards_capabilities(&wrapper);
        }
    }
}
