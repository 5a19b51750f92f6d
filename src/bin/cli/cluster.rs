//! `dar cluster scheduler` and `dar cluster executor`: a Ballista scheduler and executor with
//! the Delta codec installed (feature `distributed`; `dar cluster worker` is
//! datafusion-distributed's, in `workers`), and the loopback cluster `dar sql --executors N`
//! starts from them: the scheduler on its own runtime, each executor a child
//! process of this same program.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use clap::{Args, Subcommand};
use std::sync::{Arc, Mutex};

use delta_arrow_reader::distributed::ballista::{run_executor, BallistaScheduler, ExecutorOptions};
use std::collections::HashMap;

use delta_arrow_reader::distributed::{StorageOptions, TaskReport, TaskReporter};
use delta_arrow_reader::DeltaError;

use super::STORAGE_OPTIONS_ENV;

/// `dar cluster …`.
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Run a Ballista scheduler that can schedule plans reading Delta tables.
    Scheduler(SchedulerArgs),
    /// Run a Ballista executor that can read Delta tables, registered with a scheduler.
    Executor(ExecutorArgs),
    /// Run a datafusion-distributed worker that can read Delta tables (`dar sql --engine
    /// distributed --worker URL` sends it work).
    Worker(super::workers::WorkerArgs),
    /// Rows per second of a query on loopback clusters of 1, 2, 4 … executors, with each
    /// executor's share of the work.
    Bench(super::cluster_bench::BenchArgs),
}

/// Arguments of `dar cluster scheduler`.
#[derive(Debug, Args)]
pub struct SchedulerArgs {
    /// Address to listen on (port 0: a free one, printed).
    #[arg(long, default_value = "127.0.0.1:50050")]
    pub bind: SocketAddr,
    /// Storage option KEY=VALUE for the tables it loads (repeatable; also read from the
    /// JSON object in $DAR_STORAGE_OPTIONS, which keeps secrets off the command line).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
}

/// Arguments of `dar cluster executor`.
#[derive(Debug, Args)]
pub struct ExecutorArgs {
    /// The scheduler's address, HOST:PORT (a host name is resolved when the executor
    /// starts).
    #[arg(long, value_parser = host_port)]
    pub scheduler: SocketAddr,
    /// Host to listen on and advertise to the scheduler and the other executors.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port of the Flight service (shuffle data); 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    pub flight_port: u16,
    /// Port of the gRPC service; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    pub grpc_port: u16,
    /// Tasks run at once (default: the machine's cores).
    #[arg(long)]
    pub concurrent_tasks: Option<usize>,
    /// Directory for shuffle files (default: a folder of its own in the temporary folder,
    /// removed when the executor ends; a folder given here is kept).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Print one JSON line per finished task on stdout: its stage, time and what its Delta
    /// scans read.
    #[arg(long)]
    pub report_tasks: bool,
    /// Storage option KEY=VALUE for the tables it reads (repeatable; also read from the
    /// JSON object in $DAR_STORAGE_OPTIONS, which keeps secrets off the command line).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Exit when standard input ends: set by the `dar sql --executors` that started it,
    /// which holds the pipe, so the executor ends with it however it ends.
    #[arg(long, hide = true)]
    pub exit_with_parent: bool,
}

/// With `on`: ends this process once standard input reaches its end (the parent that holds
/// the other end of the pipe has ended, even by SIGKILL), so no child outlives it.
pub(super) fn exit_with_parent(on: bool) {
    if !on {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("dar-parent-watch".into())
        .spawn(|| {
            let mut sink = [0u8; 64];
            let mut stdin = std::io::stdin();
            // The end of the input (or an error) is the signal; a parent that ends its child
            // on purpose writes a byte first (see `LocalCluster`'s drop), and the child then
            // ends without a message.
            let mut told = false;
            while let Ok(1..) = std::io::Read::read(&mut stdin, &mut sink) {
                told = true;
            }
            // The executor's own shuffle folder goes with it.
            super::output::remove_registered();
            if !told {
                super::terminal::message("dar: the process that started this one has ended");
            }
            std::process::exit(1);
        });
}

/// HOST:PORT as an address: an IP address, or a host name resolved now (its first IPv4
/// address, else its first: `localhost` may resolve to `::1` first, where a scheduler bound
/// to `127.0.0.1` does not listen).
pub(super) fn host_port(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let found: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|e| format!("{e} (give HOST:PORT)"))?
        .collect();
    found
        .iter()
        .find(|a| a.is_ipv4())
        .or(found.first())
        .copied()
        .ok_or_else(|| "the host name has no address".to_string())
}

/// A new folder for an executor's shuffle files, in the temporary folder, readable by
/// this user alone.
fn own_work_dir() -> Result<PathBuf, DeltaError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("dar-executor-{}-{nanos}", std::process::id()));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&dir)
        .map_err(|e| failed(format!("cannot make {}: {e}", dir.display())))?;
    Ok(dir)
}

/// A reporter printing each task report as a JSON line on stdout.
pub(super) fn print_reports() -> TaskReporter {
    Arc::new(|report: &TaskReport| {
        if let Ok(line) = serde_json::to_string(report) {
            println!("{line}");
        }
    })
}

/// Storage options from $DAR_STORAGE_OPTIONS, then `-o` arguments (which win).
pub(super) fn storage_options(args: &[String]) -> Result<StorageOptions, DeltaError> {
    Ok(Arc::new(super::parse_options(args)?))
}

