//! Change data feed parity with `delta_kernel` 0.30.1 (`TableChanges`, default engine) over
//! every corpus table that enables the feed in some commit.
//!
//! For each such table and each version `v` from its oldest commit to its newest, two
//! ranges are read by both: the commit alone (`v..=v`) and `v` to the newest. Kernel:
//! `TableChanges::try_new(url, engine, start, Some(end))`, `into_scan_builder().build()`,
//! `execute`. Us: the table loaded at `end`, `changes(start).build()`, `into_stream()`.
//! Both are canonicalised with the `rows` module and compared as multisets of rows, every
//! column (`_commit_timestamp` too: both take the commit file's modification time, or the
//! in-commit timestamp) matched by name.
//!
//! Where kernel reads a range, we must read the same rows; where kernel refuses one (the
//! feed not enabled at the start, a schema change in the range), we must refuse it too. A
//! range we refuse and kernel reads, or the other way round, is a failure, unless listed in
//! [`KNOWN_DIFFERENCES`] with its reason. Every failure is collected; the test fails at the
//! end with a report of them all, and prints how many ranges each outcome had (so a run that
//! compared nothing shows it).
//!
//! Kernel's engine is synchronous: its calls run in `spawn_blocking`.

use crate::common;
use crate::rows;

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::Schema;

use delta_arrow_reader::DeltaTableBuilder;
use delta_kernel::engine::arrow_conversion::TryFromKernel;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::object_store::local::LocalFileSystem;
use delta_kernel::table_changes::TableChanges;
use delta_kernel_default_engine::DefaultEngineBuilder;

use rows::Rows;

/// Ranges where we knowingly answer otherwise than kernel: (table, start, end, reason).
const KNOWN_DIFFERENCES: &[(&str, u64, u64, &str)] = &[];

/// The most versions of one table whose ranges are compared (the corpus's CDF tables have
/// fewer).
const MAX_VERSIONS: u64 = 40;

/// Kernel's changes of `start..=end`, or its error (first line).
fn kernel_changes(
    url: &url::Url,
    start: u64,
    end: u64,
) -> Result<(Schema, Vec<RecordBatch>), String> {
    let read = || -> Result<(Schema, Vec<RecordBatch>), String> {
        let engine = Arc::new(DefaultEngineBuilder::new(Arc::new(LocalFileSystem::new())).build());
        let changes = TableChanges::try_new(url.clone(), engine.as_ref(), start, Some(end))
            .map_err(|e| format!("table changes: {e}"))?;
        let scan = changes
            .into_scan_builder()
            .build()
            .map_err(|e| format!("scan: {e}"))?;
        let schema = Schema::try_from_kernel(scan.logical_schema().as_ref())
            .map_err(|e| format!("schema: {e}"))?;
        let mut batches = Vec::new();
        for data in scan.execute(engine).map_err(|e| format!("execute: {e}"))? {
            let data = data.map_err(|e| format!("read: {e}"))?;
            let data = ArrowEngineData::try_from_engine_data(data)
                .map_err(|e| format!("not arrow: {e}"))?;
            batches.push(data.record_batch().clone());
        }
        Ok((schema, batches))
    };
    catch_unwind(AssertUnwindSafe(read))
        .unwrap_or_else(|_| Err("kernel panicked".into()))
        .map_err(|e| e.lines().next().unwrap_or_default().to_string())
}

/// Our changes of `start..=end`, or our error with its code.
async fn our_changes(dir: &str, start: u64, end: u64) -> Result<Rows, String> {
    let table = DeltaTableBuilder::new(dir)
        .with_version(end)
        .load_table()
        .await
        .map_err(|e| format!("load: [{}] {e}", e.code()))?;
    let changes = table
        .changes(start)
        .build()
        .await
        .map_err(|e| format!("[{}] {e}", e.code()))?;
    let schema = changes.schema();
    let batches = changes
        .into_stream()
        .collect_batches()
        .await
        .map_err(|e| format!("read: [{}] {e}", e.code()))?;
    Rows::from_batches(&schema, &batches).map_err(|e| format!("our batches: {e}"))
}

/// Whether any commit of the table at `dir` turns the change data feed on.
fn enables_the_feed(dir: &std::path::Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir.join("_delta_log")) else {
        return false;
    };
    entries.flatten().any(|e| {
        e.file_name().to_string_lossy().ends_with(".json")
            && std::fs::read_to_string(e.path())
                .is_ok_and(|t| t.contains("\"delta.enableChangeDataFeed\":\"true\""))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_data_feed_matches_delta_kernel_on_every_corpus_table_that_enables_it() {
    let inventory = common::inventory();
    let mut failures = String::new();
    let (mut equal, mut both_refuse, mut known, mut tables) = (0, 0, 0, 0);
    for (name, dir) in common::corpus_tables() {
        if !enables_the_feed(&dir) {
            continue;
        }
        let Some(row) = inventory.iter().find(|r| r.name() == name) else {
            continue;
        };
        let (Some(first), Some(latest)) = (row.first_version(), row.latest_version()) else {
            continue;
        };
        tables += 1;
        let url = url::Url::from_directory_path(&dir).unwrap_or_else(|()| panic!("{dir:?}"));
        let path = dir.to_string_lossy().into_owned();
        let first = first.max(latest.saturating_sub(MAX_VERSIONS));
        let mut ranges: Vec<(u64, u64)> = (first..=latest).map(|v| (v, v)).collect();
        ranges.extend((first..latest).map(|v| (v, latest)));
        for (start, end) in ranges {
            let u = url.clone();
            let kernel = tokio::task::spawn_blocking(move || kernel_changes(&u, start, end))
                .await
                .unwrap_or_else(|e| Err(format!("kernel task: {e}")));
            let ours = our_changes(&path, start, end).await;
            let label = format!("{name} {start}..={end}");
            let known_reason = KNOWN_DIFFERENCES
                .iter()
                .find(|k| k.0 == name && k.1 == start && k.2 == end)
                .map(|k| k.3);
            match (kernel, ours) {
                (Ok((schema, batches)), Ok(ours)) => {
                    let expected = Rows::from_batches(&schema, &batches)
                        .unwrap_or_else(|e| panic!("{label}: kernel batches: {e}"));
                    let cmp = rows::compare(&expected, &ours);
                    if cmp.is_equal() {
                        equal += 1;
                    } else {
                        let _ = writeln!(failures, "{label}: rows differ:\n{}", cmp.report());
                    }
                }
                (Err(_), Err(_)) => both_refuse += 1,
                (kernel, ours) if known_reason.is_some() => {
                    known += 1;
                    println!(
                        "known difference {label}: {} (kernel {}, ours {})",
                        known_reason.unwrap_or_default(),
                        kernel.is_ok(),
                        ours.is_ok()
                    );
                }
                (Ok(_), Err(e)) => {
                    let _ = writeln!(failures, "{label}: kernel reads it, we fail: {e}");
                }
                (Err(e), Ok(_)) => {
                    let _ = writeln!(failures, "{label}: we read it, kernel refuses: {e}");
                }
            }
        }
    }
    println!(
        "change data feed parity: {tables} tables, {equal} ranges equal, {both_refuse} refused \
         by both, {known} known differences"
    );
    assert!(failures.is_empty(), "{failures}");
    if !common::corpus_overridden() {
        assert!(
            tables >= 15 && equal >= 100,
            "too little compared: {tables} tables, {equal} ranges"
        );
    }
}
