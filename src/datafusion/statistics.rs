//! Statistics of a DataFusion scan from the log: row counts, null counts and value ranges
//! from the `add.stats` of the files the scan reads.
//!
//! Only what is known is given, and only as exactly as it is known. The row count is the sum
//! of `numRecords` less the rows each deletion vector removes (its `cardinality`), exact when
//! every file has `numRecords` and the scan has no predicate and no limit; a predicate or a
//! limit makes it an upper bound (inexact). Null counts are always inexact: DataFusion
//! answers `count(column)` from an exact one without reading the column, and a writer's
//! count can disagree with the data (`kernel__parsed-stats` counts 0 nulls in a column no
//! data file holds: `count(ts_col)` was 600 from the log and 0 from a scan, in one session).
//! Minimums and maximums are always inexact (strings may be truncated prefixes and
//! timestamps have millisecond precision), and are given only for numbers, dates and
//! booleans. Anything unknown is `Absent`.

use arrow_schema::{DataType, Schema};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, Statistics};
use datafusion::scalar::ScalarValue;

use crate::log::Add;
use crate::predicate::{FileStats, Scalar};
use crate::schema::{ColumnMappingMode, StructType};

/// The statistics of a scan reading `files` with output `schema`; `filtered` when the scan
/// has a predicate or a limit.
pub(crate) fn scan_statistics(
    files: &[Add],
    schema: &Schema,
    table_schema: &StructType,
    partition_columns: &[String],
    mode: ColumnMappingMode,
    filtered: bool,
) -> Statistics {
    let parsed: Vec<Option<FileStats>> = files
        .iter()
        .map(|add| {
            let stats = add.stats.as_ref()?;
            let stats = FileStats::from_add_for_schema(stats, table_schema, mode).ok()?;
            Some(stats.with_deletion_vector(add.deletion_vector.is_some()))
        })
        .collect();
    let exact = |known: bool| known && !filtered;
    // From the statistics parsed above, not parsed again.
    let rows: Option<u64> = files.iter().zip(&parsed).try_fold(0u64, |sum, (add, s)| {
        Some(sum.saturating_add(add.less_deleted(s.as_ref()?.num_records?)?))
    });
    let bytes: u64 = files
        .iter()
        .map(|a| u64::try_from(a.size).unwrap_or(0))
        .fold(0, u64::saturating_add);
    let column_statistics = schema
        .fields()
        .iter()
        .map(|field| {
            if partition_columns.iter().any(|p| p == field.name()) {
                return ColumnStatistics::new_unknown();
            }
            column_statistics(field.name(), field.data_type(), &parsed)
        })
        .collect();
    Statistics {
        num_rows: match rows {
            Some(n) => precision(n as usize, exact(true)),
            None => Precision::Absent,
        },
        total_byte_size: if files.is_empty() {
            precision(0, exact(true))
        } else {
            Precision::Inexact(bytes as usize)
        },
        column_statistics,
    }
}

fn precision<T: std::fmt::Debug + Clone + PartialEq + Eq + PartialOrd>(
    value: T,
    exact: bool,
) -> Precision<T> {
    if exact {
        Precision::Exact(value)
    } else {
        Precision::Inexact(value)
    }
}

fn column_statistics(name: &str, ty: &DataType, parsed: &[Option<FileStats>]) -> ColumnStatistics {
    let path = [name.to_string()];
    let per_file: Option<Vec<_>> = parsed
        .iter()
        .map(|s| s.as_ref().and_then(|s| s.column(&path)))
        .collect();
    let mut out = ColumnStatistics::new_unknown();
    let Some(per_file) = per_file else {
        return out;
    };
    let nulls: Option<u64> = per_file
        .iter()
        .try_fold(0u64, |a, c| Some(a + c.null_count?));
    if let Some(n) = nulls {
        out.null_count = Precision::Inexact(n as usize);
    }
    if ranged(ty) {
        let bound = |pick: fn(&crate::predicate::ColumnStats) -> Option<&Scalar>,
                     keep: std::cmp::Ordering| {
            per_file
                .iter()
                .map(|c| to_scalar_value(pick(c)?, ty))
                .try_fold(None::<ScalarValue>, |best, v| {
                    let v = v?;
                    Some(Some(match best {
                        Some(b) if b.partial_cmp(&v)? == keep => b,
                        _ => v,
                    }))
                })
                .flatten()
        };
        if let Some(min) = bound(|c| c.min.as_ref(), std::cmp::Ordering::Less) {
            out.min_value = Precision::Inexact(min);
        }
        if let Some(max) = bound(|c| c.max.as_ref(), std::cmp::Ordering::Greater) {
            out.max_value = Precision::Inexact(max);
        }
    }
    out
}