pub(super) fn failed(e: impl std::fmt::Display) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: e.to_string(),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `dar cluster …` until the process is stopped.
pub async fn run_cluster(command: &ClusterCommand) -> Result<(), DeltaError> {
    match command {
        ClusterCommand::Scheduler(args) => {
            let options = storage_options(&args.options)?;
            let scheduler = BallistaScheduler::start_with(args.bind, options)
                .await
                .map_err(failed)?;
            println!("scheduler listening on {}", scheduler.address());
            // Serves until the process is stopped.
            std::future::pending::<()>().await;
            Ok(())
        }
        ClusterCommand::Executor(args) => {
            // Without --work-dir, the shuffle files go to a folder of this process's own,
            // removed when it ends (normally, by a signal, or with its parent): Ballista's
            // default, a new temporary folder, was left behind by every executor.
            let own = match &args.work_dir {
                Some(_) => None,
                None => Some(own_work_dir()?),
            };
            if let Some(dir) = &own {
                super::output::remove_on_interrupt(dir.clone());
            }
            exit_with_parent(args.exit_with_parent);
            let run = run_executor(ExecutorOptions {
                scheduler: args.scheduler,
                host: args.host.clone(),
                flight_port: args.flight_port,
                grpc_port: args.grpc_port,
                concurrent_tasks: args.concurrent_tasks.unwrap_or_else(cores),
                work_dir: args.work_dir.clone().or(own),
                storage_options: storage_options(&args.options)?,
                reporter: args.report_tasks.then(print_reports),
            })
            .await
            .map_err(failed);
            super::output::remove_registered();
            run
        }
        ClusterCommand::Worker(args) => super::workers::run_worker(args).await,
        ClusterCommand::Bench(args) => super::cluster_bench::run_bench(args).await,
    }
}

/// A scheduler on this process and executors as child processes, all on loopback; the
/// children are stopped when it is dropped.
pub struct LocalCluster {
    pub scheduler: BallistaScheduler,
    children: Vec<Child>,
    /// With reports on: every task report so far, with the index of its executor.
    reports: Arc<Mutex<Vec<(usize, TaskReport)>>>,
}

impl LocalCluster {
    /// Starts the scheduler and `executors` executors running `tasks` tasks each, and waits
    /// until every executor has registered.
    /// The executors get `options` through their environment (not their command line).
    pub async fn start(
        executors: usize,
        tasks: usize,
        report: bool,
        options: &HashMap<String, String>,
    ) -> Result<LocalCluster, DeltaError> {
        let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
        let shared: StorageOptions = Arc::new(options.clone());
        let scheduler = BallistaScheduler::start_with(loopback, shared)
            .await
            .map_err(failed)?;
        let options_json = serde_json::to_string(options).map_err(failed)?;
        let program = std::env::current_exe().map_err(failed)?;
        let mut cluster = LocalCluster {
            scheduler,
            children: Vec::new(),
            reports: Arc::new(Mutex::new(Vec::new())),
        };
        for index in 0..executors {
            let mut command = Command::new(&program);
            command
                .args(["cluster", "executor", "--scheduler"])
                .arg(cluster.scheduler.address().to_string())
                .args([
                    "--concurrent-tasks",
                    &tasks.to_string(),
                    "--exit-with-parent",
                ])
                .env(STORAGE_OPTIONS_ENV, &options_json)
                // Held open by this process (in `Child`) until it ends: see exit_with_parent.
                .stdin(Stdio::piped())
                .stdout(if report {
                    Stdio::piped()
                } else {
                    Stdio::null()
                })
                .stderr(Stdio::inherit());
            if report {
                command.arg("--report-tasks");
            }
            let mut child = command
                .spawn()
                .map_err(|e| failed(format!("cannot start an executor: {e}")))?;
            if let Some(out) = child.stdout.take() {
                let reports = Arc::clone(&cluster.reports);
                std::thread::spawn(move || {
                    use std::io::BufRead;
                    let lines = std::io::BufReader::new(out).lines().map_while(Result::ok);
                    collect_reports(index, lines, &reports);
                });
            }
            cluster.children.push(child);
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let registered = cluster.scheduler.executors().await.len();
            if registered >= executors {
                break;
            }
            let exited = cluster
                .children
                .iter_mut()
                .find_map(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                return Err(failed(format!(
                    "an executor exited before it registered ({status})"
                )));
            }
            if std::time::Instant::now() >= deadline {
                return Err(failed(format!(
                    "{registered} of {executors} executors registered within 60 s"
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(cluster)
    }

    /// The task reports received so far (with reports on), and forgets them.
    pub fn take_reports(&self) -> Vec<(usize, TaskReport)> {
        self.reports
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }
}

impl Drop for LocalCluster {
    /// Closes each executor's standard input (it then removes its shuffle folder and ends,
    /// see `exit_with_parent`); one still running after 5 s is killed.
    fn drop(&mut self) {
        for child in &mut self.children {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = std::io::Write::write_all(&mut stdin, b"end\n");
            }
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        for child in &mut self.children {
            while matches!(child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Reads an executor's (or a worker's) report lines until its output ends.
pub(super) fn collect_reports(
    index: usize,
    lines: impl Iterator<Item = String>,
    reports: &Mutex<Vec<(usize, TaskReport)>>,
) {
    for line in lines {
        if let Ok(report) = serde_json::from_str::<TaskReport>(&line) {
            if let Ok(mut all) = reports.lock() {
                all.push((index, report));
            }
        }
    }
}
