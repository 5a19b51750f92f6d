//! Row parity with `delta_kernel` 0.30.1 (default engine, arrow 59) over the shared corpus.
//!
//! For every table in `../shared/corpus/tables`, the latest snapshot is read in full twice:
//!
//! - by kernel: `Snapshot::builder_for(url).build(engine)`, `scan_builder().build()`,
//!   `Scan::execute(engine)`. `execute` reads every active file with the engine's parquet
//!   handler, transforms it to the logical schema (column mapping, partition values) and
//!   applies each file's deletion-vector selection vector itself
//!   (`EngineData::apply_selection_vector`), so every batch it yields holds only live rows;
//! - by us: `DeltaTableBuilder::new(path).load_table()`, `scan().build()`,
//!   `into_stream().collect_batches()`.
//!
//! Both are canonicalised with the `rows` module and compared as multisets of rows, columns
//! matched by name (kernel is the "expected" side of the report, ours the "scan" side).
//!
//! Not counted as passed or failed, each printed with its reason:
//! - log-only tables (the inventory notes "active files missing on disk" or "log-only"): there
//!   is no data to read, and kernel fails on their missing files too;
//! - tables kernel cannot read (snapshot, scan or data): kernel's error, and whether we read
//!   them or fail too;
//! - tables we refuse by design because they need a reader feature outside DESIGN.md's scope
//!   ("out of scope").
//!
//! Every row mismatch, and every table kernel reads but we fail on, is collected; the test
//! fails at the end with a report of all of them.
//!
//! Known semantic differences between kernel and the protocol, or kernel bugs, are handled
//! explicitly in [`apply_known_differences`] and [`apply_int96_wrap`], each documented there;
//! every value they change is printed ("known difference: ..."), none silently.
//!
//! Kernel's engine is synchronous (it blocks on its own background Tokio runtime), so every
//! kernel call runs in `tokio::task::spawn_blocking`, never on the async workers.
//!
//! Run: `cargo test --features kernel --test native kernel_rows -- --nocapture`.

use crate::common;
use crate::rows;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::Schema;
use parquet::basic::Type as PhysicalType;
use parquet::file::reader::{FileReader, SerializedFileReader};

use delta_arrow_reader::DeltaTableBuilder;
use delta_kernel::engine::arrow_conversion::TryFromKernel;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::object_store::local::LocalFileSystem;
use delta_kernel::Snapshot;
use delta_kernel_default_engine::DefaultEngineBuilder;

use rows::{Rows, Value};

/// How long our reader may take for one table before it counts as a failure (a hang).
const OUR_READ_TIMEOUT: Duration = Duration::from_secs(300);

/// Reader features outside DESIGN.md's scope that kernel reads: tables that need them are
/// refused by design with `unsupported_feature`, listed as "out of scope", and not counted.
const OUT_OF_SCOPE_READER_FEATURES: &[&str] = &["variantShredding-preview", "variantShredding"];

/// Inventory note markers of tables with no data files on disk.
const LOG_ONLY_MARKERS: &[&str] = &["active files missing on disk", "log-only"];

// ---------------------------------------------------------------------------------------------
// Kernel side (synchronous: run only inside spawn_blocking)
// ---------------------------------------------------------------------------------------------

type KernelEngine = delta_kernel_default_engine::DefaultEngine<
    delta_kernel_default_engine::executor::tokio::TokioBackgroundExecutor,
>;

/// Everything kernel read of one table's latest snapshot.
struct KernelRead {
    version: u64,
    /// Kernel's logical scan schema converted to Arrow (used when there are no batches).
    schema: Schema,
    batches: Vec<RecordBatch>,
}

