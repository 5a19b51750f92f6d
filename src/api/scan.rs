//! Scans: [`DeltaScanBuilder`] → [`DeltaScan`] → [`DeltaBatchStream`].
//!
//! At build, the selected files become file tasks, grouped whole-file into partitions (see
//! `plan::partitioning`): the target is the explicit one, else the machine's caps natively
//! and 1 on wasm32. Each partition reads its tasks in order through the scheduler
//! (`read::scheduler`: permits, prefetch, a bounded output buffer, cancellation);
//! [`DeltaScan::into_stream`] merges the partitions (natively, each on its own task of the
//! caller's Tokio runtime: see `api::spawn`), [`DeltaScan::into_partition_streams`] hands out
//! one stream per partition, which advance only while polled. [`DeltaScanMetrics`] count along.
//!
//! Two hooks serve front ends such as the DataFusion adapter:
//! [`DeltaScan::split_into_byte_ranges`] replaces the whole-file partitions by byte ranges of
//! files (more partitions than files), and [`DeltaScan::with_admit_check`] is asked just
//! before each file task is admitted (a task it turns down is skipped unread).

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use futures::stream::StreamExt;

use super::batch_stream::DeltaBatchStream;
use super::options::{DeltaScanExecutionOptions, ParquetReaderBackend};
use super::skipped::SkippedFiles;
use super::table::DeltaTable;
use crate::error::{DeltaError, Result};
use crate::io::{BoxStream, BoxedStream};
use crate::plan::FileTask;
use crate::plan::{
    group_whole_files, plan_columns, plan_tasks, select_files, split_byte_ranges,
    target_partitions, FileSelection, PartitionCaps, ScanColumns, ScanRequest, TableFacts,
};
use crate::predicate::{bind, parse_filter, BoundExpr, Expr};
use crate::read::metrics::DeltaScanMetrics;
use crate::read::scheduler::{
    merge_safe_partitions, semaphore, AdmitCheck, OrderedMerge, PartitionLimits, PartitionStream,
    ScanEnd, ScanShared, Tagged,
};
use crate::read::{DirectDecoder, FileDecoder, ReadContext, ReadSpec};
use crate::schema::OutputTypes;

/// Default rows per batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// The largest byte range of a file one task of [`DeltaScan::into_ordered_stream`] reads
/// natively: about two row groups of the benchmark's files (whole files of 11 MB took 50-70%
/// longer than an unordered read; ranges of 8 MiB as long; 4 MiB and 2 MiB 30% longer: each
/// range reads its file's footer again).
pub const ORDERED_TASK_BYTES: u64 = 8 << 20;

/// The most batches a partition of an ordered read reads ahead (see
/// [`DeltaScan::into_ordered_stream`]): enough to hold a range of [`ORDERED_TASK_BYTES`]
/// of the benchmark's table whole while it waits for its turn.
pub const ORDERED_BATCHES_AHEAD: usize = 16;

/// About how many bytes of batches a partition of an ordered read holds ahead, at most (a
/// table of wide rows reads fewer batches ahead, never fewer than
/// `batches_ahead_per_partition`), and [`ORDERED_AHEAD_BYTES_ALL`] for all partitions
/// together, whichever is less.
pub const ORDERED_AHEAD_BYTES: u64 = 32 << 20;

/// About how many bytes of batches all partitions of an ordered read hold ahead together, at
/// most: a machine of many cores reads fewer batches ahead per partition.
pub const ORDERED_AHEAD_BYTES_ALL: u64 = 256 << 20;

/// Configures a scan of one snapshot.
#[derive(Debug, Clone)]
pub struct DeltaScanBuilder {
    table: DeltaTable,
    projection: Option<Vec<String>>,
    predicate: Option<Expr>,
    filter_text: Option<String>,
    limit: Option<usize>,
    batch_size: usize,
    execution: DeltaScanExecutionOptions,
    output_types: OutputTypes,
}

impl DeltaScanBuilder {
    pub(crate) fn new(table: DeltaTable) -> Self {
        DeltaScanBuilder {
            table,
            projection: None,
            predicate: None,
            filter_text: None,
            limit: None,
            batch_size: DEFAULT_BATCH_SIZE,
            execution: DeltaScanExecutionOptions::default(),
            output_types: OutputTypes::scan_default(),
        }
    }

    /// The Arrow types strings and binaries come out as (see [`OutputTypes`]), decoded so by
    /// the Parquet reader, at every depth and in partition columns too. The default is
    /// [`OutputTypes::scan_default`].
    pub fn with_output_types(mut self, types: OutputTypes) -> Self {
        self.output_types = types;
        self
    }

    /// Output only these columns (top-level logical names), in this order.
    pub fn with_projection<S: Into<String>>(
        mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.projection = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Only rows for which `predicate` is true (SQL semantics: null is not true). Files that
    /// cannot hold such rows are skipped using partition values and statistics.
    pub fn with_predicate(mut self, predicate: Expr) -> Self {
        self.predicate = Some(predicate);
        self
    }

    /// Like [`with_predicate`](Self::with_predicate), from the text syntax, e.g.
    /// `country = 'NL' and amount >= 10.5 and day between '2024-01-01' and '2024-01-31'`.
    /// The text is parsed by [`build`](Self::build), which reports syntax errors.
    pub fn with_filter(mut self, filter: impl Into<String>) -> Self {
        self.filter_text = Some(filter.into());
        self
    }

    /// Stop after `n` rows.
    pub fn with_limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Rows per output batch (at most).
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n;
        self
    }

