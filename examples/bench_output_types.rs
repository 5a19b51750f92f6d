//! Benchmark: a full scan of a string-heavy table with strings as `Utf8`, `LargeUtf8` or
//! `Utf8View` (see `OutputTypes`), time and peak RSS.
//!
//! ```text
//! cargo run --release --features kernel,datafusion --example bench_output_types -- \
//!     write DIR [--rows 4000000] [--files 8]
//! cargo run --release --features kernel,datafusion --example bench_output_types -- \
//!     scan DIR [--strings utf8|large_utf8|utf8_view] [--reps 3] [--mode merged|tasks]
//! ```
//!
//! `write` makes a lineitem-like table with the fixture writer (deterministic): an id, a
//! quantity, a price, and five string columns: a flag of 3 values, a ship mode of 7, an
//! instruction of 4, a city of 500 values (all dictionary encoded by the writer), and a
//! comment of 10–60 random letters (plain encoded once its dictionary overflows). `scan`
//! reads the whole table `--reps` times with the given string type, either through
//! `into_stream()` (`merged`, the default streaming API) or with each of
//! `into_partition_streams()` on its own Tokio task (`tasks`), and prints each run's time,
//! the median, the rows and bytes of string data read, and the process's peak RSS (VmHWM).
//! Run each string type in its own process so peak RSS is its own.

use std::time::Instant;

use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::DeltaTableBuilder;
use delta_arrow_reader::{OutputTypes, StringType};
use futures::StreamExt;
use serde_json::json;

/// A small deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One of `from`, at random.
fn pick<'a>(rng: &mut Lcg, from: &[&'a str]) -> &'a str {
    from[rng.below(from.len() as u64) as usize]
}

fn flag(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_string())
}

fn write(dir: &str, rows: usize, files: usize) -> Result<(), String> {
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": true, "metadata": {}},
        {"name": "quantity", "type": "long", "nullable": true, "metadata": {}},
        {"name": "price", "type": "double", "nullable": true, "metadata": {}},
        {"name": "returnflag", "type": "string", "nullable": true, "metadata": {}},
        {"name": "shipmode", "type": "string", "nullable": true, "metadata": {}},
        {"name": "shipinstruct", "type": "string", "nullable": true, "metadata": {}},
        {"name": "city", "type": "string", "nullable": true, "metadata": {}},
        {"name": "comment", "type": "string", "nullable": true, "metadata": {}},
    ]});
    let mut w = TableWriter::new();
    let protocol = json!({"minReaderVersion": 1, "minWriterVersion": 2});
    w.commit(
        "CREATE TABLE",
        TableWriter::create_actions(&schema, &[], json!({}), protocol),
    );
    let modes = ["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"];
    let instructs = [
        "COLLECT COD",
        "DELIVER IN PERSON",
        "NONE",
        "TAKE BACK RETURN",
    ];
    let flags = ["A", "N", "R"];
    let letters: Vec<char> = "abcdefghijklmnopqrstuvwxyz     ".chars().collect();
    let cities: Vec<String> = (0..500).map(|i| format!("city number {i:03}")).collect();
    let mut rng = Lcg(42);
    let per_file = rows.div_ceil(files);
    let mut actions = Vec::new();
    for f in 0..files {
        let n = per_file.min(rows - f * per_file);
        let start = (f * per_file) as i64;
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "id",
                std::sync::Arc::new(Int64Array::from_iter_values(start..start + n as i64)),
            ),
            (
                "quantity",
                std::sync::Arc::new(Int64Array::from_iter_values(
                    (0..n).map(|_| 1 + rng.below(50) as i64),
                )),
            ),
            (
                "price",
                std::sync::Arc::new(Float64Array::from_iter_values(
                    (0..n).map(|_| rng.below(10_000_000) as f64 / 100.0),
                )),
            ),
            (
                "returnflag",
                std::sync::Arc::new(StringArray::from_iter_values(
                    (0..n).map(|_| pick(&mut rng, &flags)),
                )),
            ),
            (
                "shipmode",
                std::sync::Arc::new(StringArray::from_iter_values(
                    (0..n).map(|_| pick(&mut rng, &modes)),
                )),
            ),
            (
                "shipinstruct",
                std::sync::Arc::new(StringArray::from_iter_values(
                    (0..n).map(|_| pick(&mut rng, &instructs)),
                )),
            ),
            (
                "city",
                std::sync::Arc::new(StringArray::from_iter_values(
                    (0..n).map(|_| cities[rng.below(cities.len() as u64) as usize].as_str()),
                )),
            ),
            (
                "comment",
                std::sync::Arc::new(StringArray::from_iter_values((0..n).map(|_| {
                    let len = 10 + rng.below(51) as usize;
                    (0..len)
                        .map(|_| letters[rng.below(letters.len() as u64) as usize])
                        .collect::<String>()
                }))),
            ),
        ];
        let batch = RecordBatch::try_from_iter(columns).map_err(|e| e.to_string())?;
        let path = format!("part-{f:05}.snappy.parquet");
        actions.push(
            w.write_data_file(&path, &batch, json!({}), None)
                .map_err(|e| e.to_string())?,
        );
    }
    w.commit("WRITE", actions);
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    w.write_to_dir(std::path::Path::new(dir))
        .map_err(|e| e.to_string())
}

