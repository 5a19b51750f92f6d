//! Reading data files: Parquet over a `RangeRead`, deletion vectors, and the transform from
//! physical file columns to the table's logical schema, and the scheduler that runs the file
//! reads of a partition (permits, prefetch, bounded output, cancellation).

mod changed_rows;
mod coalesce;
mod constant;
mod decode_types;
mod decoder;
pub mod deletion_vector;
mod file;
mod file_fields;
mod file_plan;
mod footer;
mod kept_tail;
pub mod metrics;
// Native only: the statistics of each page (arrow-rs's data-page converters, generic over
// every type) cost the browser module 9 KB of its 1.2 MB budget.
#[cfg(not(target_arch = "wasm32"))]
mod page_pruning;
mod progress;
mod ranges;
mod read_ahead;
mod row_filter;
mod row_group_reads;
mod row_groups;
pub mod scheduler;
mod transform;

pub use decoder::{DirectDecoder, FileDecoder};
#[cfg(not(target_arch = "wasm32"))] // the change data feed's reads
pub(crate) use file::read_file_with_metrics;
pub use file::ReadContext;
pub use file_plan::ReadSpec;

// What the delta_kernel decoder (src/kernel) shares with ours.
#[cfg(all(feature = "kernel", not(target_arch = "wasm32")))]
pub(crate) use {
    deletion_vector::DeletionVector,
    file::{int96_as_micros, load_deletion_vector, BatchFinish, RowLimit},
    file_plan::{row_group_rows, FileOutput},
    footer::{read_metadata, FOOTER_HINT, MIN_PARQUET_SIZE},
    kept_tail::held_range,
    ranges::{deleted_rows_owned, owned_rows},
    row_group_reads::PageCheck,
    transform::{projected_file_schema, require_field_ids, FileTransform},
};
