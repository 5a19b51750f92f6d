//! A table's column profile from its log alone ([`table_profile`]): for every primitive
//! column, at any depth, the smallest minimum, the largest maximum and the summed null count
//! over the active files' statistics, and the table's row count. Pure: nothing is read but
//! each `add`'s statistics, so a previewer can show it before any data file is fetched.
//!
//! What the figures promise follows from what the protocol's statistics promise:
//!
//! - a minimum or maximum covers the table only when every file has one for the column
//!   ([`ColumnProfile::complete`]); otherwise the true value may lie in a file without;
//! - string bounds may be truncated prefixes, timestamp maxima have millisecond precision
//!   (values may run up to 999 µs past them), and the bounds of a column whose type was
//!   widened are those written for its old type: a `double` once a `float` has its bounds
//!   widened by a float's rounding (a `float` maximum written `3.4` is `3.4000000953674316`
//!   in the data, see `predicate::stats`);
//! - `numRecords` counts the physical rows of each file, and the protocol requires it to be
//!   accurate for a file with a deletion vector, so the table's row count subtracts each
//!   vector's `cardinality` and is exact ([`TableProfile::num_records`]);
//! - `nullCount` may count deleted rows of such files (or any rows, with `tightBounds:
//!   false`): then the null counts bound the table's from above
//!   ([`TableProfile::counts_exact`]).

use crate::error::Result;
use crate::log::Add;
use crate::predicate::{FileStats, Scalar, StatsColumns, TypedPartitionValues};
use crate::schema::{ColumnMappingMode, StructType};

/// One column's profile.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnProfile {
    /// The column's logical path (one name per nesting level).
    pub path: Vec<String>,
    /// The smallest `minValues` entry of any file.
    pub min: Option<Scalar>,
    /// The largest `maxValues` entry of any file.
    pub max: Option<Scalar>,
    /// The sum of every file's `nullCount`; `None` when a file has none for the column.
    pub null_count: Option<u64>,
    /// Files with both a minimum and a maximum for the column.
    pub files_with_bounds: usize,
    /// Whether every file has both bounds, so `min` and `max` bound the whole table.
    pub complete: bool,
}

/// A table's profile from its log: see the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct TableProfile {
    /// Active files.
    pub files: usize,
    /// Of those, the files whose statistics could be read.
    pub files_with_stats: usize,
    /// The rows a scan returns: the sum of `numRecords` less each deletion vector's
    /// `cardinality`; `None` when a file has no `numRecords` (or a negative cardinality).
    pub num_records: Option<u64>,
    /// Whether the null counts are exact: no file has a deletion vector or loose bounds
    /// (otherwise they may count deleted rows).
    pub counts_exact: bool,
    /// Every primitive column, in schema order.
    pub columns: Vec<ColumnProfile>,
}

impl TableProfile {
    /// The profile as JSON, the form `dar stats --json` prints and JS's `columnProfile()`
    /// returns: `{ files, filesWithStats, numRecords, countsExact, columns: [{ name, path,
    /// min, max, nullCount, filesWithBounds, complete }] }`, `name` being the path joined
    /// with `.` and the bounds in the filter syntax (`5`, `'text'`, `date '2024-01-31'`).
    pub fn to_json(&self) -> serde_json::Value {
        let columns: Vec<serde_json::Value> = self
            .columns
            .iter()
            .map(|c| {
                serde_json::json!({
                    "name": c.path.join("."),
                    "path": c.path,
                    "min": c.min.as_ref().map(ToString::to_string),
                    "max": c.max.as_ref().map(ToString::to_string),
                    "nullCount": c.null_count,
                    "filesWithBounds": c.files_with_bounds,
                    "complete": c.complete,
                })
            })
            .collect();
        serde_json::json!({
            "files": self.files,
            "filesWithStats": self.files_with_stats,
            "numRecords": self.num_records,
            "countsExact": self.counts_exact,
            "columns": columns,
        })
    }
}