/// The process's peak resident set size in MiB (Linux `VmHWM`).
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Rows and bytes of string values in `batch` (every string column's value bytes).
fn count(batch: &RecordBatch) -> (usize, usize) {
    let bytes = batch
        .columns()
        .iter()
        .map(|c| {
            if let Some(a) = c.as_any().downcast_ref::<StringArray>() {
                a.value_data().len()
            } else if let Some(a) = c.as_any().downcast_ref::<arrow_array::LargeStringArray>() {
                a.value_data().len()
            } else if let Some(a) = c.as_any().downcast_ref::<arrow_array::StringViewArray>() {
                a.views().iter().map(|v| (*v as u32) as usize).sum()
            } else {
                0
            }
        })
        .sum();
    (batch.num_rows(), bytes)
}

async fn scan_once(dir: &str, strings: StringType, tasks: bool) -> Result<(usize, usize), String> {
    let table = DeltaTableBuilder::new(dir)
        .load_table()
        .await
        .map_err(|e| e.to_string())?;
    let types = OutputTypes::new(strings, OutputTypes::PLAIN.binaries);
    let scan = table
        .scan()
        .with_output_types(types)
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let mut total = (0, 0);
    if tasks {
        let handles: Vec<_> = scan
            .into_partition_streams()
            .into_iter()
            .map(|mut s| {
                tokio::spawn(async move {
                    let mut sum = (0, 0);
                    while let Some(b) = s.next().await {
                        let (r, n) = count(&b.map_err(|e| e.to_string())?);
                        sum = (sum.0 + r, sum.1 + n);
                    }
                    Ok::<_, String>(sum)
                })
            })
            .collect();
        for h in handles {
            let (r, n) = h.await.map_err(|e| e.to_string())??;
            total = (total.0 + r, total.1 + n);
        }
    } else {
        let mut stream = scan.into_stream();
        while let Some(b) = stream.next().await {
            let (r, n) = count(&b.map_err(|e| e.to_string())?);
            total = (total.0 + r, total.1 + n);
        }
    }
    Ok(total)
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(command), Some(dir)) = (args.first(), args.get(1)) else {
        return Err("usage: bench_output_types write|scan DIR [options]".into());
    };
    match command.as_str() {
        "write" => {
            let rows: usize = flag(&args, "--rows", "4000000")
                .parse()
                .map_err(|e| format!("--rows: {e}"))?;
            let files: usize = flag(&args, "--files", "8")
                .parse()
                .map_err(|e| format!("--files: {e}"))?;
            write(dir, rows, files.max(1))
        }
        "scan" => {
            let strings: StringType = flag(&args, "--strings", "utf8")
                .parse()
                .map_err(|e| format!("--strings: {e}"))?;
            let reps: usize = flag(&args, "--reps", "3")
                .parse()
                .map_err(|e| format!("--reps: {e}"))?;
            let tasks = flag(&args, "--mode", "merged") == "tasks";
            let mut times = Vec::new();
            let mut totals = (0, 0);
            for _ in 0..reps.max(1) {
                let start = Instant::now();
                totals = scan_once(dir, strings, tasks).await?;
                times.push(start.elapsed().as_secs_f64());
            }
            let runs: Vec<String> = times.iter().map(|t| format!("{t:.3}")).collect();
            times.sort_by(f64::total_cmp);
            println!(
                "strings {strings} mode {}: median {:.3} s (runs {}), {} rows, {} MB of \
                 strings, peak RSS {:.0} MiB",
                if tasks { "tasks" } else { "merged" },
                times[times.len() / 2],
                runs.join(" "),
                totals.0,
                totals.1 / 1_000_000,
                peak_rss_mib()
            );
            Ok(())
        }
        other => Err(format!("unknown command {other}")),
    }
}
