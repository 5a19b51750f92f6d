//! File selection: which active files a scan's predicate may match, first by their partition
//! values (exact), then by their statistics (conservative). Pure.

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

/// The files a predicate may match: partition values first (exact), then statistics
/// (conservative: unreadable statistics keep the file).
pub fn select_files(
    facts: TableFacts<'_>,
    all: &[Add],
    predicate: Option<&BoundExpr>,
) -> Result<(Vec<Add>, FileSelection)> {
    let mut selection = FileSelection {
        files_total: all.len(),
        ..Default::default()
    };
    let Some(predicate) = predicate else {
        selection.files_selected = all.len();
        return Ok((all.to_vec(), selection));
    };
    let stats_columns = StatsColumns::for_predicate(facts.schema, facts.mode, predicate)?;
    let no_partitions = TypedPartitionValues::none();
    let mut kept = Vec::new();
    for add in all {
        let partitions = TypedPartitionValues::parse(
            &add.partition_values,
            facts.schema,
            facts.partition_columns,
            facts.mode,
        )?;
        if !may_match_file(predicate, &partitions, None) {
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
        kept.push(add.clone());
    }
    selection.files_selected = kept.len();
    Ok((kept, selection))
}