    /// How the scan schedules its reads (replaces earlier execution options, including a
    /// target set with [`with_target_partitions`](Self::with_target_partitions)).
    pub fn with_execution_options(mut self, options: DeltaScanExecutionOptions) -> Self {
        self.execution = options;
        self
    }

    /// Plan for `n` partitions, whatever the machine's caps (0 is an error at build).
    pub fn with_target_partitions(mut self, n: usize) -> Self {
        self.execution.target_partitions = Some(n);
        self
    }

    /// Plans the scan: checks the options, gets the active files (held by an eagerly loaded
    /// table; replayed from the log for a lazy one), selects those the predicate may match and
    /// groups their tasks into partitions. Bad options fail before any read.
    pub async fn build(self) -> Result<DeltaScan> {
        if self.batch_size == 0 {
            return Err(DeltaError::InvalidArgument {
                reason: "the batch size must be at least 1".into(),
            });
        }
        self.execution.validate()?;
        let target = target_partitions(self.execution.target_partitions, &default_caps())?;
        let table = &self.table;
        let facts = TableFacts {
            root: table.location().url(),
            schema: table.delta_schema(),
            partition_columns: table.partition_columns(),
            mode: table.column_mapping_mode(),
        };
        let predicate_source = match (&self.predicate, &self.filter_text) {
            (Some(_), Some(_)) => {
                return Err(DeltaError::InvalidArgument {
                    reason: "give either a predicate or a filter text, not both".into(),
                })
            }
            (Some(e), None) => Some(e.clone()),
            (None, Some(text)) => Some(parse_filter(text)?),
            (None, None) => None,
        };
        let predicate = predicate_source
            .as_ref()
            .map(|e| bind(e, facts.schema))
            .transpose()?;
        let predicate_columns = predicate
            .as_ref()
            .map(|p| {
                p.columns()
                    .into_iter()
                    .filter_map(|path| path.into_iter().next())
                    .collect()
            })
            .unwrap_or_default();
        let request = ScanRequest {
            projection: self.projection.clone(),
            predicate_columns,
            output_types: self.output_types,
        };
        let columns = plan_columns(facts, &request)?;
        // I/O is counted from here, so a lazy table's log replay shows in the scan's requests.
        let metrics = Arc::new(DeltaScanMetrics::new(table.io_counters()));
        metrics.start_io();
        let active = table.scan_files().await?;
        let selected = select_files(facts, &active.files, predicate.as_ref())?;
        let selection = selected.counts;
        let skipped = SkippedFiles::new(Arc::clone(&active.files), selected.skipped);
        // A limit of 0 reads nothing: no file, no task.
        let selected = if self.limit == Some(0) {
            Vec::new()
        } else {
            selected.files
        };
        let files: Vec<crate::log::Add> = selected.iter().map(|f| f.add.clone()).collect();
        let tasks = plan_tasks(facts, selected, self.limit)?;
        let sizes: Vec<Option<u64>> = tasks.iter().map(|t| Some(t.size)).collect();
        let partitions = group_whole_files(&sizes, target);
        metrics.record_plan(
            partitions.len(),
            tasks.len(),
            &selection,
            active.log_files_read,
        );
        Ok(DeltaScan {
            table: self.table.clone(),
            columns,
            tasks,
            files: Arc::new(files),
            partitions,
            target,
            selection,
            skipped,
            request,
            predicate_source: predicate_source.map(Arc::new),
            predicate: predicate.map(Arc::new),
            limit: self.limit,
            batch_size: self.batch_size,
            execution: self.execution,
            output_types: self.output_types,
            metrics,
            admit_check: None,
        })
    }
}

/// The machine's caps natively; on wasm32 nothing is known (one partition).
#[cfg(not(target_arch = "wasm32"))]
fn default_caps() -> PartitionCaps {
    super::machine_caps()
}

/// The machine's caps natively; on wasm32 nothing is known (one partition).
#[cfg(target_arch = "wasm32")]
fn default_caps() -> PartitionCaps {
    PartitionCaps::default()
}

/// A planned scan; consumed by [`DeltaScan::into_stream`]. A clone shares the metrics.
#[derive(Clone)]
pub struct DeltaScan {
    table: DeltaTable,
    columns: ScanColumns,
    tasks: Vec<FileTask>,
    /// The `add` actions of the selected files, in the order of the whole-file tasks.
    files: Arc<Vec<crate::log::Add>>,
    /// Indexes into `tasks`, one list per partition, each in task order.
    partitions: Vec<Vec<usize>>,
    target: usize,
    selection: FileSelection,
    /// The files the predicate ruled out (none for a scan rebuilt from its parts).
    skipped: SkippedFiles,
    /// What was asked for (the columns are planned from it).
    request: ScanRequest,
    /// The predicate as given, before binding.
    predicate_source: Option<Arc<Expr>>,
    predicate: Option<Arc<BoundExpr>>,
    limit: Option<usize>,
    batch_size: usize,
    execution: DeltaScanExecutionOptions,
    output_types: OutputTypes,
    metrics: Arc<DeltaScanMetrics>,
    admit_check: Option<AdmitCheck>,
}

