//! The Parquet read path as a scan drives it, for the `parquet_scan` fuzz target: a table of
//! one data file whose bytes are the fuzzer's, read in memory with no runtime.

use std::sync::Arc;

use arrow_array::RecordBatch;
use futures::executor::block_on;

use crate::io::MemoryStore;
use crate::{DeltaTable, DeltaTableBuilder, Result};

/// The schema of the fuzzed table (and of the seed files): one column of each kind of
/// decoding the reader does (plain and dictionary integers, strings, doubles, dates, a list
/// and a struct).
pub const FUZZ_TABLE_SCHEMA: &str = r#"{"type":"struct","fields":[
{"name":"id","type":"long","nullable":true,"metadata":{}},
{"name":"name","type":"string","nullable":true,"metadata":{}},
{"name":"price","type":"double","nullable":true,"metadata":{}},
{"name":"day","type":"date","nullable":true,"metadata":{}},
{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},
{"name":"point","type":{"type":"struct","fields":[
  {"name":"x","type":"integer","nullable":true,"metadata":{}},
  {"name":"y","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}"#;

/// Reads `data` as the one data file of a table of [`FUZZ_TABLE_SCHEMA`] four ways: whole,
/// in three byte ranges (row groups owned whole or, with a page index, shared by rows),
/// projected and filtered (pruning by the file's own statistics and page index), and with a
/// row limit. Each answer is a typed error or batches of the schema asked for; the ranges,
/// when both reads succeed, return the whole read's rows.
pub fn parquet_scan(data: &[u8]) {
    let store = table_of(data);
    let full = scan_table(&store, None, None, None);
    // One range is the whole file.
    let whole = scan_in_ranges(&store, 1);
    let ranged = scan_in_ranges(&store, 3);
    if let (Ok(whole), Ok(ranged)) = (&whole, &ranged) {
        assert_eq!(
            whole, ranged,
            "three byte ranges returned other rows than the whole file"
        );
    }
    let filtered = scan_table(
        &store,
        Some(&["name", "id"]),
        Some("id > 100 and name > 'name-3'"),
        None,
    );
    let limited = scan_table(&store, None, None, Some(5));
    if std::env::var_os("DAR_FUZZ_VERBOSE").is_some() {
        eprintln!("parquet_scan: full {full:?}, filtered {filtered:?}, limited {limited:?}");
    }
    if let (Ok(full), Ok(limited)) = (&full, &limited) {
        assert!(limited <= &5, "a limit of 5 returned {limited} rows");
        assert!(
            limited <= full,
            "a limit returned more rows than the full scan"
        );
    }
    if let (Ok(full), Ok(filtered)) = (&full, &filtered) {
        assert!(
            filtered <= full,
            "a filter returned more rows than the full scan"
        );
    }
}

/// A table of [`FUZZ_TABLE_SCHEMA`] whose one data file, `part-0.parquet`, is `data`.
fn table_of(data: &[u8]) -> MemoryStore {
    let store = MemoryStore::new();
    let commit = [
        serde_json::json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}),
        serde_json::json!({"metaData": {
            "id": "00000000-0000-4000-8000-00000000f022",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": FUZZ_TABLE_SCHEMA,
            "partitionColumns": [],
            "configuration": {},
            "createdTime": 1_704_067_200_000i64,
        }}),
        serde_json::json!({"add": {
            "path": "part-0.parquet",
            "partitionValues": {},
            "size": data.len(),
            "modificationTime": 1_704_067_200_000i64,
            "dataChange": true,
        }}),
    ];
    let text: Vec<String> = commit.iter().map(|action| action.to_string()).collect();
    store.put("_delta_log/00000000000000000000.json", text.join("\n"));
    store.put("part-0.parquet", data.to_vec());
    store
}

/// The table in `store`, loaded.
async fn load(store: &MemoryStore) -> Result<DeltaTable> {
    DeltaTableBuilder::new("memory://fuzz/table/")
        .with_store(Arc::new(store.clone()))
        .load_table()
        .await
}

/// Scans the table in `store` with its file cut into `ranges` byte ranges and returns the
/// row count and the sum of the `id`s.
fn scan_in_ranges(store: &MemoryStore, ranges: usize) -> Result<(usize, i64)> {
    block_on(async {
        let table = load(store).await?;
        let scan = table.scan().build().await?.split_into_byte_ranges(ranges);
        let batches = scan.into_stream().collect_batches().await?;
        Ok(tally(&batches))
    })
}

/// The row count and the sum of the `id`s of `batches` (0 for a batch without `id`).
fn tally(batches: &[RecordBatch]) -> (usize, i64) {
    let ids = batches.iter().filter_map(|b| {
        b.column_by_name("id")
            .and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>())
            .map(|ids| ids.iter().flatten().fold(0i64, i64::wrapping_add))
    });
    (
        batches.iter().map(RecordBatch::num_rows).sum(),
        ids.fold(0i64, i64::wrapping_add),
    )
}

/// Scans the table in `store` (projected, filtered, limited as given) and returns its row
/// count, checking that every batch has the columns asked for.
pub fn scan_table(
    store: &MemoryStore,
    projection: Option<&[&str]>,
    filter: Option<&str>,
    limit: Option<usize>,
) -> Result<usize> {
    block_on(async {
        let table = load(store).await?;
        let mut scan = table.scan();
        if let Some(columns) = projection {
            scan = scan.with_projection(columns.iter().copied());
        }
        if let Some(filter) = filter {
            scan = scan.with_filter(filter);
        }
        if let Some(n) = limit {
            scan = scan.with_limit(n);
        }
        let batches = scan.build().await?.into_stream().collect_batches().await?;
        let want = projection.map_or(6, <[&str]>::len);
        for batch in &batches {
            assert_eq!(batch.num_columns(), want, "a batch with the wrong columns");
        }
        Ok(batches.iter().map(RecordBatch::num_rows).sum())
    })
}
