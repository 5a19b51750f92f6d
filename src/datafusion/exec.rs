//! [`DeltaScanExec`]: a planned [`DeltaScan`] as a DataFusion leaf plan, one DataFusion
//! partition per scan partition.
//!
//! Executing partition `p` starts the scan (all of its partition streams at once, since they
//! share the scan-wide read permits and the row limit) and hands out stream `p`; the other
//! partitions take theirs when DataFusion executes them. Executing a partition a second time
//! starts a fresh run of the same plan.
//!
//! - Repartitioning ([`ExecutionPlan::repartitioned`]): with `repartition_file_scans` on and
//!   at least `repartition_file_min_size` bytes to read, the whole-file groups become byte
//!   ranges of about `ceil(total bytes / target)` each — with
//!   [`IntraFileRepartitioning::WhenBelowTarget`] only when there are fewer groups than the
//!   scan's target, with [`IntraFileRepartitioning::Always`] always.
//! - Filters DataFusion pushes into the plan (dynamic filters of hash joins and TopK, and
//!   others) are kept for dynamic partition pruning (see `dynamic`) and reported as not
//!   applied, so DataFusion still applies them where it needs to.

use std::fmt;
use std::sync::{Arc, Mutex};

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{internal_datafusion_err, Statistics};
use datafusion::config::ConfigOptions;
use datafusion::error::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::filter_pushdown::{
    ChildPushdownResult, FilterPushdownPhase, FilterPushdownPropagation, PushedDown,
};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures::StreamExt;

use super::dynamic::admit_check;
use super::options::IntraFileRepartitioning;
use super::to_df_error;
use crate::api::{DeltaBatchStream, DeltaScan};
use crate::read::metrics::DeltaScanMetrics;

/// A Delta scan in a DataFusion plan.
pub struct DeltaScanExec {
    scan: DeltaScan,
    /// The plan's output schema: the scan's, or no columns for an empty projection (the scan
    /// then reads one column for the row counts).
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    statistics: Arc<Statistics>,
    repartitioning: IntraFileRepartitioning,
    /// Filters DataFusion pushed into the plan, read before each file task is admitted.
    filters: Vec<Arc<dyn PhysicalExpr>>,
    /// The partition streams of the current run, each taken by its `execute`.
    started: Mutex<Vec<Option<DeltaBatchStream>>>,
}

impl fmt::Debug for DeltaScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaScanExec")
            .field("schema", &self.schema)
            .field("partitions", &self.scan.partitions())
            .field("filters", &self.filters.len())
            .finish_non_exhaustive()
    }
}

impl DeltaScanExec {
    /// A plan reading `scan`, with output `schema` (the scan's, or an empty schema when no
    /// column is needed) and `statistics`.
    pub fn new(
        scan: DeltaScan,
        schema: SchemaRef,
        statistics: Statistics,
        repartitioning: IntraFileRepartitioning,
    ) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(scan.partitions().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        DeltaScanExec {
            scan,
            schema,
            properties,
            statistics: Arc::new(statistics),
            repartitioning,
            filters: Vec::new(),
            started: Mutex::new(Vec::new()),
        }
    }

    /// The planned scan.
    pub fn scan(&self) -> &DeltaScan {
        &self.scan
    }

    /// The scan's metrics (shared by every run of this plan).
    pub fn scan_metrics(&self) -> Arc<DeltaScanMetrics> {
        self.scan.metrics()
    }

    /// The filters pushed into this plan for dynamic partition pruning.
    pub fn pushed_filters(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.filters
    }

    fn with_scan(&self, scan: DeltaScan) -> Self {
        let mut exec = DeltaScanExec::new(
            scan,
            Arc::clone(&self.schema),
            self.statistics.as_ref().clone(),
            self.repartitioning,
        );
        exec.filters = self.filters.clone();
        exec
    }

