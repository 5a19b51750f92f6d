//! Deletion vectors stored at an absolute path (`storageType` `p`): the file is found under the
//! table root and its rows are skipped; a path outside the table is a clear error.
//!
//! Deleted rows come out of files of many row groups the same way whether the reader drops
//! them from decoded batches (deletes scattered in short runs) or hands the decoder a row
//! selection (long runs, or a row filter): whole scans, limits, predicates, projections of the
//! partition column alone, byte-range tasks and row groups deleted entirely.

use crate::common;

use std::sync::Arc;

use arrow_array::{Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::{DeltaScanBuilder, DeltaScanExecutionOptions};
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};
use serde_json::json;

fn table(dv_path: &str) -> TableWriter {
    table_deleting(dv_path, &[1, 3])
}

/// `id` 0..5 in one file whose deletion vector (at `dv_path`) deletes `rows`.
fn table_deleting(dv_path: &str, rows: &[u64]) -> TableWriter {
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}}]});
    let mut w = TableWriter::new();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from_iter_values(0..5))],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut add = w
        .write_data_file("part-0.parquet", &batch, json!({}), None)
        .unwrap_or_else(|e| panic!("{e}"));
    let (bytes, size) = common::dv_file(rows.iter().copied());
    w.store().put("dv/deleted.bin", bytes);
    add["add"]["deletionVector"] = json!({
        "storageType": "p",
        "pathOrInlineDv": dv_path,
        "offset": 1,
        "sizeInBytes": size,
        "cardinality": rows.len(),
    });
    let mut actions = TableWriter::create_actions(
        &schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 3, "minWriterVersion": 7,
               "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}),
    );
    actions.push(add);
    w.commit("WRITE", actions);
    w
}

async fn ids(w: &TableWriter) -> delta_arrow_reader::Result<Vec<i64>> {
    let t = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await?;
    let batches = t
        .scan()
        .build()
        .await?
        .into_stream()
        .collect_batches()
        .await?;
    Ok(common::ids(&batches))
}

#[tokio::test]
async fn absolute_deletion_vector_inside_the_table() {
    let w = table("memory://bucket/table/dv/deleted.bin");
    assert_eq!(ids(&w).await.ok(), Some(vec![0, 2, 4]));
}

#[tokio::test]
async fn row_indexes_past_the_end_of_the_file_are_refused() {
    // Five rows; the vector names rows 1 and 3 and rows the file does not have: it belongs
    // to another file or is corrupt, and the rows it leaves would disagree with the row
    // count the log gives (numRecords less its cardinality).
    for deleted in [
        &[1, 3, 5][..],
        &[1, 3, 5, 6, 7, 8, 100, 1 << 40],
        &[1 << 32],
    ] {
        let w = table_deleting("memory://bucket/table/dv/deleted.bin", deleted);
        let err = ids(&w).await.err().map(|e| (e.code(), e.to_string()));
        assert!(
            matches!(&err, Some(("invalid_log", m)) if m.contains("the file has 5 rows")),
            "{deleted:?}: {err:?}"
        );
    }
    // The last row is still a row.
    let w = table_deleting("memory://bucket/table/dv/deleted.bin", &[1, 4]);
    assert_eq!(ids(&w).await.ok(), Some(vec![0, 2, 3]));
}

#[tokio::test]
async fn absolute_deletion_vector_outside_the_table_is_a_clear_error() {
    for outside in [
        "s3://elsewhere/dv/deleted.bin",
        "memory://bucket/table-2/dv/deleted.bin",
        "memory://bucket/table/../other/dv/deleted.bin",
        "memory://bucket/table/dv/%2e%2e/%2e%2e/x.bin",
    ] {
        let w = table(outside);
        let err = ids(&w)
            .await
            .err()
            .unwrap_or_else(|| panic!("{outside}: must fail"));
        assert_eq!(err.code(), "path_outside_table", "{outside}: {err}");
        assert!(err.to_string().contains("outside the table"), "{err}");
    }
}

/// Rows of the many-row-group table.
const ROWS: u64 = 10_000;

/// `id` 0..10,000 in one file of ten row groups of 1,000 rows, partition `part = 'a'`, with a
/// deletion vector deleting `deleted`.
async fn many_row_groups(deleted: &[u64]) -> DeltaTable {
    ten_row_groups(ROWS as usize / 10, deleted).await
}

