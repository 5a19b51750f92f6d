//! How a scan's file tasks are laid out: whole files cut into byte ranges, tasks capped by
//! size, whole files regrouped, and the scan split among an engine's tasks or readers.
//! Pure rearrangements of the plan: nothing is read.

use std::sync::Arc;

use super::DeltaScan;
use crate::error::{DeltaError, Result};
use crate::plan::FileTask;
use crate::plan::{group_whole_files, split_byte_ranges};
use crate::read::metrics::DeltaScanMetrics;

impl DeltaScan {
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
    pub(super) fn spread_files(self) -> Self {
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
}
