//! Predicates in scans: known answers on the demo table, clear errors for bad filters, and a
//! corpus-wide check that file skipping is conservative: for generated predicates over every
//! primitive column of every table with data, a scan with the predicate (partition and stats
//! skipping, then the row filter) returns exactly the rows that a full scan filtered by the
//! same predicate returns.

use crate::common;
use crate::rows;

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::DataType;
use delta_arrow_reader::fixture::demo_table;
use delta_arrow_reader::predicate::{bind, col, evaluate, lit, Expr, Scalar};
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};

async fn demo() -> DeltaTable {
    let store = demo_table().unwrap_or_else(|e| panic!("{e}"));
    DeltaTableBuilder::new("memory://demo/")
        .with_store(Arc::new(store))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn ids(table: &DeltaTable, filter: &str) -> (Vec<i64>, usize) {
    let scan = table
        .scan()
        .with_filter(filter)
        .build()
        .await
        .unwrap_or_else(|e| panic!("{filter}: {e}"));
    let selected = scan.file_selection().files_selected;
    let batches = scan
        .into_stream()
        .collect_batches()
        .await
        .unwrap_or_else(|e| panic!("{filter}: {e}"));
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let c = b.column(0);
            let a = c
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .map(|a| a.values().to_vec())
                .unwrap_or_default();
            a
        })
        .collect();
    ids.sort_unstable();
    (ids, selected)
}

#[tokio::test]
async fn known_answers_on_the_demo_table() {
    let t = demo().await;
    // Partition pruning: only the NL file is read.
    assert_eq!(
        ids(&t, "country = 'NL' and population >= 500000").await,
        (vec![1, 2], 1)
    );
    // Statistics: only Tokyo's file has a population above 3 million.
    assert_eq!(ids(&t, "population > 3000000").await, (vec![6], 1));
    assert_eq!(
        ids(&t, "id in (4, 7) or city = 'Utrecht'").await.0,
        vec![3, 4, 7]
    );
    assert_eq!(ids(&t, "not (country in ('NL', 'FR'))").await.0, vec![6, 7]);
    assert_eq!(ids(&t, "city is null").await.0, Vec::<i64>::new());
    assert_eq!(
        ids(&t, "census_date between '2021-01-01' and '2022-12-31'")
            .await
            .0,
        vec![4, 5]
    );
    assert_eq!(ids(&t, "area_km2 < 100.0").await.0, vec![3, 5]);
    // The predicate's columns are read but not output.
    let scan = t
        .scan()
        .with_projection(["city"])
        .with_filter("population < 400000")
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scan.schema().fields().len(), 1);
    let batches = scan
        .into_stream()
        .collect_batches()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(batches.iter().map(|b| b.num_columns()).max(), Some(1));
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    // Typed predicates.
    let scan = t
        .scan()
        .with_predicate(col("country").eq(lit("JP")).and(col("id").gt(lit(6i64))))
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let rows: usize = scan
        .into_stream()
        .collect_batches()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert_eq!(rows, 1);
}

#[tokio::test]
async fn bad_filters_are_clear_errors() {
    let t = demo().await;
    for (filter, needle) in [
        ("nope = 1", "unknown column 'nope'"),
        ("population = 'many'", "population"),
        ("country = ", "character"),
        ("id >< 3", "character"),
    ] {
        let err = t.scan().with_filter(filter).build().await.err();
        let err = err.unwrap_or_else(|| panic!("{filter}: must fail"));
        assert_eq!(err.code(), "invalid_argument", "{filter}");
        assert!(err.to_string().contains(needle), "{filter}: {err}");
    }
}

/// Rows of a scan with `predicate`, and rows of the full scan `full` filtered by it
/// afterwards.
async fn both_ways(
    table: &DeltaTable,
    full: &[RecordBatch],
    predicate: &Expr,
) -> Result<(rows::Rows, rows::Rows, usize), String> {
    let scan = table
        .scan()
        .with_predicate(predicate.clone())
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let skipped = scan.file_selection().files_total - scan.file_selection().files_selected;
    skipped_files_agree(&scan)?;
    let schema = scan.schema();
    let with = scan
        .into_stream()
        .collect_batches()
        .await
        .map_err(|e| e.to_string())?;
    let bound = bind(predicate, table.delta_schema()).map_err(|e| e.to_string())?;
    let mut filtered: Vec<RecordBatch> = Vec::new();
    for b in full {
        let keep = evaluate(&bound, b).map_err(|e| e.to_string())?;
        filtered
            .push(arrow_select::filter::filter_record_batch(b, &keep).map_err(|e| e.to_string())?);
    }
    let a = rows::Rows::from_batches(&schema, &with)?;
    let b = rows::Rows::from_batches(&schema, &filtered)?;
    Ok((a, b, skipped))
}

