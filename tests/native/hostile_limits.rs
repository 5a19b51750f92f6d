//! Limits against hostile input (issue 11): what a file declares is checked before it sizes
//! an allocation, and nesting is bounded before it overflows a stack. Each case is a typed
//! `limit_exceeded` error (or, within the limits, the right rows):
//!
//! - a data file whose first page header declares 2 GiB uncompressed, for every codec;
//! - a dictionary page declaring 2^31 − 1 values;
//! - `max_page_bytes` lowered below a valid file's pages;
//! - a checkpoint whose `protocol.minReaderVersion` page declares 2 GiB;
//! - a filter of 10,000 parentheses or `not`s, a schema and a commit line nested 10,000 deep;
//! - the same bombs read by `dar` in a child process under `prlimit --as` (1 GiB of address
//!   space) and a timeout: a typed error, where the unchecked reader asked for 2 GiB or more.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use delta_arrow_reader::fixture::{
    parquet_without_page_index, patch_first_page_header, PageHeaderPatch, TableWriter,
};
use delta_arrow_reader::io::{MemoryStore, RangeRead};
use delta_arrow_reader::{DeltaError, DeltaScanExecutionOptions, DeltaTableBuilder, Result};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use serde_json::{json, Value};

const ROWS: i64 = 2000;

fn schema_json() -> Value {
    json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}}]})
}

/// A one-column file of `ROWS` ids (dictionary-encoded: 50 distinct values).
fn parquet_file(codec: Compression) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let ids = Int64Array::from_iter_values((0..ROWS).map(|i| i % 50));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(ids)])
        .unwrap_or_else(|e| panic!("{e}"));
    parquet_without_page_index(&[batch], codec).unwrap_or_else(|e| panic!("{e}"))
}

/// A table whose one data file is `file`.
fn table_of(file: Vec<u8>) -> TableWriter {
    let mut w = TableWriter::new();
    let size = file.len() as u64;
    w.store().put("part-0.parquet", file);
    let add = w.add_action("part-0.parquet", size, ROWS as usize, json!({}), None);
    let mut actions = create();
    actions.push(add);
    w.commit("WRITE", actions);
    w
}

/// The `protocol` and `metaData` actions of a table of ids.
fn create() -> Vec<Value> {
    TableWriter::create_actions(
        &schema_json(),
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    )
}

fn patched(codec: Compression, patch: PageHeaderPatch) -> Vec<u8> {
    patch_first_page_header(&parquet_file(codec), patch).unwrap_or_else(|e| panic!("{e}"))
}

fn huge_page() -> PageHeaderPatch {
    PageHeaderPatch {
        uncompressed_page_size: Some(i32::MAX),
        ..Default::default()
    }
}

fn huge_dictionary() -> PageHeaderPatch {
    PageHeaderPatch {
        dictionary_num_values: Some(i32::MAX),
        ..Default::default()
    }
}

/// The rows of a full scan of the table in `store`.
async fn rows(store: MemoryStore, options: DeltaScanExecutionOptions) -> Result<usize> {
    let t = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(store))
        .load_table()
        .await?;
    let batches = t
        .scan()
        .with_execution_options(options)
        .build()
        .await?
        .into_stream()
        .collect_batches()
        .await?;
    Ok(batches.iter().map(RecordBatch::num_rows).sum())
}

fn limit_of(r: Result<usize>) -> (&'static str, u64, u64, Option<String>) {
    match r {
        Err(DeltaError::LimitExceeded {
            limit,
            found,
            max,
            path,
            ..
        }) => (limit, found, max, path),
        other => panic!("expected a limit_exceeded error, got {other:?}"),
    }
}

/// Every codec the reader decodes.
fn codecs() -> [Compression; 6] {
    [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::LZ4_RAW,
        Compression::BROTLI(Default::default()),
        Compression::GZIP(Default::default()),
        Compression::ZSTD(Default::default()),
    ]
}

/// The scan options of each Parquet backend: ours, and (feature `kernel`) delta_kernel's,
/// whose decoder gets its bytes through the same page checks.
fn backends() -> Vec<DeltaScanExecutionOptions> {
    let direct = DeltaScanExecutionOptions::default();
    #[cfg(feature = "kernel")]
    let kernel = DeltaScanExecutionOptions {
        parquet_reader_backend: delta_arrow_reader::ParquetReaderBackend::DeltaKernel,
        ..Default::default()
    };
    #[cfg(feature = "kernel")]
    return vec![direct, kernel];
    #[cfg(not(feature = "kernel"))]
    vec![direct]
}

