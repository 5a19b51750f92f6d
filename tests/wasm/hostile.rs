//! Hostile data files in the browser, where a panic aborts the instance instead of unwinding:
//! each Parquet input the fuzzers found a decoder panic with (`fuzz/regressions/
//! parquet_scan/`) is the one data file of a table read whole, projected and limited. Each
//! read must end in a typed error or rows; a decoder panic would end the module (a
//! `RuntimeError: unreachable`) and fail this test and every one after it.

use std::sync::Arc;

use delta_arrow_reader::io::MemoryStore;
use delta_arrow_reader::DeltaTableBuilder;
use wasm_bindgen_test::wasm_bindgen_test;

/// The schema the fuzzed files were read with (`fuzzing::FUZZ_TABLE_SCHEMA`).
const SCHEMA: &str = r#"{"type":"struct","fields":[
{"name":"id","type":"long","nullable":true,"metadata":{}},
{"name":"name","type":"string","nullable":true,"metadata":{}},
{"name":"price","type":"double","nullable":true,"metadata":{}},
{"name":"day","type":"date","nullable":true,"metadata":{}},
{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},
{"name":"point","type":{"type":"struct","fields":[
  {"name":"x","type":"integer","nullable":true,"metadata":{}},
  {"name":"y","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}"#;

const FINDINGS: [(&str, &[u8]); 3] = [
    (
        "622868c9",
        include_bytes!(
            "../../fuzz/regressions/parquet_scan/crash-622868c9a0d469c166b601165fd53fd34e054bb8"
        ),
    ),
    (
        "e328a4db",
        include_bytes!(
            "../../fuzz/regressions/parquet_scan/crash-e328a4dbbdb3e1f65c19834b545179a46aa9502d"
        ),
    ),
    (
        "f82ecd69",
        include_bytes!(
            "../../fuzz/regressions/parquet_scan/crash-f82ecd699c22707ab2ebe6b1c52f787c95f4a35a"
        ),
    ),
];

/// A table whose one data file is `data`.
fn table_of(data: &[u8]) -> MemoryStore {
    let store = MemoryStore::new();
    let commit = [
        serde_json::json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}),
        serde_json::json!({"metaData": {
            "id": "00000000-0000-4000-8000-00000000f022",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": SCHEMA,
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

/// Reads the table in `store` with `columns` (all when `None`) and `limit`: rows or the
/// error's code.
async fn read(
    store: &MemoryStore,
    columns: Option<&[&str]>,
    limit: Option<usize>,
) -> Result<usize, &'static str> {
    let table = DeltaTableBuilder::new("memory://t/")
        .with_store(Arc::new(store.clone()))
        .load_table()
        .await
        .map_err(|e| e.code())?;
    let mut scan = table.scan();
    if let Some(columns) = columns {
        scan = scan.with_projection(columns.iter().copied());
    }
    if let Some(n) = limit {
        scan = scan.with_limit(n);
    }
    let batches = scan
        .build()
        .await
        .map_err(|e| e.code())?
        .into_stream()
        .collect_batches()
        .await
        .map_err(|e| e.code())?;
    Ok(batches.iter().map(|b| b.num_rows()).sum())
}

#[wasm_bindgen_test]
async fn decoder_panic_findings_are_typed_errors_where_panics_abort() {
    for (name, data) in FINDINGS {
        let store = table_of(data);
        for (columns, limit) in [
            (None, None),
            (Some(&["name", "id"][..]), None),
            (None, Some(5)),
        ] {
            match read(&store, columns, limit).await {
                Ok(_) => {}
                Err(code) => assert_eq!(code, "parquet", "{name}: {columns:?} {limit:?}"),
            }
        }
    }
}
