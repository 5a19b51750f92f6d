//! Predicates in scans: known answers on the demo table, clear errors for bad filters, and a
//! corpus-wide check that file skipping is conservative: for generated predicates over every
//! primitive column of every table with data, a scan with the predicate (partition and stats
//! skipping, then the row filter) returns exactly the rows that a full scan filtered by the
//! same predicate returns.
#![cfg(not(target_arch = "wasm32"))]

mod common;
mod rows;

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
    names.sort();
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
        let Some(first) = full.iter().find(|b| b.num_rows() > 0) else {
            continue;
        };
        let schema = table.schema();
        for (i, field) in schema.fields().iter().enumerate() {
            if !primitive(field.data_type()) {
                continue;
            }
            let column = first.column(i);
            let mut predicates = vec![col(field.name()).is_null(), col(field.name()).is_not_null()];
            for row in [0, first.num_rows() / 2, first.num_rows() - 1] {
                let Ok(value) = Scalar::from_array(column.as_ref(), row) else {
                    continue;
                };
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
