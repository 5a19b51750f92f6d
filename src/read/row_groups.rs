//! Row-group pruning, pure: which row groups of a Parquet file may hold a row that the scan's
//! predicate selects, judged from the row groups' statistics in the footer.
//!
//! For each top-level primitive column the predicate reads, the typed min, max and null count
//! of every row group are taken with arrow-rs's `StatisticsConverter`, cast to the column's
//! logical Arrow type (as the data itself is, see `transform`), and turned into a
//! [`FileStats`] per row group; [`may_match_file`] then decides, with the file's partition
//! values, exactly as it does for whole files. Everything is conservative: a statistic that is
//! missing, does not convert, or may be unreliable (NaN bounds, byte-array bounds in the
//! deprecated `min`/`max` fields, which old writers compared as signed bytes) is left out,
//! and a row group is only dropped when its statistics prove that no row matches.
//!
//! A column the file does not have reads as nulls (schema evolution): every row of every row
//! group is null.

use arrow_array::{Array, ArrayRef};
use arrow_schema::Schema;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::parquet_to_arrow_schema;
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::ParquetMetaData;

use super::file_fields::FileFields;
use super::transform::{cast, find_in_file};
use crate::plan::ReadColumn;
use crate::predicate::{
    may_match_file, BoundExpr, ColumnStats, FileStats, Scalar, TypedPartitionValues,
};
use crate::schema::ColumnMappingMode;

/// The indexes of the row groups of a file that may hold a row `predicate` selects, in file
/// order.
///
/// `columns` are the scan's read columns (they include every column the predicate reads) and
/// `partition_values` the file's. `has_deletion_vector` makes row and null counts loose (they
/// count deleted rows).
pub(crate) fn prune_row_groups(
    predicate: &BoundExpr,
    metadata: &ParquetMetaData,
    columns: &[ReadColumn],
    partition_values: &TypedPartitionValues,
    mode: ColumnMappingMode,
    has_deletion_vector: bool,
) -> Vec<usize> {
    let count = metadata.num_row_groups();
    let all: Vec<usize> = (0..count).collect();
    if count == 0 {
        return all;
    }
    let stats_columns = predicate_stats(predicate, metadata, columns, |plain, column| {
        column_stats(metadata, plain, column, mode)
    });
    if stats_columns.is_empty() && partition_values.is_empty() {
        return all;
    }
    all.into_iter()
        .filter(|&rg| {
            let rows = u64::try_from(metadata.row_group(rg).num_rows()).ok();
            let stats = FileStats::from_columns(
                rows,
                None,
                stats_columns
                    .iter()
                    .map(|(path, per_group)| (path.clone(), per_group[rg].clone())),
            )
            .with_deletion_vector(has_deletion_vector);
            may_match_file(predicate, partition_values, Some(&stats))
        })
        .collect()
}

/// For each top-level primitive data column the predicate reads: what `stats_of` finds for
/// it (its statistics in every row group here; in every page of a row group for
/// `page_pruning`), given the file's plain Arrow schema.
pub(super) fn predicate_stats<T>(
    predicate: &BoundExpr,
    metadata: &ParquetMetaData,
    columns: &[ReadColumn],
    stats_of: impl Fn(&Schema, &ReadColumn) -> Option<T>,
) -> Vec<(Vec<String>, T)> {
    let descr = metadata.file_metadata().schema_descr();
    // The schema the Parquet types themselves give, without the embedded Arrow schema: the
    // statistics values are in these types (an embedded hint such as `Timestamp(Second)`
    // stored as milliseconds would mislabel them).
    let Ok(plain) = parquet_to_arrow_schema(descr, None) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for path in predicate.columns() {
        let [name] = path.as_slice() else {
            continue;
        };
        let column = columns.iter().find(|c| &c.field.name == name).or_else(|| {
            columns
                .iter()
                .find(|c| c.field.name.eq_ignore_ascii_case(name))
        });
        let Some(column) = column else {
            continue;
        };
        if column.partition || column.field.data_type.as_primitive().is_none() {
            continue;
        }
        if let Some(stats) = stats_of(&plain, column) {
            out.push((path, stats));
        }
    }
    out
}

