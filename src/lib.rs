//! Delta Arrow Reader: read Delta Lake tables into Apache Arrow record batches.
//!
//! One core serves native Rust programs (on Tokio), the `dar` command line tool, and the
//! WebAssembly build for browsers and Node.js. Data flows one way:
//!
//! ```text
//! io (RangeRead) ─► log (sans-io replay ─► Snapshot) ─► plan ─► read ─► front ends
//! ```
//!
//! `log`, `schema` and the planning code do no I/O and never await: they are state machines
//! and functions fed with bytes, driven by a thin async driver over an
//! [`io::RangeRead`] store.

// The layers; in data-path order error, io, schema, log, predicate, plan, read, kernel, api,
// then the front ends (tests/architecture.rs enforces the edges between them).
mod api;
#[cfg(all(feature = "datafusion", not(target_arch = "wasm32")))]
pub mod datafusion;
#[cfg(all(feature = "distributed", not(target_arch = "wasm32")))]
pub mod distributed;
mod error;
pub mod io;
#[cfg(all(feature = "kernel", not(target_arch = "wasm32")))]
mod kernel;
pub mod limits;
pub mod log;
mod plan;
pub mod predicate;
mod read;
pub mod schema;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

// Tools beside the reader: tables written for tests and the demo, and the static file server.
#[cfg(any(test, feature = "fixture"))]
pub mod fixture;
#[cfg(all(feature = "serve", not(target_arch = "wasm32")))]
pub mod serve;
// Entry points of the fuzz targets in fuzz/ (not part of the reader's API); the unit tests
// replay every saved finding through them.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;

#[cfg(not(target_arch = "wasm32"))]
pub use api::KEPT_LOG_BYTES;
pub use api::{
    parse_timestamp, BinaryType, DeltaBatchStream, DeltaScan, DeltaScanBuilder,
    DeltaScanExecutionOptions, DeltaTable, DeltaTableBuilder, FileSelection, LoadInfo, OutputTypes,
    ParquetReaderBackend, SkipReason, SkippedFile, SkippedFiles, StringType,
    DEFAULT_BATCHES_AHEAD_PER_PARTITION, DEFAULT_BATCH_SIZE, DEFAULT_FULL_FILE_READ_THRESHOLD,
    DEFAULT_LOG_CONCURRENCY, DEFAULT_MAX_CONCURRENT_FILE_READS_PER_PARTITION,
    DEFAULT_MAX_TASK_BYTES, DEFAULT_PREFETCH_FILES_PER_PARTITION, DEFAULT_READ_AHEAD_BYTES,
    ORDERED_AHEAD_BYTES, ORDERED_AHEAD_BYTES_ALL, ORDERED_BATCHES_AHEAD, ORDERED_TASK_BYTES,
};
#[cfg(not(target_arch = "wasm32"))]
pub use api::{TableChangeFile, TableChanges, TableChangesBuilder};
pub use error::{DeltaError, Phase, Result};
pub use plan::{ColumnProfile, DeletionVectorChange, FileTask, TableProfile};
pub use read::metrics::{DeltaScanMetrics, ScanIo, ScanMetricsSnapshot};

/// Deletion vectors decoded on their own (a scan applies them by itself): where a
/// descriptor's bitmap lives, and the deleted row positions it holds.
pub mod deletion_vector {
    pub use crate::read::deletion_vector::{
        decode_file_range, decode_inline, dv_source, DeletionVector, DvSource,
    };
}
