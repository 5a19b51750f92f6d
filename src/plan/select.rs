//! File selection: which active files a scan's predicate may match, first by their partition
//! values (exact), then by their statistics (conservative). Pure. Each file's partition
//! values are parsed here, once, and travel on to its [`super::FileTask`]
//! ([`SelectedFile`]).

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
) -> Result<(Vec<SelectedFile<'a>>, FileSelection)> {
    let mut selection = FileSelection {
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
        let kept = all.iter().map(parse).collect::<Result<Vec<_>>>()?;
        selection.files_selected = kept.len();
        return Ok((kept, selection));
    };
    let stats_columns = StatsColumns::for_predicate(facts.schema, facts.mode, predicate)?;
    let no_partitions = TypedPartitionValues::none();
    let mut kept = Vec::new();
    for add in all {
        let file = parse(add)?;
        if !may_match_file(predicate, &file.partition_values, None) {
            selection.skipped_by_partition += 1;
            continue;
        }
        let stats = match (&add.stats, stats_columns.is_empty()) {
            (Some(stats), false) => FileStats::from_add(stats, &stats_columns)
                .ok()
                .map(|s| s.with_deletion_vector(add.deletion_vector.is_some())),
            _ => None,
        };
        if stats.is_some() && !may_match_file(predicate, &no_partitions, stats.as_ref()) {
            selection.skipped_by_stats += 1;
            continue;
        }
        kept.push(file);
    }
    selection.files_selected = kept.len();
    Ok((kept, selection))
}
