//! datafusion-distributed with Delta scans: a worker ([`delta_worker`], served by
//! [`serve_worker`]) and a coordinator's session ([`distributed_session_state`]).
//!
//! The coordinator plans the whole query (its own `SessionContext`, the Delta tables
//! registered there); datafusion-distributed's planner cuts the physical plan into stages at
//! its exchanges and asks each leaf how many tasks its stage should run:
//! - [`desired_task_count`]: a Delta scan wants one task per
//!   `file_scan_config_bytes_per_partition` bytes (datafusion-distributed's own setting, as
//!   for its Parquet scans) per target partition, at least 1, and no more than it has file
//!   tasks to give out when its files cannot be cut into byte ranges;
//! - [`scale_up`]: once the stage's task count is final, the scan is cut into that many
//!   plans over disjoint file tasks ([`DeltaScanExec::split_for_tasks`]), one per task, in a
//!   `DistributedLeafExec`; each worker is sent only its own, in the scan's wire form
//!   ([`DeltaPhysicalCodec`]), and reads its files through its own stores. No log is
//!   replayed anywhere but on the coordinator.
//!
//! The workers are named by a [`WorkerUrls`] list; datafusion-distributed runs at most as many
//! tasks per stage as there are workers, and a stage of one task on the coordinator itself.

use std::net::SocketAddr;
use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionConfig;
use datafusion_distributed::{
    DesiredTaskCountEvent, DesiredTaskCountEventResponse, DistributedConfig, DistributedExt,
    DistributedLeafExec, ScaleUpLeafNodeEvent, ScaleUpLeafNodeEventResponse,
    SessionStateBuilderExt, Worker, WorkerQueryContext, WorkerResolver,
};
use tokio::net::TcpListener;
use url::Url;

use super::codec::DeltaPhysicalCodec;
use super::stores::StorageOptions;
use super::tally::TaskReporter;
pub use super::worker_tally::reporting_rewrite;
use crate::datafusion::DeltaScanExec;

/// A fixed list of workers, each `http://HOST:PORT/` of a [`serve_worker`].
#[derive(Debug, Clone)]
pub struct WorkerUrls(pub Vec<Url>);

impl WorkerResolver for WorkerUrls {
    fn get_urls(&self) -> Result<Vec<Url>> {
        if self.0.is_empty() {
            return Err(DataFusionError::Configuration(
                "no datafusion-distributed worker to run on".into(),
            ));
        }
        Ok(self.0.clone())
    }
}

/// A coordinator's session state: DataFusion's defaults and `config`, with
/// datafusion-distributed's planner over `workers` and the Delta codec and task handlers
/// installed. `config` must not hold datafusion-distributed's settings yet (they are added
/// here); its `target_partitions` is the partitions each task runs.
pub fn distributed_session_state(config: SessionConfig, workers: WorkerUrls) -> SessionState {
    SessionStateBuilder::new()
        .with_default_features()
        .with_config(config)
        .with_distributed_planner()
        .with_distributed_worker_resolver(workers)
        .with_distributed_user_codec(DeltaPhysicalCodec::default())
        .with_distributed_desired_task_count_handler(desired_task_count)
        .with_distributed_scale_up_leaf_node_handler(scale_up)
        .build()
}

/// A coordinator's session state for a query spread over every one of `workers`:
/// [`distributed_session_state`] with each scan asking for as many tasks as there are
/// workers (one byte per partition: the planner caps the tasks at the worker count),
/// whatever the size of the table, and `per_task` partitions per task. DataFusion plans at
/// least 2 partitions: with 1 it puts no exchange above a scan, and a stage without one runs
/// as a single task on the coordinator.
pub fn spread_session_state(workers: WorkerUrls, per_task: usize) -> Result<SessionState> {
    let config = SessionConfig::new().with_target_partitions(partitions_per_task(per_task));
    let mut state = distributed_session_state(config, workers);
    state.set_distributed_file_scan_config_bytes_per_partition(1)?;
    Ok(state)
}

