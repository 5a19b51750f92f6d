//! The plan of one data file's read, pure: from the file's footer, its [`FileTask`] and the
//! scan's [`ReadSpec`], which row groups are read, how the predicate is applied (statistics,
//! a row filter inside the decoder, or a filter after decoding), which file columns are
//! decoded and how they become output columns, and how many rows the decoder may stop at;
//! then, with the file's deletion vector, which rows are skipped and which dropped.
//!
//! `file::open` does the I/O (footer, deletion vector) around [`plan_file`] and
//! [`FileRead::with_deleted_rows`], and builds the decoder with [`FileRead::decoder`].

use std::sync::{Arc, Mutex};

use parquet::arrow::arrow_reader::{ArrowReaderMetadata, RowFilter, RowSelection, RowSelector};
use parquet::arrow::push_decoder::{ParquetPushDecoder, ParquetPushDecoderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

use super::deletion_vector::DeletionVector;
#[cfg(not(target_arch = "wasm32"))]
use super::page_pruning::prune_pages;
use super::ranges::{owned_rows, OwnedRows};
use super::read_ahead::{leaves_of, ReadAhead};
use super::row_filter::{plan_row_filter, ErrorSlot, FilterPlan};
use super::row_group_reads::DeletedRows;
use super::row_groups::prune_row_groups;
use super::transform::{projected_file_schema, require_field_ids, FileTransform};
use crate::error::{DeltaError, Phase, Result};
use crate::plan::{FileTask, ReadColumn, ScanColumns};
use crate::predicate::BoundExpr;
use crate::schema::{ColumnMappingMode, OutputTypes};

/// Deletes whose row selection runs average fewer rows than this are dropped from decoded
/// batches by a mask instead (the Parquet reader itself decodes such selections in full and
/// filters them, with the same threshold).
const MIN_SELECTED_RUN: u64 = 32;

/// What every file of a scan reads, and how: the pure half of a scan's read context.
#[derive(Debug, Clone)]
pub struct ReadSpec {
    /// The read columns (output and predicate-only) and the output.
    pub columns: ScanColumns,
    /// Column mapping mode of the table.
    pub mode: ColumnMappingMode,
    /// Rows per batch.
    pub batch_size: usize,
    /// The scan's row predicate, if any.
    pub predicate: Option<Arc<BoundExpr>>,
    /// Whether the predicate prunes row groups by their statistics and runs inside the
    /// decoder (a Parquet row filter). When `false` it only filters decoded batches: the
    /// plain reference that pushdown is checked against.
    pub pushdown: bool,
    /// The Arrow types strings and binaries are decoded as (those of the read columns).
    pub output_types: OutputTypes,
    /// The largest uncompressed page a data file may declare (see
    /// [`crate::limits::DEFAULT_MAX_PAGE_BYTES`]).
    pub max_page_bytes: u64,
    /// Bytes of later row groups fetched with a row group's read (0: off, as for local
    /// files; see `DeltaScanExecutionOptions::parquet_read_ahead_bytes`).
    pub read_ahead_bytes: u64,
}

/// A file's plan before its deletion vector is known.
pub(crate) struct FilePlan {
    /// Row groups the task owns the first row of that statistics ruled out.
    pub(crate) row_groups_pruned: usize,
    /// `None` when no row of the file can be returned.
    pub(crate) read: Option<FileRead>,
}

/// How the decoded batches of a file become output batches.
pub(crate) struct FileOutput {
    pub(crate) transform: FileTransform,
    /// The columns `transform` produces: every read column when `post_filter`, else only the
    /// output columns, in output order.
    pub(crate) columns: Vec<ReadColumn>,
    /// Whether the predicate is applied to decoded batches (the decoder does not evaluate it).
    pub(crate) post_filter: bool,
}

/// How deleted rows are left out.
pub(crate) enum Deletes {
    /// The file has no deletion vector.
    None,
    /// A row selection: the decoder skips the deleted rows (whole pages of long runs).
    Selection(RowSelection),
    /// Scattered deletes, dropped from decoded batches by a mask.
    Masked(DeletedRows),
}

/// The read of one file with at least one row to return.
pub(crate) struct FileRead {
    /// Row groups to read, in file order, each with the rows of it the task owns (all of
    /// them unless a ranged task shares the row group with others; see `read::ranges`).
    groups: Vec<OwnedRows>,
    /// The first file row and row count of every row group of the file.
    row_group_rows: Vec<(u64, u64)>,
    /// File columns decoded (top-level indexes of the file schema).
    roots: Vec<usize>,
    row_filter: Option<RowFilter>,
    /// With a row filter: for row groups where the page index rules pages out, a selection
    /// over all their rows of the rows on the other pages (see `page_pruning`; natively
    /// only).
    #[cfg(not(target_arch = "wasm32"))]
    pages: Vec<(usize, Vec<RowSelector>)>,
    filter_errors: ErrorSlot,
    output: FileOutput,
    deletes: Deletes,
    /// The task's row limit.
    limit: Option<usize>,
}

/// Plans the read of `task` from the file's reader metadata (its footer and the Arrow schema
/// it is decoded as).
pub(crate) fn plan_file(
    spec: &ReadSpec,
    task: &FileTask,
    metadata: &ArrowReaderMetadata,
) -> Result<FilePlan> {
    let parquet = metadata.metadata();
    let file_schema = metadata.schema();
    let columns = &spec.columns.columns;
    let empty = |row_groups_pruned| FilePlan {
        row_groups_pruned,
        read: None,
    };

    let row_group_rows = row_group_rows(parquet, &task.path)?;
    // A ranged task reads the rows its range owns, the others none.
    let mut groups: Vec<OwnedRows> = match &task.range {
        Some(range) => owned_rows(parquet, range),
        None => (row_group_rows.iter().enumerate())
            .map(|(i, &(first, rows))| OwnedRows {
                row_group: i,
                rows: first..first.saturating_add(rows),
            })
            .collect(),
    };
    if groups.is_empty() {
        return Ok(empty(0));
    }
    // A row group the ranges share counts as pruned once, for the range owning its first row.
    let first_rows = |gs: &[OwnedRows]| {
        gs.iter()
            .filter(|g| {
                (row_group_rows.get(g.row_group)).is_some_and(|&(first, _)| g.rows.start == first)
            })
            .count()
    };
    let owned = first_rows(&groups);
    let predicate = spec.predicate.as_ref().filter(|_| spec.pushdown);
    // Row groups whose statistics rule the predicate out.
    if let Some(expr) = predicate {
        let may_match = prune_row_groups(
            expr,
            parquet,
            columns,
            &task.partition_values,
            spec.mode,
            task.deletion_vector.is_some(),
        );
        groups.retain(|g| may_match.contains(&g.row_group));
    }
    let row_groups_pruned = owned - first_rows(&groups);
    if groups.is_empty() {
        return Ok(empty(row_groups_pruned));
    }

    // Partition values as constants of the columns' output types.
    let constants = task.partition_arrays(columns)?;
    // The row filter, or the post-decode filter when the decoder cannot evaluate it.
    let filter_errors: ErrorSlot = Arc::new(Mutex::new(None));
    let filter = match predicate {
        Some(expr) => plan_row_filter(
            expr,
            columns,
            &constants,
            file_schema,
            parquet.file_metadata().schema_descr(),
            spec.mode,
            &filter_errors,
        )?,
        None => None,
    };
    let (row_filter, post_filter) = match filter {
        Some(FilterPlan::NoRows) => return Ok(empty(row_groups_pruned)),
        Some(FilterPlan::AllRows) => (None, false),
        Some(FilterPlan::Filter(f)) => (Some(f), false),
        None => (None, spec.predicate.is_some()),
    };
    // Pages are skipped only where the decoder filters rows itself: then no head selection
    // and no mask of deletes counts on every row being decoded. Natively only (see
    // `read::page_pruning`).
    #[cfg(not(target_arch = "wasm32"))]
    let pages = match (predicate, &row_filter) {
        (Some(expr), Some(_)) => {
            let read: Vec<usize> = groups.iter().map(|g| g.row_group).collect();
            prune_pages(
                expr,
                parquet,
                &spec.columns.columns,
                &task.partition_values,
                spec.mode,
                task.deletion_vector.is_some(),
                &read,
            )
        }
        _ => Vec::new(),
    };

    // Once the decoder has filtered, columns only the predicate reads are not decoded again:
    // the transform makes the output columns alone.
    let (columns, schema, values) = if post_filter {
        (
            columns.to_vec(),
            Arc::clone(&spec.columns.read_schema),
            constants,
        )
    } else {
        let indices = spec.columns.output_indices.iter();
        let columns: Vec<ReadColumn> = indices
            .clone()
            .filter_map(|&i| columns.get(i).cloned())
            .collect();
        let values = indices
            .map(|&i| constants.get(i).cloned().flatten())
            .collect::<Vec<_>>();
        (columns, Arc::clone(&spec.columns.output_schema), values)
    };
    require_field_ids(file_schema, &columns, spec.mode, &task.path)?;
    let (roots, projected) = projected_file_schema(file_schema, &columns, spec.mode);
    let transform =
        FileTransform::for_file(schema, &columns, &values, &projected, spec.mode, &task.path)?;
    Ok(FilePlan {
        row_groups_pruned,
        read: Some(FileRead {
            groups,
            row_group_rows,
            roots,
            row_filter,
            #[cfg(not(target_arch = "wasm32"))]
            pages,
            filter_errors,
            output: FileOutput {
                transform,
                columns,
                post_filter,
            },
            deletes: Deletes::None,
            limit: task.limit,
        }),
    })
}

/// The first file row and the row count of every row group of a file; an error for a
/// negative count (a corrupt footer), which would shift every later row position.
pub(crate) fn row_group_rows(metadata: &ParquetMetaData, path: &str) -> Result<Vec<(u64, u64)>> {
    let mut first = 0u64;
    let mut out = Vec::with_capacity(metadata.num_row_groups());
    for (i, rg) in metadata.row_groups().iter().enumerate() {
        let rows = u64::try_from(rg.num_rows()).map_err(|_| DeltaError::Parquet {
            path: path.to_string(),
            phase: Phase::Read,
            source: ParquetError::General(format!(
                "row group {i} has a negative row count ({})",
                rg.num_rows()
            )),
        })?;
        out.push((first, rows));
        first = first.saturating_add(rows);
    }
    Ok(out)
}

impl FileRead {
    /// Leaves out the rows `deleted` names: row groups whose rows are all deleted are not
    /// read, and the others' deleted rows are skipped by a row selection or, when scattered
    /// over short runs (and the decoder runs no row filter), dropped from decoded batches.
    /// `None` when every row the read would return is deleted.
    pub(crate) fn with_deleted_rows(mut self, deleted: DeletionVector) -> Option<FileRead> {
        let file_rows = self
            .row_group_rows
            .last()
            .map_or(0, |&(start, rows)| start + rows);
        // Only the indexes of rows the file has count (others are ignored, as delta_kernel
        // ignores them): a vector naming rows past the end must not hide the whole file.
        if deleted.deleted_in(0, file_rows) >= file_rows {
            return None;
        }
        self.groups.retain(|g| {
            let rows = g.rows.end - g.rows.start;
            deleted.deleted_in(g.rows.start, rows) < rows
        });
        if self.groups.is_empty() {
            return None;
        }
        // The selection covers the rows read, and only those (see `decoder`).
        let kept: Vec<(u64, u64)> = self.read_group_rows().collect();
        let rows: u64 = kept.iter().map(|&(_, n)| n).fold(0, u64::saturating_add);
        let chosen = deleted.row_selection(&kept);
        // Deletes scattered over short runs are cheaper to drop from decoded batches: the
        // decoder would decode those rows anyway and filter them by a mask, after working out
        // the pages of every column from each run. Long runs stay a selection, which skips
        // whole pages.
        let runs = (chosen.iter().count() as u64).max(1);
        self.deletes = if self.row_filter.is_none() && rows / runs < MIN_SELECTED_RUN {
            // The file row of each row group's first decoded row.
            let mut starts: Vec<u64> = self.row_group_rows.iter().map(|&(s, _)| s).collect();
            for g in &self.groups {
                if let Some(start) = starts.get_mut(g.row_group) {
                    *start = g.rows.start;
                }
            }
            Deletes::Masked(DeletedRows::new(deleted, starts))
        } else {
            Deletes::Selection(chosen)
        };
        Some(self)
    }

    /// The row limit the decoder applies itself. Parquet counts rows after the row selection
    /// and the row filter, so the limit is left to the decoder only when no row it returns is
    /// dropped afterwards (by the predicate or masked deletes).
    pub(crate) fn decoder_limit(&self) -> Option<usize> {
        let exact = !self.output.post_filter && !matches!(self.deletes, Deletes::Masked(_));
        self.limit.filter(|_| exact)
    }

    /// Whether the next row group is read while one decodes: not when a limit is applied
    /// after decoding (a head-like scan would read a row group it then drops).
    pub(crate) fn read_ahead(&self) -> bool {
        self.limit.is_none() || self.decoder_limit().is_some()
    }

    /// Reading row groups ahead (see `read::read_ahead`), when the decoder reads them whole:
    /// no row filter, no row selection, no limit, and a budget.
    pub(crate) fn ahead(&self, parquet: &ParquetMetaData, budget: u64) -> Option<ReadAhead> {
        let whole = self.row_filter.is_none()
            && self.limit.is_none()
            && !matches!(self.deletes, Deletes::Selection(_))
            && self.reads_whole_row_groups();
        if !whole {
            return None;
        }
        ReadAhead::new(
            parquet,
            &self.row_group_indexes(),
            &leaves_of(parquet, &self.roots),
            budget,
        )
    }

    /// For a read of only its first `limit` rows (no deletes, no row filter): a row selection
    /// of those rows, so that with a page index the decoder fetches only the pages they are
    /// on, not whole column chunks (a limit of 100 fetched a whole row group). `None` when
    /// the limit covers every row read.
    fn head_selection(&self, limit: Option<usize>) -> Option<RowSelection> {
        let n = limit?;
        if self.row_filter.is_some() || !matches!(self.deletes, Deletes::None) {
            return None;
        }
        let rows: u64 = self
            .read_group_rows()
            .map(|(_, rows)| rows)
            .fold(0, u64::saturating_add);
        let rows = usize::try_from(rows).ok()?;
        (n < rows)
            .then(|| RowSelection::from(vec![RowSelector::select(n), RowSelector::skip(rows - n)]))
    }

    /// Over every row of the row groups read: the rows on pages the page index keeps, `None`
    /// when it rules none out (always in the browser, see `read::page_pruning`: `None` here
    /// leaves the selections' intersection out of the module).
    #[cfg(target_arch = "wasm32")]
    fn page_selection(&self) -> Option<RowSelection> {
        None
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn page_selection(&self) -> Option<RowSelection> {
        if self.pages.is_empty() {
            return None;
        }
        let mut selectors = Vec::new();
        for g in &self.groups {
            match self.pages.iter().find(|(rg, _)| *rg == g.row_group) {
                Some((_, pages)) => selectors.extend(pages.iter().copied()),
                None => {
                    let &(_, rows) = self.row_group_rows.get(g.row_group)?;
                    selectors.push(RowSelector::select(usize::try_from(rows).ok()?));
                }
            }
        }
        Some(selectors.into_iter().collect())
    }

    /// The first file row and the row count of the rows read of each row group read, in file
    /// order.
    fn read_group_rows(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.groups
            .iter()
            .map(|g| (g.rows.start, g.rows.end - g.rows.start))
    }

    /// The indexes of the row groups read, in file order.
    fn row_group_indexes(&self) -> Vec<usize> {
        self.groups.iter().map(|g| g.row_group).collect()
    }

    /// The row groups read, in file order.
    #[cfg(test)]
    pub(crate) fn row_groups(&self) -> Vec<usize> {
        self.row_group_indexes()
    }

    /// Whether every row group read is read whole (no range shares it).
    fn reads_whole_row_groups(&self) -> bool {
        self.groups.iter().all(|g| {
            self.row_group_rows
                .get(g.row_group)
                .is_some_and(|&(first, rows)| g.rows == (first..first.saturating_add(rows)))
        })
    }

    /// For a task that owns only some rows of a row group it reads: the selection, over the
    /// rows of the row groups read, of the rows it owns. `None` when it reads them whole.
    fn owned_selection(&self) -> Option<RowSelection> {
        if self.reads_whole_row_groups() {
            return None;
        }
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let mut selectors = Vec::with_capacity(self.groups.len() * 3);
        for g in &self.groups {
            let (first, rows) = self.row_group_rows.get(g.row_group).copied()?;
            let end = first.saturating_add(rows);
            selectors.push(RowSelector::skip(count(g.rows.start.saturating_sub(first))));
            selectors.push(RowSelector::select(count(g.rows.end - g.rows.start)));
            selectors.push(RowSelector::skip(count(end.saturating_sub(g.rows.end))));
        }
        Some(selectors.into_iter().collect())
    }

    /// The decoder of this read, and what the reader still needs: the mask of scattered
    /// deletes, the row filter's error slot and the output conversion.
    pub(crate) fn decoder(
        self,
        metadata: ArrowReaderMetadata,
        batch_size: usize,
        path: &str,
    ) -> Result<(
        ParquetPushDecoder,
        Option<DeletedRows>,
        ErrorSlot,
        FileOutput,
    )> {
        let limit = self.decoder_limit();
        let head = self.head_selection(limit);
        let pages = self.page_selection();
        let owned = self.owned_selection();
        let row_groups = self.row_group_indexes();
        let num_row_groups = self.row_group_rows.len();
        let mask = ProjectionMask::roots(
            metadata.metadata().file_metadata().schema_descr(),
            self.roots,
        );
        let mut builder = ParquetPushDecoderBuilder::new_with_metadata(metadata)
            .with_projection(mask)
            .with_batch_size(batch_size.max(1));
        if row_groups.len() < num_row_groups {
            builder = builder.with_row_groups(row_groups);
        }
        // The head and the deletes select among the rows the task owns.
        let (selection, masked) = match self.deletes {
            Deletes::None => (head, None),
            Deletes::Selection(selection) => (Some(selection), None),
            Deletes::Masked(masked) => (None, Some(masked)),
        };
        let selection = match (owned, selection) {
            (Some(owned), Some(among)) => Some(owned.and_then(&among)),
            (owned, selection) => owned.or(selection),
        };
        // Both over every row of the row groups read.
        let selection = match (selection, pages) {
            (Some(selection), Some(pages)) => Some(selection.intersection(&pages)),
            (selection, pages) => selection.or(pages),
        };
        if let Some(selection) = selection {
            builder = builder.with_row_selection(selection);
        }
        if let Some(filter) = self.row_filter {
            builder = builder.with_row_filter(filter);
        }
        if let Some(limit) = limit {
            builder = builder.with_limit(limit);
        }
        let decoder = builder.build().map_err(|source| DeltaError::Parquet {
            path: path.to_string(),
            phase: Phase::Read,
            source,
        })?;
        Ok((decoder, masked, self.filter_errors, self.output))
    }
}

#[cfg(test)]
#[path = "file_plan_tests.rs"]
mod tests;
