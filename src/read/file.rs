//! Reading one data file over a [`RangeRead`] into logical record batches.
//!
//! The footer comes first (see `footer`); then arrow-rs's sans-io `ParquetPushDecoder` says
//! which byte ranges it needs, this driver fetches them (coalesced) and pushes them back.
//! Only the projected columns are fetched; deleted rows (deletion vectors) are skipped by a
//! row selection so they are never decoded; INT96 timestamps are read as microseconds; each
//! decoded batch goes through the file's [`FileTransform`] and the row predicate.

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use futures::stream;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::push_decoder::{ParquetPushDecoder, ParquetPushDecoderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::ParquetMetaData;
use parquet::DecodeResult;

use super::coalesce::{coalesce, slice, COALESCE_GAP};
use super::deletion_vector::{decode_file_range, decode_inline, dv_source, DvSource};
use super::footer::read_metadata;
use super::transform::{needed_file_columns, FileTransform, ReadColumn};
use crate::error::{DeltaError, Phase, Result};
use crate::io::{BoxStream, BoxedStream, Store};
use crate::log::DeletionVectorDescriptor;
use crate::schema::ColumnMappingMode;

/// Evaluates the scan's row predicate on a batch of read columns; `true` keeps the row.
pub type RowPredicate = Arc<dyn Fn(&RecordBatch) -> Result<BooleanArray> + Send + Sync>;

/// What every file of a scan shares.
#[derive(Clone)]
pub struct ReadContext {
    /// The table's store.
    pub store: Store,
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
}

impl std::fmt::Debug for ReadContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadContext")
            .field("read_schema", &self.read_schema)
            .field("output_schema", &self.output_schema)
            .field("mode", &self.mode)
            .field("batch_size", &self.batch_size)
            .field("predicate", &self.predicate.is_some())
            .finish()
    }
}

