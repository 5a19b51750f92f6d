//! Reads of a table's first rows (a limit, no filter, no deletes) return exactly those rows
//! and, in a file with a page index, fetch only the pages they are on rather than whole
//! column chunks.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::{DeltaScanExecutionOptions, DeltaTable, DeltaTableBuilder};
use serde_json::json;

const ROWS: i64 = 100_000;

/// `id` 0..100,000 and a name, in one file of two row groups with pages of 1,000 rows.
async fn table() -> DeltaTable {
    let ids = Int64Array::from_iter_values(0..ROWS);
    let names = StringArray::from_iter_values((0..ROWS).map(|i| format!("name {i:06}")));
    let batch =
        RecordBatch::try_from_iter([("id", Arc::new(ids) as _), ("name", Arc::new(names) as _)])
            .unwrap_or_else(|e| panic!("{e}"));
    let bytes = crate::common::paged_parquet(&batch);
    let mut w = TableWriter::new();
    let size = bytes.len() as u64;
    w.store().put("part-0.parquet", bytes);
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}},
        {"name": "name", "type": "string", "nullable": false, "metadata": {}}]});
    let protocol = json!({"minReaderVersion": 1, "minWriterVersion": 2});
    let mut actions = TableWriter::create_actions(&schema, &[], json!({}), protocol);
    actions.push(w.add_action("part-0.parquet", size, ROWS as usize, json!({}), None));
    w.commit("WRITE", actions);
    DeltaTableBuilder::new("memory://bucket/head/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The ids of a scan with `limit` (read by ranges, not as one whole file), and the bytes
/// it received.
async fn head(table: &DeltaTable, limit: Option<usize>) -> (Vec<i64>, u64) {
    let mut scan = table.scan().with_target_partitions(1).with_batch_size(777);
    if let Some(n) = limit {
        scan = scan.with_limit(n);
    }
    let scan = scan.with_execution_options(DeltaScanExecutionOptions {
        parquet_full_file_read_threshold_bytes: None,
        ..Default::default()
    });
    let (batches, io) = crate::common::scan_to_end(scan).await;
    (crate::common::ids(&batches), io.bytes_received)
}

#[tokio::test]
async fn a_limit_reads_exactly_the_first_rows() {
    let t = table().await;
    for n in [
        1, 10, 999, 1_000, 1_001, 49_999, 50_000, 50_001, 99_999, 100_000, 250_000,
    ] {
        let (ids, _) = head(&t, Some(n)).await;
        let want: Vec<i64> = (0..(n as i64).min(ROWS)).collect();
        assert_eq!(ids, want, "limit {n}");
    }
    let (all, _) = head(&t, None).await;
    assert_eq!(all.len() as i64, ROWS);
}

#[tokio::test]
async fn a_limit_fetches_the_pages_of_its_rows_only() {
    let t = table().await;
    let (_, ten) = head(&t, Some(10)).await;
    let (_, first_group) = head(&t, Some(50_000)).await;
    let (_, everything) = head(&t, None).await;
    // Ten rows: the footer read and one page per column; the first row group: 50 pages per
    // column.
    assert!(
        ten * 3 < first_group,
        "bytes for 10 rows {ten}, for the first row group {first_group}"
    );
    assert!(first_group < everything, "{first_group} < {everything}");
}
