//! [`DeltaScanExecutionOptions`]: how a scan reads, with documented defaults and validation.

use crate::error::{DeltaError, Result};
use crate::limits::DEFAULT_MAX_PAGE_BYTES;

/// Default of [`DeltaScanExecutionOptions::max_concurrent_file_reads_per_partition`]
/// natively. It bounds the small files (read whole, see
/// [`DeltaScanExecutionOptions::parquet_full_file_read_threshold_bytes`]) of a remote table
/// in flight at once, each holding 64 KiB at most; larger files stay at the prefetch depth.
/// A table of 2,000 small files over HTTP at 50 ms a request read in 4.3 s at 16, 18.7 s at
/// 3 (about 6 requests in flight on 2 cores).
#[cfg(not(target_arch = "wasm32"))]
pub const DEFAULT_MAX_CONCURRENT_FILE_READS_PER_PARTITION: usize = 16;

/// Default of [`DeltaScanExecutionOptions::max_concurrent_file_reads_per_partition`] on
/// wasm32: the connections a browser opens to one host over HTTP/1.1, so that a table of
/// small files fills them (small files are admitted past the prefetch depth up to this).
#[cfg(target_arch = "wasm32")]
pub const DEFAULT_MAX_CONCURRENT_FILE_READS_PER_PARTITION: usize = 6;

/// File streams a partition opens ahead of the one it decodes when
/// [`DeltaScanExecutionOptions::prefetch_files_per_partition`] is `None` and the store is
/// remote (object stores, HTTP, the browser), where opening ahead overlaps the waits. Local
/// files are read on the calling thread, with nothing to overlap, and are not opened ahead:
/// on the benchmark's tables (2 cores) that made the full scan 8% faster (0.935 s → 0.861 s,
/// medians of 7), the 1% selective scan 0.038 s → 0.026 s and the deletion-vector scan
/// 1.15 s → 1.03 s, and halved the peak memory of the full scan (106 → 55 MiB).
pub const DEFAULT_PREFETCH_FILES_PER_PARTITION: usize = 2;

/// Default of [`DeltaScanExecutionOptions::batches_ahead_per_partition`] natively, where
/// each partition runs on a task of its own: with room for 4 batches a partition's task
/// decodes on while the consumer takes the last batch, instead of waiting for it batch by
/// batch (full scan of the benchmark's lineitem table on 2 cores, medians of 5: 0.927 s with
/// 1, 0.880 s with 4, the same peak memory).
#[cfg(not(target_arch = "wasm32"))]
pub const DEFAULT_BATCHES_AHEAD_PER_PARTITION: usize = 4;

/// Default of [`DeltaScanExecutionOptions::batches_ahead_per_partition`] on wasm32, where
/// the partitions run on the consumer's thread: decoding ahead there only holds memory.
#[cfg(target_arch = "wasm32")]
pub const DEFAULT_BATCHES_AHEAD_PER_PARTITION: usize = 1;

/// Default of [`DeltaScanExecutionOptions::parquet_full_file_read_threshold_bytes`]
/// natively: the first footer read (the last 64 KiB of a file) already fetches a file this
/// small whole, so reading it in one request costs no extra byte and saves the column-chunk
/// requests.
#[cfg(not(target_arch = "wasm32"))]
pub const DEFAULT_FULL_FILE_READ_THRESHOLD: u64 = 64 * 1024;

/// Default of [`DeltaScanExecutionOptions::parquet_full_file_read_threshold_bytes`] on
/// wasm32, where each request costs a round trip to the server.
#[cfg(target_arch = "wasm32")]
pub const DEFAULT_FULL_FILE_READ_THRESHOLD: u64 = 256 * 1024;

/// Default of [`DeltaScanExecutionOptions::parquet_read_ahead_bytes`]: a file of many row
/// groups in an object store or over HTTP is otherwise read one round trip per row group.
/// Local files are never read ahead, whatever the option says: they are read on the
/// decoding thread as it asks, so there is no wait to hide.
pub const DEFAULT_READ_AHEAD_BYTES: u64 = 16 * 1024 * 1024;

