//! [`OneFileStore`]: an `object_store` view of one file of the table's own [`Store`], so the
//! kernel's requests go through the same store (and counters) as everything else. It remembers
//! the first error of ours it had to hand the kernel as an `object_store` error, so the read
//! reports that error, typed, instead of the kernel's wrapping of it.

use std::fmt;
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{BoxStream as OsBoxStream, StreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use crate::error::{DeltaError, Phase, Result};
use crate::io::{BoxFuture, RangeRead, Store};
use crate::read::{held_range, PageCheck, FOOTER_HINT, MIN_PARQUET_SIZE};

/// An `object_store` view of one file of a [`Store`]: every location reads that file. Read
/// only; listing and writing are not implemented. The file's last [`FOOTER_HINT`] bytes are
/// fetched once, when it is opened, and ranges inside them are served from memory (as a
/// [`RangeRead`] too, for our own footer decode).
pub(crate) struct OneFileStore {
    store: Store,
    path: String,
    size: u64,
    tail_start: u64,
    tail: Bytes,
    /// The first of our errors handed to the kernel.
    failure: Mutex<Option<DeltaError>>,
    /// The page checks of every range the kernel reads, once the footer is known.
    pages: OnceLock<PageCheck>,
}

impl fmt::Debug for OneFileStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OneFileStore")
            .field("path", &self.path)
            .finish()
    }
}

impl fmt::Display for OneFileStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OneFileStore({})", self.path)
    }
}

fn not_implemented(operation: &str) -> object_store::Error {
    object_store::Error::NotImplemented {
        operation: operation.to_string(),
        implementer: "OneFileStore".to_string(),
    }
}

impl OneFileStore {
    /// Opens `path` (of `size` bytes) of `store`, fetching its tail.
    pub(crate) async fn open(store: Store, path: String, size: u64) -> Result<Self> {
        let tail_start = size.saturating_sub(FOOTER_HINT);
        // Too small to be Parquet: nothing to fetch; the footer decode reports it.
        let tail = if size < MIN_PARQUET_SIZE {
            Bytes::new()
        } else {
            store.get_range(&path, tail_start..size).await?
        };
        Ok(OneFileStore {
            store,
            path,
            size,
            tail_start,
            tail,
            failure: Mutex::new(None),
            pages: OnceLock::new(),
        })
    }

    /// Checks the pages of every range read from now on (see [`crate::limits::pages`])
    /// before the kernel's decoder gets them; a range that fails is the kernel's read error,
    /// and ours in [`OneFileStore::take_failure`].
    pub(crate) fn check_pages(&self, pages: PageCheck) {
        // Set once, when the file is opened.
        let _ = self.pages.set(pages);
    }

    /// `e` as the kernel gets it; the first one is kept for [`OneFileStore::take_failure`].
    fn store_error(&self, e: DeltaError) -> object_store::Error {
        let message = e.to_string();
        if let Ok(mut slot) = self.failure.lock() {
            slot.get_or_insert(e);
        }
        object_store::Error::Generic {
            store: "OneFileStore",
            source: message.into(),
        }
    }

    /// The first error of ours the kernel was given, if any.
    pub(crate) fn take_failure(&self) -> Option<DeltaError> {
        self.failure.lock().ok().and_then(|mut slot| slot.take())
    }

    /// `range` of the file: from the tail when it lies inside, else from the store.
    async fn read(&self, range: Range<u64>) -> Result<Bytes> {
        if let Some(bytes) = held_range(self.tail_start, &self.tail, &range) {
            return Ok(bytes);
        }
        self.store.get_range(&self.path, range).await
    }

    fn range(&self, range: Option<&GetRange>) -> Range<u64> {
        match range {
            None => 0..self.size,
            Some(GetRange::Bounded(r)) => r.start..r.end.min(self.size),
            Some(GetRange::Offset(o)) => (*o).min(self.size)..self.size,
            Some(GetRange::Suffix(n)) => self.size.saturating_sub(*n)..self.size,
        }
    }
}

impl RangeRead for OneFileStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        if path != self.path {
            return self.store.get_range(path, range);
        }
        Box::pin(self.read(range))
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        self.store.get(path)
    }

    crate::io::forward_to_inner!(store);
}

#[async_trait]
impl ObjectStore for OneFileStore {
    async fn put_opts(
        &self,
        _location: &Path,
        _payload: PutPayload,
        _opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        Err(not_implemented("put"))
    }

    async fn put_multipart_opts(
        &self,
        _location: &Path,
        _opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        Err(not_implemented("put_multipart"))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let meta = ObjectMeta {
            location: location.clone(),
            last_modified: chrono::DateTime::<chrono::Utc>::default(),
            size: self.size,
            e_tag: None,
            version: None,
        };
        let range = self.range(options.range.as_ref());
        let data = if options.head || range.is_empty() {
            Bytes::new()
        } else {
            let data = self
                .read(range.clone())
                .await
                .map_err(|e| self.store_error(e))?;
            if let Some(pages) = self.pages.get() {
                pages
                    .chunks
                    .check_ranges(
                        [(range.start, &data[..])],
                        pages.max_page_bytes,
                        &self.path,
                        Phase::Read,
                    )
                    .map_err(|e| self.store_error(e))?;
            }
            data
        };
        let payload = futures::stream::once(async move { Ok(data) }).boxed();
        Ok(GetResult {
            payload: GetResultPayload::Stream(payload),
            meta,
            range,
            attributes: Default::default(),
        })
    }

    fn delete_stream(
        &self,
        locations: OsBoxStream<'static, object_store::Result<Path>>,
    ) -> OsBoxStream<'static, object_store::Result<Path>> {
        locations.map(|_| Err(not_implemented("delete"))).boxed()
    }

    fn list(
        &self,
        _prefix: Option<&Path>,
    ) -> OsBoxStream<'static, object_store::Result<ObjectMeta>> {
        futures::stream::once(async { Err(not_implemented("list")) }).boxed()
    }

    async fn list_with_delimiter(
        &self,
        _prefix: Option<&Path>,
    ) -> object_store::Result<ListResult> {
        Err(not_implemented("list_with_delimiter"))
    }

    async fn copy_opts(
        &self,
        _from: &Path,
        _to: &Path,
        _options: CopyOptions,
    ) -> object_store::Result<()> {
        Err(not_implemented("copy"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn forwards_what_the_store_can_do() {
        let mem = crate::io::MemoryStore::new();
        let inner: Store = Arc::new(crate::io::unusual::UnusualStore(mem));
        let open = OneFileStore::open(inner, "f".into(), 0);
        let store = futures::executor::block_on(open).unwrap_or_else(|e| panic!("{e}"));
        let wrapper: Store = Arc::new(store);
        crate::io::unusual::assert_forwards_capabilities(&wrapper);
    }
}
