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

use arrow_array::{Array, ArrayRef};
use arrow_schema::Schema;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::RowSelector;
use parquet::file::metadata::{ParquetColumnIndex, ParquetMetaData, ParquetOffsetIndex};

use super::file_fields::FileFields;
use super::row_groups::{bound, is_nan, predicate_stats};
use super::transform::{cast, find_in_file};
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
    // The row groups with their row counts; each predicate column located once, with its
    // pages in every one of them.
    let groups: Vec<(usize, u64)> = row_groups
        .iter()
        .filter_map(|&rg| {
            Some((
                rg,
                u64::try_from(metadata.row_groups().get(rg)?.num_rows()).ok()?,
            ))
        })
        .collect();
    let mut columns_pages = predicate_stats(predicate, metadata, columns, |plain, column| {
        page_stats(
            metadata,
            plain,
            column,
            mode,
            &groups,
            column_index,
            offset_index,
        )
    });
    let mut out = Vec::new();
    for (i, &(rg, rows)) in groups.iter().enumerate() {
        let per_column: Vec<(Vec<String>, Pages)> = columns_pages
            .iter_mut()
            .filter_map(|(path, per_group)| Some((path.clone(), per_group.get_mut(i)?.take()?)))
            // Page row counts that do not add up to the row group's tell nothing.
            .filter(|(_, pages)| pages.iter().map(|(n, _)| *n).sum::<u64>() == rows)
            .collect();
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

/// The pages of `column` in each of `groups` (row group, row count): each page's row count
/// and statistics, typed as the column reads (one page of nulls for a column the file does
/// not have); `None` for a row group whose page index says nothing of it, and for all of
/// them when the column's statistics cannot be read.
fn page_stats(
    metadata: &ParquetMetaData,
    plain: &Schema,
    column: &ReadColumn,
    mode: ColumnMappingMode,
    groups: &[(usize, u64)],
    column_index: &ParquetColumnIndex,
    offset_index: &ParquetOffsetIndex,
) -> Option<Vec<Option<Pages>>> {
    let Some(root) = find_in_file(&FileFields::new(plain.fields()), &column.field, mode) else {
        let nulls = |rows: u64| ColumnStats {
            min: None,
            max: None,
            null_count: Some(rows),
        };
        return Some(
            groups
                .iter()
                .map(|&(_, rows)| Some(vec![(rows, nulls(rows))]))
                .collect(),
        );
    };
    let field = plain.field(root);
    let descr = metadata.file_metadata().schema_descr();
    let leaf = (0..descr.num_columns()).find(|&i| descr.get_column_root_idx(i) == root)?;
    if field.data_type().is_nested() {
        return None;
    }
    let c = StatisticsConverter::from_column_index(leaf, field, descr)
        .ok()?
        .with_missing_null_counts_as_zero(false);
    let target = column.arrow.data_type();
    let in_group = |rg: &usize| -> Option<Pages> {
        let counts = c
            .data_page_row_counts(offset_index, metadata.row_groups(), [rg])
            .ok()??;
        let n = counts.len();
        let typed = |array: parquet::errors::Result<ArrayRef>| {
            let array = array.ok().filter(|a| a.len() == n)?;
            cast(&array, target).ok()
        };
        let mins = typed(c.data_page_mins(column_index, offset_index, [rg]));
        let maxes = typed(c.data_page_maxes(column_index, offset_index, [rg]));
        let nulls = (c
            .data_page_null_counts(column_index, offset_index, [rg])
            .ok())
        .filter(|a| a.len() == n);
        let pages = (0..n).map(|i| {
            let (mut min, mut max) = (bound(mins.as_ref(), i), bound(maxes.as_ref(), i));
            if is_nan(min.as_ref()) || is_nan(max.as_ref()) {
                (min, max) = (None, None);
            }
            let null_count = nulls
                .as_ref()
                .and_then(|a| a.is_valid(i).then(|| a.value(i)));
            let stats = ColumnStats {
                min,
                max,
                null_count,
            };
            (counts.value(i), stats)
        });
        Some(pages.collect())
    };
    Some(groups.iter().map(|(rg, _)| in_group(rg)).collect())
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