/// The statistics of one column in every row group, or `None` when nothing is known.
fn column_stats(
    metadata: &ParquetMetaData,
    plain: &Schema,
    column: &ReadColumn,
    mode: ColumnMappingMode,
) -> Option<Vec<ColumnStats>> {
    let groups = metadata.row_groups();
    let Some(root) = find_in_file(&FileFields::new(plain.fields()), &column.field, mode) else {
        // Not in the file: the column reads as nulls.
        return Some(
            groups
                .iter()
                .map(|rg| ColumnStats {
                    min: None,
                    max: None,
                    null_count: u64::try_from(rg.num_rows()).ok(),
                })
                .collect(),
        );
    };
    let field = plain.field(root);
    if field.data_type().is_nested() {
        return None;
    }
    let descr = metadata.file_metadata().schema_descr();
    let leaf = (0..descr.num_columns()).find(|&i| descr.get_column_root_idx(i) == root)?;
    let physical = descr.column(leaf).physical_type();
    let converter = StatisticsConverter::from_column_index(leaf, field, descr)
        .ok()?
        .with_missing_null_counts_as_zero(false);
    let target = column.arrow.data_type();
    let typed = |array: parquet::errors::Result<ArrayRef>| -> Option<ArrayRef> {
        let array = array.ok()?;
        (array.len() == groups.len())
            .then(|| cast(&array, target).ok())
            .flatten()
    };
    let mins = typed(converter.row_group_mins(groups.iter()));
    let maxes = typed(converter.row_group_maxes(groups.iter()));
    let nulls = converter
        .row_group_null_counts(groups.iter())
        .ok()
        .filter(|a| a.len() == groups.len());
    let byte_array = matches!(
        physical,
        PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY
    );
    let stats = groups
        .iter()
        .enumerate()
        .map(|(i, rg)| {
            let deprecated = byte_array
                && rg
                    .column(leaf)
                    .statistics()
                    .is_some_and(|s| s.is_min_max_deprecated());
            let (mut min, mut max) = (bound(mins.as_ref(), i), bound(maxes.as_ref(), i));
            if deprecated || is_nan(min.as_ref()) || is_nan(max.as_ref()) {
                (min, max) = (None, None);
            }
            ColumnStats {
                min,
                max,
                null_count: nulls
                    .as_ref()
                    .and_then(|n| n.is_valid(i).then(|| n.value(i))),
            }
        })
        .collect();
    Some(stats)
}

/// The non-null value at `row`, if any.
pub(super) fn bound(array: Option<&ArrayRef>, row: usize) -> Option<Scalar> {
    Scalar::from_array(array?.as_ref(), row)
        .ok()
        .filter(|s| !s.is_null())
}

