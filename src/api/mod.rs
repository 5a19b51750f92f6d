//! The public API: [`DeltaTableBuilder`] opens a table into a [`DeltaTable`] snapshot.

mod builder;
mod load;
mod scan;
mod table;

pub use builder::{parse_timestamp, DeltaTableBuilder};
pub use load::{load_log, MAX_CONCURRENT_REQUESTS};
pub use scan::{DeltaBatchStream, DeltaScan, DeltaScanBuilder, FileSelection, DEFAULT_BATCH_SIZE};
pub use table::{DeltaTable, LoadInfo};
