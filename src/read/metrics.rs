//! [`DeltaScanMetrics`]: what one scan planned, read and emitted.
//!
//! One shared value per scan (an `Arc`), filled while the scan runs and readable at any time:
//! during the stream, after it ends, and after it is dropped. Counters only grow; two gauges
//! (file reads holding permits, partition tasks running) go back to 0 once every stream of
//! the scan has ended or been dropped and its tasks are gone. I/O counts
//! (requests, bytes) are the table store's counters taken as deltas since the scan's build
//! began (so a lazily loaded table's log replay is counted);
//! they freeze when the scan's last stream ends or is dropped (other scans of the same table
//! running at the same time are counted too, as they share the store).
//!
//! The only clock is `web_time::Instant` (natively `std::time::Instant`; on wasm32
//! `performance.now()`, where `std::time::Instant::now()` panics), read when the scan is first
//! polled and when its first batch is handed out: the time to the first batch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use web_time::Instant;

use crate::io::IoCounters;
use crate::plan::FileSelection;

/// Requests and bytes through the table's store, over the scan or at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ScanIo {
    /// Requests made (lists, whole gets, ranged gets, size queries).
    pub requests: u64,
    /// Bytes asked for.
    pub bytes_requested: u64,
    /// Bytes received.
    pub bytes_received: u64,
}

impl ScanIo {
    fn read(counters: &IoCounters) -> Self {
        let s = counters.snapshot();
        ScanIo {
            requests: s.requests,
            bytes_requested: s.bytes_requested,
            bytes_received: s.bytes_received,
        }
    }
}

/// The table store's counters at the start of the scan, and at its end once it ended.
#[derive(Debug)]
struct IoWindow {
    counters: Arc<IoCounters>,
    start: Option<ScanIo>,
    end: Option<ScanIo>,
}

/// Counters of one scan. Shared: get it from
/// [`DeltaScan::metrics`](crate::api::DeltaScan::metrics) or
/// [`DeltaBatchStream::metrics`](crate::api::DeltaBatchStream::metrics).
#[derive(Debug)]
pub struct DeltaScanMetrics {
    partitions_planned: AtomicU64,
    partitions_started: AtomicU64,
    partitions_completed: AtomicU64,
    files_in_snapshot: AtomicU64,
    files_planned: AtomicU64,
    files_skipped_by_partition: AtomicU64,
    files_skipped_by_stats: AtomicU64,
    files_skipped_by_filter: AtomicU64,
    pub(crate) row_groups_pruned: Arc<AtomicU64>,
    file_tasks_started: AtomicU64,
    file_tasks_completed: AtomicU64,
    file_bytes_done: AtomicU64,
    file_tasks_skipped: AtomicU64,
    batches_emitted: AtomicU64,
    rows_emitted: AtomicU64,
    deletion_vectors_loaded: AtomicU64,
    rows_deleted: AtomicU64,
    log_files_read: AtomicU64,
    file_reads_open: AtomicU64,
    partition_tasks_running: AtomicU64,
    io: Mutex<IoWindow>,
    started_at: Mutex<Option<Instant>>,
    first_batch: Mutex<Option<Duration>>,
}