impl std::fmt::Debug for DeltaScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeltaScan")
            .field("tasks", &self.tasks)
            .field("partitions", &self.partitions)
            .field("target", &self.target)
            .field("selection", &self.selection)
            .field("limit", &self.limit)
            .field("execution", &self.execution)
            .field("admit_check", &self.admit_check.is_some())
            .finish_non_exhaustive()
    }
}

/// A planned scan taken apart, without its table: what another process needs, with a
/// snapshot of the same table, to build the same scan again ([`DeltaScan::to_parts`],
/// [`DeltaScan::from_parts`]). Metrics and the admit check are not parts: a scan built from
/// parts has fresh metrics and no check.
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
#[derive(Debug, Clone)]
pub(crate) struct ScanParts {
    pub(crate) request: ScanRequest,
    pub(crate) predicate: Option<Expr>,
    pub(crate) tasks: Vec<FileTask>,
    pub(crate) partitions: Vec<Vec<usize>>,
    pub(crate) target: usize,
    pub(crate) selection: FileSelection,
    pub(crate) limit: Option<usize>,
    pub(crate) batch_size: usize,
    pub(crate) execution: DeltaScanExecutionOptions,
}

#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
impl DeltaScan {
    /// The scan's parts (see [`ScanParts`]).
    pub(crate) fn to_parts(&self) -> ScanParts {
        ScanParts {
            request: self.request.clone(),
            predicate: self.predicate_source.as_deref().cloned(),
            tasks: self.tasks.clone(),
            partitions: self.partitions.clone(),
            target: self.target,
            selection: self.selection,
            limit: self.limit,
            batch_size: self.batch_size,
            execution: self.execution.clone(),
        }
    }

    /// The scan `parts` describe, over `table` (a snapshot of the table they were taken
    /// from): the columns are planned and the predicate bound again, so parts naming a column
    /// the table lacks fail here; every partition must list task indexes in range, each task
    /// once.
    pub(crate) fn from_parts(table: DeltaTable, parts: ScanParts) -> Result<DeltaScan> {
        let invalid = |reason: String| DeltaError::InvalidArgument { reason };
        if parts.batch_size == 0 || parts.target == 0 {
            return Err(invalid(
                "a scan needs a batch size and a partition target of at least 1".into(),
            ));
        }
        parts.execution.validate()?;
        let mut seen = vec![false; parts.tasks.len()];
        for &i in parts.partitions.iter().flatten() {
            match seen.get_mut(i) {
                Some(s) if !*s => *s = true,
                Some(_) => return Err(invalid(format!("file task {i} is in two partitions"))),
                None => {
                    return Err(invalid(format!(
                        "a partition names file task {i} of {}",
                        parts.tasks.len()
                    )))
                }
            }
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            return Err(invalid(format!("file task {i} is in no partition")));
        }
        let facts = TableFacts {
            root: table.location().url(),
            schema: table.delta_schema(),
            partition_columns: table.partition_columns(),
            mode: table.column_mapping_mode(),
        };
        let columns = plan_columns(facts, &parts.request)?;
        let predicate = parts
            .predicate
            .as_ref()
            .map(|e| bind(e, facts.schema))
            .transpose()?;
        let metrics = Arc::new(DeltaScanMetrics::new(table.io_counters()));
        metrics.start_io();
        metrics.record_plan(
            parts.partitions.len(),
            parts.tasks.len(),
            &parts.selection,
            0,
        );
        Ok(DeltaScan {
            table,
            columns,
            tasks: parts.tasks,
            files: Arc::new(Vec::new()),
            partitions: parts.partitions,
            target: parts.target,
            selection: parts.selection,
            skipped: SkippedFiles::default(),
            output_types: parts.request.output_types,
            request: parts.request,
            predicate_source: parts.predicate.map(Arc::new),
            predicate: predicate.map(Arc::new),
            limit: parts.limit,
            batch_size: parts.batch_size,
            execution: parts.execution,
            metrics,
            admit_check: None,
        })
    }
}

impl DeltaScan {
    /// The snapshot the scan reads.
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn table(&self) -> &DeltaTable {
        &self.table
    }

