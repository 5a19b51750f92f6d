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

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use arrow_array::{BooleanArray, RecordBatch};
use delta_kernel::engine::arrow_conversion::TryFromArrow;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::{FileMeta, KernelError, ParquetHandler};
use delta_kernel_default_engine::executor::tokio::TokioBackgroundExecutor;
use delta_kernel_default_engine::parquet::DefaultParquetHandler;
use futures::channel::mpsc;
use futures::stream::{BoxStream as OsBoxStream, StreamExt};
use futures::SinkExt;

use super::one_file_store::OneFileStore;
use crate::error::{DeltaError, Phase, Result};
use crate::io::{BoxStream, BoxedStream};
use crate::limits::decoder_panics::contain;
use crate::limits::pages::ChunkIndex;
use crate::plan::FileTask;
use crate::read::metrics::DeltaScanMetrics;
use crate::read::{
    deleted_rows_owned, int96_as_micros, load_deletion_vector, owned_rows, projected_file_schema,
    read_metadata, row_group_rows, BatchFinish, DeletionVector, FileDecoder, FileOutput,
    FileTransform, PageCheck, ReadContext, RowLimit,
};

/// Files decoded by delta_kernel's default engine (the `DeltaKernel` backend).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KernelDecoder;

impl FileDecoder for KernelDecoder {
    fn read(
        &self,
        ctx: ReadContext,
        task: FileTask,
        metrics: Option<Arc<DeltaScanMetrics>>,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        read_file_with_kernel(ctx, task, metrics)
    }
}

/// The location the kernel is given for every file; [`OneFileStore`] ignores it.
const FILE_URL: &str = "dar-kernel:///data.parquet";

/// A kernel error as ours: the store's own error when the kernel failed on it, Parquet and
/// Arrow errors as such, anything else as a [`DeltaError::Backend`] with the kernel's error as
/// its source.
fn kernel_error(path: &str, store: &OneFileStore, e: KernelError) -> DeltaError {
    if let Some(ours) = store.take_failure() {
        return ours;
    }
    match e {
        KernelError::Backtraced { source, .. } => kernel_error(path, store, *source),
        KernelError::Parquet(source) => DeltaError::Parquet {
            path: path.to_string(),
            phase: Phase::Read,
            source,
        },
        KernelError::Arrow(source) => DeltaError::Arrow {
            phase: Phase::Read,
            source,
        },
        other => backend_error(path, other),
    }
}

/// A failure of the kernel's machinery (not of the file) with its error as the source.
fn backend_error(path: &str, e: impl std::error::Error + Send + Sync + 'static) -> DeltaError {
    DeltaError::Backend {
        backend: "delta_kernel",
        path: path.to_string(),
        phase: Phase::Read,
        source: Box::new(e),
    }
}

/// The kernel's background runtime, shared by every read of the process.
fn executor() -> Arc<TokioBackgroundExecutor> {
    static EXECUTOR: OnceLock<Arc<TokioBackgroundExecutor>> = OnceLock::new();
    Arc::clone(EXECUTOR.get_or_init(|| Arc::new(TokioBackgroundExecutor::new())))
}

