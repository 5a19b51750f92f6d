//! Writes the starting inputs of the fuzz targets in `fuzz/` (see `scripts/fuzz`): one folder
//! per target under the folder given, each file one input.
//!
//! The inputs are made here, with the fixture's writers, rather than committed: Parquet
//! files of the fuzzed table's schema in several encodings and codecs, checkpoints, deletion
//! vectors in both forms, commits, `_last_checkpoint` hints, filters and schemas.
//! `scripts/fuzz` adds the corpus's own log files beside them.
//!
//! `cargo run --example fuzz_seeds --features fuzzing,fixture -- DIR`

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder, StringBuilder};
use arrow_array::Array;
use arrow_array::{
    ArrayRef, Date32Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use delta_arrow_reader::fixture::{checkpoint_parquet, deletion_vector_file, TableWriter};
use delta_arrow_reader::fuzzing::{self, FUZZ_TABLE_SCHEMA};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use serde_json::{json, Value};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        return Err("usage: fuzz_seeds DIR".into());
    };
    parquet_seeds(&dir.join("parquet_scan"))?;
    checkpoint_seeds(&dir.join("checkpoint_parquet"))?;
    deletion_vector_seeds(&dir.join("deletion_vector"))?;
    text_seeds(&dir.join("commit_json"), &commits())?;
    text_seeds(&dir.join("last_checkpoint"), &last_checkpoints())?;
    text_seeds(&dir.join("filter"), &filters())?;
    text_seeds(&dir.join("schema"), &schemas())?;
    // Every input runs through its target once (a seed that panics is a finding already).
    for target in fuzzing::TARGETS {
        let mut n = 0;
        for entry in fs::read_dir(dir.join(target.0))? {
            (target.1)(&fs::read(entry?.path())?);
            n += 1;
        }
        println!("{}: {n} inputs", target.0);
    }
    Ok(())
}

/// Writes each input as `NN` in `dir`.
fn write_all(dir: &Path, inputs: &[Vec<u8>]) -> Result<()> {
    fs::create_dir_all(dir)?;
    for (i, input) in inputs.iter().enumerate() {
        fs::write(dir.join(format!("{i:02}")), input)?;
    }
    Ok(())
}

fn text_seeds(dir: &Path, texts: &[String]) -> Result<()> {
    let inputs: Vec<Vec<u8>> = texts.iter().map(|t| t.as_bytes().to_vec()).collect();
    write_all(dir, &inputs)
}

/// `rows` rows of the fuzzed table's schema, with nulls every `null_every` rows (0: none).
fn batch(rows: i64, null_every: i64) -> Result<RecordBatch> {
    let null = |i: i64| null_every > 0 && i % null_every == 0;
    let ids: Int64Array = (0..rows)
        .map(|i| (!null(i)).then_some(i * 7 % 500))
        .collect();
    let names: StringArray = (0..rows)
        .map(|i| (!null(i)).then(|| format!("name-{}", i % 13)))
        .collect();
    let prices: Float64Array = (0..rows)
        .map(|i| (!null(i)).then_some(i as f64 / 4.0))
        .collect();
    let days: Date32Array = (0..rows).map(|i| Some(19_000 + (i % 40) as i32)).collect();
    let mut tags = ListBuilder::new(StringBuilder::new());
    for i in 0..rows {
        if null(i) {
            tags.append_null();
        } else {
            for t in 0..(i % 3) {
                tags.values().append_value(format!("t{t}"));
            }
            tags.append(true);
        }
    }
    let point_fields = Fields::from(vec![
        Field::new("x", DataType::Int32, true),
        Field::new("y", DataType::Int32, true),
    ]);
    let xs: Int32Array = (0..rows).map(|i| Some(i as i32)).collect();
    let mut ys = Int32Builder::new();
    for i in 0..rows {
        ys.append_option((!null(i)).then_some(-(i as i32)));
    }
    let point = StructArray::try_new(
        point_fields.clone(),
        vec![Arc::new(xs) as ArrayRef, Arc::new(ys.finish())],
        None,
    )?;
    let tags = tags.finish();
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("price", DataType::Float64, true),
        Field::new("day", DataType::Date32, true),
        Field::new("tags", tags.data_type().clone(), true),
        Field::new("point", DataType::Struct(point_fields), true),
    ]);
    Ok(RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(ids),
            Arc::new(names),
            Arc::new(prices),
            Arc::new(days),
            Arc::new(tags),
            Arc::new(point),
        ],
    )?)
}