    /// The output schema (strings and binaries in the scan's [`OutputTypes`]).
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.columns.output_schema)
    }

    /// The Arrow types strings and binaries come out as.
    pub fn output_types(&self) -> OutputTypes {
        self.output_types
    }

    /// The files the scan will read.
    pub fn tasks(&self) -> &[FileTask] {
        &self.tasks
    }

    /// How many files were selected and skipped.
    pub fn file_selection(&self) -> FileSelection {
        self.selection
    }

    /// The files the predicate ruled out before reading (by partition values or by
    /// statistics), in the snapshot's order. A scan rebuilt from its wire form on another
    /// process lists none; its [`file_selection`](Self::file_selection) still counts them.
    pub fn skipped_files(&self) -> &SkippedFiles {
        &self.skipped
    }

    /// Number of partitions (0 for an empty scan).
    pub fn partitions(&self) -> usize {
        self.partitions.len()
    }

    /// The file tasks of each partition, in the order the partition reads them.
    pub fn partition_tasks(&self) -> Vec<Vec<&FileTask>> {
        self.partitions
            .iter()
            .map(|p| p.iter().filter_map(|&i| self.tasks.get(i)).collect())
            .collect()
    }

    /// The scan's metrics, shared with its streams.
    pub fn metrics(&self) -> Arc<DeltaScanMetrics> {
        Arc::clone(&self.metrics)
    }

    /// The execution options the scan runs with.
    pub fn execution_options(&self) -> &DeltaScanExecutionOptions {
        &self.execution
    }

    /// The number of partitions the scan was planned for.
    pub fn target_partitions(&self) -> usize {
        self.target
    }

    /// The `add` actions of the files the scan reads (after skipping), in log order; empty
    /// for a scan planned in another process (whose tasks came without them).
    pub fn files(&self) -> &[crate::log::Add] {
        &self.files
    }

    /// Whether the scan filters rows: a predicate was given at build, and it is evaluated
    /// exactly on every row of the files read (after files and row groups are skipped), so
    /// the rows returned are fewer than the files hold.
    pub fn filters_rows(&self) -> bool {
        self.predicate.is_some()
    }

    /// Asks `check` just before each file task is admitted, with the permits held; a task it
    /// turns down is skipped unread and counted in
    /// [`DeltaScanMetrics::file_tasks_skipped`]. The check must answer `true` when in doubt.
    pub fn with_admit_check(mut self, check: AdmitCheck) -> Self {
        self.admit_check = Some(check);
        self
    }

    /// Replaces the whole-file partitions by `target` groups of byte ranges of about
    /// `ceil(total bytes / target)` bytes each (see `plan::split_byte_ranges`). A task whose
    /// range is not the whole file reads only the rows its range owns (see `ranges` in the
    /// read layer: whole row groups, or, where the file has a page index, the rows of a row
    /// group in proportion to the bytes of it in the range), keeping the file's partition
    /// values, transforms and deletion vector; reading every range returns the rows of the
    /// whole file.
    pub fn split_into_byte_ranges(mut self, target: usize) -> Self {
        let whole: Vec<FileTask> = self
            .tasks
            .iter()
            .filter(|t| t.range.is_none())
            .cloned()
            .collect();
        if whole.len() != self.tasks.len() || whole.is_empty() {
            // Already ranged, or nothing to read.
            return self;
        }
        let sizes: Vec<u64> = whole.iter().map(|t| t.size).collect();
        let mut tasks = Vec::new();
        let mut partitions = Vec::new();
        for group in split_byte_ranges(&sizes, target) {
            let mut indexes = Vec::with_capacity(group.len());
            for (file, range) in group {
                let Some(task) = whole.get(file) else {
                    continue;
                };
                let full = range.start == 0 && range.end >= task.size;
                indexes.push(tasks.len());
                tasks.push(FileTask {
                    range: (!full).then_some(range),
                    ..task.clone()
                });
            }
            partitions.push(indexes);
        }
        self.tasks = tasks;
        self.partitions = partitions;
        self.metrics.set_partitions_planned(self.partitions.len());
        self
    }

    /// Cuts every file task that reads more than `max_bytes` into consecutive byte ranges of
    /// at most that many bytes, in the same partition (see `plan::cap_range`). A range reads
    /// the rows it owns (see [`Self::split_into_byte_ranges`]): a row group with a page index
    /// is shared by rows, so a task holds only its share of a large row group; other row
    /// groups are read whole by one range. Reading every range returns the same rows.
    pub fn cap_task_bytes(mut self, max_bytes: u64) -> Self {
        if self.tasks.iter().all(|t| t.bytes() <= max_bytes) {
            return self;
        }
        let mut tasks = Vec::new();
        let mut partitions = Vec::with_capacity(self.partitions.len());
        for group in &self.partitions {
            let mut indexes = Vec::with_capacity(group.len());
            for task in group.iter().filter_map(|&i| self.tasks.get(i)) {
                let read = task.range.clone().unwrap_or(0..task.size);
                let pieces = crate::plan::cap_range(read, max_bytes);
                if pieces.len() == 1 {
                    indexes.push(tasks.len());
                    tasks.push(task.clone());
                    continue;
                }
                for piece in pieces {
                    indexes.push(tasks.len());
                    tasks.push(FileTask {
                        range: Some(piece),
                        ..task.clone()
                    });
                }
            }
            partitions.push(indexes);
        }
        self.tasks = tasks;
        self.partitions = partitions;
        self
    }

    /// [`Self::cap_task_bytes`] at the scan's own `max_task_bytes` (see
    /// [`DeltaScanExecutionOptions::max_task_bytes`]): what every spread of a scan (natively,
    /// and DataFusion's repartitioning) ends with.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn cap_task_bytes_by_options(self) -> Self {
        let max = self.execution.max_task_bytes;
        self.cap_task_bytes(max)
    }

    /// Cuts whole files into byte ranges when whole files would leave the scan's target
    /// partitions unbalanced (see `plan::groups_for_few_files`: the busiest over 5/4 of the
    /// even share, at least `plan::MIN_BYTES_PER_GROUP` (4 MiB) per group), then any task
    /// over `max_task_bytes` (64 MiB by default) into ranges of at most that
    /// ([`Self::cap_task_bytes`]).
    #[cfg(not(target_arch = "wasm32"))]
    fn spread_files(self) -> Self {
        use crate::plan::groups_for_few_files;

        let sizes: Vec<u64> = self.tasks.iter().map(|t| t.size).collect();
        let spread = match groups_for_few_files(&sizes, self.target) {
            Some(groups) => self.split_into_byte_ranges(groups),
            None => self,
        };
        spread.cap_task_bytes_by_options()
    }

    /// Regroups whole-file tasks into at most `target` partitions (largest file first into
    /// the lightest partition, see `plan::group_whole_files`); a scan with byte-range tasks,
    /// or with no more files than partitions already, is returned as it is.
    pub fn regroup_whole_files(mut self, target: usize) -> Self {
        if self.tasks.iter().any(|t| t.range.is_some()) || self.tasks.len() <= self.partitions.len()
        {
            return self;
        }
        let sizes: Vec<Option<u64>> = self.tasks.iter().map(|t| Some(t.size)).collect();
        self.partitions = group_whole_files(&sizes, target.max(1));
        self.metrics.set_partitions_planned(self.partitions.len());
        self
    }

    /// The scan cut into `tasks` scans (at least 1) over disjoint sets of its partitions, for
    /// an engine that sends one plan to each of its tasks: the partitions go, heaviest first
    /// (by the bytes their file tasks read), to the lightest task (see
    /// `plan::group_whole_files`), and each scan keeps them in this scan's order. Every scan
    /// has the same number of partitions, the most any task got (at least 1), the others
    /// padded with empty ones, so the engine sees one partition count. Reading every scan
    /// reads every file task of this one exactly once. Each has fresh metrics and keeps the
    /// admit check, the limit (applied per scan: the engine limits the union) and the rest.
    pub fn split_among_tasks(&self, tasks: usize) -> Vec<DeltaScan> {
        let tasks = tasks.max(1);
        // Empty partitions carry nothing; every other one goes to exactly one task.
        let filled: Vec<&Vec<usize>> = self.partitions.iter().filter(|p| !p.is_empty()).collect();
        let weights: Vec<Option<u64>> = filled
            .iter()
            .map(|p| {
                let bytes = p
                    .iter()
                    .filter_map(|&i| self.tasks.get(i))
                    .map(FileTask::bytes);
                Some(bytes.fold(0u64, u64::saturating_add))
            })
            .collect();
        let mut groups = group_whole_files(&weights, tasks);
        groups.resize(tasks, Vec::new());
        let width = groups.iter().map(Vec::len).max().unwrap_or(0).max(1);
        groups
            .into_iter()
            .map(|group| {
                let mut part_tasks = Vec::new();
                let mut partitions = Vec::with_capacity(width);
                for g in group {
                    let Some(source) = filled.get(g) else {
                        continue;
                    };
                    let mut indexes = Vec::with_capacity(source.len());
                    for task in source.iter().filter_map(|&i| self.tasks.get(i)) {
                        indexes.push(part_tasks.len());
                        part_tasks.push(task.clone());
                    }
                    partitions.push(indexes);
                }
                partitions.resize(width, Vec::new());
                let metrics = Arc::new(DeltaScanMetrics::new(self.table.io_counters()));
                metrics.start_io();
                metrics.record_plan(width, part_tasks.len(), &self.selection, 0);
                DeltaScan {
                    tasks: part_tasks,
                    files: Arc::new(Vec::new()),
                    partitions,
                    target: width,
                    metrics,
                    ..self.clone()
                }
            })
            .collect()
    }

    /// Part `index` of this scan cut into `count` parts, for `count` readers that each plan
    /// the same scan of the same version (in other threads, workers or processes) and read
    /// one part each: the tasks are laid end to end and cut into `count` byte ranges of about
    /// equal size (see `plan::split_byte_ranges`), and the part reads the ranges of cut
    /// `index` (none when there are fewer cuts). A row group belongs to the range it starts
    /// in, so the parts read disjoint row groups, and together every row of the scan once.
    /// `count` 0, or `index` not below it, is an `invalid_argument` error; a limit applies to
    /// each part.
    pub fn part(self, index: usize, count: usize) -> Result<DeltaScan> {
        if index >= count {
            return Err(DeltaError::InvalidArgument {
                reason: "a scan part's index must be below the part count".into(),
            });
        }
        let lengths: Vec<u64> = self.tasks.iter().map(FileTask::bytes).collect();
        let cut = split_byte_ranges(&lengths, count)
            .into_iter()
            .nth(index)
            .unwrap_or_default();
        // A cut of a task already ranged is a range within its range.
        let tasks: Vec<FileTask> = cut
            .into_iter()
            .filter_map(|(i, cut)| {
                let task = self.tasks.get(i)?;
                let base = task.range.as_ref().map_or(0, |r| r.start);
                let whole = task.range.is_none() && cut.start == 0 && cut.end >= task.size;
                Some(FileTask {
                    range: (!whole).then(|| base + cut.start..base + cut.end),
                    ..task.clone()
                })
            })
            .collect();
        let sizes: Vec<Option<u64>> = tasks.iter().map(|t| Some(t.bytes())).collect();
        let partitions = group_whole_files(&sizes, self.target.max(1));
        let metrics = Arc::new(DeltaScanMetrics::new(self.table.io_counters()));
        metrics.start_io();
        metrics.record_plan(partitions.len(), tasks.len(), &self.selection, 0);
        Ok(DeltaScan {
            tasks,
            files: Arc::new(Vec::new()),
            partitions,
            metrics,
            ..self
        })
    }

    /// Starts reading: all partitions, read at once, merged into one stream.
    ///
    /// Natively, when called inside a Tokio runtime, each partition runs as its own task on
    /// that runtime (so one scan decodes on every core), each with a bounded buffer of
    /// `batches_ahead_per_partition` batches; dropping the stream aborts the tasks, which drops
    /// their open files and returns every permit. Outside a runtime, and on wasm32, the
    /// partitions are polled by whoever polls this stream (one thread).
    ///
    /// Order: without a limit, batches come as the partitions produce them (the order across
    /// partitions is unspecified), and the partitions share the scan's tasks: each takes the
    /// next, largest first, when it has room for a file, so a partition slowed by one file
    /// leaves the others the rest and all end together (`partition_tasks` shows the planned
    /// groups, not which partition read what); with a limit, in the scan's task (log) order,
    /// so the first rows of a limited scan are the first in the log. An ordered merge keeps a
    /// partition that waits for its turn holding its open files' permits, so with a
    /// scan-wide limit too small for every partition to hold its files, fewer (larger)
    /// partitions are read: at most `merge_safe_partitions` of them (the limit over the
    /// scan-wide permits).
    ///
    /// Natively, on a multi-thread runtime and without a limit, files too few (or one too
    /// large) to keep every partition busy are read in byte ranges, each range reading the
    /// row groups it owns (a table of one 100 MB file decodes on every core), and a task of
    /// more than `max_task_bytes` (64 MiB by default) is cut into ranges of at most that, so
    /// a partition holds at most its share of a large row group that has a page index (see
    /// [`Self::cap_task_bytes`]); the partitions then number up to the scan's target, and
    /// `partitions()` and `tasks()`, which describe the plan, show the whole files.
    pub fn into_stream(self) -> DeltaBatchStream {
        let ordered = self.limit.is_some();
        // Whole files that would leave cores idle are cut into byte ranges (a limited scan
        // reads in log order, from as few files as it needs).
        #[cfg(not(target_arch = "wasm32"))]
        let scan = if !ordered && super::spawn::partitions_run_in_parallel() {
            self.spread_files()
        } else {
            self
        };
        #[cfg(target_arch = "wasm32")]
        let scan = self;
        let ahead = scan.execution.batches_ahead_per_partition;
        scan.merged(ordered, ahead)
    }

    /// Starts reading, as [`into_stream`](Self::into_stream), with the batches in the scan's
    /// task order even without a limit: the files in the log's order, each file's rows in
    /// its order, so the same snapshot gives the same rows in the same order every time (an
    /// export that can be compared byte for byte).
    ///
    /// Natively, on a multi-thread runtime, it still decodes on every core: the files are
    /// cut into byte ranges of at most [`ORDERED_TASK_BYTES`] (or `max_task_bytes`, when
    /// smaller; each range reads the row groups it owns) dealt to the partitions in turn,
    /// and each partition reads more
    /// batches ahead than `batches_ahead_per_partition` (up to [`ORDERED_BATCHES_AHEAD`],
    /// within about [`ORDERED_AHEAD_BYTES`] of batches as the files' sizes and row counts
    /// estimate them), so that a range waits whole for its turn while the next is decoded.
    /// That read-ahead is the memory it costs over `into_stream`.
    pub fn into_ordered_stream(self) -> DeltaBatchStream {
        let ahead = self.execution.batches_ahead_per_partition;
        #[cfg(not(target_arch = "wasm32"))]
        if self.limit.is_none() && super::spawn::partitions_run_in_parallel() && self.target > 1 {
            let ahead = ahead.max(self.ordered_batches_ahead());
            let max = ORDERED_TASK_BYTES.min(self.execution.max_task_bytes);
            return self
                .in_task_order()
                .cap_task_bytes(max)
                .dealt_in_turn()
                .merged(true, ahead);
        }
        self.merged(true, ahead)
    }

    /// The scan as one group of all its tasks in their order, so that cutting them into
    /// ranges ([`Self::cap_task_bytes`], which numbers the pieces group by group) keeps the
    /// log's order in the tasks' numbers.
    #[cfg(not(target_arch = "wasm32"))]
    fn in_task_order(mut self) -> Self {
        self.partitions = vec![(0..self.tasks.len()).collect()];
        self
    }

    /// The batches a partition of an ordered read reads ahead: as many of the scan's batches
    /// as about [`ORDERED_AHEAD_BYTES`] hold (less on many partitions, see
    /// [`ORDERED_AHEAD_BYTES_ALL`]), at most [`ORDERED_BATCHES_AHEAD`]. A batch's
    /// size is estimated from the files: their bytes per row, for the columns read, times 3
    /// (what decoding takes compressed Parquet to, about). Files without row counts: half
    /// the most.
    #[cfg(not(target_arch = "wasm32"))]
    fn ordered_batches_ahead(&self) -> usize {
        let (bytes, rows) = self.tasks.iter().fold((0u64, Some(0u64)), |(b, r), t| {
            (
                b.saturating_add(t.size),
                r.zip(t.num_records).map(|(r, n)| r.saturating_add(n)),
            )
        });
        let Some(rows) = rows.filter(|&r| r > 0) else {
            return ORDERED_BATCHES_AHEAD / 2;
        };
        let all = self.table.delta_schema().fields.len().max(1) as f64;
        let read = self.columns.output_schema.fields().len().min(all as usize) as f64;
        let row_bytes = 3.0 * bytes as f64 / rows as f64 * (read / all);
        let batch_bytes = (row_bytes * self.batch_size as f64).max(1.0);
        let partitions = self.target.max(1) as u64;
        let budget = ORDERED_AHEAD_BYTES.min(ORDERED_AHEAD_BYTES_ALL / partitions);
        let fit = (budget as f64 / batch_bytes) as usize;
        fit.min(ORDERED_BATCHES_AHEAD)
    }

    /// The most partitions an ordered merge of this scan can read at once (see
    /// `merge_safe_partitions`): a partition waiting for its turn holds its open files'
    /// permits, and the one in turn must still get one.
    fn merge_safe(&self) -> usize {
        let o = self.execution.effective();
        let held = o.max_concurrent_file_reads_per_partition.min(
            o.prefetch_files(self.table.store().reads_local_files())
                .saturating_add(1),
        );
        merge_safe_partitions(o.scan_wide_file_reads(self.target), held)
    }

    /// The tasks dealt anew, one by one in order, to as many partitions as the target and an
    /// ordered merge allow (task `i` to partition `i % n`): neighbours in the log are read
    /// side by side.
    #[cfg(not(target_arch = "wasm32"))]
    fn dealt_in_turn(mut self) -> Self {
        let count = self
            .target
            .min(self.merge_safe())
            .min(self.tasks.len())
            .max(1);
        let mut partitions = vec![Vec::new(); count];
        for i in 0..self.tasks.len() {
            if let Some(group) = partitions.get_mut(i % count) {
                group.push(i);
            }
        }
        self.partitions = partitions;
        self.metrics.set_partitions_planned(self.partitions.len());
        self
    }

    /// All partitions read at once, merged: in the scan's task order when `ordered`, else as
    /// batches arrive (the partitions then share one queue of the tasks); each partition reads
    /// up to `ahead` batches ahead.
    fn merged(mut self, ordered: bool, ahead: usize) -> DeltaBatchStream {
        let schema = Arc::clone(&self.columns.output_schema);
        let metrics = Arc::clone(&self.metrics);
        let limit = self.limit.map(|n| Arc::new(AtomicUsize::new(n)));
        self.execution.batches_ahead_per_partition = ahead;
        let o = self.execution.effective();
        if ordered {
            let safe = self.merge_safe();
            if self.partitions.len() > safe {
                let sizes: Vec<Option<u64>> = self.tasks.iter().map(|t| Some(t.bytes())).collect();
                self.partitions = group_whole_files(&sizes, safe);
                metrics.set_partitions_planned(self.partitions.len());
            }
        }
        // Task index → partition, for the ordered merge.
        let owner = ordered.then(|| {
            let mut owner = vec![0; self.tasks.len()];
            for (p, group) in self.partitions.iter().enumerate() {
                for &i in group {
                    if let Some(o) = owner.get_mut(i) {
                        *o = p;
                    }
                }
            }
            owner
        });
        // Without a limit the partitions share one queue of the scan's tasks (see
        // `SharedTasks`), so they end together however fast each file decodes.
        let parts = run_partitions(
            self.partition_readers(!ordered),
            o.batches_ahead_per_partition,
            &metrics,
        );
        let inner = if let Some(owner) = owner {
            OrderedMerge::new(parts, owner).boxed_local_or_send()
        } else {
            futures::stream::select_all(parts)
                .map(|(_, item)| item)
                .boxed_local_or_send()
        };
        DeltaBatchStream::new(schema, inner, limit, metrics)
    }

    /// Starts reading: one stream per partition, to be polled concurrently (they share the
    /// scan-wide read permits and the row limit).
    pub fn into_partition_streams(self) -> Vec<DeltaBatchStream> {
        let schema = Arc::clone(&self.columns.output_schema);
        let metrics = Arc::clone(&self.metrics);
        let limit = self.limit.map(|n| Arc::new(AtomicUsize::new(n)));
        self.partition_readers(false)
            .into_iter()
            .map(|p| {
                let inner = p.map(|(_, item)| item).boxed_local_or_send();
                DeltaBatchStream::new(
                    Arc::clone(&schema),
                    inner,
                    limit.clone(),
                    Arc::clone(&metrics),
                )
            })
            .collect()
    }

    /// One scheduler per partition. With `share`, the partitions take their tasks from one
    /// queue of all of them, largest first (the longest work starts first, so the last
    /// tasks are short ones and the partitions end close together); else each reads its
    /// group in order.
    fn partition_readers(self, share: bool) -> Vec<PartitionStream> {
        let metrics = self.metrics;
        let o = &self.execution.effective();
        let local_files = self.table.store().reads_local_files();
        let ctx = ReadContext {
            store: Arc::clone(self.table.store()),
            location: self.table.location().clone(),
            spec: Arc::new(ReadSpec {
                columns: self.columns.clone(),
                mode: self.table.column_mapping_mode(),
                batch_size: self.batch_size,
                predicate: self.predicate,
                pushdown: true,
                output_types: self.output_types,
                max_page_bytes: self.execution.max_page_bytes,
                read_ahead_bytes: o.read_ahead(local_files),
            }),
            row_groups_pruned: Arc::clone(&metrics.row_groups_pruned),
        };
        let shared = ScanShared {
            scan_permits: semaphore(o.scan_wide_file_reads(self.target)),
            metrics: Arc::clone(&metrics),
            _end: Arc::new(ScanEnd(Arc::clone(&metrics))),
            admit_check: self.admit_check.clone(),
        };
        let limits = PartitionLimits {
            max_concurrent_file_reads: o.max_concurrent_file_reads_per_partition,
            prefetch_files: o.prefetch_files(local_files),
            output_capacity: o.batches_ahead_per_partition,
            full_file_read_threshold: o.parquet_full_file_read_threshold_bytes,
            decoder: decoder(o.parquet_reader_backend),
        };
        // wasm32 reads one partition: the sharing is left out of its module.
        #[cfg(target_arch = "wasm32")]
        let _ = share;
        #[cfg(not(target_arch = "wasm32"))]
        if share && self.partitions.len() > 1 {
            let mut all: Vec<(usize, FileTask)> = self.tasks.into_iter().enumerate().collect();
            // Stable: equal sizes keep the scan's order.
            all.sort_by_key(|(_, task)| std::cmp::Reverse(task.bytes()));
            let queue = crate::read::scheduler::SharedTasks::new(all);
            return self
                .partitions
                .iter()
                .map(|_| {
                    PartitionStream::sharing(
                        ctx.clone(),
                        queue.clone(),
                        limits.clone(),
                        shared.clone(),
                    )
                })
                .collect();
        }
        let mut tasks: Vec<Option<FileTask>> = self.tasks.into_iter().map(Some).collect();
        self.partitions
            .iter()
            .map(|group| {
                let group_tasks = group
                    .iter()
                    .filter_map(|&i| tasks.get_mut(i).and_then(Option::take).map(|t| (i, t)))
                    .collect();
                PartitionStream::new(ctx.clone(), group_tasks, limits.clone(), shared.clone())
            })
            .collect()
    }
}