#[tokio::test]
async fn a_page_declaring_2_gib_is_refused_for_every_codec() {
    for options in backends() {
        let backend = options.parquet_reader_backend;
        for codec in codecs() {
            let valid = table_of(parquet_file(codec));
            let read = rows(valid.store().clone(), options.clone()).await;
            assert_eq!(read.ok(), Some(ROWS as usize), "{backend:?} {codec:?}");
            let bomb = table_of(patched(codec, huge_page()));
            let (limit, found, _, path) =
                limit_of(rows(bomb.store().clone(), options.clone()).await);
            assert!(
                limit.starts_with("page uncompressed size"),
                "{backend:?} {codec:?}: {limit}"
            );
            assert_eq!(found, i32::MAX as u64);
            assert!(path.is_some_and(|p| p.ends_with("part-0.parquet")));
        }
    }
}

#[tokio::test]
async fn a_dictionary_of_2_pow_31_values_is_refused() {
    for options in backends() {
        for codec in codecs() {
            let bomb = table_of(patched(codec, huge_dictionary()));
            let (limit, found, max, _) =
                limit_of(rows(bomb.store().clone(), options.clone()).await);
            assert_eq!(limit, "dictionary page num_values", "{codec:?}");
            // 50 distinct longs: a 400-byte dictionary page holds 50 values.
            assert_eq!((found, max), (i32::MAX as u64, 50));
        }
    }
}

/// A one-column file of `ROWS` distinct ids in one data page, with no dictionary.
fn plain_file(codec: Compression, version: WriterVersion) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let ids = Int64Array::from_iter_values(0..ROWS);
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(ids)])
        .unwrap_or_else(|e| panic!("{e}"));
    let props = WriterProperties::builder()
        .set_compression(codec)
        .set_writer_version(version)
        .set_dictionary_enabled(false)
        // No page index: the patch moves what follows the header, and a page index names
        // absolute offsets.
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_offset_index_disabled(true)
        .build();
    let mut out = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap_or_else(|e| panic!("{e}"));
    writer.write(&batch).unwrap_or_else(|e| panic!("{e}"));
    writer.close().unwrap_or_else(|e| panic!("{e}"));
    out
}