/// The profile of a table of `schema` (partitioned by `partition_columns`) whose active
/// files are `files`. A partition column's figures come from the files' partition values,
/// exactly: the bounds of its non-null values, and as nulls every row of a file whose value
/// is null.
pub fn table_profile(
    schema: &StructType,
    mode: ColumnMappingMode,
    partition_columns: &[String],
    files: &[Add],
) -> Result<TableProfile> {
    let wanted = StatsColumns::new(schema, mode)?;
    let paths: Vec<Vec<String>> = wanted.logical_paths().map(<[String]>::to_vec).collect();
    let mut columns: Vec<ColumnProfile> = paths
        .iter()
        .map(|path| ColumnProfile {
            path: path.clone(),
            min: None,
            max: None,
            null_count: Some(0),
            files_with_bounds: 0,
            complete: true,
        })
        .collect();
    // Which columns are partition columns, decided once.
    let partition: Vec<bool> = columns
        .iter()
        .map(|c| matches!(c.path.as_slice(), [name] if partition_columns.contains(name)))
        .collect();
    let mut profile = TableProfile {
        files: files.len(),
        files_with_stats: 0,
        num_records: Some(0),
        counts_exact: true,
        columns: Vec::new(),
    };
    for add in files {
        let stats = add
            .stats
            .as_ref()
            .and_then(|s| FileStats::from_add(s, &wanted).ok())
            .map(|s| s.with_deletion_vector(add.deletion_vector.is_some()));
        // The rows a reader sees in the file, from the statistics parsed just above.
        let live = stats
            .as_ref()
            .and_then(|s| s.num_records)
            .and_then(|n| add.less_deleted(n));
        let values =
            TypedPartitionValues::parse(&add.partition_values, schema, partition_columns, mode)
                .ok();
        for (column, _) in columns.iter_mut().zip(&partition).filter(|c| *c.1) {
            let value = values.as_ref().and_then(|v| v.get(&column.path[0]));
            match value {
                Some(v) if v.is_null() => {
                    column.null_count = column
                        .null_count
                        .zip(live)
                        .map(|(a, b)| a.saturating_add(b));
                }
                Some(v) => {
                    column.files_with_bounds += 1;
                    widen(column, Some(v), Some(v));
                }
                None => {
                    column.null_count = None;
                    column.complete = false;
                }
            }
        }
        let Some(stats) = stats else {
            profile.num_records = None;
            profile.counts_exact &= add.deletion_vector.is_none();
            for (column, _) in columns.iter_mut().zip(&partition).filter(|c| !*c.1) {
                column.null_count = None;
                column.complete = false;
            }
            continue;
        };
        profile.files_with_stats += 1;
        profile.counts_exact &= stats.counts_are_exact();
        profile.num_records = profile
            .num_records
            .zip(live)
            .map(|(a, b)| a.saturating_add(b));
        for (column, _) in columns.iter_mut().zip(&partition).filter(|c| !*c.1) {
            let found = stats.column(&column.path);
            column.null_count = column
                .null_count
                .zip(found.and_then(|c| c.null_count))
                .map(|(a, b)| a.saturating_add(b));
            let (min, max) = found.map_or((None, None), |c| (c.min.as_ref(), c.max.as_ref()));
            if min.is_some() && max.is_some() {
                column.files_with_bounds += 1;
            } else {
                column.complete = false;
            }
            widen(column, min, max);
        }
    }
    profile.columns = columns;
    Ok(profile)
}

/// Widens `column`'s bounds to take in `min` and `max`.
fn widen(column: &mut ColumnProfile, min: Option<&Scalar>, max: Option<&Scalar>) {
    if let Some(min) = min {
        if column.min.as_ref().is_none_or(|m| smaller(min, m)) {
            column.min = Some(min.clone());
        }
    }
    if let Some(max) = max {
        if column.max.as_ref().is_none_or(|m| smaller(m, max)) {
            column.max = Some(max.clone());
        }
    }
}

