//! The limit: arrow-rs's synchronous Parquet reader decoding exactly the files our scan plans
//! (`DeltaScan::tasks()`), only the row groups whose statistics can match the filter (the
//! row groups our reader keeps), the same columns, the same string types as our output (a
//! schema hint), the deletion vectors as a row selection and the `l_orderkey` range as a
//! Parquet row filter, as our reader does. Planning (the Delta log) is not timed: only the
//! decoding, on one thread or on one thread per core, each taking the next file; with fewer
//! files than threads, each file's row groups are cut into one run per thread (read the
//! footers before the clock starts), or, for a file of fewer row groups than threads, its
//! rows into one share per thread (a row selection, pages skipped by the page index), so
//! every thread decodes. Partition columns are not materialised. Bytes read are the
//! process's `rchar`.
//!
//! A diagnostic variant keeps the last `held` batches of each thread alive instead of dropping
//! each at once (`--cell arrow-rs-all-held-N SCENARIO`): a stream consumed on another thread
//! holds the batches its partitions decoded ahead, so their memory is not reused while still
//! in the decoding core's caches. It is not a column of the table.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arrow_array::{BooleanArray, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use delta_arrow_reader::deletion_vector::{decode_file_range, dv_source, DvSource};
use delta_arrow_reader::log::DeletionVectorDescriptor;
use delta_arrow_reader::DeltaTableBuilder;
use delta_arrow_reader::DEFAULT_BATCH_SIZE;
use parquet::arrow::arrow_reader::{
    ArrowPredicateFn, ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
    RowFilter, RowSelection, RowSelector,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};
use parquet::file::statistics::Statistics;

use crate::cell::{rchar, CellResult, Tally};
use crate::scenario::{Filter, Scenario};

/// One file our scan reads, or a run of its row groups.
#[derive(Clone)]
struct Planned {
    path: PathBuf,
    deletion_vector: Option<DeletionVectorDescriptor>,
    /// Only these row groups (all when `None`).
    row_groups: Option<std::ops::Range<usize>>,
    /// Only these rows of the file (all when `None`): a share of row groups fewer than the
    /// threads, read through a row selection and the page index.
    rows: Option<std::ops::Range<u64>>,
}

/// The files our scan of `s` on the table in `dir` reads, and its output schema.
async fn plan(dir: &Path, s: &Scenario) -> Result<(Vec<Planned>, SchemaRef), String> {
    let location = dir.to_string_lossy().into_owned();
    let table = DeltaTableBuilder::new(location)
        .load_table()
        .await
        .map_err(|e| e.to_string())?;
    let scan = s
        .scan_builder(&table)
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let files = scan
        .tasks()
        .iter()
        .map(|t| Planned {
            path: dir.join(&t.path),
            deletion_vector: t.deletion_vector.clone(),
            row_groups: None,
            rows: None,
        })
        .collect();
    Ok((files, scan.schema()))
}

/// Whether row group `rg` may hold a row of `filter`, judged from its `l_orderkey`
/// statistics (a partition filter keeps every row group of the files it kept).
fn may_match(metadata: &ParquetMetaData, rg: usize, filter: Option<Filter>) -> bool {
    let Some(Filter::Orderkeys(lo, hi)) = filter else {
        return true;
    };
    let group = metadata.row_group(rg);
    let column = group
        .columns()
        .iter()
        .find(|c| c.column_path().string() == "l_orderkey");
    match column.and_then(|c| c.statistics()) {
        Some(Statistics::Int64(v)) => match (v.min_opt(), v.max_opt()) {
            (Some(&min), Some(&max)) => max >= lo && min < hi,
            _ => true,
        },
        _ => true,
    }
}

