//! Reading one data file over a [`RangeRead`] into logical record batches.
//!
//! The footer comes first (see `footer`); then arrow-rs's sans-io `ParquetPushDecoder` says
//! which byte ranges it needs, and `row_group_reads` fetches them (coalesced, the next row
//! group's while one decodes) and pushes them back. Only the projected columns are fetched;
//! deleted rows (deletion vectors) are skipped by a row selection when they come in long runs
//! and dropped from decoded batches by a mask when scattered; INT96 timestamps are read as
//! microseconds and strings and binaries in the scan's output types (see `decode_types`);
//! each decoded batch goes through the file's [`FileTransform`].
//!
//! With a bound predicate, row groups whose statistics rule it out are not read at all (see
//! `row_groups`), and the predicate runs inside the decoder as a Parquet `RowFilter` on its
//! own columns (see `row_filter`), so the other columns are decoded only for matching rows.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use futures::stream;
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::ParquetMetaData;

use super::changed_rows::SkippedRows;
use super::decode_types::reader_metadata;
use super::deletion_vector::{decode_file_range, decode_inline, dv_source, DvSource};
use super::file_plan::{plan_file, FileOutput, ReadSpec};
use super::footer::read_metadata;
use super::ranges::deleted_rows_owned;
use super::row_group_reads::{Lookahead, PageCheck, RowGroupReads};
use crate::error::{DeltaError, Phase, Result};
use crate::io::{BoxStream, BoxedStream, Store, TableLocation};
use crate::limits::pages::ChunkIndex;
use crate::log::DeletionVectorDescriptor;
use crate::plan::FileTask;
use crate::predicate::evaluate;
use crate::read::metrics::DeltaScanMetrics;

/// What every file of a scan shares: the store, and what each file reads ([`ReadSpec`]).
#[derive(Clone)]
pub struct ReadContext {
    /// The table's store.
    pub store: Store,
    /// The table root (absolute deletion vector paths are resolved against it).
    pub location: TableLocation,
    /// What every file reads, and how.
    pub spec: Arc<ReadSpec>,
    /// Row groups left out because their statistics rule the predicate out, over all files.
    pub row_groups_pruned: Arc<AtomicU64>,
}

impl std::fmt::Debug for ReadContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadContext")
            .field("spec", &self.spec)
            .field(
                "row_groups_pruned",
                &self.row_groups_pruned.load(Ordering::Relaxed),
            )
            .finish()
    }
}

fn arrow_error(source: arrow_schema::ArrowError) -> DeltaError {
    DeltaError::Arrow {
        phase: Phase::Read,
        source,
    }
}

/// The file's Arrow schema with INT96 columns read as microsecond timestamps (INT96 holds
/// nanoseconds since 4713 BC, which overflow an i64 of nanoseconds for many real dates).
pub(crate) fn int96_as_micros(
    metadata: &Arc<ParquetMetaData>,
    default: &Schema,
) -> Option<SchemaRef> {
    let descr = metadata.file_metadata().schema_descr();
    let mut changed = false;
    let fields: Vec<Field> = default
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let leaf_is_int96 = (0..descr.num_columns()).any(|c| {
                descr.get_column_root_idx(c) == i
                    && descr.column(c).physical_type() == PhysicalType::INT96
            });
            match f.data_type() {
                DataType::Timestamp(TimeUnit::Nanosecond, tz) if leaf_is_int96 => {
                    changed = true;
                    f.as_ref()
                        .clone()
                        .with_data_type(DataType::Timestamp(TimeUnit::Microsecond, tz.clone()))
                }
                _ => f.as_ref().clone(),
            }
        })
        .collect();
    changed.then(|| {
        Arc::new(Schema::new_with_metadata(
            fields,
            default.metadata().clone(),
        ))
    })
}

