//! What each task of a Ballista executor read: [`TaskReport`], from [`ReportingEngine`], an
//! execution engine that runs every task as Ballista's default engine does and then reports
//! it — its time and, summed over the Delta scans of its plan, the file tasks started, the
//! bytes received and the rows emitted. `dar cluster bench` adds the reports up per executor
//! to show how a query's work was spread.

use std::fmt;
use std::sync::Arc;

use ballista_core::serde::protobuf::{
    RuntimeStatsReport, ShuffleWritePartition, TaskColumnStats, WindowStateReport,
};
use ballista_core::JobId;
use ballista_executor::execution_engine::{
    DefaultExecutionEngine, ExecutionEngine, QueryStageExecutor,
};
use datafusion::error::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionConfig;

use super::codec::delta_scans;
use crate::datafusion::DeltaScanExec;

/// One finished task of an executor.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskReport {
    /// The stage of the job the task belongs to.
    pub stage: usize,
    /// The task's id.
    pub task: usize,
    /// Whether it succeeded.
    pub succeeded: bool,
    /// Wall time of the task, in microseconds.
    pub micros: u64,
    /// Delta file tasks (files or byte ranges of files) its scans started.
    pub delta_file_tasks: u64,
    /// Bytes its Delta scans received from storage.
    pub delta_bytes: u64,
    /// Rows its Delta scans emitted.
    pub delta_rows: u64,
}

/// Where reports go.
pub type TaskReporter = Arc<dyn Fn(&TaskReport) + Send + Sync>;

/// Ballista's default execution engine, reporting each task to a [`TaskReporter`].
pub struct ReportingEngine {
    inner: DefaultExecutionEngine,
    reporter: TaskReporter,
}

impl ReportingEngine {
    /// An engine that hands every finished task to `reporter`.
    pub fn new(reporter: TaskReporter) -> Self {
        ReportingEngine {
            inner: DefaultExecutionEngine::new(),
            reporter,
        }
    }
}

impl ExecutionEngine for ReportingEngine {
    fn create_query_stage_exec(
        &self,
        job_id: JobId,
        stage_id: usize,
        task_id: usize,
        global_output_partition_ids: Vec<usize>,
        plan: Arc<dyn ExecutionPlan>,
        work_dir: &str,
        config: &SessionConfig,
    ) -> Result<Arc<dyn QueryStageExecutor>> {
        let scans = delta_scans(&plan);
        let inner = self.inner.create_query_stage_exec(
            job_id,
            stage_id,
            task_id,
            global_output_partition_ids,
            plan,
            work_dir,
            config,
        )?;
        Ok(Arc::new(ReportingStage {
            inner,
            scans,
            stage: stage_id,
            reporter: Arc::clone(&self.reporter),
        }))
    }
}

struct ReportingStage {
    inner: Arc<dyn QueryStageExecutor>,
    scans: Vec<Arc<dyn ExecutionPlan>>,
    stage: usize,
    reporter: TaskReporter,
}

impl fmt::Debug for ReportingStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
    }
}

impl fmt::Display for ReportingStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.inner, f)
    }
}

#[async_trait::async_trait]
impl QueryStageExecutor for ReportingStage {
    async fn execute_query_stage(
        &self,
        task_id: usize,
        context: Arc<TaskContext>,
    ) -> Result<Vec<ShuffleWritePartition>> {
        let before = self.totals();
        let start = std::time::Instant::now();
        let result = self.inner.execute_query_stage(task_id, context).await;
        let after = self.totals();
        (self.reporter)(&TaskReport {
            stage: self.stage,
            task: task_id,
            succeeded: result.is_ok(),
            micros: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
            delta_file_tasks: after.0.saturating_sub(before.0),
            delta_bytes: after.1.saturating_sub(before.1),
            delta_rows: after.2.saturating_sub(before.2),
        });
        result
    }

    fn collect_plan_metrics(&self) -> Vec<MetricsSet> {
        self.inner.collect_plan_metrics()
    }

    fn collect_runtime_stats_reports(&self) -> Vec<RuntimeStatsReport> {
        self.inner.collect_runtime_stats_reports()
    }

    fn collect_window_state_reports(&self) -> Result<Vec<WindowStateReport>> {
        self.inner.collect_window_state_reports()
    }

    fn collect_column_stats(&self) -> Vec<TaskColumnStats> {
        self.inner.collect_column_stats()
    }
}

impl ReportingStage {
    /// File tasks started, bytes received and rows emitted by the plan's Delta scans so far.
    fn totals(&self) -> (u64, u64, u64) {
        scan_totals(&self.scans)
    }
}

/// File tasks started, bytes received and rows emitted so far by the Delta scans among
/// `scans` (other plans count nothing).
pub fn scan_totals(scans: &[Arc<dyn ExecutionPlan>]) -> (u64, u64, u64) {
    scans
        .iter()
        .filter_map(|s| s.downcast_ref::<DeltaScanExec>())
        .map(|s| s.scan_metrics().snapshot())
        .fold((0, 0, 0), |(f, b, r), m| {
            (
                f + m.file_tasks_started,
                b + m.bytes_received,
                r + m.rows_emitted,
            )
        })
}
