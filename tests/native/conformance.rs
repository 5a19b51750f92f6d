//! Conformance of the scan read path: every corpus table with expected results (Spark golden
//! tables, DAT tables at every version they give, the delta-kernel-rs pretty-printed variant
//! table) is loaded and scanned whole, and its rows must equal the expected rows as a
//! multiset, column by column (see `rows` for how values are normalised).
//!
//! Tables that need a reader feature outside DESIGN.md's "Delta protocol scope" are listed in
//! [`OUT_OF_SCOPE`] and reported as such; tables the inventory says must fail are not
//! compared (`corpus_load` checks that they fail). Expected files known to be wrong are
//! listed, with the correction applied, in [`EXPECTED_ERRATA`]. Nothing is skipped silently.

use crate::common;
use crate::rows;

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::{FutureExt, StreamExt};

use delta_arrow_reader::log::SUPPORTED_READER_FEATURES;
use delta_arrow_reader::DeltaTableBuilder;

use rows::{compare, ExpectedCase, ExpectedSource, Rows};

/// Corpus tables that need a reader feature outside DESIGN.md's "Delta protocol scope", with
/// that feature. They are reported as out of scope, never compared. (None of them has
/// expected results today; the list keeps them visible if some appear.)
const OUT_OF_SCOPE: &[(&str, &str)] = &[
    (
        "deltars__spark-shredded-variant-preview-delta",
        "variantShredding-preview",
    ),
    ("deltars__err-logs-table_d", "catalogOwned"),
    ("deltars__err-logs-table_e", "catalogOwned"),
    ("deltars__err-logs-table_f", "catalogOwned"),
    ("deltars__err-logs-table_h", "catalogOwned"),
    ("deltars__err-logs-table_i", "catalogOwned"),
    ("kernel__uc-catalog_managed_0", "catalogManaged"),
    ("kernel__table-with-geo", "geospatial"),
];

/// An expected file known to be wrong, and the correction applied to it before comparing.
struct Erratum {
    table: &'static str,
    column: &'static str,
    /// Added to every timestamp of the column, in nanoseconds.
    shift_nanos: i128,
    why: &'static str,
}

const EXPECTED_ERRATA: &[Erratum] = &[Erratum {
    table: "golden__data-reader-partition-values",
    column: "as_timestamp",
    shift_nanos: -7 * 3_600 * 1_000_000_000,
    why: "the partition value is '2021-09-08 11:11:11'; Spark wrote the expected file in \
          America/Los_Angeles and read it as local time (18:11:11Z). Zone-less partition \
          timestamps are UTC (golden__kernel-timestamp-* in this corpus and delta-kernel-rs \
          read them so; kernel skips this table for this reason), so 11:11:11Z is expected",
}];

/// Longest time one case may take (load, scan and read).
const CASE_TIMEOUT: Duration = Duration::from_secs(300);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_equal_expected_rows() {
    let mut failures: Vec<String> = Vec::new();
    for (table, feature) in OUT_OF_SCOPE {
        let has_expected = common::corpus_dir().join("expected").join(table).is_dir();
        println!(
            "OUT OF SCOPE {table}: needs reader feature {feature}; {}",
            if has_expected {
                "its expected results are not compared"
            } else {
                "no expected results"
            }
        );
    }
    let cases = expected_cases(&mut failures);
    check_cases(&cases, failures).await;
}

/// The cases of the tables with a map column or a Parquet checkpoint (whose actions hold
/// maps: `partitionValues`, `configuration`), read as the wasm32 build reads them: no
/// decoder panic is contained, so map columns are decoded from their groups and pages are
/// checked decompressed (`delta_arrow_reader::limits::behave_as_aborting`). On this
/// one-threaded runtime every task of the scan runs on the test's thread, which behaves so.
#[tokio::test]
async fn map_tables_equal_expected_rows_where_panics_abort() {
    let mut failures: Vec<String> = Vec::new();
    let cases: Vec<ExpectedCase> = expected_cases(&mut failures)
        .into_iter()
        .filter(|c| has_map_column(&c.table) || has_parquet_checkpoint(&c.table))
        .collect();
    let maps = cases.iter().filter(|c| has_map_column(&c.table)).count();
    if !common::corpus_overridden() {
        assert!(maps >= 5, "only {maps} cases of map tables");
        assert!(cases.len() >= maps + 5, "only {} cases", cases.len());
    }
    delta_arrow_reader::limits::behave_as_aborting(true);
    check_cases(&cases, failures).await;
    delta_arrow_reader::limits::behave_as_aborting(false);
}

