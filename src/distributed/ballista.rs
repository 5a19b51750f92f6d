//! Ballista with Delta scans: a scheduler ([`BallistaScheduler`]), an executor
//! ([`run_executor`]) and a client call ([`execute_on_ballista`]), each with
//! [`ballista_physical_codec`] installed.
//!
//! The client plans the query itself — its own `SessionContext`, the Delta tables
//! registered there, DataFusion's optimiser, the scan split for the cluster's slots — and
//! submits the physical plan; the scheduler cuts it into stages at its exchanges and hands
//! the tasks to the executors, which rebuild each Delta scan from its wire form and read the
//! table through their own stores. No log is replayed anywhere but on the client.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::execution_plans::execute_physical_plan;
use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::protobuf::scheduler_grpc_server::SchedulerGrpcServer;
use ballista_core::serde::BallistaCodec;
use ballista_core::utils::{create_grpc_server, default_session_builder, GrpcServerConfig};
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::{SchedulerConfig, TaskDistributionPolicy};
use ballista_scheduler::scheduler_server::SchedulerServer;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::{ExecutionPlan, SendableRecordBatchStream};
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use tokio::net::TcpListener;

use super::codec::{ballista_physical_codec, ballista_physical_codec_with};
use super::provider_codec::DeltaLogicalCodec;
use super::stores::StorageOptions;
use super::tally::{ReportingEngine, TaskReporter};

/// Seconds between an executor's heartbeats (Ballista's default is 60).
pub const EXECUTOR_HEARTBEAT_SECONDS: u64 = 2;

/// Seconds without a heartbeat after which the scheduler counts an executor dead, fails its
/// running tasks and runs them again elsewhere.
pub const EXECUTOR_TIMEOUT_SECONDS: u64 = 8;

fn ballista(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("Ballista: {e}"))
}

/// The session configuration of a client of a Ballista cluster that reads Delta tables:
/// Ballista's settings with its physical codec replaced by the Delta one.
pub fn ballista_session_config() -> SessionConfig {
    SessionConfig::new_with_ballista()
        .with_ballista_physical_extension_codec(ballista_physical_codec())
        .with_ballista_logical_extension_codec(Arc::new(DeltaLogicalCodec::default()))
}

/// A Ballista scheduler running on this process's Tokio runtime, until dropped.
pub struct BallistaScheduler {
    address: SocketAddr,
    server: SchedulerServer<LogicalPlanNode, PhysicalPlanNode>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for BallistaScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BallistaScheduler")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl BallistaScheduler {
    /// Starts a scheduler listening on `bind` (port 0: one the system picks), scheduling
    /// tasks round-robin over the executors that pull them.
    pub async fn start(bind: SocketAddr) -> Result<BallistaScheduler> {
        Self::start_with(bind, StorageOptions::default()).await
    }

    /// [`start`](Self::start), loading tables of logical plans (see [`DeltaLogicalCodec`])
    /// with this process's storage `options`.
    pub async fn start_with(
        bind: SocketAddr,
        options: StorageOptions,
    ) -> Result<BallistaScheduler> {
        let listener = TcpListener::bind(bind)
            .await
            .map_err(|e| ballista(format!("the scheduler cannot listen on {bind}: {e}")))?;
        let address = listener.local_addr().map_err(ballista)?;
        let endpoint = address.to_string();
        let config_producer = Arc::new(ballista_session_config);
        let cluster = BallistaCluster::new_memory(
            endpoint.clone(),
            Arc::new(default_session_builder),
            config_producer.clone(),
        );
        let logical =
            Arc::new(DeltaLogicalCodec::default().with_storage_options(Arc::clone(&options)));
        let physical = ballista_physical_codec_with(Arc::clone(&options));
        let codec = BallistaCodec::new(logical.clone(), Arc::clone(&physical));
        let config = SchedulerConfig {
            bind_host: address.ip().to_string(),
            external_host: address.ip().to_string(),
            bind_port: address.port(),
            scheduling_policy: TaskSchedulingPolicy::PullStaged,
            task_distribution: TaskDistributionPolicy::RoundRobin,
            executor_timeout_seconds: EXECUTOR_TIMEOUT_SECONDS,
            expire_dead_executor_interval_seconds: 1,
            no_executors_grace_period_seconds: EXECUTOR_TIMEOUT_SECONDS,
            override_physical_codec: Some(physical),
            override_logical_codec: Some(logical),
            override_config_producer: Some(config_producer),
            ..SchedulerConfig::default()
        };
        let metrics = ballista_scheduler::metrics::default_metrics_collector().map_err(ballista)?;
        let mut server: SchedulerServer<LogicalPlanNode, PhysicalPlanNode> =
            SchedulerServer::new(endpoint, cluster, codec, Arc::new(config), metrics);
        server.init().await.map_err(ballista)?;
        let max = ballista_session_config().ballista_grpc_client_max_message_size();
        let service = SchedulerGrpcServer::new(server.clone())
            .max_decoding_message_size(max)
            .max_encoding_message_size(max);
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        let task = tokio::spawn(async move {
            let serving = create_grpc_server(&GrpcServerConfig::default())
                .add_service(service)
                .serve_with_incoming(incoming);
            if let Err(e) = serving.await {
                eprintln!("the Ballista scheduler stopped: {e}");
            }
        });
        Ok(BallistaScheduler {
            address,
            server,
            task,
        })
    }