/// The batches of one file task, read by the kernel.
fn read_file_with_kernel(
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
    // The kernel's decoder runs where nothing contains its panics: page contents are checked
    // decompressed too.
    store.check_pages(PageCheck {
        chunks: ChunkIndex::new(&metadata).with_decompressed_checks(),
        max_page_bytes: ctx.spec.max_page_bytes,
    });
    let file_rows = u64::try_from(metadata.file_metadata().num_rows()).unwrap_or(0);
    // Without the footer's embedded Arrow schema, as our own decoder reads files (see
    // `read::decode_types`).
    let plain =
        parquet::arrow::parquet_to_arrow_schema(metadata.file_metadata().schema_descr(), None)
            .map_err(|e| DeltaError::Parquet {
                path: path.clone(),
                phase: Phase::Read,
                source: e,
            })?;
    let file_schema = int96_as_micros(&metadata, &plain).unwrap_or_else(|| Arc::new(plain));
    let spec = Arc::clone(&ctx.spec);
    let columns = spec.columns.columns.to_vec();
    crate::read::require_field_ids(&file_schema, &columns, spec.mode, &path)?;
    let (_, projected) = projected_file_schema(&file_schema, &columns, spec.mode);
    let output = FileOutput {
        transform: FileTransform::for_file(
            Arc::clone(&spec.columns.read_schema),
            &columns,
            &task.partition_arrays(&columns)?,
            &projected,
            spec.mode,
            &path,
        )?,
        columns,
        post_filter: true,
    };
    let deleted = match &task.deletion_vector {
        Some(dv) => {
            let deleted = load_deletion_vector(&ctx, dv).await?;
            if let Some(m) = &metrics {
                m.deletion_vector_loaded(deleted_rows_owned(
                    &metadata,
                    task.range.as_ref(),
                    &deleted,
                ));
            }
            Some(deleted)
        }
        None => None,
    };
    // A ranged task returns the rows its range owns (the kernel reads the whole file): their
    // row intervals, file-global like deletion vector positions. A negative row count in the
    // footer is an error, as it would shift every row position.
    let owned: Option<Vec<Range<u64>>> = match task.range.as_ref() {
        Some(range) => {
            row_group_rows(&metadata, &path)?;
            Some(
                owned_rows(&metadata, range)
                    .into_iter()
                    .map(|o| o.rows)
                    .collect(),
            )
        }
        None => None,
    };
    if owned.as_ref().is_some_and(Vec::is_empty) {
        return Ok(futures::stream::empty().boxed());
    }
    let kernel_schema = delta_kernel::schema::StructType::try_from_arrow(&projected)
        .map_err(|e| backend_error(&path, e))?;
    let file = KernelFile {
        store,
        size: task.size,
        rows: file_rows,
        path: path.clone(),
    };
    let batches = spawn_reader(file, Arc::new(kernel_schema))?;

    let mut limit = RowLimit::new(task.limit);
    let mut first_row = 0u64;
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
            if limit.reached() {
                return Ok(None);
            }
            let finish = BatchFinish {
                spec: &spec,
                output: &output,
            };
            finish.apply(batch, &mut limit)
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

/// The file the kernel reads: its store view, size, row count (from the footer) and path.
struct KernelFile {
    store: Arc<OneFileStore>,
    size: u64,
    rows: u64,
    path: String,
}

/// Starts the thread that walks the kernel's iterator over the file and hands its batches
/// over one slot. The kernel reads every row of the file: an iterator that ends early (a
/// decoder that failed without an error) or a panic on the thread is the file's error, never
/// fewer rows.
fn spawn_reader(
    file: KernelFile,
    schema: delta_kernel::schema::SchemaRef,
) -> Result<mpsc::Receiver<Result<RecordBatch>>> {
    let location = url::Url::parse(FILE_URL).map_err(|e| backend_error(&file.path, e))?;
    let (mut tx, rx) = mpsc::channel::<Result<RecordBatch>>(0);
    let path = file.path.clone();
    std::thread::Builder::new()
        .name("dar-kernel-read".into())
        .spawn(move || {
            let read = contain(|| send_batches(&file, location, schema, &mut tx));
            let failure = match read {
                Ok(Sent::All(rows)) if rows == file.rows => return,
                Ok(Sent::All(rows)) => format!(
                    "the kernel's reader returned {rows} of the file's {} rows",
                    file.rows
                ),
                Ok(Sent::Stopped) => return,
                Err(panic) => format!("the kernel's reader panicked: {panic}"),
            };
            let e = file
                .store
                .take_failure()
                .unwrap_or_else(|| DeltaError::Parquet {
                    path: file.path.clone(),
                    phase: Phase::Read,
                    source: parquet::errors::ParquetError::General(failure),
                });
            let _ = futures::executor::block_on(tx.send(Err(e)));
        })
        .map_err(|e| backend_error(&path, e))?;
    Ok(rx)
}

/// How a walk of the kernel's iterator ended.
enum Sent {
    /// Every batch was sent: this many rows.
    All(u64),
    /// An error was sent, or the consumer went away.
    Stopped,
}

/// Walks the kernel's iterator over `file`, sending each batch (or its error) over `tx`.
fn send_batches(
    file: &KernelFile,
    location: url::Url,
    schema: delta_kernel::schema::SchemaRef,
    tx: &mut mpsc::Sender<Result<RecordBatch>>,
) -> Sent {
    let (store, path) = (&file.store, &file.path);
    let reader: Arc<dyn object_store::ObjectStore> = Arc::clone(store) as _;
    let handler = DefaultParquetHandler::new(reader, executor());
    let meta = FileMeta {
        location,
        last_modified: 0,
        size: file.size,
    };
    let items = match handler.read_parquet_files(&[meta], schema, None) {
        Ok(items) => items,
        Err(e) => {
            let _ = futures::executor::block_on(tx.send(Err(kernel_error(path, store, e))));
            return Sent::Stopped;
        }
    };
    let mut rows = 0u64;
    for item in items {
        let batch = item
            .and_then(ArrowEngineData::try_from_engine_data)
            .map(|data| RecordBatch::from(*data))
            .map_err(|e| kernel_error(path, store, e));
        let failed = batch.is_err();
        if let Ok(b) = &batch {
            rows = rows.saturating_add(b.num_rows() as u64);
        }
        // The consumer went away: stop reading.
        if futures::executor::block_on(tx.send(batch)).is_err() || failed {
            return Sent::Stopped;
        }
    }
    Sent::All(rows)
}