/// `a < b`; values that do not compare (NaN) keep the bound already held.
fn smaller(a: &Scalar, b: &Scalar) -> bool {
    a.compare(b) == Some(std::cmp::Ordering::Less)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> StructType {
        serde_json::from_value(json!({"type": "struct", "fields": [
            {"name": "id", "type": "long", "nullable": true, "metadata": {}},
            {"name": "s", "type": {"type": "struct", "fields": [
                {"name": "name", "type": "string", "nullable": true, "metadata": {}}
            ]}, "nullable": true, "metadata": {}}
        ]}))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn add(stats: Option<serde_json::Value>, dv: bool) -> Add {
        let mut action = json!({"path": "f", "partitionValues": {}, "size": 1,
            "modificationTime": 0, "dataChange": true});
        if let Some(stats) = stats {
            action["stats"] = json!(stats.to_string());
        }
        if dv {
            action["deletionVector"] = json!({"storageType": "u",
                "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 1, "sizeInBytes": 36,
                "cardinality": 2});
        }
        serde_json::from_value(action).unwrap_or_else(|e| panic!("{e}"))
    }

    fn stats(rows: u64, min: i64, max: i64, nulls: u64, name: (&str, &str)) -> serde_json::Value {
        json!({"numRecords": rows,
            "minValues": {"id": min, "s": {"name": name.0}},
            "maxValues": {"id": max, "s": {"name": name.1}},
            "nullCount": {"id": nulls, "s": {"name": 0}}})
    }

    fn column<'a>(p: &'a TableProfile, path: &[&str]) -> &'a ColumnProfile {
        p.columns
            .iter()
            .find(|c| c.path.iter().map(String::as_str).eq(path.iter().copied()))
            .unwrap_or_else(|| panic!("no column {path:?}"))
    }

    #[test]
    fn bounds_and_counts_combine_over_files() {
        let files = [
            add(Some(stats(10, 5, 50, 1, ("b", "k"))), false),
            add(Some(stats(20, -3, 40, 2, ("a", "z"))), false),
        ];
        let p = table_profile(&schema(), ColumnMappingMode::None, &[], &files)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (p.files, p.files_with_stats, p.num_records),
            (2, 2, Some(30))
        );
        assert!(p.counts_exact);
        let id = column(&p, &["id"]);
        assert_eq!(
            (id.min.clone(), id.max.clone()),
            (Some(Scalar::Long(-3)), Some(Scalar::Long(50)))
        );
        assert_eq!(id.null_count, Some(3));
        assert!(id.complete);
        let name = column(&p, &["s", "name"]);
        assert_eq!(name.min, Some(Scalar::String("a".into())));
        assert_eq!(name.max, Some(Scalar::String("z".into())));
    }

    #[test]
    fn a_file_without_statistics_makes_the_profile_incomplete() {
        let files = [
            add(Some(stats(10, 5, 50, 1, ("b", "k"))), false),
            add(None, false),
        ];
        let p = table_profile(&schema(), ColumnMappingMode::None, &[], &files)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((p.files_with_stats, p.num_records), (1, None));
        let id = column(&p, &["id"]);
        assert_eq!(id.min, Some(Scalar::Long(5)), "the bounds seen are kept");
        assert!(!id.complete);
        assert_eq!(id.files_with_bounds, 1);
        assert_eq!(id.null_count, None);
    }

    #[test]
    fn deletion_vectors_subtract_their_rows_and_make_null_counts_bounds() {
        let files = [
            add(Some(stats(10, 5, 50, 1, ("b", "k"))), true),
            add(Some(stats(7, 1, 2, 0, ("a", "a"))), false),
        ];
        let p = table_profile(&schema(), ColumnMappingMode::None, &[], &files)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!p.counts_exact, "null counts may include deleted rows");
        assert_eq!(p.num_records, Some(15), "10 - 2 deleted + 7");
        let mut corrupt = add(Some(stats(10, 5, 50, 1, ("b", "k"))), true);
        if let Some(dv) = corrupt.deletion_vector.as_mut() {
            dv.cardinality = -1;
        }
        let p = table_profile(&schema(), ColumnMappingMode::None, &[], &[corrupt])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            p.num_records, None,
            "a negative cardinality leaves rows unknown"
        );
    }

    #[test]
    fn no_file_is_an_empty_profile() {
        let empty = table_profile(&schema(), ColumnMappingMode::None, &[], &[])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((empty.files, empty.num_records), (0, Some(0)));
        assert!(column(&empty, &["id"]).min.is_none());
    }

    #[test]
    fn partition_columns_come_from_the_partition_values() {
        let schema: StructType = serde_json::from_value(json!({"type": "struct", "fields": [
            {"name": "id", "type": "long", "nullable": true, "metadata": {}},
            {"name": "day", "type": "date", "nullable": true, "metadata": {}}
        ]}))
        .unwrap_or_else(|e| panic!("{e}"));
        let file = |day: Option<&str>, rows: Option<u64>| -> Add {
            let mut action = json!({"path": "f", "partitionValues": {"day": day}, "size": 1,
                "modificationTime": 0, "dataChange": true});
            if let Some(rows) = rows {
                action["stats"] = json!(json!({"numRecords": rows}).to_string());
            }
            serde_json::from_value(action).unwrap_or_else(|e| panic!("{e}"))
        };
        let files = [
            file(Some("2024-03-01"), Some(4)),
            file(None, Some(3)),
            file(Some("2024-01-15"), Some(2)),
        ];
        let days = ["day".to_string()];
        let p = table_profile(&schema, ColumnMappingMode::None, &days, &files)
            .unwrap_or_else(|e| panic!("{e}"));
        let day = column(&p, &["day"]);
        assert_eq!(day.min, Some(Scalar::Date(19737)), "2024-01-15");
        assert_eq!(day.max, Some(Scalar::Date(19783)), "2024-03-01");
        assert_eq!(
            day.null_count,
            Some(3),
            "every row of the file whose value is null"
        );
        assert!(day.complete);
        assert_eq!(day.files_with_bounds, 2);
        // A file without statistics: the partition column keeps its bounds, the null count
        // of its null value is unknown without the row count.
        let files = [file(Some("2024-03-01"), None), file(None, None)];
        let p = table_profile(&schema, ColumnMappingMode::None, &days, &files)
            .unwrap_or_else(|e| panic!("{e}"));
        let day = column(&p, &["day"]);
        assert_eq!(day.min, Some(Scalar::Date(19783)));
        assert_eq!(day.null_count, None);
        assert!(day.complete);
        assert!(!column(&p, &["id"]).complete);
    }
}
