//! Our readers: the streaming API with default options
//! (`DeltaTableBuilder … scan() … build().await?.into_stream()`), and the DataFusion adapter
//! with the session defaults of `dar sql` (`SessionContext::new()`, eagerly loaded scan
//! metadata, `ScanOptions::default()`), batches dropped as they arrive. Bytes read are the
//! table store's own counters (log and data).

use std::time::Instant;

use arrow_array::RecordBatch;
use datafusion::prelude::SessionContext;
use delta_arrow_reader::datafusion::{register_table, ScanOptions};
use delta_arrow_reader::io::IoCounters;
use delta_arrow_reader::DeltaTableBuilder;
use futures::{Stream, StreamExt};

use crate::cell::{CellResult, Tally};
use crate::scenario::{Kind, Scenario};

/// The result of a run of ours, its bytes from the table store's counters.
fn finish(started: Instant, ttfb: Option<f64>, tally: &Tally, counters: &IoCounters) -> CellResult {
    CellResult::measured(
        started,
        ttfb,
        tally,
        counters.snapshot().bytes_received,
        "metrics",
    )
}

/// Our streaming API on `location`.
pub async fn streaming(location: &str, s: &Scenario) -> Result<CellResult, String> {
    let started = Instant::now();
    let builder = DeltaTableBuilder::new(location);
    if s.kind == Kind::LogLoad {
        // Open and list: the load that keeps the active files replays the log once (a lazy
        // load would replay it a second time to list them).
        let table = builder
            .load_table_with_eager_scan_metadata()
            .await
            .map_err(|e| e.to_string())?;
        let counters = table.io_counters();
        let files = table.active_files().await.map_err(|e| e.to_string())?;
        let tally = Tally {
            rows: files.len() as u64,
            checksum: files.iter().map(|f| f.size).sum(),
        };
        return Ok(finish(started, None, &tally, &counters));
    }
    let table = builder.load_table().await.map_err(|e| e.to_string())?;
    let counters = table.io_counters();
    let scan = s
        .scan_builder(&table)
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let mut stream = scan.into_stream();
    drain(&mut stream, started, &counters).await
}

/// Reads `stream` to its end, batches dropped: the run's result (time to the first batch,
/// the tally of the rows, the bytes `counters` saw).
async fn drain<E: std::fmt::Display>(
    stream: &mut (impl Stream<Item = Result<RecordBatch, E>> + Unpin),
    started: Instant,
    counters: &IoCounters,
) -> Result<CellResult, String> {
    let mut tally = Tally::default();
    let mut ttfb = None;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(|e| e.to_string())?;
        ttfb.get_or_insert_with(|| started.elapsed().as_secs_f64());
        tally.add(&batch);
    }
    Ok(finish(started, ttfb, &tally, counters))
}

/// Our DataFusion adapter on `location`, as `dar sql` sets it up.
pub async fn datafusion(location: &str, s: &Scenario) -> Result<CellResult, String> {
    let started = Instant::now();
    let ctx = SessionContext::new();
    let table = DeltaTableBuilder::new(location)
        .load_table_with_eager_scan_metadata()
        .await
        .map_err(|e| e.to_string())?;
    let counters = table.io_counters();
    register_table(&ctx, "lineitem", table, ScanOptions::default()).map_err(|e| e.to_string())?;
    let frame = ctx.sql(&s.sql()).await.map_err(|e| e.to_string())?;
    let mut stream = frame.execute_stream().await.map_err(|e| e.to_string())?;
    drain(&mut stream, started, &counters).await
}