    /// Stream `partition` of the current run, starting a run when it was taken already.
    fn take_stream(&self, partition: usize) -> Result<Option<DeltaBatchStream>> {
        if partition >= self.scan.partitions() {
            return Ok(None);
        }
        let mut started = self
            .started
            .lock()
            .map_err(|_| internal_datafusion_err!("a DeltaScanExec lock was poisoned"))?;
        if started.get(partition).is_none_or(Option::is_none) {
            let mut scan = self.scan.clone();
            if !self.filters.is_empty() {
                scan = scan
                    .with_admit_check(admit_check(self.filters.clone(), Arc::clone(&self.schema)));
            }
            *started = scan
                .into_partition_streams()
                .into_iter()
                .map(Some)
                .collect();
        }
        Ok(started.get_mut(partition).and_then(Option::take))
    }
}

impl DisplayAs for DeltaScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ranged = self
            .scan
            .tasks()
            .iter()
            .filter(|t| t.range.is_some())
            .count();
        write!(
            f,
            "DeltaScanExec: partitions={}, files={}, ranged_tasks={}, dynamic_filters={}",
            self.scan.partitions(),
            self.scan.files().len(),
            ranged,
            self.filters.len()
        )
    }
}

impl ExecutionPlan for DeltaScanExec {
    fn name(&self) -> &str {
        "DeltaScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        for filter in &self.filters {
            if f(filter)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(internal_datafusion_err!("DeltaScanExec has no children"))
        }
    }

    fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(self.with_scan(self.scan.clone())))
    }

    fn repartitioned(
        &self,
        _target_partitions: usize,
        config: &ConfigOptions,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let o = &config.optimizer;
        let tasks = self.scan.tasks();
        let total: u64 = tasks.iter().map(|t| t.size).sum();
        let target = self.scan.target_partitions();
        let below = self.scan.partitions() < target;
        if !o.repartition_file_scans
            || total == 0
            || total < o.repartition_file_min_size as u64
            || tasks.iter().any(|t| t.range.is_some())
            || (self.repartitioning == IntraFileRepartitioning::WhenBelowTarget && !below)
        {
            return Ok(None);
        }
        let scan = self.scan.clone().split_into_byte_ranges(target);
        Ok(Some(Arc::new(self.with_scan(scan))))
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let schema = Arc::clone(&self.schema);
        let Some(stream) = self.take_stream(partition)? else {
            let empty = futures::stream::empty();
            return Ok(Box::pin(RecordBatchStreamAdapter::new(schema, empty)));
        };
        let counts_only = schema.fields().is_empty();
        let out_schema = Arc::clone(&schema);
        let batches = stream.map(move |item| {
            let batch = item.map_err(to_df_error)?;
            if !counts_only {
                return Ok(batch);
            }
            let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
            Ok(RecordBatch::try_new_with_options(
                Arc::clone(&out_schema),
                Vec::new(),
                &options,
            )?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        Ok(match args.partition() {
            None => Arc::clone(&self.statistics),
            Some(_) => Arc::new(Statistics::new_unknown(&self.schema)),
        })
    }

    fn handle_child_pushdown_result(
        &self,
        _phase: FilterPushdownPhase,
        child_pushdown_result: ChildPushdownResult,
        _config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn ExecutionPlan>>> {
        let pushed: Vec<Arc<dyn PhysicalExpr>> = child_pushdown_result
            .parent_filters
            .into_iter()
            .map(|f| f.filter)
            .collect();
        // Used to skip file tasks only: DataFusion keeps applying them.
        let result = FilterPushdownPropagation::with_parent_pushdown_result(vec![
            PushedDown::No;
            pushed.len()
        ]);
        if pushed.is_empty() {
            return Ok(result);
        }
        let mut exec = self.with_scan(self.scan.clone());
        exec.filters.extend(pushed);
        Ok(result.with_updated_node(Arc::new(exec)))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        let set = ExecutionPlanMetricsSet::new();
        let m = self.scan.metrics().snapshot();
        for (name, value) in [
            ("files_planned", m.files_planned),
            ("files_skipped_by_partition", m.files_skipped_by_partition),
            ("files_skipped_by_stats", m.files_skipped_by_stats),
            ("file_tasks_started", m.file_tasks_started),
            ("file_tasks_skipped_dynamic", m.file_tasks_skipped),
            ("row_groups_pruned", m.row_groups_pruned),
            ("bytes_received", m.bytes_received),
        ] {
            MetricBuilder::new(&set)
                .global_counter(name)
                .add(usize::try_from(value).unwrap_or(usize::MAX));
        }
        Some(set.clone_inner())
    }
}