pub(super) fn is_nan(value: Option<&Scalar>) -> bool {
    match value {
        Some(Scalar::Float(v)) => v.is_nan(),
        Some(Scalar::Double(v)) => v.is_nan(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{
        Float64Array, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray,
    };
    use arrow_schema::{DataType, Field, Schema, TimeUnit};
    use parquet::file::metadata::ParquetMetaDataReader;

    use super::*;
    use crate::predicate::{bind, parse_filter};
    use crate::schema::{parse_schema, StructType};

    /// The footer of `batch` written with `rows_per_group` rows per row group.
    fn metadata(batch: &RecordBatch, rows_per_group: usize) -> ParquetMetaData {
        let buf =
            crate::fixture::parquet_bytes_with_row_groups("test", batch, Some(rows_per_group))
                .unwrap_or_else(|e| panic!("{e}"));
        ParquetMetaDataReader::new()
            .parse_and_finish(&buf)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// 100 rows: `id` 0..100 (int32 in the file, `long` in the table: type widening), `name`
    /// `n00`..`n99`, `x` a double that is NaN in rows 40..50 and null in rows 60..70, `ts`
    /// milliseconds (the table reads microseconds UTC).
    fn sample() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("x", DataType::Float64, true),
            Field::new("ts", DataType::Timestamp(TimeUnit::Millisecond, None), true),
        ]));
        let x = Float64Array::from_iter((0..100).map(|i| match i {
            40..50 => Some(f64::NAN),
            60..70 => None,
            _ => Some(f64::from(i)),
        }));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from_iter_values(0..100)),
                Arc::new(StringArray::from_iter_values(
                    (0..100).map(|i| format!("n{i:02}")),
                )),
                Arc::new(x),
                Arc::new(TimestampMillisecondArray::from_iter_values(
                    (0..100).map(|i| i * 60_000),
                )),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    const TABLE: &str = r#"{"type":"struct","fields":[
        {"name":"id","type":"long","nullable":false,"metadata":{}},
        {"name":"name","type":"string","nullable":true,"metadata":{}},
        {"name":"x","type":"double","nullable":true,"metadata":{}},
        {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
        {"name":"later","type":"integer","nullable":true,"metadata":{}},
        {"name":"part","type":"string","nullable":true,"metadata":{}}]}"#;

    struct Case {
        schema: StructType,
        columns: Vec<ReadColumn>,
        meta: ParquetMetaData,
        partition_values: TypedPartitionValues,
    }

    impl Case {
        fn new() -> Self {
            let schema = parse_schema(TABLE).unwrap_or_else(|e| panic!("{e}"));
            let columns = ReadColumn::all_of(&schema, &["part"]);
            let partition_values = TypedPartitionValues::from_entries([(
                "part".to_string(),
                Scalar::String("a".into()),
            )]);
            Case {
                schema,
                columns,
                meta: metadata(&sample(), 10),
                partition_values,
            }
        }

        fn kept(&self, filter: &str, dv: bool) -> Vec<usize> {
            let expr = parse_filter(filter).unwrap_or_else(|e| panic!("{filter}: {e}"));
            let bound = bind(&expr, &self.schema).unwrap_or_else(|e| panic!("{filter}: {e}"));
            prune_row_groups(
                &bound,
                &self.meta,
                &self.columns,
                &self.partition_values,
                ColumnMappingMode::None,
                dv,
            )
        }
    }

    fn all() -> Vec<usize> {
        (0..10).collect()
    }

    #[test]
    fn bounds_per_row_group() {
        let c = Case::new();
        assert_eq!(c.meta.num_row_groups(), 10);
        assert_eq!(c.kept("id >= 35 and id < 52", false), vec![3, 4, 5]);
        assert_eq!(c.kept("id = 99", false), vec![9]);
        assert_eq!(c.kept("id > 1000", false), Vec::<usize>::new());
        assert_eq!(c.kept("id in (3, 77)", false), vec![0, 7]);
        assert_eq!(c.kept("not (id >= 10)", false), vec![0]);
        assert_eq!(c.kept("id < 15 or name = 'n95'", false), vec![0, 1, 9]);
        assert_eq!(c.kept("name >= 'n80'", false), vec![8, 9]);
        // Milliseconds in the file, microseconds in the table (bounds widened by 1 ms).
        assert_eq!(
            c.kept("ts >= timestamp '1970-01-01 01:30:00'", false),
            vec![9]
        );
        // Comparisons between columns: only "all null on one side" (row group 6) rules out.
        assert_eq!(c.kept("id = x", false), vec![0, 1, 2, 3, 4, 5, 7, 8, 9]);
    }

    #[test]
    fn nulls_nan_missing_columns_and_partitions() {
        let c = Case::new();
        // NaN sorts above every number and Parquet bounds leave it out: `>` is only ruled
        // out where every value is null (row group 6).
        assert_eq!(c.kept("x > 85.0", false), vec![0, 1, 2, 3, 4, 5, 7, 8, 9]);
        // Row group 4 has NaN values: its bounds are not used.
        assert_eq!(c.kept("x < 5.0", false), vec![0, 4]);
        // Row group 6 is all null.
        assert_eq!(c.kept("x is null", false), vec![6]);
        assert_eq!(c.kept("x = 65.0", false), vec![4]);
        // A deletion vector makes counts loose: "all null" is not concluded.
        assert_eq!(c.kept("x = 65.0", true), vec![4, 6]);
        assert_eq!(c.kept("x is null", true), vec![6]);
        // `later` is not in the file: every row is null.
        assert_eq!(c.kept("later = 1", false), Vec::<usize>::new());
        assert_eq!(c.kept("later is null", false), all());
        assert_eq!(c.kept("later is not null or id < 5", false), vec![0]);
        // Partition values are exact.
        assert_eq!(c.kept("part = 'b' or id >= 90", false), vec![9]);
        assert_eq!(c.kept("part = 'a' and id >= 90", false), vec![9]);
        assert_eq!(c.kept("part = 'a'", false), all());
    }

    #[test]
    fn physical_names_and_field_ids() {
        let schema = parse_schema(
            r#"{"type":"struct","fields":[
            {"name":"id","type":"long","nullable":true,"metadata":{
              "delta.columnMapping.id":7,"delta.columnMapping.physicalName":"col-a1"}}]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let columns = ReadColumn::all_of(&schema, &[]);
        let mut meta_ids = std::collections::HashMap::new();
        meta_ids.insert(
            crate::schema::PARQUET_FIELD_ID_KEY.to_string(),
            "7".to_string(),
        );
        let file_schema = Arc::new(Schema::new(vec![
            Field::new("renamed", DataType::Int64, false).with_metadata(meta_ids),
            Field::new("col-a1", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            file_schema,
            vec![
                Arc::new(Int64Array::from_iter_values(0..40)),
                Arc::new(Int64Array::from_iter_values((0..40).rev())),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let meta = metadata(&batch, 10);
        let bound = bind(
            &parse_filter("id < 5").unwrap_or_else(|e| panic!("{e}")),
            &schema,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let none = TypedPartitionValues::none();
        let kept = |mode| prune_row_groups(&bound, &meta, &columns, &none, mode, false);
        // By physical name: `col-a1` counts down.
        assert_eq!(kept(ColumnMappingMode::Name), vec![3]);
        // By field id: `renamed` counts up.
        assert_eq!(kept(ColumnMappingMode::Id), vec![0]);
    }
}
