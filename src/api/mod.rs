//! The public API: [`DeltaTableBuilder`] opens a table into a [`DeltaTable`] snapshot.

mod builder;
#[cfg(not(target_arch = "wasm32"))]
mod caps;
mod load;
mod scan;
mod table;

pub use builder::{parse_timestamp, DeltaTableBuilder};
#[cfg(not(target_arch = "wasm32"))]
pub use caps::machine_caps;
pub use load::{load_log, MAX_CONCURRENT_REQUESTS};
pub use scan::{DeltaBatchStream, DeltaScan, DeltaScanBuilder, FileSelection, DEFAULT_BATCH_SIZE};
pub use table::{DeltaTable, LoadInfo};
