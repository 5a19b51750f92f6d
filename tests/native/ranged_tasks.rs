//! Byte-range file tasks return the rows of whole files: corpus tables split into 2 to 64
//! ranges, and a table of the project's writer whose file has ten row groups and a deletion
//! vector (row positions stay file-global in every range).

use crate::common;

use common::sorted_rows as rows;

use std::sync::Arc;

use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::{DeltaScan, DeltaScanExecutionOptions, ParquetReaderBackend};
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};
use serde_json::json;

/// The rows of every partition of `scan`, read one partition after the other.
async fn read_partitions(scan: DeltaScan) -> Vec<String> {
    let mut batches = Vec::new();
    for s in scan.into_partition_streams() {
        batches.extend(s.collect_batches().await.unwrap_or_else(|e| panic!("{e}")));
    }
    rows(&batches)
}

async fn whole(table: &DeltaTable) -> DeltaScan {
    whole_with(table, ParquetReaderBackend::Direct).await
}

async fn whole_with(table: &DeltaTable, backend: ParquetReaderBackend) -> DeltaScan {
    let options = DeltaScanExecutionOptions {
        parquet_reader_backend: backend,
        ..Default::default()
    };
    table
        .scan()
        .with_execution_options(options)
        .with_target_partitions(1)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The backends to check: the kernel one too when it is built.
fn backends() -> Vec<ParquetReaderBackend> {
    let mut b = vec![ParquetReaderBackend::Direct];
    if cfg!(feature = "kernel") {
        b.push(ParquetReaderBackend::DeltaKernel);
    }
    b
}

/// Whole-file rows equal ranged rows for 2..64 ranges (with each backend); at 16 and more
/// some task is ranged.
async fn check_ranges(name: &str, table: &DeltaTable) {
    let expected = read_partitions(whole(table).await).await;
    assert!(!expected.is_empty(), "{name}");
    for (backend, parts) in backends()
        .into_iter()
        .flat_map(|b| [2, 3, 5, 16, 64].map(|p| (b, p)))
    {
        let scan = whole_with(table, backend)
            .await
            .split_into_byte_ranges(parts);
        assert!(
            parts < 16 || scan.tasks().iter().any(|t| t.range.is_some()),
            "{name} {parts}"
        );
        assert!(scan.partitions() <= parts);
        assert_eq!(
            read_partitions(scan).await,
            expected,
            "{name} in {parts} ranges ({backend:?})"
        );
    }
}

/// The parts of a scan (`DeltaScan::part`), each planned afresh as a worker plans its own,
/// read together every row of the whole scan once, with and without a filter.
#[tokio::test]
async fn the_parts_of_a_scan_read_every_row_once() {
    for (name, filter) in [
        ("golden__dv-partitioned-with-checkpoint", None),
        ("golden__dv-partitioned-with-checkpoint", Some("col1 > 3")),
        ("kernel__with-short-dv", None),
        ("golden__table-with-columnmapping-mode-name", None),
        ("dat__basic_partitioned", Some("letter = 'a' or number > 4")),
    ] {
        let table = DeltaTableBuilder::new(common::table_dir(name).to_string_lossy())
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let plan = || {
            let builder = table.scan();
            match filter {
                Some(f) => builder.with_filter(f),
                None => builder,
            }
        };
        let whole = plan().build().await.unwrap_or_else(|e| panic!("{e}"));
        let expected = rows(
            &whole
                .into_stream()
                .collect_batches()
                .await
                .unwrap_or_else(|e| panic!("{e}")),
        );
        // The rows of every part, each planned afresh; `ranges`: the scan is first cut into
        // 3 byte ranges (a part then cuts those ranges further).
        let parts = |count: usize, ranges: bool| async move {
            let mut got = Vec::new();
            for index in 0..count {
                let scan = plan().build().await.unwrap_or_else(|e| panic!("{e}"));
                let scan = if ranges {
                    scan.split_into_byte_ranges(3)
                } else {
                    scan
                };
                let batches = scan
                    .part(index, count)
                    .unwrap_or_else(|e| panic!("{name} part {index}/{count}: {e}"))
                    .into_stream()
                    .collect_batches()
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                got.extend(rows(&batches));
            }
            got.sort();
            got
        };
        for count in [1, 2, 3, 4, 7] {
            assert_eq!(
                parts(count, false).await,
                expected,
                "{name} {filter:?} in {count} parts"
            );
            assert_eq!(
                parts(count, true).await,
                expected,
                "{name} {filter:?} ranged, in {count} parts"
            );
        }
        let bad = plan().build().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            bad.part(2, 2).err().map(|e| e.code()),
            Some("invalid_argument")
        );
    }
}

#[tokio::test]
async fn corpus_tables_read_the_same_in_ranges() {
    for name in [
        "golden__dv-partitioned-with-checkpoint",
        "deltars__table_with_deletion_logs",
        "kernel__compacted-log-files-table",
        "kernel__cdf-table-with-cdc-and-dvs",
        "kernel__with-short-dv",
        "golden__table-with-columnmapping-mode-name",
        "dat__basic_partitioned",
    ] {
        let table = DeltaTableBuilder::new(common::table_dir(name).to_string_lossy())
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        check_ranges(name, &table).await;
    }
}

/// `id` 0..1000 in ten row groups of 100 rows, partition `part = 'a'`; the deletion vector
/// removes rows in several row groups, the whole of row group 4, and the last row.
fn dv_table() -> (TableWriter, Vec<u64>) {
    let mut deleted: Vec<u64> = vec![0, 5, 99, 100, 150, 333, 999];
    deleted.extend(400..500);
    let w = common::dv_table(1000, 100, &deleted, json!({"numRecords": 1000}));
    (w, deleted)
}

#[tokio::test]
async fn deletion_vector_rows_stay_file_global_in_every_range() {
    let (w, deleted) = dv_table();
    let table = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut expected: Vec<String> = (0..1000u64)
        .filter(|i| !deleted.contains(i))
        .map(|i| format!("{i}|a"))
        .collect();
    expected.sort();
    assert_eq!(read_partitions(whole(&table).await).await, expected);
    check_ranges("fixture", &table).await;
    // Ten ranges of one file: each owns about one row group and keeps the partition value
    // and the deletion vector.
    let scan = whole(&table).await.split_into_byte_ranges(10);
    assert_eq!(scan.partitions(), 10);
    for task in scan.tasks() {
        assert!(task.range.is_some() && task.deletion_vector.is_some());
        assert_eq!(
            task.partition_values.get("part"),
            Some(&delta_arrow_reader::predicate::Scalar::String("a".into()))
        );
    }
    // With a predicate too (row groups pruned by statistics inside a range).
    let filtered = table
        .scan()
        .with_target_partitions(1)
        .with_filter("id >= 90 and id < 210")
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .split_into_byte_ranges(7);
    let mut want: Vec<String> = (90..210u64)
        .filter(|i| !deleted.contains(i))
        .map(|i| format!("{i}|a"))
        .collect();
    want.sort();
    assert_eq!(read_partitions(filtered).await, want);
}
