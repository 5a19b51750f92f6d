use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::*;
use crate::predicate::{bind, parse_filter, Scalar};
use crate::schema::{parse_schema, StructType};

/// 1,000 rows in row groups of 500 and pages of 100 rows: `id` 0..1000 (sorted), `k` the
/// same ids reversed, `s` text; with a page index (`index`) or without.
fn file(index: bool) -> ParquetMetaData {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("k", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from_iter_values(0..1000)),
            Arc::new(Int64Array::from_iter_values((0..1000).rev())),
            Arc::new(StringArray::from_iter_values(
                (0..1000).map(|i| format!("s{i:04}")),
            )),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let stats = if index {
        EnabledStatistics::Page
    } else {
        EnabledStatistics::Chunk
    };
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(500))
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .set_statistics_enabled(stats)
        .build();
    let mut buf = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap_or_else(|e| panic!("{e}"));
    writer.write(&batch).unwrap_or_else(|e| panic!("{e}"));
    writer.close().unwrap_or_else(|e| panic!("{e}"));
    ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .parse_and_finish(&Bytes::from(buf))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn table() -> StructType {
    parse_schema(
        r#"{"type":"struct","fields":[
        {"name":"id","type":"long","nullable":false,"metadata":{}},
        {"name":"k","type":"long","nullable":false,"metadata":{}},
        {"name":"s","type":"string","nullable":true,"metadata":{}},
        {"name":"gone","type":"long","nullable":true,"metadata":{}}]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The runs of each row group `filter` keeps, as (kept, rows).
fn pages(metadata: &ParquetMetaData, filter: &str) -> Vec<(usize, Vec<(bool, usize)>)> {
    let schema = table();
    let expr = parse_filter(filter).unwrap_or_else(|e| panic!("{e}"));
    let bound = bind(&expr, &schema).unwrap_or_else(|e| panic!("{e}"));
    let groups: Vec<usize> = (0..metadata.num_row_groups()).collect();
    prune_pages(
        &bound,
        metadata,
        &ReadColumn::all_of(&schema, &[]),
        &TypedPartitionValues::default(),
        ColumnMappingMode::None,
        false,
        &groups,
    )
    .into_iter()
    .map(|(rg, selectors)| {
        let runs = selectors
            .into_iter()
            .map(|s| (!s.skip, s.row_count))
            .collect();
        (rg, runs)
    })
    .collect()
}

#[test]
fn pages_outside_a_range_are_skipped() {
    let m = file(true);
    // Rows 250..420 are on pages 200..300, 300..400, 400..500 of the first row group; the
    // second row group is ruled out by its pages too (but is left to row-group pruning:
    // every page of it skipped).
    assert_eq!(
        pages(&m, "id >= 250 and id < 420"),
        vec![
            (0, vec![(false, 200), (true, 300)]),
            (1, vec![(false, 500)])
        ]
    );
    // Nothing to skip: nothing listed.
    assert_eq!(pages(&m, "id >= 0"), vec![]);
    assert_eq!(pages(&m, "s is not null"), vec![]);
}

#[test]
fn several_columns_cut_the_runs_together() {
    let m = file(true);
    // `id < 150 or k < 100`: the first two pages (id) and the last page (k: ids 900..1000).
    assert_eq!(
        pages(&m, "id < 150 or k < 100"),
        vec![
            (0, vec![(true, 200), (false, 300)]),
            (1, vec![(false, 400), (true, 100)])
        ]
    );
    // Both must hold: nothing can.
    assert_eq!(
        pages(&m, "id < 150 and k < 100"),
        vec![(0, vec![(false, 500)]), (1, vec![(false, 500)])]
    );
    // A column the file does not have reads as nulls: `gone is null` keeps everything,
    // `gone = 1` nothing.
    assert_eq!(
        pages(&m, "gone is null and id < 100"),
        vec![
            (0, vec![(true, 100), (false, 400)]),
            (1, vec![(false, 500)])
        ]
    );
}

#[test]
fn without_a_page_index_nothing_is_skipped() {
    assert_eq!(pages(&file(false), "id >= 250 and id < 420"), vec![]);
}

#[test]
fn runs_join_pages_of_different_sizes() {
    let stats = |lo: i64, hi: i64| ColumnStats {
        min: Some(Scalar::Long(lo)),
        max: Some(Scalar::Long(hi)),
        null_count: Some(0),
    };
    let a: Pages = vec![(30, stats(0, 29)), (70, stats(30, 99))];
    let b: Pages = vec![(50, stats(0, 49)), (50, stats(50, 99))];
    let per_column = vec![(vec!["a".to_string()], a), (vec!["b".to_string()], b)];
    let mut seen = Vec::new();
    let got = runs(100, &per_column, |s| {
        let bounds: Vec<Option<Scalar>> = s.iter().map(|(_, c)| c.min.clone()).collect();
        seen.push(bounds);
        // Keep runs where `a` is on its first page.
        s.first()
            .is_some_and(|(_, c)| c.min == Some(Scalar::Long(0)))
    });
    assert_eq!(got, vec![(true, 30), (false, 70)]);
    // Runs 0..30, 30..50, 50..100: each column on the right page.
    assert_eq!(
        seen,
        vec![
            vec![Some(Scalar::Long(0)), Some(Scalar::Long(0))],
            vec![Some(Scalar::Long(30)), Some(Scalar::Long(0))],
            vec![Some(Scalar::Long(30)), Some(Scalar::Long(50))],
        ]
    );
}