/// Default of [`DeltaScanExecutionOptions::max_task_bytes`] (64 MiB).
pub const DEFAULT_MAX_TASK_BYTES: u64 = crate::plan::MAX_TASK_BYTES;

/// Which Parquet reader decodes the data files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ParquetReaderBackend {
    /// This crate's reader (default): `parquet`'s push decoder over the table's store, with
    /// row-group pruning, a row filter, coalesced range reads and prefetch.
    #[default]
    Direct,
    /// `delta_kernel`'s default engine through its synchronous iterator API (native, feature
    /// `kernel`). It does not prefetch: within a partition one admitted file at a time is read,
    /// on a blocking thread that hands batches over one slot; several partitions may read at
    /// once; after cancellation no later file starts. Deletion vectors, transforms and the
    /// predicate are applied as with `Direct`, so the rows are the same.
    DeltaKernel,
}

/// How a scan schedules its reads. Every field has a default (see [`Default`]); invalid values
/// are reported by [`validate`](Self::validate) (and by
/// [`DeltaScanBuilder::build`](crate::api::DeltaScanBuilder::build)) as
/// [`DeltaError::InvalidArgument`].
///
/// A file task holds a scan-wide and a per-partition permit from the moment it is admitted
/// until its file stream finishes or is dropped; a task that cannot get both waits without
/// opening its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeltaScanExecutionOptions {
    /// Partitions to plan for. `None` (default): the machine's parallelism capped by its file
    /// descriptor and memory limits natively, 1 on wasm32. `Some(0)` is invalid; an explicit
    /// value wins over every cap.
    pub target_partitions: Option<usize>,
    /// Files read at once over the whole scan. `None` (default): target partitions ×
    /// `max_concurrent_file_reads_per_partition`. At least 1.
    pub max_concurrent_file_reads: Option<usize>,
    /// Files read at once in one partition (default 16 natively; 6 on wasm32). With prefetch on, files
    /// read whole (see `parquet_full_file_read_threshold_bytes`) are admitted past the
    /// prefetch depth up to this. At least 1.
    pub max_concurrent_file_reads_per_partition: usize,
    /// File streams a partition opens ahead of the one it is emitting, in task order. 0 waits
    /// until the current file is drained before opening the next. Prefetched streams hold
    /// permits, and each holds at most its first batch until its turn. `None` (default): by
    /// the store, [`DEFAULT_PREFETCH_FILES_PER_PARTITION`] (2) for remote stores, 0 for local
    /// files ([`RangeRead::reads_local_files`](crate::io::RangeRead::reads_local_files)).
    pub prefetch_files_per_partition: Option<usize>,
    /// Batches a partition decodes ahead of its consumer (default 4 natively, 1 on wasm32).
    /// At least 1. When the consumer stops polling, the partition stops reading. Natively,
    /// where a partition runs on a task of its own, its batches are handed over in groups of
    /// up to this many, and the task gathers the next group while the last one waits: up to
    /// twice this many batches are held per partition.
    pub batches_ahead_per_partition: usize,
    /// Whole-file tasks of at most this many bytes fetch their file with one request and serve
    /// every range read from memory; `None`: off. Default:
    /// [`DEFAULT_FULL_FILE_READ_THRESHOLD`] (natively 64 KiB, the size of the first footer
    /// read, which already fetches such a file whole; 256 KiB on wasm32, where every request
    /// costs a round trip).
    pub parquet_full_file_read_threshold_bytes: Option<u64>,
    /// When a file's row groups are read whole (no row filter, row selection or limit), the
    /// read of a row group also fetches the same columns of the row groups after it, up to
    /// this many bytes in all (from the first chunk to the last, the gaps between them
    /// included: a remote read fetches gaps under 1 MiB rather than make another request),
    /// in as few requests: one round trip serves several row groups. 0: off. Default:
    /// [`DEFAULT_READ_AHEAD_BYTES`] (16 MiB). Local files are not read ahead. The bytes
    /// fetched ahead are held until their row group decodes: at most this much per open
    /// file, so a scan holds up to partitions × (1 + `prefetch_files_per_partition`) × this.
    /// Over HTTP at 50 ms a request, it took the benchmark's full scan (56 files of 4 row
    /// groups) from 4.3 s to 1.9 s natively.
    pub parquet_read_ahead_bytes: u64,
    /// The Parquet reader [`ParquetReaderBackend::Direct`].
    pub parquet_reader_backend: ParquetReaderBackend,
    /// The largest uncompressed size of one Parquet page a data file may declare
    /// [[`DEFAULT_MAX_PAGE_BYTES`], 256 MiB]. A larger page fails the read with
    /// [`DeltaError::LimitExceeded`] before anything is allocated for it (a page is also
    /// refused when it declares more than its column chunk's total). At least 1. Checked by
    /// the `Direct` backend.
    pub max_page_bytes: u64,
    /// The most bytes of a file one task reads when a scan is spread over partitions (the
    /// native [`DeltaScan::into_stream`](crate::api::DeltaScan::into_stream) and DataFusion's
    /// repartitioning): a larger task is cut into byte ranges of at most this, and a row group
    /// with a page index is then shared by rows, so a partition holds its share of a large
    /// row group rather than all of it. Default [`DEFAULT_MAX_TASK_BYTES`]
    /// (64 MiB): a 300 MB file of one row group read in 160 MiB instead of 350 MiB. At least 1.
    /// Scans on wasm32 read whole files.
    pub max_task_bytes: u64,
}

