//! Reading data files: Parquet over a `RangeRead`, deletion vectors, and the transform from
//! physical file columns to the table's logical schema.

mod coalesce;
pub mod deletion_vector;
mod file;
mod footer;
mod row_filter;
mod row_groups;
mod transform;

pub use file::{read_file, FileTask, ReadContext, RowPredicate};
pub use footer::{read_metadata, FOOTER_HINT};
pub use transform::{physical_name, FileTransform, ReadColumn};