/// `id` 0..10 × `per_group` in one file of ten row groups, as [`many_row_groups`].
async fn ten_row_groups(per_group: usize, deleted: &[u64]) -> DeltaTable {
    let rows = 10 * per_group as u64;
    let stats = json!({"numRecords": rows, "minValues": {"id": 0},
                       "maxValues": {"id": rows - 1}, "nullCount": {"id": 0}});
    let w = common::dv_table(rows, per_group, deleted, stats);
    DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The `id`s a scan returns, in the order of its one partition (or of its partitions, one after
/// the other, when `split` cuts the file into byte ranges).
async fn scan_ids(scan: DeltaScanBuilder, split: Option<usize>, ahead: u64) -> Vec<u64> {
    let scan = scan
        .with_target_partitions(1)
        .with_batch_size(256)
        .with_execution_options(reading_ahead(ahead))
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let scan = match split {
        Some(n) => scan.split_into_byte_ranges(n),
        None => scan,
    };
    let mut out = Vec::new();
    for stream in scan.into_partition_streams() {
        for batch in stream
            .collect_batches()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
        {
            let ids = batch
                .column_by_name("id")
                .and_then(|c| c.as_any().downcast_ref::<Int64Array>().cloned())
                .unwrap_or_else(|| panic!("no id column in {:?}", batch.schema()));
            out.extend(ids.values().iter().map(|&v| v as u64));
        }
    }
    out
}

/// Execution options reading `ahead` bytes of row groups ahead; with read-ahead on, the
/// (small) file is read by ranges, not whole, so the decoder's requests are real ones.
fn reading_ahead(ahead: u64) -> DeltaScanExecutionOptions {
    let defaults = DeltaScanExecutionOptions::default();
    DeltaScanExecutionOptions {
        parquet_read_ahead_bytes: ahead,
        parquet_full_file_read_threshold_bytes: if ahead > 0 {
            None
        } else {
            defaults.parquet_full_file_read_threshold_bytes
        },
        ..defaults
    }
}

#[tokio::test]
async fn reading_ahead_serves_several_row_groups_per_request() {
    // Row groups of 10,000 rows: the file is larger than the footer's read (the last 64 KiB,
    // which serves the pages it holds), so the row groups before it are fetched.
    let rows = 100_000;
    let deleted: Vec<u64> = (0..rows).filter(|i| i % 5 == 2).collect();
    let table = ten_row_groups(rows as usize / 10, &deleted).await;
    let mut requests = Vec::new();
    for ahead in [1, 1 << 20] {
        let mut options = reading_ahead(ahead);
        options.parquet_full_file_read_threshold_bytes = None;
        let scan = table
            .scan()
            .with_target_partitions(1)
            .with_execution_options(options)
            .build()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let metrics = scan.metrics();
        let got: usize = scan
            .into_stream()
            .collect_batches()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(RecordBatch::num_rows)
            .sum();
        assert_eq!(
            got as u64,
            rows - deleted.len() as u64,
            "read-ahead {ahead}"
        );
        requests.push(metrics.io().requests);
    }
    // A budget of 1 byte fetches each of the row groups before the footer's read on its own
    // (besides the footer and the deletion vector: 11 requests); 1 MiB fetches them in one
    // or two.
    assert!(
        requests[1] + 7 <= requests[0],
        "requests with and without read-ahead: {requests:?}"
    );
}

/// Every way of reading the table of `deleted` returns exactly the rows not deleted, with
/// row groups read ahead (a budget of a few of them, of all) and without.
async fn check_deletes(name: &str, deleted: &[u64]) {
    for ahead in [0, 20_000, 1 << 20] {
        check_deletes_reading_ahead(&format!("{name}, read-ahead {ahead}"), deleted, ahead).await;
    }
}

async fn check_deletes_reading_ahead(name: &str, deleted: &[u64], ahead: u64) {
    let table = many_row_groups(deleted).await;
    let kept: Vec<u64> = (0..ROWS).filter(|i| !deleted.contains(i)).collect();
    assert_eq!(
        scan_ids(table.scan(), None, ahead).await,
        kept,
        "{name}: whole scan"
    );
    for split in [3, 10, 25] {
        assert_eq!(
            scan_ids(table.scan(), Some(split), ahead).await,
            kept,
            "{name}: {split} byte ranges"
        );
    }
    for limit in [1, 255, 1000, 1500, 9000] {
        let want: Vec<u64> = kept.iter().copied().take(limit).collect();
        assert_eq!(
            scan_ids(table.scan().with_limit(limit), None, ahead).await,
            want,
            "{name}: limit {limit}"
        );
    }
    let want: Vec<u64> = kept
        .iter()
        .copied()
        .filter(|&i| (2500..7000).contains(&i))
        .collect();
    let filtered = table.scan().with_filter("id >= 2500 and id < 7000");
    assert_eq!(
        scan_ids(filtered, None, ahead).await,
        want,
        "{name}: predicate"
    );
    // A predicate on the partition column only is decided per file: the data is read whole.
    let on_partition = table.scan().with_filter("part = 'a'");
    assert_eq!(
        scan_ids(on_partition, None, ahead).await,
        kept,
        "{name}: partition predicate"
    );
    // The partition column alone: no Parquet column is decoded, rows are still counted.
    let only_part = table
        .scan()
        .with_projection(["part"])
        .with_target_partitions(1)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let batches = only_part
        .into_stream()
        .collect_batches()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, kept.len(), "{name}: partition column alone");
    assert!(
        batches.iter().all(|b| b.column(0).null_count() == 0),
        "{name}"
    );
}

#[tokio::test]
async fn scattered_deletes_are_dropped_from_every_kind_of_read() {
    // Every third row (runs of one): the reader drops them from decoded batches.
    let deleted: Vec<u64> = (0..ROWS).filter(|i| i % 3 == 1).collect();
    check_deletes("every third row", &deleted).await;
    // Scattered, and row group 3 deleted whole (never read), and the last row.
    let mut deleted: Vec<u64> = (0..ROWS).filter(|i| i % 7 == 0 || i % 11 == 5).collect();
    deleted.extend(3000..4000);
    deleted.push(ROWS - 1);
    deleted.sort_unstable();
    deleted.dedup();
    check_deletes("scattered, one row group whole", &deleted).await;
}

#[tokio::test]
async fn deletes_in_long_runs_are_a_row_selection_with_the_same_rows() {
    // Long runs: the decoder skips them by a row selection.
    let mut deleted: Vec<u64> = (1200..4800).collect();
    deleted.extend(6000..6100);
    deleted.extend([0, 9999]);
    deleted.sort_unstable();
    check_deletes("long runs", &deleted).await;
    // Both in one file: short runs in some row groups, long ones in others.
    let mut deleted: Vec<u64> = (0..2000).filter(|i| i % 2 == 0).collect();
    deleted.extend(5000..9000);
    check_deletes("mixed", &deleted).await;
}
