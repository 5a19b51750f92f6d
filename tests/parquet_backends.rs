#![cfg(all(feature = "kernel", not(target_arch = "wasm32")))]
//! The two Parquet backends (`Direct`, `DeltaKernel`) over the whole corpus.
//!
//! - Every table reads the same rows with both (compared as multisets of canonical rows), or
//!   fails with the same error code with both; with a filter on the first column too.
//! - The rest of the scan behaves the same: files planned, deletion vectors loaded and rows
//!   deleted match.
//! - Known difference, printed and not counted: `delta_kernel` reads INT96 timestamps as
//!   nanoseconds, which wrap for dates outside 1677–2262 (the direct backend reads them as
//!   microseconds); [`INT96_OUTSIDE_NANOS`] lists the corpus tables with such values.
//! - The kernel backend reads one file at a time per partition and starts no later file once
//!   its stream is dropped.
//!
//! Run: `cargo test --features kernel --test parquet_backends -- --nocapture`.

mod common;
mod rows;

use std::time::Duration;

use delta_arrow_reader::api::{DeltaScanExecutionOptions, ParquetReaderBackend};
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};
use futures::StreamExt;
use rows::Rows;

/// Tables with INT96 timestamps outside the range of i64 nanoseconds.
const INT96_OUTSIDE_NANOS: &[&str] = &["deltars__table_with_edge_timestamps"];

struct Outcome {
    rows: Result<Rows, String>,
    facts: String,
}

async fn read(table: &DeltaTable, backend: ParquetReaderBackend, filter: Option<&str>) -> Outcome {
    let options = DeltaScanExecutionOptions {
        parquet_reader_backend: backend,
        ..Default::default()
    };
    let mut scan = table
        .scan()
        .with_execution_options(options)
        .with_target_partitions(2);
    if let Some(f) = filter {
        scan = scan.with_filter(f);
    }
    let scan = match scan.build().await {
        Ok(s) => s,
        Err(e) => {
            return Outcome {
                rows: Err(e.code().to_string()),
                facts: String::new(),
            }
        }
    };
    let schema = scan.schema();
    let metrics = scan.metrics();
    let rows = match scan.into_stream().collect_batches().await {
        Ok(batches) => Rows::from_batches(&schema, &batches),
        Err(e) => Err(e.code().to_string()),
    };
    Outcome {
        rows,
        facts: format!(
            "files planned {}, deletion vectors {}, rows deleted {}",
            metrics.files_planned(),
            metrics.deletion_vectors_loaded(),
            metrics.rows_deleted()
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_backends_read_the_same_rows_from_every_corpus_table() {
    let mut failures = Vec::new();
    let (mut compared, mut both_failed, mut known) = (0, 0, 0);
    for (name, dir) in common::corpus_tables() {
        let Ok(table) = DeltaTableBuilder::new(dir.to_string_lossy())
            .load_table_with_eager_scan_metadata()
            .await
        else {
            continue;
        };
        let first = table.schema().fields().first().map(|f| f.name().clone());
        let filter = first.map(|c| format!("`{c}` IS NOT NULL"));
        for filter in [None, filter.as_deref()] {
            let direct = read(&table, ParquetReaderBackend::Direct, filter).await;
            let kernel = read(&table, ParquetReaderBackend::DeltaKernel, filter).await;
            match (&direct.rows, &kernel.rows) {
                (Ok(d), Ok(k)) => {
                    let cmp = rows::compare(d, k);
                    if !cmp.is_equal() && INT96_OUTSIDE_NANOS.contains(&name.as_str()) {
                        println!(
                            "known difference (kernel INT96 wrap) {name}: {}",
                            cmp.report()
                        );
                        known += 1;
                    } else if !cmp.is_equal() {
                        failures.push(format!("{name} {filter:?}: {}", cmp.report()));
                    } else if direct.facts != kernel.facts {
                        failures.push(format!(
                            "{name} {filter:?}: direct {} / kernel {}",
                            direct.facts, kernel.facts
                        ));
                    } else {
                        compared += 1;
                    }
                }
                (Err(d), Err(k)) if d == k => both_failed += 1,
                (d, k) => failures.push(format!(
                    "{name} {filter:?}: direct {:?}, kernel {:?}",
                    d.as_ref().err(),
                    k.as_ref().err()
                )),
            }
        }
    }
    println!(
        "parquet backends: {compared} reads equal, {both_failed} failed alike with both, \
         {known} known differences, {} differ",
        failures.len()
    );
    assert!(known <= 2 * INT96_OUTSIDE_NANOS.len());
    assert!(compared >= 200, "only {compared} reads compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kernel_backend_starts_no_file_after_its_stream_is_dropped() {
    let dir = common::table_dir("kernel__v2-checkpoints-parquet-with-sidecars");
    let table = DeltaTableBuilder::new(dir.to_string_lossy())
        .load_table_with_eager_scan_metadata()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let options = DeltaScanExecutionOptions {
        parquet_reader_backend: ParquetReaderBackend::DeltaKernel,
        // Ignored by the kernel backend: it never prefetches.
        prefetch_files_per_partition: 4,
        max_concurrent_file_reads_per_partition: 4,
        ..Default::default()
    };
    let scan = table
        .scan()
        .with_execution_options(options)
        .with_target_partitions(1)
        .with_batch_size(1)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(scan.tasks().len() > 10);
    let metrics = scan.metrics();
    let mut stream = scan.into_stream();
    let first = stream.next().await;
    assert!(matches!(first, Some(Ok(_))), "{first:?}");
    // One file at a time: no file was opened ahead of the one being read.
    assert_eq!(metrics.file_tasks_started(), 1);
    drop(stream);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        metrics.file_tasks_started(),
        1,
        "a file started after the drop"
    );
}