/// Whether a commit of the corpus table `name` declares a map type in its schema.
fn has_map_column(name: &str) -> bool {
    let log = common::table_dir(name).join("_delta_log");
    let Ok(entries) = std::fs::read_dir(&log) else {
        return false;
    };
    entries.flatten().any(|e| {
        e.path().extension().is_some_and(|x| x == "json")
            && std::fs::read_to_string(e.path())
                .is_ok_and(|text| text.contains(r#"\"type\":\"map\""#))
    })
}

/// Whether the corpus table `name` has a Parquet checkpoint.
fn has_parquet_checkpoint(name: &str) -> bool {
    let log = common::table_dir(name).join("_delta_log");
    std::fs::read_dir(&log).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            file.contains(".checkpoint") && file.ends_with(".parquet")
        })
    })
}

/// Every case of the tables with expected results; what keeps a table out is pushed on
/// `failures`.
fn expected_cases(failures: &mut Vec<String>) -> Vec<ExpectedCase> {
    let inventory = common::inventory();
    let expected_root = common::corpus_dir().join("expected");
    let mut tables: Vec<String> = std::fs::read_dir(&expected_root)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", expected_root.display()))
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    tables.sort();
    assert!(
        tables.len() >= 60 || common::corpus_overridden(),
        "only {} tables with expected results",
        tables.len()
    );

    let mut cases: Vec<ExpectedCase> = Vec::new();
    for table in &tables {
        let Some(row) = inventory.iter().find(|r| r.name() == table) else {
            failures.push(format!(
                "{table}: has expected results but no inventory row"
            ));
            continue;
        };
        if OUT_OF_SCOPE.iter().any(|(t, _)| t == table) {
            continue;
        }
        if let Some(why) = row.must_fail(SUPPORTED_READER_FEATURES) {
            if row.get("kernel_rs_golden_status").starts_with("negative") {
                println!("NOT COMPARED {table}: {why}");
            } else {
                failures.push(format!(
                    "{table}: has expected results but must fail ({why}); if it needs a \
                     feature outside DESIGN.md's scope, list it in OUT_OF_SCOPE"
                ));
            }
            continue;
        }
        match rows::cases_of(&expected_root, table) {
            Ok(c) => cases.extend(c),
            Err(e) => failures.push(format!("{table}: {e}")),
        }
    }
    for erratum in EXPECTED_ERRATA {
        assert!(
            common::corpus_overridden() || cases.iter().any(|c| c.table == erratum.table),
            "erratum for {}, which is not a case",
            erratum.table
        );
    }

    cases
}

