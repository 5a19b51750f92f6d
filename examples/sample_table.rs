//! Writes a deterministic sample Delta table of any size with the project's fixture writer:
//! orders with a partition column, numbers, text, dates, timestamps, decimals and nulls, in
//! several files of several row groups each, with min/max statistics so filters skip files.
//! The previewer's end-to-end test reads a million rows of it through `dar view`.
//!
//! ```sh
//! cargo run --example sample_table -- OUT [--rows N] [--files F]
//! ```
//!
//! `OUT` must not exist yet (or be an empty folder): the example never writes over anything.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int64Array, RecordBatch,
    StringArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use delta_arrow_reader::fixture::{ParquetFileWriter, TableWriter};
use serde_json::json;

/// The partition values, in file order.
const REGIONS: [&str; 4] = ["north", "east", "south", "west"];
/// Rows per row group (several per file, so the grid's reads cross row groups).
const ROWS_PER_GROUP: usize = 50_000;
/// Rows per batch written.
const BATCH: usize = 10_000;

fn main() {
    if let Err(e) = run() {
        eprintln!("sample_table: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut out: Option<PathBuf> = None;
    let mut rows: usize = 1_000_000;
    let mut files: usize = 8;
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .filter(|&n: &usize| n > 0)
                .ok_or_else(|| format!("{name} needs a positive number"))
        };
        match arg.as_str() {
            "--rows" => rows = number("--rows")?,
            "--files" => files = number("--files")?,
            "-h" | "--help" => {
                println!("usage: sample_table OUT [--rows N] [--files F]");
                return Ok(());
            }
            _ if arg.starts_with('-') => return Err(format!("unknown option {arg}")),
            _ => out = Some(PathBuf::from(arg)),
        }
    }
    let out = out.ok_or("usage: sample_table OUT [--rows N] [--files F]")?;
    let occupied = std::fs::read_dir(&out).map(|mut d| d.next().is_some());
    if out.exists() && !matches!(occupied, Ok(false)) {
        return Err(format!(
            "{} exists and is not an empty folder; nothing written",
            out.display()
        ));
    }
    write_table(&out, rows, files)?;
    println!("wrote {rows} rows in {files} files to {}", out.display());
    Ok(())
}

fn schema() -> Arc<Schema> {
    let utc = Some("UTC".into());
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("customer", DataType::Utf8, true),
        Field::new("amount", DataType::Decimal128(12, 2), true),
        Field::new("score", DataType::Float64, true),
        Field::new("ordered", DataType::Date32, true),
        Field::new(
            "updated",
            DataType::Timestamp(TimeUnit::Microsecond, utc),
            true,
        ),
        Field::new("shipped", DataType::Boolean, true),
    ]))
}

fn delta_schema() -> serde_json::Value {
    let field = |name: &str, kind: &str, nullable: bool| json!({"name": name, "type": kind, "nullable": nullable, "metadata": {}});
    json!({"type": "struct", "fields": [
        field("id", "long", false),
        field("customer", "string", true),
        field("amount", "decimal(12,2)", true),
        field("score", "double", true),
        field("ordered", "date", true),
        field("updated", "timestamp", true),
        field("shipped", "boolean", true),
        field("region", "string", true),
    ]})
}

/// Rows `start..end` (ids `start + 1 ..= end`); every value a function of the id.
fn batch(start: usize, end: usize) -> Result<RecordBatch, String> {
    let ids: Vec<i64> = (start as i64 + 1..=end as i64).collect();
    let nth = |id: i64, n: i64| id % n == 0;
    let customer: StringArray = ids
        .iter()
        .map(|&id| (!nth(id, 97)).then(|| format!("customer {:05}", (id * 7919) % 100_000)))
        .collect();
    let amount = Decimal128Array::from(
        ids.iter()
            .map(|&id| (!nth(id, 89)).then_some(i128::from((id * 104_729) % 10_000_000)))
            .collect::<Vec<_>>(),
    )
    .with_precision_and_scale(12, 2)
    .map_err(|e| e.to_string())?;
    let score: Float64Array = ids
        .iter()
        .map(|&id| (!nth(id, 83)).then(|| ((id * 31) % 1000) as f64 / 8.0))
        .collect();
    // 2024-01-01 is day 19723; one day per 10,000 ids.
    let ordered: Date32Array = ids
        .iter()
        .map(|&id| Some(19_723 + (id / 10_000) as i32))
        .collect();
    let updated = TimestampMicrosecondArray::from(
        ids.iter()
            .map(|&id| Some(1_704_067_200_000_000 + id * 1_000_003))
            .collect::<Vec<_>>(),
    )
    .with_timezone("UTC");
    let shipped: BooleanArray = ids
        .iter()
        .map(|&id| (!nth(id, 79)).then_some(id % 3 != 0))
        .collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(customer),
        Arc::new(amount),
        Arc::new(score),
        Arc::new(ordered),
        Arc::new(updated),
        Arc::new(shipped),
    ];
    RecordBatch::try_new(schema(), columns).map_err(|e| e.to_string())
}

fn write_table(out: &std::path::Path, rows: usize, files: usize) -> Result<(), String> {
    let mut writer = TableWriter::new();
    let protocol = json!({"minReaderVersion": 1, "minWriterVersion": 2});
    let mut actions =
        TableWriter::create_actions(&delta_schema(), &["region"], json!({}), protocol);
    let per_file = rows.div_ceil(files);
    for f in 0..files {
        let (start, end) = (f * per_file, ((f + 1) * per_file).min(rows));
        if start >= end {
            break;
        }
        let region = REGIONS[f * REGIONS.len() / files];
        let path = format!("region={region}/part-{f:05}.snappy.parquet");
        let mut file = ParquetFileWriter::create(&out.join(&path), schema(), Some(ROWS_PER_GROUP))
            .map_err(|e| e.to_string())?;
        let mut at = start;
        while at < end {
            let next = (at + BATCH).min(end);
            file.write(&batch(at, next)?).map_err(|e| e.to_string())?;
            at = next;
        }
        let size = file.finish().map_err(|e| e.to_string())?;
        let stats = json!({
            "minValues": {"id": start + 1},
            "maxValues": {"id": end},
            "nullCount": {"id": 0},
        });
        actions.push(writer.add_action(
            &path,
            size,
            end - start,
            json!({"region": region}),
            Some(stats),
        ));
    }
    writer.commit("WRITE", actions);
    writer.write_to_dir(out).map_err(|e| e.to_string())
}
