//! The public API: [`DeltaTableBuilder`] opens a table into a [`DeltaTable`] snapshot.

mod batch_stream;
mod builder;
#[cfg(not(target_arch = "wasm32"))]
mod caps;
#[cfg(not(target_arch = "wasm32"))] // not in the npm package (the browser module is at its budget)
mod changes;
#[cfg(not(target_arch = "wasm32"))]
mod decode_commits;
mod history;
#[cfg(not(target_arch = "wasm32"))]
mod kept_log;
mod load;
mod options;
mod scan;
mod skipped;
#[cfg(not(target_arch = "wasm32"))]
mod spawn;
mod table;

pub use crate::plan::FileSelection;
pub use crate::plan::SkipReason;
pub use batch_stream::DeltaBatchStream;
pub use builder::{parse_timestamp, DeltaTableBuilder};
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use caps::machine_caps;
#[cfg(not(target_arch = "wasm32"))]
pub use changes::{TableChangeFile, TableChanges, TableChangesBuilder};
#[cfg(not(target_arch = "wasm32"))]
pub use kept_log::KEPT_LOG_BYTES;
pub use load::DEFAULT_LOG_CONCURRENCY;
pub use options::{
    DeltaScanExecutionOptions, ParquetReaderBackend, DEFAULT_BATCHES_AHEAD_PER_PARTITION,
    DEFAULT_FULL_FILE_READ_THRESHOLD, DEFAULT_MAX_CONCURRENT_FILE_READS_PER_PARTITION,
    DEFAULT_MAX_TASK_BYTES, DEFAULT_PREFETCH_FILES_PER_PARTITION, DEFAULT_READ_AHEAD_BYTES,
};
#[cfg(feature = "distributed")]
pub(crate) use scan::ScanParts;
pub use scan::{
    DeltaScan, DeltaScanBuilder, DEFAULT_BATCH_SIZE, ORDERED_AHEAD_BYTES, ORDERED_AHEAD_BYTES_ALL,
    ORDERED_BATCHES_AHEAD, ORDERED_TASK_BYTES,
};
pub use skipped::{SkippedFile, SkippedFiles};
#[cfg(feature = "distributed")]
pub(crate) use table::SnapshotFacts;
pub use table::{DeltaTable, LoadInfo};

pub use crate::schema::{BinaryType, OutputTypes, StringType};
