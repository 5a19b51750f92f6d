//! Page pruning, pure: within the row groups a read keeps, the rows on pages whose statistics
//! (the footer's page index: each page's min, max and null count, and its first row) allow a
//! row the scan's predicate selects.
//!
//! Each column the predicate reads cuts a row group into its own pages; the cuts of all of
//! them together make runs of rows on which every such column is on one page. A run is kept
//! unless [`may_match_file`] proves, from those pages' statistics, that no row of it matches
//! (row counts are left out: a run may be part of a page, so a page's null count says
//! nothing about how many of the run's rows are null). The result is a row selection the
//! decoder skips whole pages by; the row filter still decides each row. Everything is
//! conservative, as for row groups (see `row_groups`): a column without a page index, with
//! page row counts that do not add up to its row group's, or with unreliable bounds tells
//! nothing, and a run it does not decide is kept.

use parquet::arrow::arrow_reader::RowSelector;
use parquet::file::metadata::ParquetMetaData;

use super::row_groups::{all_null, each_predicate_column, Located};
use crate::plan::ReadColumn;
use crate::predicate::{may_match_file, BoundExpr, ColumnStats, FileStats, TypedPartitionValues};
use crate::schema::ColumnMappingMode;

/// The pages of one column in one row group: each page's row count and statistics.
type Pages = Vec<(u64, ColumnStats)>;

/// For each of `row_groups` where pages are ruled out: a selection over all its rows of the
/// rows whose pages may hold a row `predicate` selects (row groups not listed are read
/// whole; nothing is listed for a file without a page index). `columns`,
/// `partition_values`, `mode` and `has_deletion_vector` are as for
/// [`prune_row_groups`](super::row_groups::prune_row_groups).
pub(crate) fn prune_pages(
    predicate: &BoundExpr,
    metadata: &ParquetMetaData,
    columns: &[ReadColumn],
    partition_values: &TypedPartitionValues,
    mode: ColumnMappingMode,
    has_deletion_vector: bool,
    row_groups: &[usize],
) -> Vec<(usize, Vec<RowSelector>)> {
    let (Some(column_index), Some(offset_index)) =
        (metadata.column_index(), metadata.offset_index())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &rg in row_groups {
        let Some(num_rows) = metadata.row_groups().get(rg).map(|g| g.num_rows()) else {
            continue;
        };
        let Ok(rows) = u64::try_from(num_rows) else {
            continue;
        };
        let mut per_column: Vec<(Vec<String>, Pages)> = Vec::new();
        each_predicate_column(predicate, metadata, columns, mode, |path, located| {
            let pages: Pages = match located {
                Located::Missing => vec![(rows, all_null(num_rows))],
                Located::Leaf(leaf) => {
                    let c = &leaf.converter;
                    let groups = metadata.row_groups();
                    let Ok(Some(counts)) = c.data_page_row_counts(offset_index, groups, [&rg])
                    else {
                        return;
                    };
                    let stats = leaf.stats(
                        counts.len(),
                        c.data_page_mins(column_index, offset_index, [&rg]),
                        c.data_page_maxes(column_index, offset_index, [&rg]),
                        c.data_page_null_counts(column_index, offset_index, [&rg]),
                        |_| false,
                    );
                    counts.values().iter().copied().zip(stats).collect()
                }
            };
            // Page row counts that do not add up to the row group's tell nothing.
            if pages.iter().map(|(n, _)| *n).sum::<u64>() == rows {
                per_column.push((path, pages));
            }
        });
        let runs = runs(rows, &per_column, |stats| {
            let stats = FileStats::from_columns(None, None, stats)
                .with_deletion_vector(has_deletion_vector);
            may_match_file(predicate, partition_values, Some(&stats))
        });
        if runs.iter().all(|&(keep, _)| keep) {
            continue;
        }
        let selectors: Option<Vec<RowSelector>> = runs
            .into_iter()
            .map(|(keep, run)| {
                let run = usize::try_from(run).ok()?;
                Some(if keep {
                    RowSelector::select(run)
                } else {
                    RowSelector::skip(run)
                })
            })
            .collect();
        if let Some(selectors) = selectors {
            out.push((rg, selectors));
        }
    }
    out
}

/// The runs of a row group of `rows` rows on which each column of `per_column` is on one
/// page, each as (kept, row count), adjacent runs of the same answer joined. `keep` decides a
/// run from its columns' page statistics.
fn runs(
    rows: u64,
    per_column: &[(Vec<String>, Pages)],
    mut keep: impl FnMut(Vec<(Vec<String>, ColumnStats)>) -> bool,
) -> Vec<(bool, u64)> {
    // Each column's page ends, merged: the ends of the runs.
    let mut ends: Vec<u64> = per_column
        .iter()
        .flat_map(|(_, pages)| {
            pages.iter().scan(0u64, |end, (n, _)| {
                *end += n;
                Some(*end)
            })
        })
        .filter(|&end| end > 0)
        .collect();
    ends.push(rows);
    ends.sort_unstable();
    ends.dedup();
    let mut out: Vec<(bool, u64)> = Vec::new();
    // Per column: the page the run is on, and that page's end.
    let mut at: Vec<(usize, u64)> = per_column
        .iter()
        .map(|(_, pages)| (0, pages.first().map_or(rows, |(n, _)| *n)))
        .collect();
    let mut start = 0u64;
    for end in ends.into_iter().filter(|&e| e <= rows) {
        if end <= start {
            continue;
        }
        let stats = per_column
            .iter()
            .zip(&mut at)
            .filter_map(|((path, pages), (page, page_end))| {
                while start >= *page_end && *page + 1 < pages.len() {
                    *page += 1;
                    *page_end += pages[*page].0;
                }
                Some((path.clone(), pages.get(*page)?.1.clone()))
            })
            .collect();
        let kept = keep(stats);
        match out.last_mut() {
            Some((k, n)) if *k == kept => *n += end - start,
            _ => out.push((kept, end - start)),
        }
        start = end;
    }
    out
}

#[cfg(test)]
#[path = "page_pruning_tests.rs"]
mod tests;
