//! Reads ahead of the decoder join chunks across gaps as wide as the store says a request
//! is worth (`RangeRead::read_ahead_gap`): two of three columns of a many-row-group file,
//! read ahead from a store that answers 1 MiB, take a few requests, not two per row group;
//! from a store that keeps the default (64 KiB), the chunks are fetched apart. Both return
//! the same rows, and a limit (the decoder's own page requests) never joins wide gaps. By
//! default an object store is read ahead (several row groups a request) and a local file is
//! not (a row group a request, read as the decoder asks).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use delta_arrow_reader::fixture::{parquet_bytes_with_row_groups, TableWriter};
use delta_arrow_reader::io::{BoxFuture, ListEntry, MemoryStore, RangeRead};
use delta_arrow_reader::{DeltaScanExecutionOptions, DeltaTable, DeltaTableBuilder, Result};
use serde_json::json;

const ROWS: i64 = 20_000;
const ROWS_PER_GROUP: usize = 1_000;

/// A memory store that answers `gap` for [`RangeRead::read_ahead_gap`].
#[derive(Debug)]
struct Gapped {
    inner: MemoryStore,
    gap: Option<u64>,
}

impl RangeRead for Gapped {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        self.inner.get_range(path, range)
    }
    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        self.inner.get(path)
    }
    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        self.inner.size(path)
    }
    fn read_ahead_gap(&self) -> u64 {
        self.gap.unwrap_or_else(|| self.inner.read_ahead_gap())
    }
    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<ListEntry>>>> {
        self.inner.list(prefix, start_after)
    }
}

/// 200 hex digits that hardly compress, different for every `i`.
fn noise(i: i64) -> String {
    let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..10)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("{x:016x}{:04x}", x >> 48)
        })
        .collect()
}

/// `a` (ids), `b` (200 bytes of noise a row: the gap, about 0.2 MB a row group), `c` (ids
/// times 3), in row groups of 1,000 rows.
fn table_writer() -> TableWriter {
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Utf8, false),
        Field::new("c", DataType::Int64, false),
    ]));
    let ids = 0..ROWS;
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(ids.clone())),
            Arc::new(StringArray::from_iter_values(ids.clone().map(noise))),
            Arc::new(Int64Array::from_iter_values(ids.map(|i| i * 3))),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let path = "data.parquet";
    let bytes = parquet_bytes_with_row_groups(path, &batch, Some(ROWS_PER_GROUP))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut w = TableWriter::new();
    let size = bytes.len() as u64;
    w.store().put(path, bytes);
    let delta_schema = json!({"type": "struct", "fields": [
        {"name": "a", "type": "long", "nullable": false, "metadata": {}},
        {"name": "b", "type": "string", "nullable": false, "metadata": {}},
        {"name": "c", "type": "long", "nullable": false, "metadata": {}}]});
    let mut actions = TableWriter::create_actions(
        &delta_schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    actions.push(w.add_action(path, size, ROWS as usize, json!({}), None));
    w.commit("WRITE", actions);
    w
}

async fn open(w: &TableWriter, gap: Option<u64>) -> DeltaTable {
    let store = Gapped {
        inner: w.store().clone(),
        gap,
    };
    DeltaTableBuilder::new("memory://bucket/gaps/")
        .with_store(Arc::new(store))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Columns `a` and `c` read with 1 MiB of read-ahead (or with a limit): the pairs, the
/// requests made and the bytes received.
async fn read_a_c(table: &DeltaTable, limit: Option<usize>) -> (Vec<(i64, i64)>, u64, u64) {
    let mut scan = table
        .scan()
        .with_projection(["a", "c"])
        .with_target_partitions(1)
        .with_execution_options(DeltaScanExecutionOptions {
            parquet_read_ahead_bytes: 1 << 20,
            parquet_full_file_read_threshold_bytes: None,
            ..Default::default()
        });
    if let Some(n) = limit {
        scan = scan.with_limit(n);
    }
    let (batches, io) = crate::common::scan_to_end(scan).await;
    let mut pairs = Vec::new();
    for batch in &batches {
        let col = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<Int64Array>().cloned())
                .unwrap_or_else(|| panic!("no {name} in {:?}", batch.schema()))
        };
        let (a, c) = (col("a"), col("c"));
        pairs.extend(a.values().iter().copied().zip(c.values().iter().copied()));
    }
    (pairs, io.requests, io.bytes_received)
}

#[tokio::test]
async fn reads_ahead_join_chunks_across_gaps_the_store_finds_worth_it() {
    let w = table_writer();
    let want: Vec<(i64, i64)> = (0..ROWS).map(|i| (i, i * 3)).collect();
    let groups = ROWS as u64 / ROWS_PER_GROUP as u64;

    let (apart, apart_requests, apart_bytes) = read_a_c(&open(&w, None).await, None).await;
    assert_eq!(apart, want);
    // At least one request per row group: `b` lies between `a` and `c` (a row group's `c`
    // and the next one's `a` touch, and share one).
    assert!(
        apart_requests >= groups,
        "{apart_requests} requests for {groups} row groups of two columns"
    );

    let (joined, joined_requests, joined_bytes) =
        read_a_c(&open(&w, Some(1 << 20)).await, None).await;
    assert_eq!(joined, want);
    assert!(
        joined_requests * 3 <= apart_requests,
        "joined {joined_requests}, apart {apart_requests}"
    );
    // The gaps came too: the string column between the two.
    assert!(joined_bytes > apart_bytes, "{joined_bytes} > {apart_bytes}");
}

#[tokio::test]
async fn a_limit_never_fetches_wide_gaps() {
    let w = table_writer();
    let (narrow_rows, _, narrow_bytes) = read_a_c(&open(&w, None).await, Some(10)).await;
    let (wide_rows, _, wide_bytes) = read_a_c(&open(&w, Some(1 << 20)).await, Some(10)).await;
    assert_eq!(narrow_rows, (0..10).map(|i| (i, i * 3)).collect::<Vec<_>>());
    assert_eq!(wide_rows, narrow_rows);
    assert_eq!(wide_bytes, narrow_bytes);
}

/// Every column with the default options: the rows, and the requests the scan made.
async fn read_all_by_default(table: &DeltaTable) -> (usize, u64) {
    let (batches, io) = crate::common::scan_to_end(table.scan().with_target_partitions(1)).await;
    let rows = batches.iter().map(RecordBatch::num_rows).sum();
    (rows, io.requests)
}

#[tokio::test]
async fn by_default_object_stores_are_read_ahead_and_local_files_are_not() {
    let w = table_writer();
    let groups = ROWS as u64 / ROWS_PER_GROUP as u64;

    // An object store: row groups come several to a request (the file is about 4 MB, within
    // the default budget).
    let (rows, remote_requests) = read_all_by_default(&open(&w, None).await).await;
    assert_eq!(rows, ROWS as usize);
    assert!(
        remote_requests * 4 <= groups,
        "{remote_requests} requests for {groups} row groups"
    );

    // The same table on local disk: read as the decoder asks, a row group at a time.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    w.write_to_dir(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let local = DeltaTableBuilder::new(dir.path().to_string_lossy())
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (rows, local_requests) = read_all_by_default(&local).await;
    assert_eq!(rows, ROWS as usize);
    assert!(
        local_requests >= groups,
        "{local_requests} requests for {groups} row groups of a local file"
    );
}