/// Over every data file of the table in `dir`: (row groups whose statistics can match the
/// filter of `s`, all row groups, their compressed bytes).
pub fn matching_row_groups(dir: &Path, s: &Scenario) -> Result<(usize, usize, u64), String> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| e.to_string())?.flatten() {
            let p = entry.path();
            if p.is_dir() && !p.ends_with("_delta_log") {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "parquet") {
                files.push(p);
            }
        }
    }
    let (mut matching, mut all, mut bytes) = (0, 0, 0u64);
    for path in files {
        let file = File::open(&path).map_err(|e| e.to_string())?;
        let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
            .map_err(|e| e.to_string())?;
        let metadata = meta.metadata();
        for rg in 0..metadata.num_row_groups() {
            all += 1;
            if may_match(metadata, rg, s.filter) {
                matching += 1;
                bytes += metadata.row_group(rg).compressed_size() as u64;
            }
        }
    }
    Ok((matching, all, bytes))
}

/// The file's Arrow schema with the string types of our output.
fn hinted_schema(file: &Schema, output: &Schema) -> SchemaRef {
    let strings =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    let fields: Vec<Field> = file
        .fields()
        .iter()
        .map(|f| match output.field_with_name(f.name()) {
            Ok(o) if strings(o.data_type()) && strings(f.data_type()) => {
                f.as_ref().clone().with_data_type(o.data_type().clone())
            }
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new(fields))
}

fn read_deletion_vector(
    table: &Path,
    descriptor: &DeletionVectorDescriptor,
) -> Result<delta_arrow_reader::deletion_vector::DeletionVector, String> {
    let DvSource::File { path, offset, size } = dv_source(descriptor).map_err(|e| e.to_string())?
    else {
        return Err("only file deletion vectors are generated".into());
    };
    let mut file = File::open(table.join(&path)).map_err(|e| e.to_string())?;
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| e.to_string())?;
    let mut bytes = vec![0; size as usize];
    file.read_exact(&mut bytes).map_err(|e| e.to_string())?;
    decode_file_range(descriptor, &path, &bytes).map_err(|e| e.to_string())
}

/// Decodes one planned file, keeping its thread's last `held` batches in `kept` (dropped
/// in the order decoded).
fn read_one(
    table: &Path,
    f: &Planned,
    s: &Scenario,
    output: &Schema,
    (kept, held): (&mut VecDeque<RecordBatch>, usize),
) -> Result<Tally, String> {
    let err = |e: parquet::errors::ParquetError| format!("{}: {e}", f.path.display());
    let file = File::open(&f.path).map_err(|e| e.to_string())?;
    // A share of rows skips the pages of the others by the page index.
    let load =
        ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::from(f.rows.is_some()));
    let meta = ArrowReaderMetadata::load(&file, load).map_err(err)?;
    let options = ArrowReaderOptions::new().with_schema(hinted_schema(meta.schema(), output));
    let meta = ArrowReaderMetadata::try_new(Arc::clone(meta.metadata()), options).map_err(err)?;
    let metadata = Arc::clone(meta.metadata());
    let file_fields = meta.schema().fields().clone();
    let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(file, meta);
    let roots: Vec<usize> = file_fields
        .iter()
        .enumerate()
        .filter(|(_, field)| {
            s.projection
                .is_none_or(|p| p.contains(&field.name().as_str()))
        })
        .map(|(i, _)| i)
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let mut first_row = 0u64;
    let mut groups = Vec::new();
    let mut spans = Vec::new();
    let run = f.row_groups.clone().unwrap_or(0..metadata.num_row_groups());
    let share = f.rows.clone().unwrap_or(0..u64::MAX);
    let mut mine = Vec::new();
    for rg in 0..metadata.num_row_groups() {
        let rows = metadata.row_group(rg).num_rows() as u64;
        let end = first_row + rows;
        let overlaps = share.start < end && first_row < share.end;
        if run.contains(&rg) && overlaps && may_match(&metadata, rg, s.filter) {
            groups.push(rg);
            spans.push((first_row, rows));
            let (from, to) = (share.start.max(first_row), share.end.min(end));
            mine.push(RowSelector::skip((from - first_row) as usize));
            mine.push(RowSelector::select((to - from) as usize));
            mine.push(RowSelector::skip((end - to) as usize));
        }
        first_row = end;
    }
    let mine: Option<RowSelection> = f.rows.is_some().then(|| mine.into_iter().collect());
    let deletes = match &f.deletion_vector {
        Some(d) => Some(read_deletion_vector(table, d)?.row_selection(&spans)),
        None => None,
    };
    let selection = match (mine, deletes) {
        (Some(mine), Some(deletes)) => Some(mine.intersection(&deletes)),
        (mine, deletes) => mine.or(deletes),
    };
    if let Some(selection) = selection {
        builder = builder.with_row_selection(selection);
    }
    if let Some(Filter::Orderkeys(lo, hi)) = s.filter {
        let key = file_fields
            .iter()
            .position(|f| f.name() == "l_orderkey")
            .ok_or("no l_orderkey column")?;
        let columns = ProjectionMask::roots(builder.parquet_schema(), [key]);
        let predicate = ArrowPredicateFn::new(columns, move |batch: RecordBatch| {
            let keys = batch
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .map(|k| {
                    k.iter()
                        .map(|v| v.map(|v| lo <= v && v < hi))
                        .collect::<BooleanArray>()
                });
            keys.ok_or_else(|| arrow_schema::ArrowError::CastError("l_orderkey".into()))
        });
        builder = builder.with_row_filter(RowFilter::new(vec![Box::new(predicate)]));
    }
    let reader = builder
        .with_projection(mask)
        .with_row_groups(groups)
        .with_batch_size(DEFAULT_BATCH_SIZE)
        .build()
        .map_err(err)?;
    let mut tally = Tally::default();
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        tally.add(&batch);
        if held > 0 {
            kept.push_back(batch);
            if kept.len() > held {
                kept.pop_front();
            }
        }
    }
    Ok(tally)
}