/// Reads every live row of the latest snapshot of `table_url` with kernel. Errors are kernel's
/// message, prefixed with the stage that failed.
fn kernel_read(table_url: &url::Url) -> Result<KernelRead, String> {
    let engine: Arc<KernelEngine> =
        Arc::new(DefaultEngineBuilder::new(Arc::new(LocalFileSystem::new())).build());
    let snapshot = Snapshot::builder_for(table_url.as_str())
        .build(engine.as_ref())
        .map_err(|e| format!("snapshot: {e}"))?;
    let version = snapshot.version();
    let scan = snapshot
        .scan_builder()
        .build()
        .map_err(|e| format!("scan builder: {e}"))?;
    let schema = Schema::try_from_kernel(scan.logical_schema().as_ref())
        .map_err(|e| format!("schema to arrow: {e}"))?;
    let mut batches = Vec::new();
    // `execute` has already applied each file's deletion vector (see the module docs).
    for data in scan.execute(engine).map_err(|e| format!("execute: {e}"))? {
        let data = data.map_err(|e| format!("read: {e}"))?;
        let data = ArrowEngineData::try_from_engine_data(data)
            .map_err(|e| format!("scan result is not arrow: {e}"))?;
        batches.push(data.record_batch().clone());
    }
    Ok(KernelRead {
        version,
        schema,
        batches,
    })
}

/// [`kernel_read`], with a panic inside kernel turned into an error, and the message cut to
/// its first line (kernel appends a backtrace when `RUST_BACKTRACE` is set).
fn kernel_read_caught(table_url: url::Url) -> Result<KernelRead, String> {
    catch_unwind(AssertUnwindSafe(|| kernel_read(&table_url)))
        .unwrap_or_else(|panic| Err(format!("kernel panicked: {}", panic_message(&panic))))
        .map_err(|e| e.lines().next().unwrap_or_default().trim_end().to_string())
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}

// ---------------------------------------------------------------------------------------------
// Our side
// ---------------------------------------------------------------------------------------------

/// Everything we read of one table's latest snapshot.
struct OurRead {
    version: u64,
    /// Logical names of the partition columns (`metaData.partitionColumns`).
    partition_columns: Vec<String>,
    rows: Rows,
}

async fn our_read(table_dir: String) -> Result<OurRead, String> {
    // Spawned so that a panic in the reader is reported as a failure of this table.
    let task = tokio::spawn(async move {
        let table = DeltaTableBuilder::new(table_dir)
            .load_table()
            .await
            .map_err(|e| format!("[{}] {e}", e.code()))?;
        let scan = table
            .scan()
            .build()
            .await
            .map_err(|e| format!("scan build: [{}] {e}", e.code()))?;
        let schema = scan.schema();
        let batches = scan
            .into_stream()
            .collect_batches()
            .await
            .map_err(|e| format!("read: [{}] {e}", e.code()))?;
        let rows = Rows::from_batches(&schema, &batches)
            .map_err(|e| format!("our batches do not match our scan schema: {e}"))?;
        Ok(OurRead {
            version: table.version(),
            partition_columns: table.partition_columns().to_vec(),
            rows,
        })
    });
    match tokio::time::timeout(OUR_READ_TIMEOUT, task).await {
        Ok(Ok(result)) => result,
        Ok(Err(join)) => Err(format!("our reader panicked: {join}")),
        Err(_) => Err(format!(
            "our reader did not finish within {OUR_READ_TIMEOUT:?}"
        )),
    }
}

/// The reader feature outside DESIGN.md's scope that `our_err` refuses the table for, if any.
fn out_of_scope(our_err: &str) -> Option<&'static str> {
    if !our_err.starts_with("[unsupported_feature]") {
        return None;
    }
    OUT_OF_SCOPE_READER_FEATURES
        .iter()
        .find(|f| our_err.contains(&format!("'{f}'")))
        .copied()
}

// ---------------------------------------------------------------------------------------------
// Known semantic differences
// ---------------------------------------------------------------------------------------------