impl Default for DeltaScanExecutionOptions {
    fn default() -> Self {
        DeltaScanExecutionOptions {
            target_partitions: None,
            max_concurrent_file_reads: None,
            max_concurrent_file_reads_per_partition:
                DEFAULT_MAX_CONCURRENT_FILE_READS_PER_PARTITION,
            prefetch_files_per_partition: None,
            batches_ahead_per_partition: DEFAULT_BATCHES_AHEAD_PER_PARTITION,
            parquet_full_file_read_threshold_bytes: Some(DEFAULT_FULL_FILE_READ_THRESHOLD),
            parquet_read_ahead_bytes: DEFAULT_READ_AHEAD_BYTES,
            parquet_reader_backend: ParquetReaderBackend::Direct,
            max_page_bytes: DEFAULT_MAX_PAGE_BYTES,
            max_task_bytes: DEFAULT_MAX_TASK_BYTES,
        }
    }
}

fn invalid(reason: &str) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: reason.into(),
    }
}

impl DeltaScanExecutionOptions {
    /// Checks every value.
    pub fn validate(&self) -> Result<()> {
        if self.target_partitions == Some(0) {
            return Err(invalid(
                "the target number of partitions must be at least 1",
            ));
        }
        if self.max_concurrent_file_reads == Some(0) {
            return Err(invalid("max_concurrent_file_reads must be at least 1"));
        }
        if self.max_concurrent_file_reads_per_partition == 0 {
            return Err(invalid(
                "max_concurrent_file_reads_per_partition must be at least 1",
            ));
        }
        if self.batches_ahead_per_partition == 0 {
            return Err(invalid("batches_ahead_per_partition must be at least 1"));
        }
        if self.max_page_bytes == 0 {
            return Err(invalid("max_page_bytes must be at least 1"));
        }
        if self.max_task_bytes == 0 {
            return Err(invalid("max_task_bytes must be at least 1"));
        }
        if self.parquet_reader_backend == ParquetReaderBackend::DeltaKernel
            && !cfg!(all(feature = "kernel", not(target_arch = "wasm32")))
        {
            return Err(invalid(
                "the DeltaKernel Parquet backend needs the `kernel` feature (native only)",
            ));
        }
        Ok(())
    }