/// Types whose statistics bounds are exact values: numbers, dates, booleans.
fn ranged(ty: &DataType) -> bool {
    ty.is_integer()
        || ty.is_floating()
        || matches!(
            ty,
            DataType::Decimal128(_, _) | DataType::Date32 | DataType::Boolean
        )
}

fn to_scalar_value(value: &Scalar, ty: &DataType) -> Option<ScalarValue> {
    let array = value.to_array().ok()?;
    let array = arrow_cast::cast(&array, ty).ok()?;
    ScalarValue::try_from_array(&array, 0).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{AddStats, DeletionVectorDescriptor};
    use crate::schema::parse_schema;
    use arrow_schema::Field;

    fn add(stats: Option<&str>, dv_cardinality: Option<i64>) -> Add {
        let mut a: Add = serde_json::from_str(
            r#"{"path":"f.parquet","partitionValues":{},"size":100,"modificationTime":0,"dataChange":true}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        a.stats = stats.map(AddStats::from);
        a.deletion_vector = dv_cardinality.map(|c| DeletionVectorDescriptor {
            storage_type: "i".into(),
            path_or_inline_dv: "x".into(),
            offset: None,
            size_in_bytes: 1,
            cardinality: c,
        });
        a
    }

    fn stats(files: &[Add], filtered: bool) -> Statistics {
        let table = parse_schema(
            r#"{"type":"struct","fields":[
            {"name":"id","type":"long","nullable":true,"metadata":{}},
            {"name":"name","type":"string","nullable":true,"metadata":{}}]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
        ]);
        scan_statistics(
            files,
            &schema,
            &table,
            &[],
            ColumnMappingMode::None,
            filtered,
        )
    }

    const A: &str = r#"{"numRecords":10,"minValues":{"id":1,"name":"a"},"maxValues":{"id":50,"name":"z"},"nullCount":{"id":0,"name":2}}"#;
    const B: &str = r#"{"numRecords":5,"minValues":{"id":-3},"maxValues":{"id":7},"nullCount":{"id":1,"name":0}}"#;

    #[test]
    fn exact_row_counts_and_inexact_null_counts_and_bounds() {
        let s = stats(&[add(Some(A), None), add(Some(B), None)], false);
        assert_eq!(s.num_rows, Precision::Exact(15));
        let id = &s.column_statistics[0];
        assert_eq!(id.null_count, Precision::Inexact(1));
        assert_eq!(
            id.min_value,
            Precision::Inexact(ScalarValue::Int64(Some(-3)))
        );
        assert_eq!(
            id.max_value,
            Precision::Inexact(ScalarValue::Int64(Some(50)))
        );
        // String bounds may be truncated: not given.
        assert_eq!(s.column_statistics[1].min_value, Precision::Absent);
        assert_eq!(s.column_statistics[1].null_count, Precision::Inexact(2));
    }

    #[test]
    fn deletion_vectors_filters_and_missing_stats() {
        let s = stats(&[add(Some(A), Some(4)), add(Some(B), None)], false);
        assert_eq!(s.num_rows, Precision::Exact(11));
        // Null counts include deleted rows.
        assert_eq!(s.column_statistics[0].null_count, Precision::Inexact(1));
        let s = stats(&[add(Some(A), None)], true);
        assert_eq!(s.num_rows, Precision::Inexact(10));
        let s = stats(&[add(Some(A), None), add(None, None)], false);
        assert_eq!(s.num_rows, Precision::Absent);
        assert_eq!(s.column_statistics[0].min_value, Precision::Absent);
        let s = stats(&[], false);
        assert_eq!(s.num_rows, Precision::Exact(0));
    }
}
