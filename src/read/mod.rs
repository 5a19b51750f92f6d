//! Reading data files: Parquet over a `RangeRead`, deletion vectors, and the transform from
//! physical file columns to the table's logical schema, and the scheduler that runs the file
//! reads of a partition (permits, prefetch, bounded output, cancellation).

mod coalesce;
mod decode_types;
pub mod deletion_vector;
mod file;
mod footer;
#[cfg(all(feature = "kernel", not(target_arch = "wasm32")))]
mod kernel_backend;
pub mod metrics;
mod progress;
mod ranges;
mod row_filter;
mod row_group_reads;
mod row_groups;
pub mod scheduler;
mod transform;

pub use file::{ReadContext, RowPredicate};
