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
use std::sync::{Arc, Mutex};

use arrow_array::{BooleanArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use futures::stream;
use parquet::arrow::push_decoder::ParquetPushDecoderBuilder;
use parquet::arrow::ProjectionMask;
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::ParquetMetaData;

use super::decode_types::reader_metadata;
use super::deletion_vector::{decode_file_range, decode_inline, dv_source, DvSource};
use super::footer::read_metadata;
use super::row_filter::{plan_row_filter, ErrorSlot, FilterPlan};
use super::row_group_reads::{DeletedRows, RowGroupReads};
use super::row_groups::prune_row_groups;
use super::transform::{projected_file_schema, FileTransform};
use crate::error::{DeltaError, Phase, Result};
use crate::io::{BoxStream, BoxedStream, Store, TableLocation};
use crate::log::DeletionVectorDescriptor;
use crate::plan::{FileTask, ReadColumn};
use crate::predicate::BoundExpr;
use crate::read::metrics::DeltaScanMetrics;
use crate::schema::{ColumnMappingMode, OutputTypes};

/// Evaluates the scan's row predicate on a batch of read columns; `true` keeps the row.
pub type RowPredicate = Arc<dyn Fn(&RecordBatch) -> Result<BooleanArray> + Send + Sync>;

/// Deletes whose row selection runs average fewer rows than this are dropped from decoded
/// batches by a mask instead (the Parquet reader itself decodes such selections in full and
/// filters them, with the same threshold).
const MIN_SELECTED_RUN: u64 = 32;

/// What every file of a scan shares.
#[derive(Clone)]
pub struct ReadContext {
    /// The table's store.
    pub store: Store,
    /// The table root (absolute deletion vector paths are resolved against it).
    pub location: TableLocation,
    /// Columns read from each file (output columns and predicate-only columns).
    pub columns: Arc<Vec<ReadColumn>>,
    /// Schema of the read columns.
    pub read_schema: SchemaRef,
    /// Indexes of `columns` that are output, in output order.
    pub output_indices: Arc<Vec<usize>>,
    /// Output schema.
    pub output_schema: SchemaRef,
    /// Column mapping mode of the table.
    pub mode: ColumnMappingMode,
    /// Rows per batch.
    pub batch_size: usize,
    /// Row predicate, if any.
    pub predicate: Option<RowPredicate>,
    /// The bound predicate `predicate` evaluates, if known. With it, row groups are pruned by
    /// their statistics and the predicate is evaluated while decoding (a Parquet row filter,
    /// through `predicate` when set); without it, `predicate` filters decoded batches.
    pub predicate_expr: Option<Arc<BoundExpr>>,
    /// Row groups left out because their statistics rule the predicate out, over all files.
    pub row_groups_pruned: Arc<AtomicU64>,
    /// The Arrow types strings and binaries are decoded as (those of `columns`' fields).
    pub output_types: OutputTypes,
}

impl std::fmt::Debug for ReadContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadContext")
            .field("read_schema", &self.read_schema)
            .field("output_schema", &self.output_schema)
            .field("mode", &self.mode)
            .field("batch_size", &self.batch_size)
            .field("output_types", &self.output_types)
            .field("predicate", &self.predicate.is_some())
            .field("predicate_expr", &self.predicate_expr)
            .field(
                "row_groups_pruned",
                &self.row_groups_pruned.load(Ordering::Relaxed),
            )
            .finish()
    }
}

fn parquet_error(path: &str, source: parquet::errors::ParquetError) -> DeltaError {
    DeltaError::Parquet {
        path: path.to_string(),
        phase: Phase::Read,
        source,
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
                crate::log::data_file_path(ctx.location.url(), &path)?
            } else {
                path
            };
            let bytes = ctx.store.get_range(&path, offset..offset + size).await?;
            decode_file_range(dv, &path, &bytes)
        }
    }
}

/// A file ready to decode.
struct Opened {
    reads: RowGroupReads,
    transform: FileTransform,
    /// The columns `transform` produces: every read column when `post_filter`, else only the
    /// output columns, in output order.
    columns: Vec<ReadColumn>,
    /// Whether the predicate must still be applied to decoded batches (it is not evaluated by
    /// the decoder).
    post_filter: bool,
}

