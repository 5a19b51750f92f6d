//! [`DeltaScanBuilder`]: a scan's options, checked and planned into a [`DeltaScan`] at
//! build (the files the predicate may match, their tasks, the partitions).

use std::sync::Arc;

use super::{DeltaScan, DEFAULT_BATCH_SIZE};
use crate::api::options::DeltaScanExecutionOptions;
use crate::api::skipped::SkippedFiles;
use crate::api::table::DeltaTable;
use crate::error::{DeltaError, Result};
use crate::plan::{
    group_whole_files, plan_columns, plan_tasks, select_files, target_partitions, PartitionCaps,
    ScanRequest, TableFacts,
};
use crate::predicate::{bind, parse_filter, Expr};
use crate::read::metrics::DeltaScanMetrics;
use crate::schema::OutputTypes;

/// Configures a scan of one snapshot.
#[derive(Debug, Clone)]
pub struct DeltaScanBuilder {
    table: DeltaTable,
    projection: Option<Vec<String>>,
    predicate: Option<Expr>,
    filter_text: Option<String>,
    limit: Option<usize>,
    batch_size: usize,
    execution: DeltaScanExecutionOptions,
    output_types: OutputTypes,
}

impl DeltaScanBuilder {
    pub(crate) fn new(table: DeltaTable) -> Self {
        DeltaScanBuilder {
            table,
            projection: None,
            predicate: None,
            filter_text: None,
            limit: None,
            batch_size: DEFAULT_BATCH_SIZE,
            execution: DeltaScanExecutionOptions::default(),
            output_types: OutputTypes::scan_default(),
        }
    }

    /// The Arrow types strings and binaries come out as (see [`OutputTypes`]), decoded so by
    /// the Parquet reader, at every depth and in partition columns too. The default is
    /// [`OutputTypes::scan_default`].
    pub fn with_output_types(mut self, types: OutputTypes) -> Self {
        self.output_types = types;
        self
    }

    /// Output only these columns (top-level logical names), in this order.
    pub fn with_projection<S: Into<String>>(
        mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.projection = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Only rows for which `predicate` is true (SQL semantics: null is not true). Files that
    /// cannot hold such rows are skipped using partition values and statistics.
    pub fn with_predicate(mut self, predicate: Expr) -> Self {
        self.predicate = Some(predicate);
        self
    }

    /// Like [`with_predicate`](Self::with_predicate), from the text syntax, e.g.
    /// `country = 'NL' and amount >= 10.5 and day between '2024-01-01' and '2024-01-31'`.
    /// The text is parsed by [`build`](Self::build), which reports syntax errors.
    pub fn with_filter(mut self, filter: impl Into<String>) -> Self {
        self.filter_text = Some(filter.into());
        self
    }

    /// Stop after `n` rows.
    pub fn with_limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Rows per output batch (at most).
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n;
        self
    }

    /// How the scan schedules its reads (replaces earlier execution options, including a
    /// target set with [`with_target_partitions`](Self::with_target_partitions)).
    pub fn with_execution_options(mut self, options: DeltaScanExecutionOptions) -> Self {
        self.execution = options;
        self
    }

    /// Plan for `n` partitions, whatever the machine's caps (0 is an error at build).
    pub fn with_target_partitions(mut self, n: usize) -> Self {
        self.execution.target_partitions = Some(n);
        self
    }

    /// Plans the scan: checks the options, gets the active files (held by an eagerly loaded
    /// table; replayed from the log for a lazy one), selects those the predicate may match and
    /// groups their tasks into partitions. Bad options fail before any read.
    pub async fn build(self) -> Result<DeltaScan> {
        if self.batch_size == 0 {
            return Err(DeltaError::InvalidArgument {
                reason: "the batch size must be at least 1".into(),
            });
        }
        self.execution.validate()?;
        let target = target_partitions(self.execution.target_partitions, &default_caps())?;
        let table = &self.table;
        let facts = TableFacts {
            root: table.location().url(),
            schema: table.delta_schema(),
            partition_columns: table.partition_columns(),
            mode: table.column_mapping_mode(),
        };
        let predicate_source = match (&self.predicate, &self.filter_text) {
            (Some(_), Some(_)) => {
                return Err(DeltaError::InvalidArgument {
                    reason: "give either a predicate or a filter text, not both".into(),
                })
            }
            (Some(e), None) => Some(e.clone()),
            (None, Some(text)) => Some(parse_filter(text)?),
            (None, None) => None,
        };
        let predicate = predicate_source
            .as_ref()
            .map(|e| bind(e, facts.schema))
            .transpose()?;
        let predicate_columns = predicate
            .as_ref()
            .map(|p| {
                p.columns()
                    .into_iter()
                    .filter_map(|path| path.into_iter().next())
                    .collect()
            })
            .unwrap_or_default();
        let request = ScanRequest {
            projection: self.projection.clone(),
            predicate_columns,
            output_types: self.output_types,
        };
        let columns = plan_columns(facts, &request)?;
        // I/O is counted from here, so a lazy table's log replay shows in the scan's requests.
        let metrics = Arc::new(DeltaScanMetrics::new(table.io_counters()));
        metrics.start_io();
        let active = table.scan_files().await?;
        let selected = select_files(facts, &active.files, predicate.as_ref())?;
        let selection = selected.counts;
        let skipped = SkippedFiles::new(Arc::clone(&active.files), selected.skipped);
        // A limit of 0 reads nothing: no file, no task.
        let selected = if self.limit == Some(0) {
            Vec::new()
        } else {
            selected.files
        };
        let files: Vec<crate::log::Add> = selected.iter().map(|f| f.add.clone()).collect();
        let tasks = plan_tasks(facts, selected, self.limit)?;
        let sizes: Vec<Option<u64>> = tasks.iter().map(|t| Some(t.size)).collect();
        let partitions = group_whole_files(&sizes, target);
        metrics.record_plan(
            partitions.len(),
            tasks.len(),
            &selection,
            active.log_files_read,
        );
        Ok(DeltaScan {
            table: self.table.clone(),
            columns,
            tasks,
            files: Arc::new(files),
            partitions,
            target,
            selection,
            skipped,
            request,
            predicate_source: predicate_source.map(Arc::new),
            predicate: predicate.map(Arc::new),
            limit: self.limit,
            batch_size: self.batch_size,
            execution: self.execution,
            output_types: self.output_types,
            metrics,
            admit_check: None,
        })
    }
}

/// The machine's caps natively; on wasm32 nothing is known (one partition).
#[cfg(not(target_arch = "wasm32"))]
fn default_caps() -> PartitionCaps {
    crate::api::machine_caps()
}

/// The machine's caps natively; on wasm32 nothing is known (one partition).
#[cfg(target_arch = "wasm32")]
fn default_caps() -> PartitionCaps {
    PartitionCaps::default()
}

impl DeltaTable {
    /// Starts configuring a scan of this snapshot.
    pub fn scan(&self) -> DeltaScanBuilder {
        DeltaScanBuilder::new(self.clone())
    }
}