/// The partitions each task runs in a [`spread_session_state`] asked for `per_task`.
pub fn partitions_per_task(per_task: usize) -> usize {
    per_task.max(2)
}

/// How many tasks the stage of a Delta scan asks for (see the module documentation); `None`
/// for other plans.
pub fn desired_task_count(
    ev: DesiredTaskCountEvent<'_>,
) -> Option<Result<DesiredTaskCountEventResponse>> {
    let exec = ev.plan.downcast_ref::<DeltaScanExec>()?;
    let bytes_per_task = match DistributedConfig::from_session_config(ev.session_config) {
        Ok(c) => c.file_scan_config_bytes_per_partition.max(1),
        Err(e) => return Some(Err(e)),
    };
    let scan = exec.scan();
    let bytes: u64 = scan
        .tasks()
        .iter()
        .map(crate::plan::FileTask::bytes)
        .fold(0, u64::saturating_add);
    let partitions = ev.session_config.target_partitions().max(1);
    let wanted = usize::try_from(bytes)
        .unwrap_or(usize::MAX)
        .div_ceil(bytes_per_task)
        .div_ceil(partitions)
        .max(1);
    // Whole files can be cut into byte ranges; ranges already cut cannot be cut again.
    let splittable = scan.tasks().iter().all(|t| t.range.is_none())
        && ev.session_config.options().optimizer.repartition_file_scans;
    let count = if splittable {
        wanted
    } else {
        wanted.min(scan.tasks().len().max(1))
    };
    Some(Ok(DesiredTaskCountEventResponse::desired(count)))
}

/// A Delta scan's stage leaf cut into one plan per task (see the module documentation);
/// `None` for other plans.
pub fn scale_up(ev: ScaleUpLeafNodeEvent<'_>) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let exec = ev.plan.downcast_ref::<DeltaScanExec>()?;
    let variants = exec
        .split_for_tasks(ev.task_count, ev.session_config.options())
        .into_iter()
        .map(|v| Arc::new(v) as Arc<dyn ExecutionPlan>);
    Some(
        DistributedLeafExec::try_new(Arc::clone(ev.plan), variants)
            .map(|leaf| ScaleUpLeafNodeEventResponse::new(Arc::new(leaf))),
    )
}

/// A datafusion-distributed worker that can run Delta scans: each query's session gets the
/// Delta codec, whose decoded scans reach their tables through `runtime`'s registered object
/// stores, else through this process's storage `options` (see
/// [`store_from_runtime`](super::store_from_runtime)); with a `reporter`, every task it runs
/// is reported when it ends (see [`reporting_rewrite`]).
pub fn delta_worker(
    options: StorageOptions,
    runtime: Arc<RuntimeEnv>,
    reporter: Option<TaskReporter>,
) -> Worker {
    Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let codec = DeltaPhysicalCodec::with_storage_options(Arc::clone(&options));
        let mut builder = ctx.builder.with_distributed_user_codec(codec);
        if let Some(reporter) = &reporter {
            builder = builder.with_distributed_worker_plan_rewrite_handler(reporting_rewrite(
                Arc::clone(reporter),
            ));
        }
        async move { Ok(builder.build()) }
    })
    .with_runtime_env(runtime)
}

/// Serves `worker` on `listener` (gRPC) until the future is dropped or the server fails.
pub async fn serve_worker(listener: TcpListener, worker: Worker) -> Result<()> {
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tonic::transport::Server::builder()
        .add_service(worker.into_worker_server())
        .serve_with_incoming(incoming)
        .await
        .map_err(|e| DataFusionError::Execution(format!("the worker's server failed: {e}")))
}

/// The URL a coordinator reaches a worker listening on `address` by.
pub fn worker_url(address: SocketAddr) -> Result<Url> {
    Url::parse(&format!("http://{address}/"))
        .map_err(|e| DataFusionError::Configuration(format!("no URL for {address}: {e}")))
}