fn parquet_file(batch: &RecordBatch, props: WriterProperties) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props))?;
    writer.write(batch)?;
    writer.close()?;
    Ok(out)
}

/// Small files of the fuzzed schema: codecs, dictionary or plain, page statistics and index
/// or none, one or several row groups and pages, nulls or none; one file missing columns and
/// one with a column of another type.
fn parquet_seeds(dir: &Path) -> Result<()> {
    let base = || WriterProperties::builder().set_max_row_group_row_count(Some(40));
    let files = vec![
        parquet_file(&batch(100, 0)?, base().build())?,
        parquet_file(
            &batch(120, 5)?,
            base()
                .set_compression(Compression::SNAPPY)
                .set_data_page_row_count_limit(16)
                .set_write_batch_size(16)
                .build(),
        )?,
        parquet_file(
            &batch(60, 3)?,
            base()
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .set_dictionary_enabled(false)
                .set_statistics_enabled(EnabledStatistics::Chunk)
                .build(),
        )?,
        parquet_file(
            &batch(30, 0)?,
            base()
                .set_compression(Compression::LZ4_RAW)
                .set_statistics_enabled(EnabledStatistics::None)
                .build(),
        )?,
        parquet_file(
            &batch(20, 2)?,
            base()
                .set_compression(Compression::GZIP(Default::default()))
                .set_writer_version(parquet::file::properties::WriterVersion::PARQUET_2_0)
                .build(),
        )?,
        parquet_file(&batch(50, 0)?.project(&[0, 1])?, base().build())?,
        // One row group large enough for byte ranges to share it by rows (pages of 1,000
        // rows, a page index): the ranged read's row selections.
        parquet_file(
            &batch(16_384, 0)?.project(&[0, 1])?,
            WriterProperties::builder()
                .set_max_row_group_row_count(Some(16_384))
                .set_data_page_row_count_limit(1_000)
                .set_write_batch_size(1_000)
                .set_compression(Compression::SNAPPY)
                .build(),
        )?,
        {
            let ids: StringArray = (0..20).map(|i| Some(format!("{i}"))).collect();
            let schema = Schema::new(vec![Field::new("id", DataType::Utf8, true)]);
            parquet_file(
                &RecordBatch::try_new(Arc::new(schema), vec![Arc::new(ids)])?,
                base().build(),
            )?
        },
    ];
    write_all(dir, &files)
}

