//! Eager and lazy scan metadata over the whole corpus.
//!
//! - A lazily loaded table (`load_table`) holds no files; an eager one
//!   (`load_table_with_eager_scan_metadata`) holds the active files from its load.
//! - Both produce identical scans: the same file tasks (paths, sizes, partition values,
//!   transforms, deletion vectors), the same selection and the same partitions, with and
//!   without a predicate.
//! - An eager table's scan builds make no request at all (zero log reads); a lazy table's
//!   replay its segment's log files at every build, and count them in the scan's metrics.
//!   The log files the lazy load fetched whole are kept (up to `KEPT_LOG_BYTES`): a replay
//!   requests only the rest, so a table whose log is only whole files that fit makes no
//!   request at all.

use crate::common;

use delta_arrow_reader::DeltaScan;
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};

/// Everything about a planned scan that the two modes must agree on.
fn describe(scan: &DeltaScan) -> String {
    let partitions: Vec<Vec<String>> = scan
        .partition_tasks()
        .iter()
        .map(|p| p.iter().map(|t| format!("{t:?}")).collect())
        .collect();
    format!("{:?}\n{:?}", scan.file_selection(), partitions)
}

/// A filter on the table's first column, which exercises statistics (null counts) and, on
/// partitioned tables, partition values.
fn filters(table: &DeltaTable) -> Vec<Option<String>> {
    let mut out = vec![None];
    let schema = table.schema();
    if let Some(first) = schema.fields().first() {
        out.push(Some(format!("`{}` IS NOT NULL", first.name())));
    }
    if let Some(part) = table.partition_columns().first() {
        out.push(Some(format!("`{part}` IS NULL")));
    }
    out
}

async fn build(table: &DeltaTable, filter: &Option<String>) -> Result<DeltaScan, String> {
    let scan = table.scan().with_target_partitions(3);
    let scan = match filter {
        Some(f) => scan.with_filter(f.clone()),
        None => scan,
    };
    scan.build()
        .await
        .map_err(|e| format!("[{}] {e}", e.code()))
}

/// Compares the modes for one table: `Ok(None)` when the table does not load (eagerly), else
/// whether the lazy table's replays were answered from the log files its load kept.
async fn compare(location: String) -> Result<Option<bool>, String> {
    let Ok(eager) = DeltaTableBuilder::new(location.clone())
        .load_table_with_eager_scan_metadata()
        .await
    else {
        return Ok(None);
    };
    let lazy = DeltaTableBuilder::new(location)
        .load_table()
        .await
        .map_err(|e| format!("lazy load failed where eager loaded: {e}"))?;
    if !eager.has_eager_scan_metadata() || lazy.has_eager_scan_metadata() {
        return Err("has_eager_scan_metadata is wrong".into());
    }
    if lazy.eager_files().is_some() {
        return Err("a lazy table holds files".into());
    }
    if lazy.version() != eager.version() || lazy.schema() != eager.schema() {
        return Err("lazy and eager loads differ in version or schema".into());
    }
    let held = eager.eager_files().unwrap_or_default();
    let before_replay = lazy.io_counters().snapshot().requests;
    let replayed = lazy.active_files().await.map_err(|e| e.to_string())?;
    let lazy_log_is_kept = lazy.io_counters().snapshot().requests == before_replay;
    if held != replayed.as_slice() {
        return Err("lazy active_files differ from the eager table's files".into());
    }
    for filter in filters(&eager) {
        let counters = eager.io_counters();
        let before = counters.snapshot();
        let eager_scan = build(&eager, &filter).await;
        let after = counters.snapshot();
        if before != after {
            return Err(format!(
                "eager scan build made requests ({filter:?}): {before:?} -> {after:?}"
            ));
        }
        let lazy_counters = lazy.io_counters();
        let lazy_before = lazy_counters.snapshot();
        let lazy_scan = build(&lazy, &filter).await;
        let lazy_after = lazy_counters.snapshot();
        match (eager_scan, lazy_scan) {
            (Ok(e), Ok(l)) => {
                if describe(&e) != describe(&l) {
                    return Err(format!("scans differ with filter {filter:?}"));
                }
                if e.metrics().log_files_read() != 0 {
                    return Err("eager scan metrics count log reads".into());
                }
                let lazy_reads = l.metrics().log_files_read();
                if lazy_reads == 0 {
                    return Err(format!("lazy scan build read no log ({filter:?})"));
                }
                let made = lazy_after.requests - lazy_before.requests;
                if l.metrics().io().requests < made {
                    return Err("lazy scan metrics miss the replay's requests".into());
                }
                if lazy_log_is_kept && made != 0 {
                    return Err(format!(
                        "lazy scan build fetched kept log files again: {made} requests"
                    ));
                }
            }
            (Err(e), Err(l)) if e == l => {}
            (e, l) => {
                return Err(format!(
                    "outcomes differ with filter {filter:?}: eager {:?}, lazy {:?}",
                    e.err(),
                    l.err()
                ))
            }
        }
    }
    Ok(Some(lazy_log_is_kept))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eager_and_lazy_scans_agree_on_every_corpus_table() {
    let mut failures = Vec::new();
    let (mut compared, mut kept) = (0, 0);
    for (name, dir) in common::corpus_tables() {
        let location = dir.to_string_lossy().into_owned();
        match tokio::spawn(compare(location)).await {
            Ok(Ok(Some(log_kept))) => {
                compared += 1;
                kept += usize::from(log_kept);
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => failures.push(format!("{name}: {e}")),
            Err(e) => failures.push(format!("{name}: PANIC {e}")),
        }
    }
    println!(
        "eager vs lazy: {compared} tables compared, {kept} replayed from the kept log, {} failed",
        failures.len()
    );
    assert!(compared >= 150, "only {compared} tables loaded");
    // Most corpus logs are a few small files: their replays make no request.
    assert!(
        kept * 2 >= compared,
        "only {kept} of {compared} replays used the kept log"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