/// A copy of [`DeltaScanMetrics`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ScanMetricsSnapshot {
    /// Partitions the scan was planned into.
    pub partitions_planned: u64,
    /// Partitions polled at least once.
    pub partitions_started: u64,
    /// Partitions that read all their files (an error or a drop does not complete one).
    pub partitions_completed: u64,
    /// Active files in the snapshot the scan reads.
    pub files_in_snapshot: u64,
    /// Files the scan planned to read.
    pub files_planned: u64,
    /// Files left out by their partition values.
    pub files_skipped_by_partition: u64,
    /// Files left out by their statistics.
    pub files_skipped_by_stats: u64,
    /// Files left out because the filter is false for every row (`int_col = 1.5`).
    pub files_skipped_by_filter: u64,
    /// Row groups left out by their Parquet statistics.
    pub row_groups_pruned: u64,
    /// File tasks admitted (both permits held, the file stream created).
    pub file_tasks_started: u64,
    /// File tasks whose stream ended without error.
    pub file_tasks_completed: u64,
    /// Bytes of the data files read so far: each file's bytes as they arrive (at most its
    /// size), and all of its size once it is read to its end.
    pub file_bytes_done: u64,
    /// File tasks skipped just before admission (a dynamic filter ruled them out).
    pub file_tasks_skipped: u64,
    /// Batches handed to the caller.
    pub batches_emitted: u64,
    /// Rows handed to the caller.
    pub rows_emitted: u64,
    /// Deletion vectors loaded (inline or from a file).
    pub deletion_vectors_loaded: u64,
    /// Rows the loaded deletion vectors mark as deleted, each counted once (a file read in
    /// byte ranges loads its vector once per range; each range counts the rows of the row
    /// groups it owns).
    pub rows_deleted: u64,
    /// Requests made through the table's store since the scan started.
    pub requests: u64,
    /// Bytes asked for since the scan started.
    pub bytes_requested: u64,
    /// Bytes received since the scan started.
    pub bytes_received: u64,
    /// Log files read to load the snapshot the scan reads.
    pub log_files_read: u64,
    /// Time from the first poll to the first batch handed out, in microseconds.
    pub time_to_first_batch_us: Option<u64>,
    /// File reads holding their permits now (a gauge).
    pub file_reads_open: u64,
    /// Partitions running as their own runtime task now (a gauge; natively, see
    /// [`DeltaScan::into_stream`](crate::api::DeltaScan::into_stream)).
    pub partition_tasks_running: u64,
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

