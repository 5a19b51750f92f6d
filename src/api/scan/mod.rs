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
//!
//! The planned scan and its streams are here; around them, `builder` (options and planning),
//! `layout` (how the tasks are cut and grouped into partitions), `ordered` (reads in the
//! log's order on every core) and `parts` (a scan taken apart for another process).

mod builder;
mod layout;
mod ordered;
mod parts;

pub use builder::DeltaScanBuilder;
pub use ordered::{
    ORDERED_AHEAD_BYTES, ORDERED_AHEAD_BYTES_ALL, ORDERED_BATCHES_AHEAD, ORDERED_TASK_BYTES,
};
#[cfg(feature = "distributed")]
pub(crate) use parts::ScanParts;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use futures::stream::StreamExt;

use crate::api::batch_stream::DeltaBatchStream;
use crate::api::options::{DeltaScanExecutionOptions, ParquetReaderBackend};
use crate::api::skipped::SkippedFiles;
use crate::api::table::DeltaTable;
use crate::io::{BoxStream, BoxedStream};
use crate::plan::FileTask;
use crate::plan::{group_whole_files, FileSelection, ScanColumns, ScanRequest};
use crate::predicate::{BoundExpr, Expr};
use crate::read::metrics::DeltaScanMetrics;
use crate::read::scheduler::{
    merge_safe_partitions, semaphore, AdmitCheck, OrderedMerge, PartitionLimits, PartitionStream,
    ScanEnd, ScanShared, Tagged,
};
use crate::read::{DirectDecoder, FileDecoder, ReadContext, ReadSpec};
use crate::schema::OutputTypes;

/// Default rows per batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

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
}

impl DeltaScan {
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
        let scan = if !ordered && crate::api::spawn::partitions_run_in_parallel() {
            self.spread_files()
        } else {
            self
        };
        #[cfg(target_arch = "wasm32")]
        let scan = self;
        let ahead = scan.execution.batches_ahead_per_partition;
        scan.merged(ordered, ahead)
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
            (
                usize::MAX,
                Err(crate::error::DeltaError::Internal { reason, phase }),
            )
        };
        // On its own task a partition decodes one batch at a time into the groups its task
        // hands over (see `spawn`), which hold the batches read ahead.
        let parts = parts
            .into_iter()
            .map(|p| p.with_output_capacity(1))
            .collect();
        match crate::api::spawn::spawn_partitions(parts, capacity, metrics, panicked) {
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