/// Turns kernel's rows into what the protocol says, where kernel knowingly departs from it.
/// Returns one line per change made (printed by the test), so nothing is normalised silently.
///
/// 1. Empty-string partition values. The protocol says an empty string in
///    `add.partitionValues` is a null partition value, for every type. Kernel 0.30.1
///    (`parse_partition_value_raw` → `PrimitiveType::empty_string_partition_cast`) follows
///    Spark's non-ANSI cast instead: for `string` and `binary` partition columns it yields
///    `""` / empty bytes, and null only for other types. We follow the protocol (null).
///    So in kernel's rows, an empty string / empty binary in a partition column becomes null.
///    Only partition columns are touched: a data column's `""` is a real value. (Our side is
///    not normalised: if we returned `""` there, the comparison would flag it.)
///
/// 2. INT96 timestamps outside the `i64` nanosecond range: kernel wraps them. This one cannot
///    be undone on kernel's side (its value has lost information), so it is applied to our
///    rows instead: see [`apply_int96_wrap`].
fn apply_known_differences(kernel: &mut Rows, partition_columns: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    for (c, column) in kernel.columns.iter().enumerate() {
        if !partition_columns.contains(&column.name) {
            continue;
        }
        let mut changed = 0usize;
        for row in &mut kernel.rows {
            let empty = match &row[c] {
                Value::Str(s) => s.is_empty(),
                Value::Bytes(b) => b.is_empty(),
                _ => false,
            };
            if empty {
                row[c] = Value::Null;
                changed += 1;
            }
        }
        if changed > 0 {
            notes.push(format!(
                "partition column `{}` ({}): {changed} kernel rows with an empty-string \
                 partition value read as null (kernel gives \"\", the protocol and we null)",
                column.name, column.kind
            ));
        }
    }
    notes
}

/// INT96 timestamps outside the range of `i64` nanoseconds (before 1677-09-21 or after
///    2262-04-11). Kernel's default engine lets arrow-rs decode INT96 (Spark's legacy
///    `timestamp` encoding) as `Timestamp(Nanosecond)`: `Int96::to_nanos` computes
///    `days * 86_400_000_000_000 + nanos` with `wrapping_mul`/`wrapping_add`, so a value such as
///    9999-12-31 wraps modulo 2^64 (to 1816-03-29T05:56:08.066278); kernel then casts to its
///    logical `Timestamp(Microsecond, "UTC")`, dividing by 1000 (truncating toward zero). We
///    decode INT96 straight to microseconds and return the true value, which the log's own
///    stats confirm (`deltars__table_with_edge_timestamps`: `minValues.BIG_DATE` is
///    `9999-12-31T00:00:00.000Z`). Kernel's wrong value cannot be mapped back, so our value is
///    mapped forward to what kernel's path yields: in top-level columns that are INT96 in some
///    data file of the table, every timestamp outside the `i64` nanosecond range becomes
///    `(value mod 2^64 as i64) / 1000 * 1000` nanoseconds. Values inside the range are never
///    touched, and if kernel's value were not exactly that wrap the comparison would still
///    fail. (Top-level columns only, matched by name: the corpus has no nested or
///    column-mapped INT96 column outside the range.)
fn apply_int96_wrap(ours: &mut Rows, table_dir: &Path) -> Vec<String> {
    let out_of_range =
        |v: &Value| matches!(v, Value::Timestamp { nanos, .. } if i64::try_from(*nanos).is_err());
    // Cheap check first: the footers are read only when some value is out of range.
    if !ours.rows.iter().flatten().any(out_of_range) {
        return Vec::new();
    }
    let int96 = int96_top_level_columns(table_dir);
    let mut notes = Vec::new();
    for (c, column) in ours.columns.iter().enumerate() {
        if !int96.contains(&column.name) {
            continue;
        }
        let mut changed = Vec::new();
        for row in &mut ours.rows {
            if let Value::Timestamp { nanos, utc } = row[c] {
                if out_of_range(&row[c]) {
                    // `as i64` keeps the low 64 bits: the same as arrow-rs' wrapping arithmetic.
                    let wrapped = nanos as i64;
                    let kernel = Value::Timestamp {
                        nanos: i128::from(wrapped / 1000 * 1000),
                        utc,
                    };
                    changed.push(format!("{} -> {kernel}", row[c]));
                    row[c] = kernel;
                }
            }
        }
        if !changed.is_empty() {
            notes.push(format!(
                "INT96 column `{}`: {} of our values outside the i64-nanosecond range mapped to \
                 kernel's wrapped reading (kernel wrong, see apply_int96_wrap): {}",
                column.name,
                changed.len(),
                changed.join(", ")
            ));
        }
    }
    notes
}