#[tokio::test]
async fn a_data_page_of_more_values_than_its_row_group_has_rows_is_refused() {
    for options in backends() {
        let backend = options.parquet_reader_backend;
        for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            for codec in [Compression::UNCOMPRESSED, Compression::SNAPPY] {
                let case = format!("{backend:?} {version:?} {codec:?}");
                let file = plain_file(codec, version);
                let read = rows(table_of(file.clone()).store().clone(), options.clone()).await;
                assert_eq!(read.ok(), Some(ROWS as usize), "{case}");
                for values in [ROWS as i32 + 1, i32::MAX] {
                    let patch = PageHeaderPatch {
                        data_page_num_values: Some(values),
                        ..Default::default()
                    };
                    let bad = patch_first_page_header(&file, patch)
                        .unwrap_or_else(|e| panic!("{case}: {e}"));
                    let read = rows(table_of(bad).store().clone(), options.clone()).await;
                    let e = read.err().map(|e| e.to_string()).unwrap_or_default();
                    assert!(
                        e.contains(&format!("{values} values")) && e.contains("2000 rows"),
                        "{case}: {e}"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn max_page_bytes_is_an_option() {
    let valid = table_of(parquet_file(Compression::SNAPPY));
    let small = DeltaScanExecutionOptions {
        max_page_bytes: 64,
        ..Default::default()
    };
    let (limit, _, max, _) = limit_of(rows(valid.store().clone(), small).await);
    assert_eq!((limit, max), ("page uncompressed size", 64));
    let zero = DeltaScanExecutionOptions {
        max_page_bytes: 0,
        ..Default::default()
    };
    let e = rows(valid.store().clone(), zero).await.err();
    assert_eq!(e.map(|e| e.code()), Some("invalid_argument"));
}

#[tokio::test]
async fn a_checkpoint_page_bomb_is_refused_at_load() -> Result<()> {
    let w = table_of(parquet_file(Compression::SNAPPY));
    let actions: Vec<Value> = {
        let add = w.add_action("part-0.parquet", 1, ROWS as usize, json!({}), None);
        let mut a = create();
        a.push(add);
        a
    };
    w.write_checkpoint(&actions)?;
    let path = "_delta_log/00000000000000000000.checkpoint.parquet";
    let file = without_page_index(&w.store().get(path).await?);
    let column = leaf_index(&file, "protocol.minReaderVersion");
    let bomb = patch_first_page_header(
        &file,
        PageHeaderPatch {
            column,
            ..huge_page()
        },
    )?;
    w.store().put(path, bomb);
    let e = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await
        .err();
    match e {
        Some(DeltaError::LimitExceeded { path, phase, .. }) => {
            assert!(path.is_some_and(|p| p.contains("checkpoint.parquet")));
            assert_eq!(phase, delta_arrow_reader::Phase::Load);
        }
        other => panic!("{other:?}"),
    }
    Ok(())
}

/// The Parquet file `file` written again without a page index (see [`parquet_file`]).
fn without_page_index(file: &bytes::Bytes) -> Vec<u8> {
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file.clone())
            .and_then(|b| b.build())
            .unwrap_or_else(|e| panic!("{e}"));
    let batches: Vec<RecordBatch> = reader
        .map(|b| b.unwrap_or_else(|e| panic!("{e}")))
        .collect();
    parquet_without_page_index(&batches, Compression::SNAPPY).unwrap_or_else(|e| panic!("{e}"))
}

/// The index of the leaf column `dotted` in a Parquet file's schema.
fn leaf_index(file: &[u8], dotted: &str) -> usize {
    let metadata = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&bytes::Bytes::copy_from_slice(file))
        .unwrap_or_else(|e| panic!("{e}"));
    let schema = metadata.file_metadata().schema_descr();
    (0..schema.num_columns())
        .find(|&i| schema.column(i).path().string() == dotted)
        .unwrap_or_else(|| panic!("no column {dotted}"))
}

#[tokio::test]
async fn nesting_10000_deep_is_a_typed_error_not_a_stack_overflow() {
    let valid = table_of(parquet_file(Compression::SNAPPY));
    let t = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(valid.store().clone()))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let parens = format!("{}id = 1{}", "(".repeat(10_000), ")".repeat(10_000));
    let nots = format!("{}id = 1", "not ".repeat(10_000));
    for filter in [parens, nots] {
        let e = t.scan().with_filter(filter).build().await.err();
        assert_eq!(e.map(|e| e.code()), Some("limit_exceeded"));
    }

    // A schema of structs nested 10,000 deep (built as text: a `Value` that deep would
    // overflow the stack when dropped).
    let open = r#"{"type":"struct","fields":[{"name":"a","nullable":true,"metadata":{},"type":"#;
    let deep_schema = format!("{}\"long\"{}", open.repeat(10_000), "}]}".repeat(10_000));
    let mut w = TableWriter::new();
    let mut actions = create();
    for a in &mut actions {
        if let Some(m) = a.get_mut("metaData") {
            m["schemaString"] = json!(deep_schema);
        }
    }
    w.commit("WRITE", actions);
    let e = load(w.store()).await;
    assert_eq!(e.as_deref(), Some("limit_exceeded"));

    // A commit line nested 10,000 deep (in free-form commitInfo).
    let w = table_of(parquet_file(Compression::SNAPPY));
    let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let text = format!("{{\"commitInfo\": {{\"x\": {deep}}}}}\n");
    w.store().put("_delta_log/00000000000000000001.json", text);
    let e = load(w.store()).await;
    assert_eq!(e.as_deref(), Some("limit_exceeded"));
}

async fn load(store: &MemoryStore) -> Option<String> {
    DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(store.clone()))
        .load_table()
        .await
        .err()
        .map(|e| {
            assert!(!e.to_string().is_empty());
            e.code().to_string()
        })
}

/// Address space for `dar` in the memory-capped runs: enough for a normal read (runtime
/// threads, their stacks and malloc arenas), half of what one bomb asks for.
const MEMORY_CAP: u64 = 1 << 30;

/// Runs `dar head DIR` with its address space capped at [`MEMORY_CAP`] and a 60 s timeout:
/// its exit status and standard error.
fn capped_dar(dir: &Path) -> (bool, String) {
    let out = Command::new("timeout")
        .arg("60")
        .arg("prlimit")
        .arg(format!("--as={MEMORY_CAP}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_dar"))
        .arg("head")
        .arg(dir)
        .env("MALLOC_ARENA_MAX", "2")
        .output()
        .unwrap_or_else(|e| panic!("timeout/prlimit: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn memory_stays_bounded_under_prlimit() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let valid = root.path().join("valid");
    table_of(parquet_file(Compression::SNAPPY))
        .write_to_dir(&valid)
        .unwrap_or_else(|e| panic!("{e}"));
    let (ok, stderr) = capped_dar(&valid);
    assert!(ok, "a valid table under the cap: {stderr}");
    for (i, codec) in [
        Compression::SNAPPY,
        Compression::LZ4_RAW,
        Compression::BROTLI(Default::default()),
    ]
    .into_iter()
    .enumerate()
    {
        for (kind, patch) in [("page", huge_page()), ("dictionary", huge_dictionary())] {
            let dir = root.path().join(format!("{kind}-{i}"));
            table_of(patched(codec, patch))
                .write_to_dir(&dir)
                .unwrap_or_else(|e| panic!("{e}"));
            let (ok, stderr) = capped_dar(&dir);
            assert!(!ok, "{kind} bomb, {codec:?}");
            assert!(
                stderr.contains("dar: error [limit_exceeded]"),
                "{kind} bomb, {codec:?}: {stderr}"
            );
        }
    }
}