fn get(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

impl DeltaScanMetrics {
    /// Metrics of a scan of a table whose store counts into `counters`.
    pub(crate) fn new(counters: Arc<IoCounters>) -> Self {
        DeltaScanMetrics {
            partitions_planned: AtomicU64::new(0),
            partitions_started: AtomicU64::new(0),
            partitions_completed: AtomicU64::new(0),
            files_in_snapshot: AtomicU64::new(0),
            files_planned: AtomicU64::new(0),
            files_skipped_by_partition: AtomicU64::new(0),
            files_skipped_by_stats: AtomicU64::new(0),
            files_skipped_by_filter: AtomicU64::new(0),
            row_groups_pruned: Arc::new(AtomicU64::new(0)),
            file_tasks_started: AtomicU64::new(0),
            file_tasks_completed: AtomicU64::new(0),
            file_bytes_done: AtomicU64::new(0),
            file_tasks_skipped: AtomicU64::new(0),
            batches_emitted: AtomicU64::new(0),
            rows_emitted: AtomicU64::new(0),
            deletion_vectors_loaded: AtomicU64::new(0),
            rows_deleted: AtomicU64::new(0),
            log_files_read: AtomicU64::new(0),
            file_reads_open: AtomicU64::new(0),
            partition_tasks_running: AtomicU64::new(0),
            io: Mutex::new(IoWindow {
                counters,
                start: None,
                end: None,
            }),
            started_at: Mutex::new(None),
            first_batch: Mutex::new(None),
        }
    }

    /// Records the plan: partitions, the files it reads, the file selection and the
    /// snapshot's log reads.
    pub(crate) fn record_plan(
        &self,
        partitions: usize,
        files: usize,
        selection: &FileSelection,
        log_files_read: u64,
    ) {
        add(&self.partitions_planned, partitions as u64);
        add(&self.files_in_snapshot, selection.files_total as u64);
        add(&self.files_planned, files as u64);
        add(
            &self.files_skipped_by_partition,
            selection.skipped_by_partition as u64,
        );
        add(
            &self.files_skipped_by_stats,
            selection.skipped_by_stats as u64,
        );
        add(
            &self.files_skipped_by_filter,
            selection.skipped_by_filter as u64,
        );
        add(&self.log_files_read, log_files_read);
    }

    /// The merged stream reads fewer partitions than planned.
    pub(crate) fn set_partitions_planned(&self, partitions: usize) {
        self.partitions_planned
            .store(partitions as u64, Ordering::Relaxed);
    }

    /// The scan's build began: I/O is counted from here.
    pub(crate) fn start_io(&self) {
        if let Ok(mut io) = self.io.lock() {
            if io.start.is_none() {
                io.start = Some(ScanIo::read(&io.counters));
            }
        }
    }

    /// The scan's last stream ended or was dropped: I/O counts freeze.
    pub(crate) fn end_io(&self) {
        if let Ok(mut io) = self.io.lock() {
            if io.start.is_some() && io.end.is_none() {
                io.end = Some(ScanIo::read(&io.counters));
            }
        }
    }

    pub(crate) fn partition_started(&self) {
        add(&self.partitions_started, 1);
        if let Ok(mut at) = self.started_at.lock() {
            at.get_or_insert_with(Instant::now);
        }
    }

    pub(crate) fn partition_completed(&self) {
        add(&self.partitions_completed, 1);
    }

    pub(crate) fn file_task_started(&self) {
        add(&self.file_tasks_started, 1);
    }

    pub(crate) fn file_task_completed(&self) {
        add(&self.file_tasks_completed, 1);
    }

    /// `bytes` more of a data file read (see [`crate::read`]'s per-file credit).
    pub(crate) fn file_bytes_read(&self, bytes: u64) {
        add(&self.file_bytes_done, bytes);
    }

    pub(crate) fn file_task_skipped(&self) {
        add(&self.file_tasks_skipped, 1);
    }

    /// A deletion vector marking `rows` rows deleted was loaded.
    pub(crate) fn deletion_vector_loaded(&self, rows: u64) {
        add(&self.deletion_vectors_loaded, 1);
        add(&self.rows_deleted, rows);
    }

    /// A batch of `rows` rows was handed to the caller.
    pub(crate) fn batch_emitted(&self, rows: usize) {
        add(&self.batches_emitted, 1);
        add(&self.rows_emitted, rows as u64);
        if let Ok(mut first) = self.first_batch.lock() {
            if first.is_none() {
                let start = self.started_at.lock().ok().and_then(|s| *s);
                *first = Some(start.map(|s| s.elapsed()).unwrap_or_default());
            }
        }
    }

    /// Partitions the scan was planned into.
    pub fn partitions_planned(&self) -> u64 {
        get(&self.partitions_planned)
    }

    /// Partitions polled at least once.
    pub fn partitions_started(&self) -> u64 {
        get(&self.partitions_started)
    }

    /// Partitions that read all their files.
    pub fn partitions_completed(&self) -> u64 {
        get(&self.partitions_completed)
    }

    /// Active files in the snapshot the scan reads.
    pub fn files_in_snapshot(&self) -> u64 {
        get(&self.files_in_snapshot)
    }

    /// Files the scan planned to read.
    pub fn files_planned(&self) -> u64 {
        get(&self.files_planned)
    }

    /// Files left out by their partition values.
    pub fn files_skipped_by_partition(&self) -> u64 {
        get(&self.files_skipped_by_partition)
    }

    /// Files left out by their statistics.
    pub fn files_skipped_by_stats(&self) -> u64 {
        get(&self.files_skipped_by_stats)
    }

    /// Files left out because the filter is false for every row (`int_col = 1.5`).
    pub fn files_skipped_by_filter(&self) -> u64 {
        get(&self.files_skipped_by_filter)
    }

    /// Row groups left out by their Parquet statistics.
    pub fn row_groups_pruned(&self) -> u64 {
        get(&self.row_groups_pruned)
    }

    /// File tasks admitted (both permits held).
    pub fn file_tasks_started(&self) -> u64 {
        get(&self.file_tasks_started)
    }

    /// File tasks whose stream ended without error.
    pub fn file_tasks_completed(&self) -> u64 {
        get(&self.file_tasks_completed)
    }

    /// Bytes of the data files read so far: received bytes of each file (at most its size),
    /// and its whole size once it is read to its end.
    pub fn file_bytes_done(&self) -> u64 {
        get(&self.file_bytes_done)
    }

    /// File tasks skipped just before admission (a dynamic filter ruled them out).
    pub fn file_tasks_skipped(&self) -> u64 {
        get(&self.file_tasks_skipped)
    }

    /// Batches handed to the caller.
    pub fn batches_emitted(&self) -> u64 {
        get(&self.batches_emitted)
    }

    /// Rows handed to the caller.
    pub fn rows_emitted(&self) -> u64 {
        get(&self.rows_emitted)
    }

    /// Deletion vectors loaded.
    pub fn deletion_vectors_loaded(&self) -> u64 {
        get(&self.deletion_vectors_loaded)
    }

    /// Rows the loaded deletion vectors mark as deleted.
    pub fn rows_deleted(&self) -> u64 {
        get(&self.rows_deleted)
    }

    /// Log files read to load the snapshot.
    pub fn log_files_read(&self) -> u64 {
        get(&self.log_files_read)
    }

    /// Time from the scan's first poll to its first batch, once there was one.
    pub fn time_to_first_batch(&self) -> Option<Duration> {
        self.first_batch.lock().ok().and_then(|f| *f)
    }

    /// The store's counts since the scan started (zero before it started).
    pub fn io(&self) -> ScanIo {
        let Ok(io) = self.io.lock() else {
            return ScanIo::default();
        };
        let Some(start) = io.start else {
            return ScanIo::default();
        };
        let end = io.end.unwrap_or_else(|| ScanIo::read(&io.counters));
        ScanIo {
            requests: end.requests.saturating_sub(start.requests),
            bytes_requested: end.bytes_requested.saturating_sub(start.bytes_requested),
            bytes_received: end.bytes_received.saturating_sub(start.bytes_received),
        }
    }

    /// Every counter now.
    pub fn snapshot(&self) -> ScanMetricsSnapshot {
        let io = self.io();
        ScanMetricsSnapshot {
            partitions_planned: self.partitions_planned(),
            partitions_started: self.partitions_started(),
            partitions_completed: self.partitions_completed(),
            files_in_snapshot: self.files_in_snapshot(),
            files_planned: self.files_planned(),
            files_skipped_by_partition: self.files_skipped_by_partition(),
            files_skipped_by_stats: self.files_skipped_by_stats(),
            files_skipped_by_filter: self.files_skipped_by_filter(),
            row_groups_pruned: self.row_groups_pruned(),
            file_tasks_started: self.file_tasks_started(),
            file_tasks_completed: self.file_tasks_completed(),
            file_bytes_done: self.file_bytes_done(),
            file_tasks_skipped: self.file_tasks_skipped(),
            batches_emitted: self.batches_emitted(),
            rows_emitted: self.rows_emitted(),
            deletion_vectors_loaded: self.deletion_vectors_loaded(),
            rows_deleted: self.rows_deleted(),
            requests: io.requests,
            bytes_requested: io.bytes_requested,
            bytes_received: io.bytes_received,
            log_files_read: self.log_files_read(),
            time_to_first_batch_us: self
                .time_to_first_batch()
                .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
            file_reads_open: self.file_reads_open(),
            partition_tasks_running: self.partition_tasks_running(),
        }
    }

    /// File reads holding their permits now: 0 once the scan's streams have ended or been
    /// dropped (and, natively, their partition tasks are gone).
    pub fn file_reads_open(&self) -> u64 {
        get(&self.file_reads_open)
    }

    /// Partitions running as their own runtime task now.
    pub fn partition_tasks_running(&self) -> u64 {
        get(&self.partition_tasks_running)
    }
}

/// Which gauge a [`GaugeGuard`] holds up.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Gauge {
    /// [`DeltaScanMetrics::file_reads_open`].
    FileReadsOpen,
    /// [`DeltaScanMetrics::partition_tasks_running`] (natively only: wasm32 spawns nothing).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    PartitionTasksRunning,
}

/// Adds one to a gauge of a scan's metrics for as long as it lives.
#[derive(Debug)]
pub(crate) struct GaugeGuard {
    metrics: Arc<DeltaScanMetrics>,
    gauge: Gauge,
}

impl GaugeGuard {
    pub(crate) fn new(metrics: &Arc<DeltaScanMetrics>, gauge: Gauge) -> Self {
        add(metrics.gauge(gauge), 1);
        GaugeGuard {
            metrics: Arc::clone(metrics),
            gauge,
        }
    }
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        let _ = self.metrics.gauge(self.gauge).fetch_update(
            Ordering::Relaxed,
            Ordering::Relaxed,
            |n| n.checked_sub(1),
        );
    }
}

impl DeltaScanMetrics {
    fn gauge(&self, gauge: Gauge) -> &AtomicU64 {
        match gauge {
            Gauge::FileReadsOpen => &self.file_reads_open,
            Gauge::PartitionTasksRunning => &self.partition_tasks_running,
        }
    }
}
