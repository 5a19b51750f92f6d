//! `delta_kernel` 0.30.1's default engine, used directly: `Snapshot::builder_for(url)`,
//! `scan_builder()` with the projected schema and the filter as a kernel predicate (kernel
//! uses it to skip files), then `Scan::execute`, which applies deletion vectors. Kernel does
//! not filter rows, so the scan's filter is applied to its batches here (arrow kernels),
//! as a user of `execute` must. Log loads list the files with `scan_metadata`. Bytes read are
//! the process's `rchar` (local files) or the server's count (HTTP).

use std::sync::Arc;
use std::time::Instant;

use arrow_array::{Array, BooleanArray, Int32Array, Int64Array, RecordBatch};
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::expressions::{Expression, Predicate};
use delta_kernel::object_store::local::LocalFileSystem;
use delta_kernel::object_store::DynObjectStore;
use delta_kernel::scan::state::ScanFile;
use delta_kernel::Snapshot;
use delta_kernel_default_engine::DefaultEngineBuilder;

use crate::cell::{rchar, CellResult, Tally};
use crate::scenario::{Filter, Kind, Scenario};

fn predicate(f: Filter) -> Predicate {
    match f {
        Filter::Orderkeys(lo, hi) => Predicate::and(
            Expression::column(["l_orderkey"]).ge(Expression::literal(lo)),
            Expression::column(["l_orderkey"]).lt(Expression::literal(hi)),
        ),
        Filter::Year(y) => Expression::column(["l_year"]).eq(Expression::literal(y)),
    }
}

/// The rows of `batch` that `f` keeps.
pub fn filter_rows(batch: &RecordBatch, f: Filter) -> Result<RecordBatch, String> {
    let keep: BooleanArray = match f {
        Filter::Orderkeys(lo, hi) => {
            let keys = batch
                .column_by_name("l_orderkey")
                .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
                .ok_or("no Int64 l_orderkey column")?;
            keys.iter().map(|k| k.map(|k| lo <= k && k < hi)).collect()
        }
        Filter::Year(y) => {
            let years = batch
                .column_by_name("l_year")
                .and_then(|c| c.as_any().downcast_ref::<Int32Array>())
                .ok_or("no Int32 l_year column")?;
            years.iter().map(|v| v.map(|v| v == y)).collect()
        }
    };
    arrow_select::filter::filter_record_batch(batch, &keep).map_err(|e| e.to_string())
}

fn store_for(url: &url::Url) -> Result<Arc<DynObjectStore>, String> {
    if url.scheme() == "file" {
        return Ok(Arc::new(LocalFileSystem::new()));
    }
    let root = format!("{}://{}", url.scheme(), url.authority());
    let store = object_store::http::HttpBuilder::new()
        .with_url(root)
        .with_client_options(object_store::ClientOptions::new().with_allow_http(true))
        .build()
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(store))
}

fn on_file(acc: &mut Tally, file: ScanFile) {
    acc.rows += 1;
    acc.checksum += file.size;
}

/// Runs scenario `s` with kernel on the table at `url` (a `file://` or `http://` URL ending
/// in `/`). Call it outside any Tokio runtime: the engine runs its own.
pub fn run(url: &url::Url, s: &Scenario) -> Result<CellResult, String> {
    let engine = Arc::new(DefaultEngineBuilder::new(store_for(url)?).build());
    let read_before = rchar();
    let started = Instant::now();
    let snapshot = Snapshot::builder_for(url.as_str())
        .build(engine.as_ref())
        .map_err(|e| format!("snapshot: {e}"))?;
    let mut builder = snapshot.clone().scan_builder();
    if let Some(columns) = s.projection {
        let schema = snapshot
            .schema()
            .project(columns)
            .map_err(|e| format!("projection: {e}"))?;
        builder = builder.with_schema(schema);
    }
    if let Some(f) = s.filter {
        builder = builder.with_predicate(Arc::new(predicate(f)));
    }
    let scan = builder.build().map_err(|e| format!("scan: {e}"))?;
    let mut tally = Tally::default();
    let mut ttfb = None;
    if s.kind == Kind::LogLoad {
        for meta in scan
            .scan_metadata(engine.as_ref())
            .map_err(|e| format!("scan metadata: {e}"))?
        {
            let meta = meta.map_err(|e| format!("scan metadata: {e}"))?;
            tally = meta
                .visit_scan_files(tally, on_file)
                .map_err(|e| format!("scan files: {e}"))?;
        }
    } else {
        for data in scan.execute(engine).map_err(|e| format!("execute: {e}"))? {
            let data = data.map_err(|e| format!("read: {e}"))?;
            let data = ArrowEngineData::try_from_engine_data(data)
                .map_err(|e| format!("not arrow: {e}"))?;
            let mut batch = data.record_batch().clone();
            if let Some(f) = s.filter {
                batch = filter_rows(&batch, f)?;
            }
            ttfb.get_or_insert_with(|| started.elapsed().as_secs_f64());
            tally.add(&batch);
        }
    }
    Ok(CellResult::measured(
        started,
        ttfb,
        &tally,
        rchar().saturating_sub(read_before),
        "rchar",
    ))
}