/// Opens a file: footer, row-group pruning, deletion vector, row filter, decoder. `None` when
/// no row of the file can be returned.
async fn open(
    ctx: &ReadContext,
    task: &FileTask,
    metrics: Option<&DeltaScanMetrics>,
) -> Result<Option<Opened>> {
    let path = task.path.as_str();
    let metadata = read_metadata(ctx.store.as_ref(), path, task.size).await?;
    let arrow_metadata = reader_metadata(&metadata, path, ctx.output_types)?;
    let file_schema = Arc::clone(arrow_metadata.schema());
    let descr = metadata.file_metadata().schema_descr_ptr();

    // A ranged task reads the row groups its range owns, the others none.
    let owned: Vec<usize> = match &task.range {
        Some(range) => super::ranges::owned_row_groups(&metadata, range),
        None => (0..metadata.num_row_groups()).collect(),
    };
    if owned.is_empty() {
        return Ok(None);
    }
    // Row groups whose statistics rule the predicate out.
    let mut row_groups: Vec<usize> = match &ctx.predicate_expr {
        Some(expr) => prune_row_groups(
            expr,
            &metadata,
            &ctx.columns,
            &task.partition_values,
            ctx.mode,
            task.deletion_vector.is_some(),
        ),
        None => (0..metadata.num_row_groups()).collect(),
    };
    row_groups.retain(|i| owned.contains(i));
    let pruned = owned.len() - row_groups.len();
    if pruned > 0 {
        ctx.row_groups_pruned
            .fetch_add(pruned as u64, Ordering::Relaxed);
    }
    if row_groups.is_empty() {
        return Ok(None);
    }

    // The row filter, or the post-decode filter when the decoder cannot evaluate it.
    let filter_errors: ErrorSlot = Arc::new(Mutex::new(None));
    let filter = match &ctx.predicate_expr {
        Some(expr) => plan_row_filter(
            expr,
            ctx.predicate.as_ref(),
            &ctx.columns,
            &task.partition_values,
            &file_schema,
            &descr,
            ctx.mode,
            &filter_errors,
        )?,
        None => None,
    };
    let (row_filter, post_filter) = match filter {
        Some(FilterPlan::NoRows) => return Ok(None),
        Some(FilterPlan::AllRows) => (None, false),
        Some(FilterPlan::Filter(f)) => (Some(f), false),
        None => (None, ctx.predicate.is_some()),
    };

    // Once the decoder has filtered, columns only the predicate reads are not decoded again:
    // the transform makes the output columns alone.
    let (columns, schema, values) = if post_filter {
        (
            ctx.columns.to_vec(),
            Arc::clone(&ctx.read_schema),
            task.partition_values.clone(),
        )
    } else {
        let columns: Vec<ReadColumn> = ctx
            .output_indices
            .iter()
            .filter_map(|&i| ctx.columns.get(i).cloned())
            .collect();
        let values = ctx
            .output_indices
            .iter()
            .map(|&i| task.partition_values.get(i).cloned().flatten())
            .collect::<Vec<_>>();
        let schema = Arc::new(Schema::new(
            columns
                .iter()
                .map(|c| Arc::clone(&c.arrow))
                .collect::<Vec<_>>(),
        ));
        (columns, schema, values)
    };
    let (roots, projected) = projected_file_schema(&file_schema, &columns, ctx.mode);
    let transform = FileTransform::new(schema, &columns, &values, &projected, ctx.mode);
    let mask = ProjectionMask::roots(&descr, roots);
    let mut builder = ParquetPushDecoderBuilder::new_with_metadata(arrow_metadata)
        .with_projection(mask)
        .with_batch_size(ctx.batch_size.max(1));
    let (mut selection, mut masked) = (None, None);
    if let Some(dv) = &task.deletion_vector {
        let deleted = load_deletion_vector(ctx, dv).await?;
        if let Some(m) = metrics {
            m.deletion_vector_loaded(deleted.cardinality());
        }
        let mut first = 0u64;
        let mut groups = Vec::with_capacity(metadata.num_row_groups());
        for rg in metadata.row_groups() {
            let rows = u64::try_from(rg.num_rows()).unwrap_or(0);
            groups.push((first, rows));
            first += rows;
        }
        // Only the indexes of rows the file has count (others are ignored, as delta_kernel
        // ignores them): a vector naming rows past the end must not hide the whole file.
        if deleted.deleted_in(0, first) >= first {
            return Ok(None);
        }
        // Row groups whose rows are all deleted are not read either.
        row_groups.retain(|&i| {
            let (start, rows) = groups[i];
            deleted.deleted_in(start, rows) < rows
        });
        if row_groups.is_empty() {
            return Ok(None);
        }
        // The selection covers the row groups read, and only those.
        let kept: Vec<(u64, u64)> = row_groups.iter().map(|&i| groups[i]).collect();
        let rows: u64 = kept.iter().map(|&(_, n)| n).sum();
        let chosen = deleted.row_selection(&kept);
        // Deletes scattered over short runs are cheaper to drop from decoded batches: the
        // decoder would decode those rows anyway and filter them by a mask, after working out
        // the pages of every column from each run. Long runs stay a selection, which skips
        // whole pages.
        if row_filter.is_none() && rows / (chosen.iter().count() as u64).max(1) < MIN_SELECTED_RUN {
            let starts = groups.iter().map(|&(start, _)| start).collect();
            masked = Some(DeletedRows::new(deleted, starts));
        } else {
            selection = Some(chosen);
        }
    }
    if row_groups.len() < metadata.num_row_groups() {
        builder = builder.with_row_groups(row_groups);
    }
    if let Some(selection) = selection {
        builder = builder.with_row_selection(selection);
    }
    if let Some(filter) = row_filter {
        builder = builder.with_row_filter(filter);
    }
    // Parquet applies the limit after the row selection and the row filter; rows dropped
    // after decoding (the predicate, masked deletes) would count against it.
    let decoder_limit = !post_filter && masked.is_none();
    if decoder_limit {
        if let Some(limit) = task.limit {
            builder = builder.with_limit(limit);
        }
    }
    let decoder = builder.build().map_err(|e| parquet_error(path, e))?;
    let read_ahead = decoder_limit || task.limit.is_none();
    Ok(Some(Opened {
        reads: RowGroupReads::new(
            decoder,
            ctx.store.clone(),
            path,
            read_ahead,
            masked,
            filter_errors,
        ),
        transform,
        columns,
        post_filter,
    }))
}