fn primitive(dt: &DataType) -> bool {
    !matches!(
        dt,
        DataType::Struct(_)
            | DataType::List(_)
            | DataType::Map(_, _)
            | DataType::LargeList(_)
            | DataType::Null
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipping_never_drops_a_matching_row() {
    let expected_root = common::corpus_dir().join("expected");
    let mut names: Vec<String> = std::fs::read_dir(&expected_root)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    // Tables whose statistics were written for other types than the schema's today.
    names.extend(TYPE_CHANGED.iter().map(|n| n.to_string()));
    names.sort();
    names.dedup();
    let (mut checked, mut failures, mut skipped_files) = (0usize, Vec::new(), 0usize);
    for name in names {
        let Ok(table) = DeltaTableBuilder::new(common::table_dir(&name).to_string_lossy())
            .load_table()
            .await
        else {
            continue;
        };
        let full = match table.scan().build().await {
            Ok(s) => s.into_stream().collect_batches().await.unwrap_or_default(),
            Err(_) => continue,
        };
        // Values from two batches (so from two files, where there are): the first, middle and
        // last rows of the first and last batch.
        let filled: Vec<&RecordBatch> = full.iter().filter(|b| b.num_rows() > 0).collect();
        if filled.is_empty() {
            continue;
        }
        let n = filled.len().min(2);
        let picks: Vec<(&RecordBatch, usize)> = (0..n)
            .map(|k| {
                filled[if n > 1 {
                    k * (filled.len() - 1) / (n - 1)
                } else {
                    0
                }]
            })
            .flat_map(|b| [(b, 0), (b, b.num_rows() / 2), (b, b.num_rows() - 1)])
            .collect();
        let schema = table.schema();
        for (i, field) in schema.fields().iter().enumerate() {
            if !primitive(field.data_type()) {
                continue;
            }
            let mut predicates = vec![col(field.name()).is_null(), col(field.name()).is_not_null()];
            let mut seen = Vec::new();
            for &(batch, row) in &picks {
                let Ok(value) = Scalar::from_array(batch.column(i).as_ref(), row) else {
                    continue;
                };
                if seen.contains(&value) {
                    continue;
                }
                seen.push(value.clone());
                if value.is_null() {
                    continue;
                }
                predicates.push(col(field.name()).eq(lit(value.clone())));
                predicates.push(col(field.name()).lt(lit(value.clone())));
                predicates.push(col(field.name()).gt_eq(lit(value.clone())));
                predicates.push(!col(field.name()).not_eq(lit(value)));
            }
            for p in predicates {
                match both_ways(&table, &full, &p).await {
                    Ok((with, without, skipped)) => {
                        checked += 1;
                        skipped_files += skipped;
                        let cmp = rows::compare(&without, &with);
                        if !cmp.is_equal() {
                            failures.push(format!("{name}: {p}: {}", cmp.report()));
                        }
                    }
                    // Predicates the binder refuses (e.g. binary or variant columns) are not
                    // skipping errors.
                    Err(e) if e.contains("invalid argument") => {}
                    Err(e) => failures.push(format!("{name}: {p}: {e}")),
                }
            }
        }
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    println!(
        "skipping: {checked} passed, {} failed ({skipped_files} files skipped in all)",
        failures.len()
    );
    assert!(checked > 500, "only {checked} predicates checked");
    assert!(
        skipped_files > 0,
        "no file was ever skipped: skipping is not exercised"
    );
    assert!(failures.is_empty());
}

/// Tables with string columns at the top level, in structs, as partition columns, under
/// column mapping, with deletion vectors and with several row groups.
const STRING_FILTER_TABLES: &[&str] = &[
    "kernel__parquet_row_group_skipping",
    "golden__data-reader-nested-struct",
    "golden__table-with-columnmapping-mode-name",
    "deltars__table_with_column_mapping",
    "golden__data-skipping-basic-stats-all-types-columnmapping-id",
    "dat__multi_partitioned",
    "golden__dv-partitioned-with-checkpoint",
    "kernel__with-short-dv",
    "golden__data-reader-partition-values",
];

/// Rows, file selection and row groups pruned of a scan with `predicate` and output `types`.
/// `skipped_files` names, file by file, what `file_selection` counts: each reason's count,
/// no file twice, and with the files read every active file once.
/// Tables of the corpus whose columns changed type (type widening): their older files'
/// statistics were written for the old types.
const TYPE_CHANGED: &[&str] = &["kernel__type-widening"];

fn skipped_files_agree(scan: &delta_arrow_reader::DeltaScan) -> Result<(), String> {
    use delta_arrow_reader::SkipReason;
    let sel = scan.file_selection();
    let listed = scan.skipped_files();
    let count = |reason| listed.iter().filter(|f| f.reason == reason).count();
    let counts = (
        count(SkipReason::Partition),
        count(SkipReason::Stats),
        count(SkipReason::Filter),
    );
    if counts
        != (
            sel.skipped_by_partition,
            sel.skipped_by_stats,
            sel.skipped_by_filter,
        )
        || listed.len() != counts.0 + counts.1 + counts.2
    {
        return Err(format!(
            "skipped_files {counts:?} of {}, selection {sel:?}",
            listed.len()
        ));
    }
    let paths: std::collections::BTreeSet<&str> =
        listed.iter().map(|f| f.add.path.as_str()).collect();
    if paths.len() != listed.len() || sel.files_selected + listed.len() != sel.files_total {
        return Err(format!(
            "skipped files repeat or miss some: {paths:?}, selection {sel:?}"
        ));
    }
    Ok(())
}

async fn filtered_scan(
    table: &DeltaTable,
    predicate: &Expr,
    types: delta_arrow_reader::OutputTypes,
) -> (rows::Rows, String) {
    let scan = table
        .scan()
        .with_output_types(types)
        .with_predicate(predicate.clone())
        .build()
        .await
        .unwrap_or_else(|e| panic!("{predicate}: {e}"));
    let selection = scan.file_selection();
    let schema = scan.schema();
    let stream = scan.into_stream();
    let metrics = stream.metrics();
    let batches = stream
        .collect_batches()
        .await
        .unwrap_or_else(|e| panic!("{predicate} {types:?}: {e}"));
    let facts = format!(
        "{selection:?}, {} row groups pruned",
        metrics.row_groups_pruned()
    );
    let rows = rows::Rows::from_batches(&schema, &batches).unwrap_or_else(|e| panic!("{e}"));
    (rows, facts)
}

/// Every path to a string field of `fields` (top level and inside structs).
fn string_paths(fields: &arrow_schema::Fields, prefix: &[String], out: &mut Vec<Vec<String>>) {
    for f in fields {
        let mut path = prefix.to_vec();
        path.push(f.name().clone());
        match f.data_type() {
            DataType::Utf8 => out.push(path),
            DataType::Struct(children) => string_paths(children, &path, out),
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn predicates_on_string_views_prune_and_filter_like_utf8() {
    use delta_arrow_reader::OutputTypes;
    let (mut checked, mut pruning, mut failures) = (0usize, 0usize, Vec::new());
    for name in STRING_FILTER_TABLES {
        let table = DeltaTableBuilder::new(common::table_dir(name).to_string_lossy())
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let full = table
            .scan()
            .with_output_types(OutputTypes::PLAIN)
            .build()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .into_stream()
            .collect_batches()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let one = arrow_select::concat::concat_batches(&table.schema(), &full)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut paths = Vec::new();
        string_paths(table.schema().fields(), &[], &mut paths);
        assert!(!paths.is_empty(), "{name} has no string column");
        for path in paths {
            // The column's values, struct by struct.
            let mut array = one.column_by_name(&path[0]).cloned();
            for field in &path[1..] {
                array = array.and_then(|a| {
                    a.as_any()
                        .downcast_ref::<arrow_array::StructArray>()
                        .and_then(|s| s.column_by_name(field).cloned())
                });
            }
            let array = array.unwrap_or_else(|| panic!("{name}: no {path:?}"));
            let c = || delta_arrow_reader::predicate::column(path.clone());
            let mut predicates = vec![c().is_null(), c().is_not_null()];
            let n = array.len();
            for row in [0, n / 3, n / 2, n.saturating_sub(1)] {
                let Ok(value) = Scalar::from_array(array.as_ref(), row) else {
                    continue;
                };
                if value.is_null() {
                    continue;
                }
                predicates.push(c().eq(lit(value.clone())));
                predicates.push(c().lt(lit(value.clone())));
                predicates.push(c().gt_eq(lit(value.clone())));
                predicates.push(c().in_list([value.clone(), Scalar::from("no such value")]));
                predicates.push(!c().not_eq(lit(value)));
            }
            for p in predicates {
                let (plain, plain_facts) = filtered_scan(&table, &p, OutputTypes::PLAIN).await;
                let (views, view_facts) = filtered_scan(&table, &p, OutputTypes::VIEWS).await;
                checked += 1;
                if !plain_facts.ends_with(" 0 row groups pruned")
                    || !plain_facts.contains("skipped_by_stats: 0")
                    || !plain_facts.contains("skipped_by_partition: 0")
                    || !plain_facts.contains("skipped_by_filter: 0")
                {
                    pruning += 1;
                }
                let cmp = rows::compare(&plain, &views);
                if !cmp.is_equal() {
                    failures.push(format!("{name}: {p}: {}", cmp.report()));
                } else if plain_facts != view_facts {
                    failures.push(format!("{name}: {p}: {plain_facts} / views {view_facts}"));
                }
            }
        }
    }
    println!(
        "string views: {checked} predicates, {pruning} pruned something, {} differ",
        failures.len()
    );
    assert!(checked > 100, "only {checked} predicates checked");
    assert!(pruning > 10, "pruning is not exercised ({pruning})");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