    /// The options as the scheduler applies them: the DeltaKernel backend reads one file at a
    /// time per partition and does not prefetch.
    pub(crate) fn effective(&self) -> Self {
        match self.parquet_reader_backend {
            ParquetReaderBackend::Direct => self.clone(),
            ParquetReaderBackend::DeltaKernel => DeltaScanExecutionOptions {
                max_concurrent_file_reads_per_partition: 1,
                prefetch_files_per_partition: Some(0),
                ..self.clone()
            },
        }
    }

    /// The prefetch depth on a store that reads local files or not (`local_files`): the one
    /// given, else decided by the store (see
    /// [`prefetch_files_per_partition`](Self::prefetch_files_per_partition)).
    pub(crate) fn prefetch_files(&self, local_files: bool) -> usize {
        self.prefetch_files_per_partition.unwrap_or(if local_files {
            0
        } else {
            DEFAULT_PREFETCH_FILES_PER_PARTITION
        })
    }

    /// The read-ahead budget on a store that reads local files or not (`local_files`): none
    /// for local files, which are read on the decoding thread as it asks (there is no wait
    /// to hide), else [`parquet_read_ahead_bytes`](Self::parquet_read_ahead_bytes).
    pub(crate) fn read_ahead(&self, local_files: bool) -> u64 {
        if local_files {
            0
        } else {
            self.parquet_read_ahead_bytes
        }
    }

    /// The scan-wide limit of file reads for a scan planned for `target` partitions.
    pub fn scan_wide_file_reads(&self, target: usize) -> usize {
        self.max_concurrent_file_reads.unwrap_or_else(|| {
            target
                .max(1)
                .saturating_mul(self.max_concurrent_file_reads_per_partition.max(1))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_zeros_are_not() {
        let d = DeltaScanExecutionOptions::default();
        assert!(d.validate().is_ok());
        assert_eq!(d.scan_wide_file_reads(4), 64);
        let bad = [
            DeltaScanExecutionOptions {
                target_partitions: Some(0),
                ..d.clone()
            },
            DeltaScanExecutionOptions {
                max_concurrent_file_reads: Some(0),
                ..d.clone()
            },
            DeltaScanExecutionOptions {
                max_concurrent_file_reads_per_partition: 0,
                ..d.clone()
            },
            DeltaScanExecutionOptions {
                batches_ahead_per_partition: 0,
                ..d.clone()
            },
            DeltaScanExecutionOptions {
                max_page_bytes: 0,
                ..d.clone()
            },
            DeltaScanExecutionOptions {
                max_task_bytes: 0,
                ..d.clone()
            },
        ];
        for o in bad {
            assert_eq!(
                o.validate().err().map(|e| e.code()),
                Some("invalid_argument")
            );
        }
    }

    #[test]
    fn prefetch_is_decided_by_the_store_unless_given() {
        let d = DeltaScanExecutionOptions::default();
        assert_eq!(d.prefetch_files_per_partition, None);
        assert_eq!(d.effective().prefetch_files(true), 0);
        assert_eq!(
            d.effective().prefetch_files(false),
            DEFAULT_PREFETCH_FILES_PER_PARTITION
        );
        let given = DeltaScanExecutionOptions {
            prefetch_files_per_partition: Some(3),
            ..d.clone()
        };
        assert_eq!(given.effective().prefetch_files(true), 3);
        assert_eq!(given.effective().prefetch_files(false), 3);
        let kernel = DeltaScanExecutionOptions {
            parquet_reader_backend: ParquetReaderBackend::DeltaKernel,
            ..given
        };
        assert_eq!(kernel.effective().prefetch_files(false), 0);
        assert_eq!(
            kernel.effective().max_concurrent_file_reads_per_partition,
            1
        );
    }
}
