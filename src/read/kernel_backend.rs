//! The `DeltaKernel` Parquet backend (native, feature `kernel`): data files decoded by
//! `delta_kernel`'s default engine through its synchronous iterator API
//! (`ParquetHandler::read_parquet_files`).
//!
//! Per file: the file's tail is fetched once (our footer decode and the kernel's both read it
//! from memory), the footer decoded here for the file's schema, the deletion vector loaded,
//! and then one blocking thread walks the kernel's iterator over the file and hands each batch
//! over a channel of one slot, so the thread waits while the consumer does not poll. The batches
//! then get the same treatment as the direct backend's: deletion vector (by row position: the
//! kernel reads every row, in order), transform, predicate, limit, output projection.
//!
//! The kernel decodes strings and binaries as `Utf8` and `Binary` only (its schema has no
//! view or large types), so with other output types ([`crate::schema::OutputTypes`]) the
//! transform converts them: views are built over the kernel's value buffers, without copying
//! the values (see `schema::cast`). The rows are the same as the direct backend's.
//!
//! The kernel reads through [`OneFileStore`], an `object_store` view of the table's own
//! [`Store`] that serves this one file, so its requests go through the same store (and
//! counters) as everything else. Dropping the stream closes the channel: the thread stops at
//! its next handoff and no later file is started.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use arrow_array::{BooleanArray, RecordBatch};
use async_trait::async_trait;
use bytes::Bytes;
use delta_kernel::engine::arrow_conversion::TryFromArrow;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::{FileMeta, ParquetHandler};
use delta_kernel_default_engine::executor::tokio::TokioBackgroundExecutor;
use delta_kernel_default_engine::parquet::DefaultParquetHandler;
use futures::channel::mpsc;
use futures::stream::{BoxStream as OsBoxStream, StreamExt};
use futures::SinkExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use super::deletion_vector::DeletionVector;
use super::file::{int96_as_micros, load_deletion_vector, BatchFinish, ReadContext};
use super::footer::{read_metadata, FOOTER_HINT, MIN_PARQUET_SIZE};
use super::ranges::owned_row_groups;
use super::transform::{projected_file_schema, FileTransform};
use crate::error::{DeltaError, Phase, Result};
use crate::io::{BoxFuture, BoxStream, BoxedStream, RangeRead, Store};
use crate::plan::FileTask;
use crate::read::metrics::DeltaScanMetrics;

/// The location the kernel is given for every file; [`OneFileStore`] ignores it.
const FILE_URL: &str = "dar-kernel:///data.parquet";

fn kernel_error(path: &str, e: impl fmt::Display) -> DeltaError {
    DeltaError::Io {
        path: path.to_string(),
        message: format!("delta_kernel parquet read failed: {e}"),
        phase: Phase::Read,
        transient: false,
    }
}

/// The kernel's background runtime, shared by every read of the process.
fn executor() -> Arc<TokioBackgroundExecutor> {
    static EXECUTOR: OnceLock<Arc<TokioBackgroundExecutor>> = OnceLock::new();
    Arc::clone(EXECUTOR.get_or_init(|| Arc::new(TokioBackgroundExecutor::new())))
}

/// The batches of one file task, read by the kernel.
pub(crate) fn read_file_with_kernel(
    ctx: ReadContext,
    task: FileTask,
    metrics: Option<Arc<DeltaScanMetrics>>,
) -> BoxStream<'static, Result<RecordBatch>> {
    let opened = async move { open(ctx, task, metrics).await };
    futures::stream::once(opened)
        .flat_map(|opened| match opened {
            Ok(stream) => stream,
            Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
        })
        .boxed_local_or_send()
}

