//! A planned scan taken apart without its table ([`ScanParts`]), and built again from its
//! parts over a snapshot of the same table in another process.

use std::sync::Arc;

use super::DeltaScan;
use crate::api::options::DeltaScanExecutionOptions;
use crate::api::skipped::SkippedFiles;
use crate::api::table::DeltaTable;
use crate::error::{DeltaError, Result};
use crate::plan::FileTask;
use crate::plan::{plan_columns, FileSelection, ScanRequest, TableFacts};
use crate::predicate::{bind, Expr};
use crate::read::metrics::DeltaScanMetrics;

/// A planned scan taken apart, without its table: what another process needs, with a
/// snapshot of the same table, to build the same scan again ([`DeltaScan::to_parts`],
/// [`DeltaScan::from_parts`]). Metrics and the admit check are not parts: a scan built from
/// parts has fresh metrics and no check.
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
#[derive(Debug, Clone)]
pub(crate) struct ScanParts {
    pub(crate) request: ScanRequest,
    pub(crate) predicate: Option<Expr>,
    pub(crate) tasks: Vec<FileTask>,
    pub(crate) partitions: Vec<Vec<usize>>,
    pub(crate) target: usize,
    pub(crate) selection: FileSelection,
    pub(crate) limit: Option<usize>,
    pub(crate) batch_size: usize,
    pub(crate) execution: DeltaScanExecutionOptions,
}

#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
impl DeltaScan {
    /// The scan's parts (see [`ScanParts`]).
    pub(crate) fn to_parts(&self) -> ScanParts {
        ScanParts {
            request: self.request.clone(),
            predicate: self.predicate_source.as_deref().cloned(),
            tasks: self.tasks.clone(),
            partitions: self.partitions.clone(),
            target: self.target,
            selection: self.selection,
            limit: self.limit,
            batch_size: self.batch_size,
            execution: self.execution.clone(),
        }
    }

    /// The scan `parts` describe, over `table` (a snapshot of the table they were taken
    /// from): the columns are planned and the predicate bound again, so parts naming a column
    /// the table lacks fail here; every partition must list task indexes in range, each task
    /// once.
    pub(crate) fn from_parts(table: DeltaTable, parts: ScanParts) -> Result<DeltaScan> {
        let invalid = |reason: String| DeltaError::InvalidArgument { reason };
        if parts.batch_size == 0 || parts.target == 0 {
            return Err(invalid(
                "a scan needs a batch size and a partition target of at least 1".into(),
            ));
        }
        parts.execution.validate()?;
        let mut seen = vec![false; parts.tasks.len()];
        for &i in parts.partitions.iter().flatten() {
            match seen.get_mut(i) {
                Some(s) if !*s => *s = true,
                Some(_) => return Err(invalid(format!("file task {i} is in two partitions"))),
                None => {
                    return Err(invalid(format!(
                        "a partition names file task {i} of {}",
                        parts.tasks.len()
                    )))
                }
            }
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            return Err(invalid(format!("file task {i} is in no partition")));
        }
        let facts = TableFacts {
            root: table.location().url(),
            schema: table.delta_schema(),
            partition_columns: table.partition_columns(),
            mode: table.column_mapping_mode(),
        };
        let columns = plan_columns(facts, &parts.request)?;
        let predicate = parts
            .predicate
            .as_ref()
            .map(|e| bind(e, facts.schema))
            .transpose()?;
        let metrics = Arc::new(DeltaScanMetrics::new(table.io_counters()));
        metrics.start_io();
        metrics.record_plan(
            parts.partitions.len(),
            parts.tasks.len(),
            &parts.selection,
            0,
        );
        Ok(DeltaScan {
            table,
            columns,
            tasks: parts.tasks,
            files: Arc::new(Vec::new()),
            partitions: parts.partitions,
            target: parts.target,
            selection: parts.selection,
            skipped: SkippedFiles::default(),
            output_types: parts.request.output_types,
            request: parts.request,
            predicate_source: parts.predicate.map(Arc::new),
            predicate: predicate.map(Arc::new),
            limit: parts.limit,
            batch_size: parts.batch_size,
            execution: parts.execution,
            metrics,
            admit_check: None,
        })
    }
}
