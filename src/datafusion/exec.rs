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
//! - Partition tokens ([`DeltaScanExec::with_partition_tokens`]): for engines that hand each
//!   task a slice of a plan's partitions by restricting the plan's leaves (Ballista), the
//!   scan can take one child, a plain in-memory table of partition numbers, one row per
//!   scan partition; executing partition `j` then reads the scan partitions named by the
//!   rows of the child's partition `j`. The engine slices that child as it slices any
//!   in-memory table, so every scan partition is read exactly once however the tasks are cut.

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
    /// The partition token child, if any (see the module documentation).
    tokens: Option<Arc<dyn ExecutionPlan>>,
}

/// The name of the one column of a partition token table.
pub const PARTITION_TOKEN_COLUMN: &str = "delta_scan_partition";

fn token_schema() -> SchemaRef {
    Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        PARTITION_TOKEN_COLUMN,
        arrow_schema::DataType::UInt32,
        false,
    )]))
}

fn plan_properties(schema: &SchemaRef, partitions: usize) -> Arc<PlanProperties> {
    Arc::new(PlanProperties::new(
        EquivalenceProperties::new(Arc::clone(schema)),
        Partitioning::UnknownPartitioning(partitions),
        EmissionType::Incremental,
        Boundedness::Bounded,
    ))
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
        let properties = plan_properties(&schema, scan.partitions().max(1));
        DeltaScanExec {
            scan,
            schema,
            properties,
            statistics: Arc::new(statistics),
            repartitioning,
            filters: Vec::new(),
            started: Mutex::new(Vec::new()),
            tokens: None,
        }
    }

    /// An in-memory table of this scan's partition numbers, one row per partition, each in
    /// a partition of its own (one empty partition for a scan of no files): the child
    /// [`with_partition_tokens`](Self::with_partition_tokens) takes.
    pub fn partition_token_table(&self) -> Result<Arc<dyn ExecutionPlan>> {
        let schema = token_schema();
        let partitions = (0..self.scan.partitions())
            .map(|p| {
                let p = u32::try_from(p)
                    .map_err(|_| internal_datafusion_err!("too many scan partitions"))?;
                let column = Arc::new(arrow_array::UInt32Array::from(vec![p]));
                Ok(vec![RecordBatch::try_new(
                    Arc::clone(&schema),
                    vec![column],
                )?])
            })
            .collect::<Result<Vec<_>>>()?;
        // A scan of no files has no partitions; its plan still has one, which reads nothing
        // (a cluster's scheduler opens partition 0 of a stage's leaf, and an aggregate over
        // no partition would give no row where `count(*)` must give 0).
        let partitions = if partitions.is_empty() {
            vec![Vec::new()]
        } else {
            partitions
        };
        let exec = datafusion::datasource::memory::MemorySourceConfig::try_new_exec(
            &partitions,
            schema,
            None,
        )?;
        Ok(exec)
    }

    /// This scan reading the partitions `tokens` names (a table like
    /// [`partition_token_table`](Self::partition_token_table)'s, or any slice or reshuffle
    /// of it): its partition `j` reads the scan partitions in the rows of `tokens`'
    /// partition `j`.
    pub fn with_partition_tokens(&self, tokens: Arc<dyn ExecutionPlan>) -> Result<Self> {
        if tokens.schema().fields() != token_schema().fields() {
            return Err(internal_datafusion_err!(
                "a DeltaScanExec's token child must have the one column {PARTITION_TOKEN_COLUMN}: UInt32"
            ));
        }
        let mut exec = self.with_scan(self.scan.clone());
        let partitions = tokens.properties().partitioning.partition_count();
        exec.properties = plan_properties(&self.schema, partitions);
        exec.tokens = Some(tokens);
        Ok(exec)
    }

    /// The partition token child, if the scan has one.
    pub fn partition_tokens(&self) -> Option<&Arc<dyn ExecutionPlan>> {
        self.tokens.as_ref()
    }

    /// The planned scan.
    pub fn scan(&self) -> &DeltaScan {
        &self.scan
    }

    /// The scan's metrics (shared by every run of this plan).
    pub fn scan_metrics(&self) -> Arc<DeltaScanMetrics> {
        self.scan.metrics()
    }

    /// The plan's statistics (from the log's file statistics).
    pub fn plan_statistics(&self) -> &Statistics {
        &self.statistics
    }

    /// When the plan splits its files into byte ranges for more partitions.
    pub fn repartitioning(&self) -> IntraFileRepartitioning {
        self.repartitioning
    }

    /// The filters pushed into this plan for dynamic partition pruning.
    pub fn pushed_filters(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.filters
    }

    /// This plan cut into `tasks` plans over disjoint file tasks (at least 1), for an engine
    /// that sends one plan to each of its tasks: each gets this plan's partition count of
    /// partitions (at least 1). To have enough partitions to spread, the whole files are
    /// regrouped into `tasks × partitions` groups when there are that many files; else, with
    /// `repartition_file_scans` on and only whole-file tasks, the files are cut into that
    /// many byte ranges (however small: the engine asked for the tasks; none over the scan's
    /// `max_task_bytes`, which cuts larger ones further). The plans' statistics are inexact
    /// (each reads a part), and they keep the pushed filters.
    pub fn split_for_tasks(&self, tasks: usize, config: &ConfigOptions) -> Vec<DeltaScanExec> {
        let tasks = tasks.max(1);
        let per_task = self.scan.partitions().max(1);
        let wanted = tasks.saturating_mul(per_task);
        let scan = self.scan.clone();
        let whole = scan.tasks().iter().all(|t| t.range.is_none());
        let scan = if scan.partitions() >= wanted {
            scan
        } else if whole && scan.tasks().len() >= wanted {
            scan.regroup_whole_files(wanted)
        } else if whole && config.optimizer.repartition_file_scans {
            let ranged = scan.split_into_byte_ranges(wanted);
            ranged.cap_task_bytes_by_options()
        } else {
            scan
        };
        let statistics = self.statistics.as_ref().clone().to_inexact();
        scan.split_among_tasks(tasks)
            .into_iter()
            .map(|part| {
                let mut exec = DeltaScanExec::new(
                    part,
                    Arc::clone(&self.schema),
                    statistics.clone(),
                    self.repartitioning,
                );
                exec.filters = self.filters.clone();
                exec
            })
            .collect()
    }

    fn with_scan(&self, scan: DeltaScan) -> Self {
        let mut exec = DeltaScanExec::new(
            scan,
            Arc::clone(&self.schema),
            self.statistics.as_ref().clone(),
            self.repartitioning,
        );
        exec.filters = self.filters.clone();
        if let Some(tokens) = &self.tokens {
            exec.properties = Arc::clone(&self.properties);
            exec.tokens = Some(Arc::clone(tokens));
        }
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

impl DeltaScanExec {
    /// A scan partition's stream as this plan's output (row counts only for an empty
    /// projection).
    fn output(&self, stream: DeltaBatchStream) -> SendableRecordBatchStream {
        let schema = Arc::clone(&self.schema);
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
        Box::pin(RecordBatchStreamAdapter::new(schema, batches))
    }

    /// The scan partitions `tokens` names, read one after the other.
    fn execute_tokens(
        &self,
        tokens: SendableRecordBatchStream,
    ) -> Result<SendableRecordBatchStream> {
        use futures::TryStreamExt;
        // One run for the tokens of this call: they take their streams from its one start
        // (see `take_stream`).
        let this = Arc::new(self.with_scan(self.scan.clone()));
        let schema = Arc::clone(&self.schema);
        let partitions = tokens
            .map(|batch| -> Result<Vec<Result<usize>>> {
                let batch = batch?;
                let column = batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<arrow_array::UInt32Array>()
                    .ok_or_else(|| internal_datafusion_err!("a partition token is not UInt32"))?;
                Ok(column.values().iter().map(|&p| Ok(p as usize)).collect())
            })
            .map_ok(futures::stream::iter)
            .try_flatten();
        let batches = partitions
            .map(
                move |p: Result<usize>| -> Result<SendableRecordBatchStream> {
                    let p = p?;
                    if p >= this.scan.partitions() {
                        return Err(internal_datafusion_err!(
                            "a partition token names scan partition {p} of {}",
                            this.scan.partitions()
                        ));
                    }
                    Ok(match this.take_stream(p)? {
                        Some(stream) => this.output(stream),
                        None => Box::pin(RecordBatchStreamAdapter::new(
                            Arc::clone(&this.schema),
                            futures::stream::empty(),
                        )),
                    })
                },
            )
            .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
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
        let files: std::collections::HashSet<&str> =
            self.scan.tasks().iter().map(|t| t.path.as_str()).collect();
        write!(
            f,
            "DeltaScanExec: partitions={}, files={}, ranged_tasks={}, dynamic_filters={}",
            self.scan.partitions(),
            files.len(),
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
        self.tokens.iter().collect()
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
        match (children.len(), &self.tokens) {
            (0, None) => Ok(self),
            (1, Some(_)) => {
                let tokens = children.into_iter().next();
                let tokens = tokens.ok_or_else(|| internal_datafusion_err!("no child"))?;
                Ok(Arc::new(self.with_partition_tokens(tokens)?))
            }
            (n, _) => Err(internal_datafusion_err!(
                "DeltaScanExec takes {} children, not {n}",
                usize::from(self.tokens.is_some())
            )),
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
        let total: u64 = tasks.iter().map(|t| t.size).fold(0, u64::saturating_add);
        let target = self.scan.target_partitions();
        let below = self.scan.partitions() < target;
        // With tokens the partitions are named by the child: they stay as they are.
        if self.tokens.is_some()
            || !o.repartition_file_scans
            || total == 0
            || total < o.repartition_file_min_size as u64
            || tasks.iter().any(|t| t.range.is_some())
            || (self.repartitioning == IntraFileRepartitioning::WhenBelowTarget && !below)
        {
            return Ok(None);
        }
        let ranged = self.scan.clone().split_into_byte_ranges(target);
        let scan = ranged.cap_task_bytes_by_options();
        Ok(Some(Arc::new(self.with_scan(scan))))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let schema = Arc::clone(&self.schema);
        if let Some(tokens) = &self.tokens {
            return self.execute_tokens(tokens.execute(partition, context)?);
        }
        let Some(stream) = self.take_stream(partition)? else {
            let empty = futures::stream::empty();
            return Ok(Box::pin(RecordBatchStreamAdapter::new(schema, empty)));
        };
        Ok(self.output(stream))
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
            ("files_skipped_by_filter", m.files_skipped_by_filter),
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