/// Each of `files` as up to `threads` runs of consecutive row groups, as even as can be; a
/// file of fewer row groups than `threads` as `threads` equal shares of its rows.
fn cut_into_runs(files: Vec<Planned>, threads: usize) -> Result<Vec<Planned>, String> {
    let mut units = Vec::new();
    for f in files {
        let file = File::open(&f.path).map_err(|e| e.to_string())?;
        let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
            .map_err(|e| format!("{}: {e}", f.path.display()))?;
        let groups = meta.metadata().num_row_groups();
        if groups < threads {
            let rows = meta.metadata().file_metadata().num_rows().max(0) as u64;
            let shares = threads as u64;
            for k in 0..shares {
                units.push(Planned {
                    rows: Some(rows * k / shares..rows * (k + 1) / shares),
                    ..f.clone()
                });
            }
            continue;
        }
        let runs = threads.min(groups).max(1);
        for k in 0..runs {
            units.push(Planned {
                row_groups: Some(groups * k / runs..groups * (k + 1) / runs),
                ..f.clone()
            });
        }
    }
    Ok(units)
}

/// Runs scenario `s` on the table in `dir` with `threads` decoding threads, each keeping its
/// last `held` batches alive (0: each dropped once tallied).
pub fn run(dir: &Path, s: &Scenario, threads: usize, held: usize) -> Result<CellResult, String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let (files, output) = runtime.block_on(plan(dir, s))?;
    drop(runtime);
    let files = if files.len() < threads {
        cut_into_runs(files, threads)?
    } else {
        files
    };
    let read_before = rchar();
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let total = Mutex::new(Ok(Tally::default()));
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let mut kept = VecDeque::with_capacity(held + 1);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = files.get(i) else { return };
                    let one = read_one(dir, f, s, &output, (&mut kept, held));
                    let mut total = total.lock().unwrap_or_else(|p| p.into_inner());
                    match (total.as_mut(), one) {
                        (Ok(t), Ok(one)) => t.merge(one),
                        (Ok(_), Err(e)) => *total = Err(e),
                        (Err(_), _) => {}
                    }
                }
            });
        }
    });
    let tally = total.into_inner().unwrap_or_else(|p| p.into_inner())?;
    Ok(CellResult::measured(
        started,
        None,
        &tally,
        rchar().saturating_sub(read_before),
        "rchar",
    ))
}
