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

/// The reader's own error inside a DataFusion error (through contexts, diagnostics, shared and
/// Arrow-wrapped errors), taken out whole so its kind survives; the DataFusion error as it was
/// when it holds none.
pub fn into_delta_error(e: DataFusionError) -> Result<DeltaError, DataFusionError> {
    use std::sync::Arc;
    match e {
        DataFusionError::External(inner) => inner
            .downcast::<DeltaError>()
            .map(|d| *d)
            .map_err(DataFusionError::External),
        DataFusionError::Context(what, inner) => {
            into_delta_error(*inner).map_err(|e| DataFusionError::Context(what, Box::new(e)))
        }
        DataFusionError::Diagnostic(diagnostic, inner) => into_delta_error(*inner)
            .map_err(|e| DataFusionError::Diagnostic(diagnostic, Box::new(e))),
        DataFusionError::Shared(shared) => match Arc::try_unwrap(shared) {
            Ok(inner) => into_delta_error(inner),
            // Still held by others (the other outputs of a repartition): copied out.
            Err(shared) => match shared_delta_error(&shared) {
                Some(found) => Ok(found.copied()),
                None => Err(DataFusionError::Shared(shared)),
            },
        },
        DataFusionError::ArrowError(arrow, context) => match *arrow {
            arrow_schema::ArrowError::ExternalError(inner) => {
                inner.downcast::<DeltaError>().map(|d| *d).map_err(|inner| {
                    DataFusionError::ArrowError(
                        Box::new(arrow_schema::ArrowError::ExternalError(inner)),
                        context,
                    )
                })
            }
            other => Err(DataFusionError::ArrowError(Box::new(other), context)),
        },
        other => Err(other),
    }
}

/// The reader's error inside `e`, found by reference through the wrappers
/// [`into_delta_error`] takes apart.
fn shared_delta_error(e: &DataFusionError) -> Option<&DeltaError> {
    fn external<'a>(
        inner: &'a (dyn std::error::Error + Send + Sync + 'static),
    ) -> Option<&'a DeltaError> {
        inner.downcast_ref::<DeltaError>().or_else(|| {
            inner
                .downcast_ref::<DataFusionError>()
                .and_then(shared_delta_error)
        })
    }
    match e {
        DataFusionError::External(inner) => external(inner.as_ref()),
        DataFusionError::Context(_, inner) | DataFusionError::Diagnostic(_, inner) => {
            shared_delta_error(inner)
        }
        DataFusionError::Shared(shared) => shared_delta_error(shared),
        DataFusionError::ArrowError(arrow, _) => match arrow.as_ref() {
            arrow_schema::ArrowError::ExternalError(inner) => external(inner.as_ref()),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readers_error_comes_out_of_a_datafusion_error_with_its_kind() {
        let not_found = || DeltaError::NotFound {
            path: "part-0.parquet".into(),
            phase: crate::error::Phase::Read,
        };
        let wrapped = [
            to_df_error(not_found()),
            DataFusionError::Context("scan".into(), Box::new(to_df_error(not_found()))),
            DataFusionError::Shared(std::sync::Arc::new(to_df_error(not_found()))),
            DataFusionError::ArrowError(
                Box::new(arrow_schema::ArrowError::ExternalError(Box::new(
                    not_found(),
                ))),
                None,
            ),
        ];
        for e in wrapped {
            let got = into_delta_error(e).map(|d| d.code());
            assert_eq!(got.ok(), Some("not_found"));
        }
        let plain = DataFusionError::Plan("no such column".into());
        assert!(into_delta_error(plain).is_err());
    }

    #[test]
    fn an_error_shared_by_several_outputs_is_copied_out_with_its_kind() {
        // A repartition hands one error to each of its outputs, each holding the Arc.
        let shared = std::sync::Arc::new(to_df_error(DeltaError::NotFound {
            path: "part-0.parquet".into(),
            phase: crate::error::Phase::Read,
        }));
        let _other_output = std::sync::Arc::clone(&shared);
        let got = into_delta_error(DataFusionError::Shared(shared));
        let text = got.as_ref().map(ToString::to_string).ok();
        assert_eq!(got.map(|d| d.code()).ok(), Some("not_found"));
        assert_eq!(text.as_deref(), Some("not found: part-0.parquet"));
        let parquet = DeltaError::Parquet {
            path: "part-1.parquet".into(),
            phase: crate::error::Phase::Read,
            source: parquet::errors::ParquetError::General("bad page".into()),
        };
        let copied = parquet.copied();
        assert_eq!(copied.code(), "parquet");
        assert_eq!(copied.to_string(), parquet.to_string());
    }
}