/// Runs every case and fails naming each that differs (and each of `failures`).
async fn check_cases(cases: &[ExpectedCase], mut failures: Vec<String>) {
    let mut passed = 0usize;
    println!("checking {} cases", cases.len());
    for case in cases {
        let label = case.label();
        match run_case(case).await {
            Ok(summary) => {
                passed += 1;
                println!("PASS {label}: {summary}");
            }
            Err(problem) => {
                let first = problem.lines().next().unwrap_or_default();
                println!("FAIL {label}: {first}");
                failures.push(format!("{label}: {problem}"));
            }
        }
    }

    println!("conformance: {passed} passed, {} failed", failures.len());
    assert!(
        failures.is_empty(),
        "{} conformance failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Loads, scans and compares one case; `Ok` is a short summary, `Err` what differs.
async fn run_case(case: &ExpectedCase) -> Result<String, String> {
    let mut expected = case
        .read_expected()
        .map_err(|e| format!("expected data: {e}"))?;
    let mut notes = Vec::new();
    for erratum in EXPECTED_ERRATA.iter().filter(|e| e.table == case.table) {
        let changed = expected.shift_timestamps(erratum.column, erratum.shift_nanos);
        if changed == 0 {
            return Err(format!(
                "erratum on column `{}` changed nothing; is the expected file fixed?",
                erratum.column
            ));
        }
        notes.push(format!(
            "expected `{}` corrected by {}h ({})",
            erratum.column,
            erratum.shift_nanos / 3_600_000_000_000,
            erratum.why
        ));
    }

    let scan = AssertUnwindSafe(tokio::time::timeout(
        CASE_TIMEOUT,
        scan_table(&case.table, case.version),
    ))
    .catch_unwind()
    .await;
    let (version, schema, batches) = match scan {
        Err(panic) => return Err(format!("PANIC {}", panic_message(&panic))),
        Ok(Err(_)) => return Err(format!("timed out after {CASE_TIMEOUT:?}")),
        Ok(Ok(result)) => result?,
    };

    let want_version = case.version.or(case.latest_version);
    if let Some(v) = want_version.filter(|v| *v != version) {
        return Err(format!("loaded version {version}, expected version {v}"));
    }
    let actual = match case.source {
        ExpectedSource::Parquet(_) => Rows::from_batches(&schema, &batches),
        ExpectedSource::Pretty(_) => Rows::from_batches_as_text(&schema, &batches),
    }
    .map_err(|e| format!("scan output: {e}"))?;
    let comparison = compare(&expected, &actual);
    if !comparison.is_equal() {
        return Err(comparison.report());
    }
    let mut summary = format!(
        "version {version}, {} rows, {} columns, {} batches",
        actual.rows.len(),
        actual.columns.len(),
        batches.len()
    );
    for note in notes {
        summary.push_str(&format!("; {note}"));
    }
    Ok(summary)
}

/// The snapshot version, scan schema and all batches of a whole-table scan.
async fn scan_table(
    name: &str,
    version: Option<u64>,
) -> Result<(u64, SchemaRef, Vec<RecordBatch>), String> {
    let location = common::table_dir(name).to_string_lossy().into_owned();
    let mut builder = DeltaTableBuilder::new(location);
    if let Some(v) = version {
        builder = builder.with_version(v);
    }
    let table = builder
        .load_table()
        .await
        .map_err(|e| format!("load failed [{}]: {e}", e.code()))?;
    let loaded_version = table.version();
    let scan = table
        .scan()
        .build()
        .await
        .map_err(|e| format!("scan build failed [{}]: {e}", e.code()))?;
    let schema = scan.schema();
    let mut stream = Box::pin(scan.into_stream());
    let mut batches = Vec::new();
    while let Some(item) = stream.next().await {
        let batch = item.map_err(|e| {
            format!(
                "read failed after {} batches [{}]: {e}",
                batches.len(),
                e.code()
            )
        })?;
        batches.push(batch);
    }
    Ok((loaded_version, schema, batches))
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-text panic)".into())
}

/// `into_ordered_stream`, decoding on two threads, gives every readable corpus table's rows
/// in exactly the order of a read on one partition (the log's order): the same values,
/// row for row; with the default options, with files cut into ranges of at most 4 KiB
/// (`max_task_bytes`: the corpus's files are smaller than the 8 MiB ranges of the default),
/// and with a filter that leaves some files out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ordered_stream_is_the_log_order_on_the_corpus() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for (name, dir) in common::corpus_tables() {
        let Ok(table) = DeltaTableBuilder::new(dir.to_string_lossy())
            .load_table()
            .await
        else {
            continue;
        };
        let filter = common::first_column_not_null(&table);
        let read = |ordered: bool, max_task_bytes: Option<u64>, filter: Option<String>| {
            let table = table.clone();
            async move {
                let mut scan = table.scan().with_batch_size(1000);
                if let Some(f) = filter {
                    scan = scan.with_filter(f);
                }
                if let Some(max) = max_task_bytes {
                    scan = scan.with_execution_options(
                        delta_arrow_reader::DeltaScanExecutionOptions {
                            max_task_bytes: max,
                            target_partitions: Some(2),
                            ..Default::default()
                        },
                    );
                }
                if !ordered {
                    scan = scan.with_target_partitions(1);
                }
                let scan = scan.build().await?;
                let schema = scan.schema();
                let stream = if ordered {
                    scan.into_ordered_stream()
                } else {
                    scan.into_stream()
                };
                let batches = stream.collect_batches().await?;
                arrow_select::concat::concat_batches(&schema, &batches).map_err(|e| {
                    delta_arrow_reader::DeltaError::Arrow {
                        phase: delta_arrow_reader::Phase::Read,
                        source: e,
                    }
                })
            }
        };
        // Each one-partition read once, for every ordered read it is compared with.
        let whole = read(false, None, None).await;
        let filtered = read(false, None, filter.clone()).await;
        for (max, filter, sequential) in [
            (None, None, &whole),
            (Some(4096), None, &whole),
            (Some(4096), filter.clone(), &filtered),
        ] {
            let Ok(sequential) = sequential else {
                continue;
            };
            compared += 1;
            match read(true, max, filter.clone()).await {
                Ok(ordered) if ordered == *sequential => {}
                Ok(ordered) => failures.push(format!(
                    "{name} (max_task_bytes {max:?}, filter {filter:?}): {} rows in another \
                     order or with other values than the {} of one partition",
                    ordered.num_rows(),
                    sequential.num_rows()
                )),
                Err(e) => failures.push(format!("{name} (max_task_bytes {max:?}): {e}")),
            }
        }
    }
    assert!(compared > 300, "only {compared} reads compared");
    assert!(failures.is_empty(), "{failures:#?}");
}