pub(crate) async fn load_deletion_vector(
    ctx: &ReadContext,
    dv: &DeletionVectorDescriptor,
) -> Result<super::deletion_vector::DeletionVector> {
    match dv_source(dv)? {
        DvSource::Inline(_) => decode_inline(dv),
        DvSource::File { path, offset, size } => {
            // An absolute (`p`) deletion vector path must lie under the table root, like an
            // absolute data file path; the store addresses it relative to the root.
            let path = if dv.storage_type == "p" {
                crate::log::data_file_path(ctx.location.url(), &path, crate::error::Phase::Read)?
            } else {
                path
            };
            let bytes = ctx.store.get_range(&path, offset..offset + size).await?;
            decode_file_range(dv, &path, &bytes)
        }
    }
}

/// The rows of the file as its footer counts them, checked against the log's `numRecords`
/// for the file when it has one: a footer that disagrees (row groups missing, repeated or
/// lying about their size) would return other rows than the table holds.
fn check_row_count(metadata: &ParquetMetaData, task: &FileTask) -> Result<u64> {
    let mut rows = 0u64;
    for group in metadata.row_groups() {
        let n = u64::try_from(group.num_rows()).map_err(|_| {
            corrupt_footer(
                &task.path,
                format!("a row group declares {} rows", group.num_rows()),
            )
        })?;
        rows = rows.saturating_add(n);
    }
    match task.num_records {
        Some(expected) if expected != rows => Err(corrupt_footer(
            &task.path,
            format!(
                "the footer counts {rows} rows, the log's statistics for the file \
                 (numRecords) {expected}"
            ),
        )),
        _ => Ok(rows),
    }
}

fn corrupt_footer(path: &str, reason: String) -> DeltaError {
    DeltaError::Parquet {
        path: crate::error::redact(path),
        phase: Phase::Read,
        source: parquet::errors::ParquetError::General(reason),
    }
}

/// A file ready to decode.
struct Opened {
    reads: RowGroupReads,
    output: FileOutput,
}

/// Opens a file: its footer, then its plan (see `file_plan`), then its deletion vector when
/// the plan reads a row. `None` when no row of the file can be returned.
async fn open(
    ctx: &ReadContext,
    task: &FileTask,
    metrics: Option<&DeltaScanMetrics>,
) -> Result<Option<Opened>> {
    let path = task.path.as_str();
    // The deletion vector is fetched while the footer is: a small file then costs one round
    // trip, not two. Its outcome matters only if the plan reads a row.
    let footer = read_metadata(ctx.store.as_ref(), path, task.size);
    let (metadata, skipped) = futures::join!(footer, SkippedRows::load(ctx, task));
    let metadata = reader_metadata(&metadata?, path, ctx.spec.output_types)?;
    let file_rows = check_row_count(metadata.metadata(), task)?;
    let plan = plan_file(&ctx.spec, task, &metadata)?;
    if plan.row_groups_pruned > 0 {
        ctx.row_groups_pruned
            .fetch_add(plan.row_groups_pruned as u64, Ordering::Relaxed);
    }
    let Some(mut read) = plan.read else {
        return Ok(None);
    };
    if let Some(skipped) = skipped {
        let skipped = skipped?;
        if let Some(row) = skipped.max_row().filter(|&row| row >= file_rows) {
            return Err(DeltaError::invalid_log(
                crate::error::redact(path),
                format!(
                    "the file's deletion vector deletes row {row}, but the file has {file_rows} \
                     rows (the vector belongs to another file, or is corrupt)"
                ),
            ));
        }
        let deleted = skipped.into_deleted(path, file_rows)?;
        if let Some(m) = metrics.filter(|_| task.deletion_vector.is_some()) {
            let owned = deleted_rows_owned(metadata.metadata(), task.range.as_ref(), &deleted);
            m.deletion_vector_loaded(owned);
        }
        match read.with_deleted_rows(deleted) {
            Some(with_deletes) => read = with_deletes,
            None => return Ok(None),
        }
    }
    let lookahead = Lookahead {
        next: read.read_ahead(),
        groups: read.ahead(metadata.metadata(), ctx.spec.read_ahead_bytes),
    };
    let pages = PageCheck {
        chunks: ChunkIndex::new(metadata.metadata()),
        max_page_bytes: ctx.spec.max_page_bytes,
    };
    let (decoder, masked, filter_errors, output) =
        read.decoder(metadata, ctx.spec.batch_size, path)?;
    Ok(Some(Opened {
        reads: RowGroupReads::new(
            decoder,
            ctx.store.clone(),
            path,
            lookahead,
            masked,
            filter_errors,
            pages,
        ),
        output,
    }))
}

