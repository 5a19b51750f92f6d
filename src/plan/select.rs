//! File selection: which active files a scan's predicate may match, first by their partition
//! values (exact), then by their statistics (conservative). Pure. Each file's partition
//! values are parsed here, once, and travel on to its [`super::FileTask`]
//! ([`SelectedFile`]); each file left out is named with its reason ([`SkipReason`]).

use super::TableFacts;
use crate::error::Result;
use crate::log::Add;
use crate::predicate::{may_match_file, BoundExpr, FileStats, StatsColumns, TypedPartitionValues};

/// How many files a scan selected and why it left the others out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSelection {
    /// Active files in the snapshot.
    pub files_total: usize,
    /// Files the scan will read.
    pub files_selected: usize,
    /// Files left out because their partition values cannot match the predicate.
    pub skipped_by_partition: usize,
    /// Files left out because their statistics show no row can match.
    pub skipped_by_stats: usize,
    /// Files left out because the predicate is false for every row, whatever a file holds
    /// (`int_col = 1.5`, `x < 1 and x > 2`).
    pub skipped_by_filter: usize,
}

/// Why a scan leaves an active file out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SkipReason {
    /// Its partition values cannot match the predicate.
    Partition,
    /// Its statistics (min, max, null count) show that no row can match.
    Stats,
    /// The predicate is false for every row of every file (`int_col = 1.5`): no file is read.
    Filter,
}

/// What [`select_files`] decided: the files to read, and the others with their reasons.
#[derive(Debug, Clone)]
pub struct Selected<'a> {
    /// The files the scan will read, in the snapshot's order.
    pub files: Vec<SelectedFile<'a>>,
    /// The files left out: their index in the active files given, and why.
    pub skipped: Vec<(usize, SkipReason)>,
    /// The counts of both.
    pub counts: FileSelection,
}

/// A file the scan will read, with its partition values already parsed to their types.
#[derive(Debug, Clone)]
pub struct SelectedFile<'a> {
    /// The file's `add` action.
    pub add: &'a Add,
    /// `add.partitionValues`, typed.
    pub partition_values: TypedPartitionValues,
}