/// One data file to read.
#[derive(Debug, Clone)]
pub struct FileTask {
    /// Path relative to the table root (percent-decoded), or an absolute URL.
    pub path: String,
    /// Size in bytes, from `add.size`.
    pub size: u64,
    /// For each read column: its partition value in this file (partition columns only).
    pub partition_values: Vec<Option<ArrayRef>>,
    /// The file's deletion vector.
    pub deletion_vector: Option<DeletionVectorDescriptor>,
    /// Stop after this many rows (applied when there is no row predicate).
    pub limit: Option<usize>,
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
fn int96_as_micros(metadata: &Arc<ParquetMetaData>, default: &Schema) -> Option<SchemaRef> {
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

async fn load_deletion_vector(
    ctx: &ReadContext,
    dv: &DeletionVectorDescriptor,
) -> Result<super::deletion_vector::DeletionVector> {
    match dv_source(dv)? {
        DvSource::Inline(_) => decode_inline(dv),
        DvSource::File { path, offset, size } => {
            let bytes = ctx.store.get_range(&path, offset..offset + size).await?;
            decode_file_range(dv, &path, &bytes)
        }
    }
}

/// Opens a file: footer, deletion vector, decoder.
async fn open(
    ctx: &ReadContext,
    task: &FileTask,
) -> Result<Option<(ParquetPushDecoder, FileTransform)>> {
    let path = task.path.as_str();
    let metadata = read_metadata(ctx.store.as_ref(), path, task.size).await?;
    let options = ArrowReaderOptions::new();
    let plain = ArrowReaderMetadata::try_new(Arc::clone(&metadata), options.clone())
        .map_err(|e| parquet_error(path, e))?;
    let arrow_metadata = match int96_as_micros(&metadata, plain.schema()) {
        Some(hint) => {
            ArrowReaderMetadata::try_new(Arc::clone(&metadata), options.with_schema(hint))
                .map_err(|e| parquet_error(path, e))?
        }
        None => plain,
    };
    let file_schema = Arc::clone(arrow_metadata.schema());
    let roots = needed_file_columns(&file_schema, &ctx.columns, ctx.mode);
    let projected = Schema::new(
        roots
            .iter()
            .map(|&i| file_schema.field(i).clone())
            .collect::<Vec<_>>(),
    );
    let transform = FileTransform::new(
        Arc::clone(&ctx.read_schema),
        &ctx.columns,
        &task.partition_values,
        &projected,
        ctx.mode,
    );
    let mask = ProjectionMask::roots(metadata.file_metadata().schema_descr(), roots);
    let mut builder = ParquetPushDecoderBuilder::new_with_metadata(arrow_metadata)
        .with_projection(mask)
        .with_batch_size(ctx.batch_size.max(1));
    if let Some(dv) = &task.deletion_vector {
        let deleted = load_deletion_vector(ctx, dv).await?;
        let mut first = 0u64;
        let mut groups = Vec::with_capacity(metadata.num_row_groups());
        for rg in metadata.row_groups() {
            let rows = u64::try_from(rg.num_rows()).unwrap_or(0);
            groups.push((first, rows));
            first += rows;
        }
        if deleted.cardinality() >= first {
            return Ok(None);
        }
        builder = builder.with_row_selection(deleted.row_selection(&groups));
    }
    if ctx.predicate.is_none() {
        if let Some(limit) = task.limit {
            builder = builder.with_limit(limit);
        }
    }
    let decoder = builder.build().map_err(|e| parquet_error(path, e))?;
    Ok(Some((decoder, transform)))
}

/// Fetches what the decoder asked for, coalescing nearby ranges.
async fn fetch(
    ctx: &ReadContext,
    path: &str,
    ranges: &[std::ops::Range<u64>],
) -> Result<Vec<bytes::Bytes>> {
    let merged = coalesce(ranges, COALESCE_GAP);
    let fetches = merged
        .iter()
        .map(|(r, _)| ctx.store.get_range(path, r.clone()));
    let data = futures::future::try_join_all(fetches).await?;
    let mut out = vec![bytes::Bytes::new(); ranges.len()];
    for ((fetched, members), bytes) in merged.iter().zip(data.iter()) {
        for &i in members {
            out[i] = slice(fetched, bytes, &ranges[i]).ok_or_else(|| DeltaError::Io {
                path: path.to_string(),
                message: "a coalesced read returned fewer bytes than asked".into(),
                phase: Phase::Read,
                transient: false,
            })?;
        }
    }
    Ok(out)
}

struct FileState {
    ctx: ReadContext,
    task: FileTask,
    decoder: Option<(ParquetPushDecoder, FileTransform)>,
    opened: bool,
    emitted: usize,
}

/// Applies the transform, the predicate, the limit and the output projection.
fn finish_batch(
    state: &mut FileState,
    batch: RecordBatch,
    transform: &FileTransform,
) -> Result<Option<RecordBatch>> {
    let ctx = &state.ctx;
    let mut batch = transform.apply(&batch, &ctx.columns)?;
    if let Some(predicate) = &ctx.predicate {
        let keep = predicate(&batch)?;
        batch = arrow_select::filter::filter_record_batch(&batch, &keep).map_err(arrow_error)?;
    }
    if let Some(limit) = state.task.limit {
        let left = limit.saturating_sub(state.emitted);
        if batch.num_rows() > left {
            batch = batch.slice(0, left);
        }
    }
    if batch.num_rows() == 0 {
        return Ok(None);
    }
    state.emitted += batch.num_rows();
    let batch = batch.project(&ctx.output_indices).map_err(arrow_error)?;
    let batch = RecordBatch::try_new_with_options(
        Arc::clone(&ctx.output_schema),
        batch.columns().to_vec(),
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(arrow_error)?;
    Ok(Some(batch))
}

async fn next_batch(state: &mut FileState) -> Result<Option<RecordBatch>> {
    if !state.opened {
        state.opened = true;
        state.decoder = open(&state.ctx, &state.task).await?;
    }
    loop {
        if state.task.limit.is_some_and(|l| state.emitted >= l) {
            return Ok(None);
        }
        let Some((mut decoder, transform)) = state.decoder.take() else {
            return Ok(None);
        };
        let step = decoder
            .try_decode()
            .map_err(|e| parquet_error(&state.task.path, e))?;
        match step {
            DecodeResult::NeedsData(ranges) => {
                let data = fetch(&state.ctx, &state.task.path, &ranges).await?;
                decoder
                    .push_ranges(ranges, data)
                    .map_err(|e| parquet_error(&state.task.path, e))?;
                state.decoder = Some((decoder, transform));
            }
            DecodeResult::Data(batch) => {
                let out = finish_batch(state, batch, &transform);
                state.decoder = Some((decoder, transform));
                if let Some(b) = out? {
                    return Ok(Some(b));
                }
            }
            DecodeResult::Finished => return Ok(None),
        }
    }
}

/// The batches of one file, as a stream.
pub fn read_file(ctx: ReadContext, task: FileTask) -> BoxStream<'static, Result<RecordBatch>> {
    let state = FileState {
        ctx,
        task,
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