/// A file task's row limit, and the rows emitted against it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowLimit {
    limit: Option<usize>,
    emitted: usize,
}

impl RowLimit {
    pub(crate) fn new(limit: Option<usize>) -> RowLimit {
        RowLimit { limit, emitted: 0 }
    }

    /// Whether no further row may be emitted.
    pub(crate) fn reached(&self) -> bool {
        self.limit.is_some_and(|l| self.emitted >= l)
    }

    /// `batch` cut to the rows still allowed, counted as emitted.
    fn take(&mut self, batch: RecordBatch) -> RecordBatch {
        let batch = match self.limit {
            Some(limit) if batch.num_rows() > limit.saturating_sub(self.emitted) => {
                batch.slice(0, limit.saturating_sub(self.emitted))
            }
            _ => batch,
        };
        self.emitted += batch.num_rows();
        batch
    }
}

/// What turns a decoded batch of file columns into output rows.
pub(crate) struct BatchFinish<'a> {
    pub(crate) spec: &'a ReadSpec,
    pub(crate) output: &'a FileOutput,
}

impl BatchFinish<'_> {
    /// Applies the transform, the predicate (when the decoder did not), the limit and the
    /// output projection. `None` when no row is left.
    pub(crate) fn apply(
        &self,
        batch: RecordBatch,
        limit: &mut RowLimit,
    ) -> Result<Option<RecordBatch>> {
        let output = self.output;
        let mut batch = output.transform.apply(&batch, &output.columns)?;
        if output.post_filter {
            if let Some(predicate) = &self.spec.predicate {
                let keep = evaluate(predicate, &batch)?;
                batch = arrow_select::filter::filter_record_batch(&batch, &keep)
                    .map_err(arrow_error)?;
            }
            batch = batch
                .project(&self.spec.columns.output_indices)
                .map_err(arrow_error)?;
        }
        let batch = limit.take(batch);
        if batch.num_rows() == 0 {
            return Ok(None);
        }
        let batch = RecordBatch::try_new_with_options(
            Arc::clone(&self.spec.columns.output_schema),
            batch.columns().to_vec(),
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )
        .map_err(arrow_error)?;
        Ok(Some(batch))
    }
}

struct FileState {
    ctx: ReadContext,
    task: FileTask,
    metrics: Option<Arc<DeltaScanMetrics>>,
    opened: Option<Option<Opened>>,
    limit: RowLimit,
}

async fn next_batch(state: &mut FileState) -> Result<Option<RecordBatch>> {
    if state.opened.is_none() {
        let opened = open(&state.ctx, &state.task, state.metrics.as_deref()).await?;
        state.opened = Some(opened);
    }
    let Some(Some(opened)) = state.opened.as_mut() else {
        return Ok(None);
    };
    let finish = BatchFinish {
        spec: &state.ctx.spec,
        output: &opened.output,
    };
    while !state.limit.reached() {
        let Some(batch) = opened.reads.next().await? else {
            return Ok(None);
        };
        if let Some(b) = finish.apply(batch, &mut state.limit)? {
            return Ok(Some(b));
        }
    }
    Ok(None)
}

/// The batches of one file, as a stream.
#[cfg(test)]
pub fn read_file(ctx: ReadContext, task: FileTask) -> BoxStream<'static, Result<RecordBatch>> {
    read_file_with_metrics(ctx, task, None)
}

/// Like [`read_file`], counting deletion vectors loaded into `metrics`.
pub fn read_file_with_metrics(
    ctx: ReadContext,
    task: FileTask,
    metrics: Option<Arc<DeltaScanMetrics>>,
) -> BoxStream<'static, Result<RecordBatch>> {
    let task_limit = task.limit;
    let state = FileState {
        ctx,
        task,
        metrics,
        opened: None,
        limit: RowLimit::new(task_limit),
    };
    stream::try_unfold(state, |mut state| async move {
        let next = next_batch(&mut state).await?;
        Ok(next.map(|b| (b, state)))
    })
    .boxed_local_or_send()
}