/// Names of the top-level columns stored as INT96 in any parquet data file of the table.
fn int96_top_level_columns(table_dir: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut dirs = vec![table_dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if file_name.starts_with('.') || file_name == "_delta_log" {
                continue; // ._* and .crc files, the log
            }
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if !file_name.ends_with(".parquet") {
                continue;
            }
            let Ok(file) = std::fs::File::open(&path) else {
                continue;
            };
            let Ok(reader) = SerializedFileReader::new(file) else {
                continue;
            };
            for column in reader.metadata().file_metadata().schema_descr().columns() {
                if column.physical_type() == PhysicalType::INT96 {
                    if let Some(top) = column.path().parts().first() {
                        names.insert(top.clone());
                    }
                }
            }
        }
    }
    names
}

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

/// Why a table is skipped as log-only, from its inventory notes.
fn log_only_reason(inventory: &[common::InventoryRow], name: &str) -> Option<String> {
    let row = inventory.iter().find(|r| r.name() == name)?;
    let notes = row.get("notes");
    LOG_ONLY_MARKERS
        .iter()
        .any(|m| notes.contains(m))
        .then(|| format!("inventory: {notes}"))
}

fn short(text: &str) -> String {
    const MAX: usize = 300;
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= MAX {
        one_line
    } else {
        format!("{}...", one_line.chars().take(MAX).collect::<String>())
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Report {
    passed: usize,
    failed: usize,
    /// Of the passed tables, those with no rows on either side.
    passed_empty: usize,
    total_rows: usize,
    log_only: Vec<String>,
    kernel_cannot_read: Vec<String>,
    out_of_scope: Vec<String>,
    known_differences: Vec<String>,
    failures: Vec<String>,
}

/// Compares one table; kernel's rows are the expected side.
fn compare_table(
    name: &str,
    table_dir: &Path,
    kernel: KernelRead,
    mut ours: OurRead,
    report: &mut Report,
) -> Result<(), String> {
    let mut problems = Vec::new();
    if ours.version != kernel.version {
        problems.push(format!(
            "version v{} (ours) vs v{} (kernel)",
            ours.version, kernel.version
        ));
    }
    let kernel_schema = kernel
        .batches
        .first()
        .map_or_else(|| kernel.schema.clone(), |b| b.schema().as_ref().clone());
    let mut kernel_rows = Rows::from_batches(&kernel_schema, &kernel.batches)
        .map_err(|e| format!("kernel's batches disagree with each other: {e}"))?;
    let mut notes = apply_known_differences(&mut kernel_rows, &ours.partition_columns);
    notes.extend(apply_int96_wrap(&mut ours.rows, table_dir));
    for note in notes {
        println!("known difference: {name}: {note}");
        report.known_differences.push(format!("{name}: {note}"));
    }
    let cmp = rows::compare(&kernel_rows, &ours.rows);
    if !cmp.is_equal() {
        problems.push(format!(
            "(expected = kernel, scan = ours)\n{}",
            cmp.report()
        ));
    }
    if problems.is_empty() {
        report.total_rows += ours.rows.rows.len();
        if ours.rows.rows.is_empty() {
            report.passed_empty += 1;
        }
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_rows_over_corpus() {
    let tables = common::corpus_tables();
    assert!(!tables.is_empty(), "no tables in the corpus");
    let inventory = common::inventory();
    let mut report = Report::default();
    let started = Instant::now();

    for (name, dir) in &tables {
        if let Some(reason) = log_only_reason(&inventory, name) {
            println!("skip (log-only): {name}: {reason}");
            report.log_only.push(name.clone());
            continue;
        }
        let table_started = Instant::now();
        let url = url::Url::from_directory_path(dir)
            .unwrap_or_else(|()| panic!("not an absolute path: {}", dir.display()));
        // Kernel reads on a blocking thread while we read on the async workers.
        let kernel = tokio::task::spawn_blocking(move || kernel_read_caught(url));
        let ours = our_read(dir.to_string_lossy().into_owned()).await;
        let kernel = kernel.await.expect("kernel task failed");

        match (kernel, ours) {
            (Err(kernel_err), ours) => {
                let ours_text = match &ours {
                    Ok(o) => format!("we read v{} ({} rows)", o.version, o.rows.rows.len()),
                    Err(e) => format!("we fail too: {}", short(e)),
                };
                let line = format!("{name}: kernel: {} | {ours_text}", short(&kernel_err));
                println!("kernel cannot read: {line}");
                report.kernel_cannot_read.push(line);
            }
            (Ok(kernel), Err(our_err)) if out_of_scope(&our_err).is_some() => {
                let feature = out_of_scope(&our_err).unwrap_or_default();
                let line = format!(
                    "{name}: kernel reads v{} ({} batches), we refuse by design (reader \
                     feature {feature}, outside DESIGN.md's scope)",
                    kernel.version,
                    kernel.batches.len()
                );
                println!("out of scope: {line}");
                report.out_of_scope.push(line);
            }
            (Ok(kernel), Err(our_err)) => {
                let kernel_rows: usize = kernel.batches.iter().map(|b| b.num_rows()).sum();
                report.failed += 1;
                let line = format!(
                    "{name}: kernel reads v{} ({kernel_rows} rows) but we fail: {our_err}",
                    kernel.version
                );
                println!("FAIL {line}");
                report.failures.push(line);
            }
            (Ok(kernel), Ok(ours)) => {
                let n = ours.rows.rows.len();
                match compare_table(name, dir, kernel, ours, &mut report) {
                    Ok(()) => {
                        report.passed += 1;
                        println!("ok {name}: {n} rows");
                    }
                    Err(problems) => {
                        report.failed += 1;
                        println!("FAIL {name}:\n{}", indent(&problems));
                        report
                            .failures
                            .push(format!("{name}:\n{}", indent(&problems)));
                    }
                }
            }
        }
        let elapsed = table_started.elapsed();
        if elapsed > Duration::from_secs(10) {
            println!("  ({name} took {elapsed:.1?})");
        }
    }

    println!();
    println!(
        "kernel rows: {} tables in {:.1?}; {} rows compared in {} passing tables ({} of them \
         empty on both sides)",
        tables.len(),
        started.elapsed(),
        report.total_rows,
        report.passed,
        report.passed_empty
    );
    println!(
        "skipped as log-only ({}): {}",
        report.log_only.len(),
        report.log_only.join(", ")
    );
    common::print_section(
        "kernel cannot read (not counted)",
        &report.kernel_cannot_read,
    );
    common::print_section("out of scope (not counted)", &report.out_of_scope);
    common::print_section("known differences normalised", &report.known_differences);
    println!(
        "kernel rows: {} passed, {} failed",
        report.passed, report.failed
    );

    let mut text = String::new();
    for f in &report.failures {
        let _ = writeln!(text, "- {f}");
    }
    assert!(
        report.failures.is_empty(),
        "kernel rows: {} of {} compared tables differ from delta_kernel:\n{text}",
        report.failed,
        report.passed + report.failed
    );
}

#[test]
fn known_differences_only_touch_partition_columns() {
    let mut kernel = Rows {
        columns: vec![
            rows::Column {
                name: "p".into(),
                kind: "string".into(),
            },
            rows::Column {
                name: "d".into(),
                kind: "string".into(),
            },
        ],
        rows: vec![
            vec![Value::Str(String::new()), Value::Str(String::new())],
            vec![Value::Str("x".into()), Value::Null],
        ],
    };
    let notes = apply_known_differences(&mut kernel, &["p".to_string()]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(kernel.rows[0], vec![Value::Null, Value::Str(String::new())]);
    assert_eq!(kernel.rows[1], vec![Value::Str("x".into()), Value::Null]);
}

#[test]
fn int96_wrap_matches_kernels_reading_of_9999_12_31() {
    // 9999-12-31T00:00:00Z, as kernel reads it from an INT96 column (observed on
    // deltars__table_with_edge_timestamps): 1816-03-29T05:56:08.066278Z.
    let nanos = i128::from(253_402_214_400i64) * 1_000_000_000;
    let wrapped = nanos as i64;
    let kernel = Value::Timestamp {
        nanos: i128::from(wrapped / 1000 * 1000),
        utc: true,
    };
    assert_eq!(kernel.to_string(), "1816-03-29T05:56:08.066278Z");
}