struct FileState {
    ctx: ReadContext,
    task: FileTask,
    metrics: Option<Arc<DeltaScanMetrics>>,
    decoder: Option<Opened>,
    opened: bool,
    emitted: usize,
}

/// What turns a decoded batch of file columns into output rows.
pub(crate) struct BatchFinish<'a> {
    pub(crate) ctx: &'a ReadContext,
    pub(crate) transform: &'a FileTransform,
    /// The columns `transform` produces.
    pub(crate) columns: &'a [ReadColumn],
    /// Whether the predicate must still be applied (then `columns` are all read columns).
    pub(crate) post_filter: bool,
    pub(crate) limit: Option<usize>,
}

impl BatchFinish<'_> {
    /// Applies the transform, the predicate (when the decoder did not), the limit (counting
    /// `emitted`) and the output projection. `None` when no row is left.
    pub(crate) fn apply(
        &self,
        batch: RecordBatch,
        emitted: &mut usize,
    ) -> Result<Option<RecordBatch>> {
        let ctx = self.ctx;
        let mut batch = self.transform.apply(&batch, self.columns)?;
        if self.post_filter {
            if let Some(predicate) = &ctx.predicate {
                let keep = predicate(&batch)?;
                batch = arrow_select::filter::filter_record_batch(&batch, &keep)
                    .map_err(arrow_error)?;
            }
            batch = batch.project(&ctx.output_indices).map_err(arrow_error)?;
        }
        if let Some(limit) = self.limit {
            let left = limit.saturating_sub(*emitted);
            if batch.num_rows() > left {
                batch = batch.slice(0, left);
            }
        }
        if batch.num_rows() == 0 {
            return Ok(None);
        }
        *emitted += batch.num_rows();
        let batch = RecordBatch::try_new_with_options(
            Arc::clone(&ctx.output_schema),
            batch.columns().to_vec(),
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )
        .map_err(arrow_error)?;
        Ok(Some(batch))
    }
}

fn finish_batch(
    state: &mut FileState,
    batch: RecordBatch,
    opened: &Opened,
) -> Result<Option<RecordBatch>> {
    let finish = BatchFinish {
        ctx: &state.ctx,
        transform: &opened.transform,
        columns: &opened.columns,
        post_filter: opened.post_filter,
        limit: state.task.limit,
    };
    finish.apply(batch, &mut state.emitted)
}

async fn next_batch(state: &mut FileState) -> Result<Option<RecordBatch>> {
    if !state.opened {
        state.opened = true;
        state.decoder = open(&state.ctx, &state.task, state.metrics.as_deref()).await?;
    }
    loop {
        if state.task.limit.is_some_and(|l| state.emitted >= l) {
            return Ok(None);
        }
        let Some(mut opened) = state.decoder.take() else {
            return Ok(None);
        };
        let Some(batch) = opened.reads.next().await? else {
            return Ok(None);
        };
        let out = finish_batch(state, batch, &opened);
        state.decoder = Some(opened);
        if let Some(b) = out? {
            return Ok(Some(b));
        }
    }
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
    let state = FileState {
        ctx,
        task,
        metrics,
        decoder: None,
        opened: false,
        emitted: 0,
    };
    stream::try_unfold(state, |mut state| async move {
        let next = next_batch(&mut state).await?;
        Ok(next.map(|b| (b, state)))
    })
    .boxed_local_or_send()
}