/// The actions of a small table's snapshot: protocol, metadata, adds (with stats, partition
/// values and a deletion vector) and removes.
fn snapshot_actions(partitioned: bool) -> Vec<Value> {
    let schema: Value = serde_json::from_str(FUZZ_TABLE_SCHEMA).unwrap_or(Value::Null);
    let partitions: &[&str] = if partitioned { &["day"] } else { &[] };
    let mut actions = TableWriter::create_actions(
        &schema,
        partitions,
        json!({"delta.enableDeletionVectors": "true"}),
        json!({"minReaderVersion": 3, "minWriterVersion": 7,
               "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}),
    );
    let w = TableWriter::new();
    for i in 0..3 {
        let values = if partitioned {
            json!({"day": format!("2024-01-0{}", i + 1)})
        } else {
            json!({})
        };
        let stats = json!({"minValues": {"id": i, "name": "a"},
                           "maxValues": {"id": i * 100, "name": "z"},
                           "nullCount": {"id": 0, "name": i}});
        let mut add = w.add_action(
            &format!("part-{i}.parquet"),
            1000 + i,
            10,
            values,
            Some(stats),
        );
        if i == 1 {
            add["add"]["deletionVector"] = json!({"storageType": "i",
                "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
                "sizeInBytes": 40, "cardinality": 6});
        }
        actions.push(add);
    }
    actions.push(
        json!({"remove": {"path": "old.parquet", "deletionTimestamp": 5,
                                   "dataChange": true}}),
    );
    actions.push(json!({"txn": {"appId": "app", "version": 3}}));
    actions
}

fn checkpoint_seeds(dir: &Path) -> Result<()> {
    let files = vec![
        checkpoint_parquet(&snapshot_actions(false))?.to_vec(),
        checkpoint_parquet(&snapshot_actions(true))?.to_vec(),
        checkpoint_parquet(&snapshot_actions(false)[..2])?.to_vec(),
    ];
    write_all(dir, &files)
}

/// The fuzz target's header: mode, cardinality (8 bytes) and declared size (4 bytes).
fn dv_input(mode: u8, cardinality: u64, size: u32, payload: &[u8]) -> Vec<u8> {
    let mut input = vec![mode];
    input.extend_from_slice(&cardinality.to_be_bytes());
    input.extend_from_slice(&size.to_be_bytes());
    input.extend_from_slice(payload);
    input
}

fn deletion_vector_seeds(dir: &Path) -> Result<()> {
    let row_sets: Vec<Vec<u64>> = vec![
        vec![0],
        vec![1, 5, 9, 4000],
        (0..5000).step_by(3).collect(),
        (0..70_000).collect(),
        vec![3, 1 << 33, (1 << 33) + 7],
    ];
    let mut inputs = Vec::new();
    for rows in &row_sets {
        let (file, size) = deletion_vector_file(rows.iter().copied());
        let n = rows.len() as u64;
        // The file without its version byte: the range a descriptor at offset 1 names.
        inputs.push(dv_input(1, n, size as u32, &file[1..]));
        let bitmap = &file[5..5 + size];
        let mut padded = bitmap.to_vec();
        padded.resize(bitmap.len().div_ceil(4) * 4, 0);
        inputs.push(dv_input(2, n, size as u32, z85::encode(&padded).as_bytes()));
    }
    write_all(dir, &inputs)
}

fn commits() -> Vec<String> {
    let lines = |actions: &[Value]| {
        actions
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut with_info = snapshot_actions(true);
    with_info.push(json!({"commitInfo": {"timestamp": 1_704_067_200_000i64,
        "operation": "WRITE", "operationParameters": {"mode": "Append"}}}));
    with_info.push(
        json!({"cdc": {"path": "_change_data/c.parquet", "partitionValues": {},
        "size": 10, "dataChange": false}}),
    );
    with_info.push(
        json!({"domainMetadata": {"domain": "d", "configuration": "{}",
        "removed": false}}),
    );
    vec![
        lines(&snapshot_actions(false)),
        lines(&with_info),
        lines(&snapshot_actions(false)[2..]),
    ]
}

fn last_checkpoints() -> Vec<String> {
    [
        r#"{"version":10,"size":14}"#,
        r#"{"version":20,"size":100,"parts":3,"sizeInBytes":4096,"numOfAddFiles":90}"#,
        r#"{"version":7,"size":5,"v2Checkpoint":{"path":"00000000000000000007.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json","sizeInBytes":100,"modificationTime":1}}"#,
        r#"{"version":3,"size":2,"checksum":"abc","checkpointSchema":{"type":"struct","fields":[]}}"#,
    ]
    .map(String::from)
    .to_vec()
}

fn filters() -> Vec<String> {
    [
        "id > 100 and name < 'm'",
        "not (price >= 2.5 or day = '2024-01-02') and id in (1, 2, 3)",
        "`point`.`x` is not null or tags is null",
        "name not in ('a', 'b\\'c') and id <= -5 and price != 1e10",
        "day between '2024-01-01' and '2024-02-01'",
        "point.y < 0 and true or false",
    ]
    .map(String::from)
    .to_vec()
}

fn schemas() -> Vec<String> {
    let mapped = json!({"type": "struct", "fields": [
        {"name": "a", "type": "long", "nullable": true, "metadata": {
            "delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-1"}},
        {"name": "m", "type": {"type": "map", "keyType": "string",
            "valueType": {"type": "struct", "fields": [
                {"name": "v", "type": "decimal(10,2)", "nullable": true, "metadata": {
                    "delta.columnMapping.id": 3, "delta.columnMapping.physicalName": "col-3"}}]},
            "valueContainsNull": true}, "nullable": true, "metadata": {
            "delta.columnMapping.id": 2, "delta.columnMapping.physicalName": "col-2"}}]});
    let varied = json!({"type": "struct", "fields": [
        {"name": "ts", "type": "timestamp", "nullable": true, "metadata": {}},
        {"name": "ntz", "type": "timestamp_ntz", "nullable": false, "metadata": {}},
        {"name": "b", "type": "binary", "nullable": true, "metadata": {"comment": "x"}},
        {"name": "v", "type": "variant", "nullable": true, "metadata": {}},
        {"name": "s", "type": "short", "nullable": true, "metadata": {}},
        {"name": "by", "type": "byte", "nullable": true, "metadata": {}},
        {"name": "f", "type": "float", "nullable": true, "metadata": {}},
        {"name": "ok", "type": "boolean", "nullable": true, "metadata": {}}]});
    vec![
        FUZZ_TABLE_SCHEMA.to_string(),
        mapped.to_string(),
        varied.to_string(),
    ]
}