    /// The address executors and clients reach the scheduler at.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The scheduler's URL for clients (`df://host:port` is what Ballista's own clients
    /// take; [`execute_on_ballista`] takes this `http://` form).
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The ids of the executors registered now.
    pub async fn executors(&self) -> Vec<String> {
        let state = self
            .server
            .state
            .executor_manager
            .get_executors_state()
            .await;
        let mut ids: Vec<String> = state
            .map(|all| all.into_iter().map(|(m, _, _)| m.id).collect())
            .unwrap_or_default();
        ids.sort();
        ids
    }

    /// Waits until at least `n` executors are registered, for at most `timeout`.
    pub async fn wait_for_executors(&self, n: usize, timeout: Duration) -> Result<Vec<String>> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let ids = self.executors().await;
            if ids.len() >= n {
                return Ok(ids);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ballista(format!(
                    "{} of {n} executors registered within {} s",
                    ids.len(),
                    timeout.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for BallistaScheduler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How an executor joins a cluster.
#[derive(Clone)]
pub struct ExecutorOptions {
    /// The scheduler's address.
    pub scheduler: SocketAddr,
    /// The host the executor listens on and advertises (its Flight service serves the
    /// shuffle data other executors and the client fetch).
    pub host: String,
    /// The port of its Flight service (0: a free one).
    pub flight_port: u16,
    /// The port of its gRPC service (0: a free one).
    pub grpc_port: u16,
    /// Tasks it runs at once.
    pub concurrent_tasks: usize,
    /// Where it keeps shuffle files (default: a new temporary directory).
    pub work_dir: Option<PathBuf>,
    /// Told about every finished task (see [`ReportingEngine`]).
    pub reporter: Option<TaskReporter>,
    /// Storage options for tables no store registered in the executor's runtime reaches.
    pub storage_options: StorageOptions,
}

impl std::fmt::Debug for ExecutorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorOptions")
            .field("scheduler", &self.scheduler)
            .field("host", &self.host)
            .field("concurrent_tasks", &self.concurrent_tasks)
            .field("reporter", &self.reporter.is_some())
            .finish_non_exhaustive()
    }
}

fn free_port(host: &str) -> Result<u16> {
    let listener = std::net::TcpListener::bind((host, 0))
        .map_err(|e| ballista(format!("no free port on {host}: {e}")))?;
    Ok(listener.local_addr().map_err(ballista)?.port())
}

/// Runs an executor until the process ends (or registration fails).
pub async fn run_executor(options: ExecutorOptions) -> Result<()> {
    let pick = |port: u16| {
        if port == 0 {
            free_port(&options.host)
        } else {
            Ok(port)
        }
    };
    let config = ExecutorProcessConfig {
        bind_host: options.host.clone(),
        external_host: Some(options.host.clone()),
        port: pick(options.flight_port)?,
        grpc_port: pick(options.grpc_port)?,
        scheduler_host: options.scheduler.ip().to_string(),
        scheduler_port: options.scheduler.port(),
        scheduler_connect_timeout_seconds: 10,
        vcores: options.concurrent_tasks.max(1),
        task_scheduling_policy: TaskSchedulingPolicy::PullStaged,
        work_dir: options
            .work_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned()),
        executor_heartbeat_interval_seconds: EXECUTOR_HEARTBEAT_SECONDS,
        print_thread_info: false,
        special_mod_log_level: "WARN".into(),
        override_physical_codec: Some(ballista_physical_codec_with(Arc::clone(
            &options.storage_options,
        ))),
        override_logical_codec: Some(Arc::new(
            DeltaLogicalCodec::default().with_storage_options(Arc::clone(&options.storage_options)),
        )),
        override_config_producer: Some(Arc::new(ballista_session_config)),
        override_execution_engine: options.reporter.clone().map(|r| {
            let engine: Arc<dyn ballista_executor::execution_engine::ExecutionEngine> =
                Arc::new(ReportingEngine::new(r));
            engine
        }),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(ballista)
}

/// Runs `plan` (planned with [`ballista_session_config`]'s settings) on the cluster of the
/// scheduler at `scheduler_url`; the stream gives its result.
pub async fn execute_on_ballista(
    scheduler_url: &str,
    plan: Arc<dyn ExecutionPlan>,
    config: SessionConfig,
) -> Result<SendableRecordBatchStream> {
    let codec = ballista_physical_codec();
    let session_id = format!("dar-{}", std::process::id());
    execute_physical_plan::<PhysicalPlanNode>(
        scheduler_url.to_string(),
        &config.ballista_config(),
        plan,
        codec.as_ref(),
        session_id,
        config,
    )
    .await
}
