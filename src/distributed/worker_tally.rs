//! What each task of a datafusion-distributed worker read: [`reporting_rewrite`], a worker
//! plan rewrite that wraps the plan of every task the worker is sent in a reporting node.
//! When the last of the task's partition streams has ended (or been dropped), the node hands
//! a [`TaskReport`] to the [`TaskReporter`]: the task's index in its stage, its time from its
//! first `execute` and, summed over its Delta scans, the file tasks started, the bytes
//! received and the rows emitted. A worker is not told the stage of a task, so `stage` is 0.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use datafusion::common::internal_datafusion_err;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use datafusion_distributed::{
    DistributedTaskContext, WorkerPlanRewriteEvent, WorkerPlanRewriteEventResponse,
};
use futures::StreamExt;

use super::codec::delta_scans;
use super::tally::{scan_totals, TaskReport, TaskReporter};

/// The rewrite a worker installs (`with_distributed_worker_plan_rewrite_handler`) to report
/// each task it runs to `reporter`.
pub fn reporting_rewrite(
    reporter: TaskReporter,
) -> impl for<'a> Fn(WorkerPlanRewriteEvent<'a>) -> Result<WorkerPlanRewriteEventResponse>
       + Send
       + Sync
       + 'static {
    move |ev: WorkerPlanRewriteEvent<'_>| {
        let node = ReportingExec::new(ev.plan, Arc::clone(&reporter));
        Ok(WorkerPlanRewriteEventResponse::new(Arc::new(node)))
    }
}

/// One task: what it reports, where to, and its progress, shared by its partition streams.
struct Watch {
    scans: Vec<Arc<dyn ExecutionPlan>>,
    reporter: TaskReporter,
    /// Partition streams not yet ended or dropped.
    remaining: AtomicUsize,
    failed: AtomicBool,
    started: Mutex<Option<Instant>>,
    task: AtomicUsize,
}

/// A task's plan, reporting the task when all its partition streams are done.
struct ReportingExec {
    inner: Arc<dyn ExecutionPlan>,
    watch: Arc<Watch>,
}

impl ReportingExec {
    fn new(inner: Arc<dyn ExecutionPlan>, reporter: TaskReporter) -> Self {
        let partitions = inner.properties().partitioning.partition_count();
        let watch = Arc::new(Watch {
            scans: delta_scans(&inner),
            reporter,
            remaining: AtomicUsize::new(partitions),
            failed: AtomicBool::new(false),
            started: Mutex::new(None),
            task: AtomicUsize::new(0),
        });
        ReportingExec { inner, watch }
    }
}

impl Watch {
    /// Called once per partition stream, when it is dropped: the last one reports.
    fn stream_done(&self) {
        let last = self
            .remaining
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            == Ok(1);
        if !last {
            return;
        }
        let micros = self.started.lock().ok().and_then(|s| *s).map_or(0, |s| {
            u64::try_from(s.elapsed().as_micros()).unwrap_or(u64::MAX)
        });
        let (files, bytes, rows) = scan_totals(&self.scans);
        (self.reporter)(&TaskReport {
            stage: 0,
            task: self.task.load(Ordering::Acquire),
            succeeded: !self.failed.load(Ordering::Acquire),
            micros,
            delta_file_tasks: files,
            delta_bytes: bytes,
            delta_rows: rows,
        });
    }
}

impl fmt::Debug for ReportingExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReportingExec")
            .field("inner", &self.inner.name())
            .finish_non_exhaustive()
    }
}

impl DisplayAs for ReportingExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReportingExec")
    }
}

/// Drops into [`Watch::stream_done`].
struct StreamGuard(Arc<Watch>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.stream_done();
    }
}

impl ExecutionPlan for ReportingExec {
    fn name(&self) -> &str {
        "ReportingExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.inner]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let [inner] = <[_; 1]>::try_from(children).map_err(|c| {
            internal_datafusion_err!("ReportingExec takes 1 child, not {}", c.len())
        })?;
        Ok(Arc::new(ReportingExec::new(
            inner,
            Arc::clone(&self.watch.reporter),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if let Ok(mut started) = self.watch.started.lock() {
            started.get_or_insert_with(Instant::now);
        }
        let task = DistributedTaskContext::from_ctx(&context).task_index;
        self.watch.task.store(task, Ordering::Release);
        let guard = StreamGuard(Arc::clone(&self.watch));
        let stream = match self.inner.execute(partition, context) {
            Ok(stream) => stream,
            Err(e) => {
                guard.0.failed.store(true, Ordering::Release);
                return Err(e);
            }
        };
        let schema = stream.schema();
        let watched = stream.map(move |item| {
            if item.is_err() {
                guard.0.failed.store(true, Ordering::Release);
            }
            item
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, watched)))
    }
}