/// The decoder of `backend` (options validation refused `DeltaKernel` without the feature).
fn decoder(backend: ParquetReaderBackend) -> Arc<dyn FileDecoder> {
    match backend {
        #[cfg(all(feature = "kernel", not(target_arch = "wasm32")))]
        ParquetReaderBackend::DeltaKernel => Arc::new(crate::kernel::KernelDecoder),
        _ => Arc::new(DirectDecoder),
    }
}

/// The partitions of a merged read, each as a stream of its tagged items: natively on their
/// own tasks of the current Tokio runtime when there is one and more than one partition (see
/// `api::spawn`), else as they are, polled by the merged stream.
fn run_partitions(
    parts: Vec<PartitionStream>,
    capacity: usize,
    metrics: &Arc<DeltaScanMetrics>,
) -> Vec<BoxStream<'static, Tagged>> {
    #[cfg(not(target_arch = "wasm32"))]
    let parts = if parts.len() > 1 {
        let panicked = |message: String| -> Tagged {
            let reason = format!("a partition of the scan panicked: {message}");
            let phase = crate::error::Phase::Read;
            (usize::MAX, Err(DeltaError::Internal { reason, phase }))
        };
        // On its own task a partition decodes one batch at a time into the groups its task
        // hands over (see `spawn`), which hold the batches read ahead.
        let parts = parts
            .into_iter()
            .map(|p| p.with_output_capacity(1))
            .collect();
        match super::spawn::spawn_partitions(parts, capacity, metrics, panicked) {
            Ok(spawned) => {
                return spawned
                    .into_iter()
                    .map(BoxedStream::boxed_local_or_send)
                    .collect()
            }
            // No runtime: the partitions are polled here, and their own buffers hold the
            // read-ahead again.
            Err(parts) => parts
                .into_iter()
                .map(|p| p.with_output_capacity(capacity))
                .collect(),
        }
    } else {
        parts
    };
    #[cfg(target_arch = "wasm32")]
    let _ = (capacity, metrics);
    parts
        .into_iter()
        .map(BoxedStream::boxed_local_or_send)
        .collect()
}

impl DeltaTable {
    /// Starts configuring a scan of this snapshot.
    pub fn scan(&self) -> DeltaScanBuilder {
        DeltaScanBuilder::new(self.clone())
    }
}