/// Reads the footer and deletion vector, starts the kernel's thread, and returns the finished
/// batches.
async fn open(
    ctx: ReadContext,
    task: FileTask,
    metrics: Option<Arc<DeltaScanMetrics>>,
) -> Result<OsBoxStream<'static, Result<RecordBatch>>> {
    let path = task.path.clone();
    // The file's tail is fetched once: our footer decode and the kernel's both read it here.
    let store =
        Arc::new(OneFileStore::open(Arc::clone(&ctx.store), path.clone(), task.size).await?);
    let metadata = read_metadata(store.as_ref(), &path, task.size).await?;
    let plain = parquet::arrow::parquet_to_arrow_schema(
        metadata.file_metadata().schema_descr(),
        metadata.file_metadata().key_value_metadata(),
    )
    .map_err(|e| DeltaError::Parquet {
        path: path.clone(),
        phase: Phase::Read,
        source: e,
    })?;
    let file_schema = int96_as_micros(&metadata, &plain).unwrap_or_else(|| Arc::new(plain));
    let columns = ctx.columns.to_vec();
    let (_, projected) = projected_file_schema(&file_schema, &columns, ctx.mode);
    let transform = FileTransform::new(
        Arc::clone(&ctx.read_schema),
        &columns,
        &task.partition_values,
        &projected,
        ctx.mode,
    );
    let deleted = match &task.deletion_vector {
        Some(dv) => {
            let deleted = load_deletion_vector(&ctx, dv).await?;
            if let Some(m) = &metrics {
                m.deletion_vector_loaded(deleted.cardinality());
            }
            Some(deleted)
        }
        None => None,
    };
    // A ranged task returns the rows of the row groups its range owns (the kernel reads the
    // whole file): their row intervals, file-global like deletion vector positions.
    let owned: Option<Vec<Range<u64>>> = task.range.as_ref().map(|range| {
        let mut first = 0u64;
        let mut starts = Vec::with_capacity(metadata.num_row_groups());
        for rg in metadata.row_groups() {
            let rows = u64::try_from(rg.num_rows()).unwrap_or(0);
            starts.push(first..first + rows);
            first += rows;
        }
        owned_row_groups(&metadata, range)
            .into_iter()
            .filter_map(|i| starts.get(i).cloned())
            .collect()
    });
    if owned.as_ref().is_some_and(Vec::is_empty) {
        return Ok(futures::stream::empty().boxed());
    }
    let kernel_schema = delta_kernel::schema::StructType::try_from_arrow(&projected)
        .map_err(|e| kernel_error(&path, e))?;
    let batches = spawn_reader(store, Arc::new(kernel_schema), task.size, path.clone())?;

    let limit = task.limit;
    let mut first_row = 0u64;
    let mut emitted = 0usize;
    let finished = batches.filter_map(move |item| {
        let out = item.and_then(|batch| {
            let start = first_row;
            first_row += batch.num_rows() as u64;
            let batch =
                match keep_mask(deleted.as_ref(), owned.as_deref(), start, batch.num_rows()) {
                    Some(keep) => arrow_select::filter::filter_record_batch(&batch, &keep)
                        .map_err(|e| DeltaError::Arrow {
                            phase: Phase::Read,
                            source: e,
                        })?,
                    None => batch,
                };
            if limit.is_some_and(|l| emitted >= l) {
                return Ok(None);
            }
            let finish = BatchFinish {
                ctx: &ctx,
                transform: &transform,
                columns: &columns,
                post_filter: true,
                limit,
            };
            finish.apply(batch, &mut emitted)
        });
        futures::future::ready(out.transpose())
    });
    Ok(finished.boxed())
}

/// The rows of `[start, start + len)` to keep: not deleted, and in an owned row group when
/// the task is ranged. `None` when every row is kept.
fn keep_mask(
    deleted: Option<&DeletionVector>,
    owned: Option<&[Range<u64>]>,
    start: u64,
    len: usize,
) -> Option<BooleanArray> {
    let deleted = deleted.map(|dv| dv.keep_mask(start, len));
    let Some(owned) = owned else {
        return deleted;
    };
    let keep: BooleanArray = (0..len as u64)
        .map(|i| {
            let row = start + i;
            let in_range = owned.iter().any(|r| r.contains(&row));
            let live = deleted.as_ref().is_none_or(|d| d.value(i as usize));
            Some(in_range && live)
        })
        .collect();
    Some(keep)
}

/// Starts the thread that walks the kernel's iterator over the file and hands its batches
/// over one slot.
fn spawn_reader(
    store: Arc<OneFileStore>,
    schema: delta_kernel::schema::SchemaRef,
    size: u64,
    path: String,
) -> Result<mpsc::Receiver<Result<RecordBatch>>> {
    let location = url::Url::parse(FILE_URL).map_err(|e| kernel_error(&path, e))?;
    let (mut tx, rx) = mpsc::channel::<Result<RecordBatch>>(0);
    let thread_path = path.clone();
    std::thread::Builder::new()
        .name("dar-kernel-read".into())
        .spawn(move || {
            let path = thread_path;
            let handler = DefaultParquetHandler::new(store, executor());
            let file = FileMeta {
                location,
                last_modified: 0,
                size,
            };
            let items = match handler.read_parquet_files(&[file], schema, None) {
                Ok(items) => items,
                Err(e) => {
                    let _ = futures::executor::block_on(tx.send(Err(kernel_error(&path, e))));
                    return;
                }
            };
            for item in items {
                let batch = item
                    .and_then(ArrowEngineData::try_from_engine_data)
                    .map(|data| RecordBatch::from(*data))
                    .map_err(|e| kernel_error(&path, e));
                let failed = batch.is_err();
                // The consumer went away: stop reading.
                if futures::executor::block_on(tx.send(batch)).is_err() || failed {
                    return;
                }
            }
        })
        .map_err(|e| kernel_error(&path, e))?;
    Ok(rx)
}

/// An `object_store` view of one file of a [`Store`]: every location reads that file. Read
/// only; listing and writing are not implemented. The file's last [`FOOTER_HINT`] bytes are
/// fetched once, when it is opened, and ranges inside them are served from memory (as a
/// [`RangeRead`] too, for our own footer decode).
struct OneFileStore {
    store: Store,
    path: String,
    size: u64,
    tail_start: u64,
    tail: Bytes,
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

fn store_error(e: DeltaError) -> object_store::Error {
    object_store::Error::Generic {
        store: "OneFileStore",
        source: Box::new(e),
    }
}

impl OneFileStore {
    async fn open(store: Store, path: String, size: u64) -> Result<Self> {
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
        })
    }

    /// `range` of the file: from the tail when it lies inside, else from the store.
    async fn read(&self, range: Range<u64>) -> Result<Bytes> {
        if range.start >= self.tail_start {
            let from = usize::try_from(range.start - self.tail_start).unwrap_or(usize::MAX);
            let to =
                usize::try_from(range.end.saturating_sub(self.tail_start)).unwrap_or(usize::MAX);
            if from <= to && to <= self.tail.len() {
                return Ok(self.tail.slice(from..to));
            }
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

    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        self.store.size(path)
    }
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
            self.read(range.clone()).await.map_err(store_error)?
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
