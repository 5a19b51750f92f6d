//! The DataFusion adapter (feature `datafusion`, native only): Delta tables as DataFusion
//! tables.
//!
//! [`register_table`] (or [`DeltaTableProvider`] with `SessionContext::register_table`) makes
//! a [`DeltaTable`](crate::DeltaTable) queryable with SQL. A query's scan becomes one
//! [`DeltaScan`](crate::api::DeltaScan):
//!
//! - filters DataFusion pushes down are converted to the reader's predicate where possible
//!   (`filters`): `Exact` when the reader evaluates them exactly on every row, `Inexact` when
//!   only a weaker form (used for skipping and filtering, DataFusion filters again) converts;
//!   a filter handed to the scan that does not convert exactly when the scan is planned
//!   (DataFusion rewrites filters after asking about them) is applied above the scan
//!   (`provider`), so that no filter is lost;
//! - projection and limit go to the scan; one DataFusion partition per scan partition
//!   (`exec`), planned for [`ScanOptions::target_partitions`] or the machine's caps capped by
//!   the session's `target_partitions` (`options`);
//! - when DataFusion asks for more partitions (`repartition_file_scans`), whole-file groups
//!   become byte ranges of files (`exec`, [`IntraFileRepartitioning`]);
//! - dynamic filters (from a hash join's build side or a TopK) skip file tasks whose
//!   partition values prove no row can match, just before each task is admitted (`dynamic`);
//! - statistics come from the log's file statistics (`statistics`);
//! - strings and binaries are read as DataFusion reads Parquet: views, unless the session
//!   turns `schema_force_view_types` off or [`ScanOptions::output_types`] says otherwise.

mod dynamic;
mod exec;
mod filters;
mod options;
mod provider;
mod statistics;

pub use dynamic::partition_values_may_match;
pub use exec::DeltaScanExec;
pub use filters::{classify_filter, to_delta_predicate};
pub use options::{
    scan_output_types, scan_target_partitions, IntraFileRepartitioning, ScanOptions,
};
pub use provider::{register_table, DeltaTableProvider};

use datafusion::error::DataFusionError;

use crate::error::DeltaError;

/// A reader error as a DataFusion error (kept as the source, so callers can downcast it).
pub(crate) fn to_df_error(e: DeltaError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
