//! `dar cluster worker`: a datafusion-distributed worker that reads Delta tables (feature
//! `distributed`), and the loopback workers `dar sql --engine distributed --executors N`
//! starts from it, each a child process of this same program.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use datafusion::execution::runtime_env::RuntimeEnv;
use delta_arrow_reader::distributed::workers::{delta_worker, serve_worker, worker_url};
use delta_arrow_reader::DeltaError;
use std::collections::HashMap;
use url::Url;

use super::cluster::{collect_reports, failed, print_reports, storage_options};
use super::STORAGE_OPTIONS_ENV;
use delta_arrow_reader::distributed::TaskReport;
use std::sync::Mutex;

/// What a worker prints first on stdout, followed by its URL.
const LISTENING: &str = "worker listening on ";

/// Arguments of `dar cluster worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Address to listen on (port 0: a free one; the URL is printed).
    #[arg(long, default_value = "127.0.0.1:50060")]
    pub bind: SocketAddr,
    /// Storage option KEY=VALUE for the tables it reads (repeatable; also read from the
    /// JSON object in $DAR_STORAGE_OPTIONS, which keeps secrets off the command line).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Print one JSON line per finished task on stdout (after the URL line): its index in
    /// its stage, time and what its Delta scans read.
    #[arg(long)]
    pub report_tasks: bool,
    /// Exit when standard input ends (set by the `dar sql --executors` that started it).
    #[arg(long, hide = true)]
    pub exit_with_parent: bool,
}

/// Runs `dar cluster worker` until the process is stopped.
pub async fn run_worker(args: &WorkerArgs) -> Result<(), DeltaError> {
    super::cluster::exit_with_parent(args.exit_with_parent);
    let options = storage_options(&args.options)?;
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .map_err(|e| failed(format!("cannot listen on {}: {e}", args.bind)))?;
    let address = listener.local_addr().map_err(failed)?;
    let url = worker_url(address).map_err(failed)?;
    let reporter = args.report_tasks.then(print_reports);
    let worker = delta_worker(options, Arc::new(RuntimeEnv::default()), reporter);
    println!("{LISTENING}{url}");
    serve_worker(listener, worker).await.map_err(failed)
}

/// Workers as child processes on loopback, stopped when dropped.
pub struct LocalWorkers {
    children: Vec<Child>,
    urls: Vec<Url>,
    /// With reports on: every task report so far, with the index of its worker.
    reports: Arc<Mutex<Vec<(usize, TaskReport)>>>,
}

impl LocalWorkers {
    /// Starts `n` workers with storage `options` (given through their environment, not
    /// their command line), reporting their tasks when `report` is set, and waits until
    /// each has printed its URL.
    pub fn start(
        n: usize,
        report: bool,
        options: &HashMap<String, String>,
    ) -> Result<LocalWorkers, DeltaError> {
        let options_json = serde_json::to_string(options).map_err(failed)?;
        let program = std::env::current_exe().map_err(failed)?;
        let mut workers = LocalWorkers {
            children: Vec::new(),
            urls: Vec::new(),
            reports: Arc::new(Mutex::new(Vec::new())),
        };
        let (sender, urls) = std::sync::mpsc::channel();
        for index in 0..n {
            let mut command = Command::new(&program);
            command.args([
                "cluster",
                "worker",
                "--bind",
                "127.0.0.1:0",
                "--exit-with-parent",
            ]);
            if report {
                command.arg("--report-tasks");
            }
            let mut child = command
                .env(STORAGE_OPTIONS_ENV, &options_json)
                // Held open by this process (in `Child`) until it ends: see exit_with_parent.
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| failed(format!("cannot start a worker: {e}")))?;
            if let Some(out) = child.stdout.take() {
                let sender = sender.clone();
                let reports = Arc::clone(&workers.reports);
                std::thread::spawn(move || {
                    use std::io::BufRead;
                    let mut lines = std::io::BufReader::new(out).lines().map_while(Result::ok);
                    let url = lines.next().and_then(|line| {
                        line.strip_prefix(LISTENING)
                            .and_then(|u| Url::parse(u).ok())
                    });
                    let _ = sender.send((index, url));
                    // Keep reading, so the worker never blocks on a full pipe.
                    collect_reports(index, lines, &reports);
                });
            }
            workers.children.push(child);
        }
        let mut found: Vec<Option<Url>> = vec![None; n];
        for _ in 0..n {
            match urls.recv_timeout(Duration::from_secs(60)) {
                Ok((index, Some(url))) => {
                    if let Some(slot) = found.get_mut(index) {
                        *slot = Some(url);
                    }
                }
                Ok((_, None)) => {
                    return Err(failed("a worker exited before it printed its address"))
                }
                Err(_) => return Err(failed("a worker did not start within 60 s")),
            }
        }
        workers.urls = found.into_iter().flatten().collect();
        Ok(workers)
    }

    /// The task reports received so far (with reports on), and forgets them.
    pub fn take_reports(&self) -> Vec<(usize, TaskReport)> {
        self.reports
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }

    /// The workers' URLs, in start order.
    pub fn urls(&self) -> &[Url] {
        &self.urls
    }
}

impl Drop for LocalWorkers {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