/// The files a predicate may match: partition values first (exact), then statistics
/// (conservative: unreadable statistics keep the file). Without a predicate every file is
/// selected. Either way each selected file's partition values are parsed once, here; a value
/// that does not parse to its column's type is an error.
pub fn select_files<'a>(
    facts: TableFacts<'_>,
    all: &'a [Add],
    predicate: Option<&BoundExpr>,
) -> Result<Selected<'a>> {
    let mut counts = FileSelection {
        files_total: all.len(),
        ..Default::default()
    };
    let parse = |add: &'a Add| -> Result<SelectedFile<'a>> {
        Ok(SelectedFile {
            add,
            partition_values: TypedPartitionValues::parse(
                &add.partition_values,
                facts.schema,
                facts.partition_columns,
                facts.mode,
            )?,
        })
    };
    let Some(predicate) = predicate else {
        let files = all.iter().map(parse).collect::<Result<Vec<_>>>()?;
        counts.files_selected = files.len();
        return Ok(Selected {
            files,
            skipped: Vec::new(),
            counts,
        });
    };
    let stats_columns = StatsColumns::for_predicate(facts.schema, facts.mode, predicate)?;
    // A file of which nothing is known may still match unless the predicate never can.
    let never = !may_match_file(predicate, &TypedPartitionValues::none(), None);
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for (index, add) in all.iter().enumerate() {
        let file = parse(add)?;
        if never {
            counts.skipped_by_filter += 1;
            skipped.push((index, SkipReason::Filter));
            continue;
        }
        if !may_match_file(predicate, &file.partition_values, None) {
            counts.skipped_by_partition += 1;
            skipped.push((index, SkipReason::Partition));
            continue;
        }
        let stats = match (&add.stats, stats_columns.is_empty()) {
            (Some(stats), false) => FileStats::from_add(stats, &stats_columns)
                .ok()
                .map(|s| s.with_deletion_vector(add.deletion_vector.is_some())),
            _ => None,
        };
        // Partition columns are judged by their values here too: statistics a writer put
        // in for them (they are not in the data file) never override the values.
        if stats.is_some() && !may_match_file(predicate, &file.partition_values, stats.as_ref()) {
            counts.skipped_by_stats += 1;
            skipped.push((index, SkipReason::Stats));
            continue;
        }
        files.push(file);
    }
    counts.files_selected = files.len();
    Ok(Selected {
        files,
        skipped,
        counts,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::predicate::parse_filter;
    use crate::schema::{ColumnMappingMode, StructType};

    /// Files left out of `files` of a table of `id` (long) partitioned by `part` (string),
    /// and the partition values of those kept, for `filter`.
    fn select_with(filter: &str, files: &[Add]) -> (Vec<String>, Vec<SkipReason>, FileSelection) {
        let schema: StructType = serde_json::from_value(json!({"type": "struct", "fields": [
            {"name": "id", "type": "long", "nullable": true, "metadata": {}},
            {"name": "part", "type": "string", "nullable": true, "metadata": {}}
        ]}))
        .unwrap_or_else(|e| panic!("{e}"));
        let root = url::Url::parse("file:///t/").unwrap_or_else(|e| panic!("{e}"));
        let partition_columns = ["part".to_string()];
        let facts = TableFacts {
            root: &root,
            schema: &schema,
            partition_columns: &partition_columns,
            mode: ColumnMappingMode::None,
        };
        let bound = parse_filter(filter)
            .and_then(|e| e.bind(&schema))
            .unwrap_or_else(|e| panic!("{e}"));
        let got = select_files(facts, files, Some(&bound)).unwrap_or_else(|e| panic!("{e}"));
        let parts = got
            .files
            .iter()
            .filter_map(|f| f.add.partition_values.get("part").cloned().flatten())
            .collect();
        let reasons = got.skipped.iter().map(|(_, r)| *r).collect();
        (parts, reasons, got.counts)
    }

    /// An `add` of partition `part` with `stats`.
    fn file(part: &str, stats: serde_json::Value) -> Add {
        serde_json::from_value(json!({"path": format!("part={part}/f.parquet"),
            "partitionValues": {"part": part}, "size": 1, "modificationTime": 0,
            "dataChange": true, "stats": stats.to_string()}))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn statistics_written_for_a_partition_column_never_override_its_value() {
        // The first file's statistics claim `part` is 'zz'; its partition value is 'p0'.
        let files = [
            file(
                "p0",
                json!({"numRecords": 3, "minValues": {"part": "zz", "id": 0},
                    "maxValues": {"part": "zz", "id": 2}, "nullCount": {"part": 0, "id": 0}}),
            ),
            file(
                "p1",
                json!({"numRecords": 3, "minValues": {"id": 0}, "maxValues": {"id": 2}}),
            ),
        ];
        for (filter, selected) in [
            ("part = 'p0'", vec!["p0"]),
            ("part = 'p0' and id < 5", vec!["p0"]),
            ("part = 'zz'", vec![]),
            ("part = 'p0' and id > 5", vec![]),
        ] {
            assert_eq!(select_with(filter, &files).0, selected, "{filter}");
        }
    }

    #[test]
    fn each_file_left_out_is_named_with_its_reason() {
        let files = [
            file(
                "p0",
                json!({"numRecords": 3, "minValues": {"id": 0}, "maxValues": {"id": 2}}),
            ),
            file(
                "p1",
                json!({"numRecords": 3, "minValues": {"id": 5}, "maxValues": {"id": 9}}),
            ),
            file("p2", json!({"numRecords": 3})),
        ];
        use SkipReason::{Filter, Partition, Stats};
        // (What needs reasoning across comparisons, as `id < 1 and id > 2`, is judged file by
        // file from the statistics, as any other filter.)
        for (filter, kept, reasons) in [
            ("part = 'p1'", vec!["p1"], vec![Partition, Partition]),
            ("id > 4", vec!["p1", "p2"], vec![Stats]),
            (
                "part <> 'p2' and id < 3",
                vec!["p0"],
                vec![Stats, Partition],
            ),
            // False for every row whatever a file holds: no file is read, and none is said
            // to be ruled out by its partition values or statistics.
            ("id = 1.5", vec![], vec![Filter, Filter, Filter]),
            (
                "id in (1.5, 2.5) and part = 'p1'",
                vec![],
                vec![Filter, Filter, Filter],
            ),
            // Not constant: kept unless a file's facts rule it out.
            (
                "id = 1.5 or part = 'p2'",
                vec!["p2"],
                vec![Partition, Partition],
            ),
            ("id = 1.0", vec!["p0", "p2"], vec![Stats]),
        ] {
            let (got, why, counts) = select_with(filter, &files);
            assert_eq!(got, kept, "{filter}");
            assert_eq!(why, reasons, "{filter}");
            let count = |r| why.iter().filter(|&&w| w == r).count();
            assert_eq!(
                (
                    counts.skipped_by_partition,
                    counts.skipped_by_stats,
                    counts.skipped_by_filter
                ),
                (count(Partition), count(Stats), count(Filter)),
                "{filter}"
            );
            assert_eq!(counts.files_selected + why.len(), files.len(), "{filter}");
        }
    }
}
