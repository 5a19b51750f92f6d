//! `dar cluster bench`: how a query scales over loopback clusters of 1, 2, 4 … executors,
//! Ballista's or (`--engine distributed`) datafusion-distributed's workers (feature
//! `distributed`).
//!
//! For each cluster size the query is planned on this process (the log is read once, before
//! any timing) and run `--repeat` times; the table shows the median wall time, the rows the
//! Delta scans read per second, and per executor the tasks it ran, the Delta file tasks, the
//! bytes read and the busy time its tasks reported (see `ReportingEngine`, and
//! `reporting_rewrite` for the workers). datafusion-distributed runs a stage of one task on
//! the coordinator, so with one worker the table shows no worker's share. On a machine with
//! fewer cores than task slots the processes share the cores, so the wall time stops falling
//! there; the busy time over the slots says what a machine with a core per slot would take.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use datafusion::prelude::SessionContext;
use delta_arrow_reader::datafusion::{register_table, ScanOptions};
use delta_arrow_reader::distributed::ballista::{ballista_session_config, execute_on_ballista};
use delta_arrow_reader::{DeltaError, DeltaTable, DeltaTableBuilder};
use futures::TryStreamExt;

use super::cluster::LocalCluster;
use super::sql::Engine;
use super::workers::LocalWorkers;
use delta_arrow_reader::distributed::workers::partitions_per_task;
use delta_arrow_reader::distributed::TaskReport;

/// Arguments of `dar cluster bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The table (path or URL), registered as `t`.
    pub table: String,
    /// Cluster sizes to run, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4])]
    pub executors: Vec<usize>,
    /// Tasks each executor runs at once.
    #[arg(long, default_value_t = 1)]
    pub tasks_per_executor: usize,
    /// The query (default: sums or counts every column of `t`, so every column is read and
    /// one row comes back).
    #[arg(long)]
    pub query: Option<String>,
    /// Runs per cluster size (the median is shown).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Storage option KEY=VALUE (repeatable).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// The engine: Ballista, or datafusion-distributed workers.
    #[arg(long, value_enum, default_value = "ballista")]
    pub engine: Engine,
}

/// A loopback cluster of either engine.
enum Cluster {
    Ballista(LocalCluster),
    Distributed(LocalWorkers),
}

impl Cluster {
    async fn start(
        engine: Engine,
        n: usize,
        tasks: usize,
        options: &std::collections::HashMap<String, String>,
    ) -> Result<Cluster, DeltaError> {
        Ok(match engine {
            Engine::Ballista => {
                Cluster::Ballista(LocalCluster::start(n, tasks, true, options).await?)
            }
            Engine::Distributed => Cluster::Distributed(LocalWorkers::start(n, true, options)?),
        })
    }

    fn take_reports(&self) -> Vec<(usize, TaskReport)> {
        match self {
            Cluster::Ballista(c) => c.take_reports(),
            Cluster::Distributed(w) => w.take_reports(),
        }
    }
}

fn invalid(reason: impl Into<String>) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: reason.into(),
    }
}

/// What one executor did in one run.
#[derive(Debug, Default, Clone)]
struct Share {
    tasks: u64,
    file_tasks: u64,
    bytes: u64,
    rows: u64,
    busy: Duration,
}

/// Reads every column and sends back one row: sums of numbers, of string lengths and of
/// booleans, counts of the rest (sums are not in the log's statistics, so DataFusion cannot
/// answer the query without reading the files).
fn default_query(table: &DeltaTable) -> String {
    use arrow_schema::DataType as T;
    let mut terms = vec!["count(*)".to_string()];
    for f in table.schema().fields() {
        let c = format!("\"{}\"", f.name().replace('"', "\"\""));
        terms.push(match f.data_type() {
            t if t.is_numeric() => format!("sum({c})"),
            T::Utf8 | T::LargeUtf8 | T::Utf8View => format!("sum(length({c}))"),
            T::Boolean => format!("sum(CAST({c} AS INT))"),
            _ => format!("count({c})"),
        });
    }
    format!("SELECT {} FROM t", terms.join(", "))
}

/// Runs the benchmark and prints its table.
pub async fn run_bench(args: &BenchArgs) -> Result<(), DeltaError> {
    if args.executors.is_empty() || args.executors.contains(&0) {
        return Err(invalid("--executors must list sizes of at least 1"));
    }
    if args.tasks_per_executor == 0 || args.repeat == 0 {
        return Err(invalid(
            "--tasks-per-executor and --repeat must be at least 1",
        ));
    }
    let storage = super::parse_options(&args.options)?;
    let table = DeltaTableBuilder::new(&args.table)
        .with_storage_options(storage.clone())
        .load_table_with_eager_scan_metadata()
        .await?;
    let query = args.query.clone().unwrap_or_else(|| default_query(&table));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("engine   {:?}", args.engine);
    println!("table    {}", table.location());
    println!("query    {query}");
    // A slot: a task of Ballista's; a partition of a worker's task on datafusion-distributed.
    let per_executor = match args.engine {
        Engine::Ballista => {
            println!(
                "machine  {cores} cores; {} task(s) per executor; median of {} run(s)\n",
                args.tasks_per_executor, args.repeat
            );
            args.tasks_per_executor
        }
        Engine::Distributed => {
            let partitions = partitions_per_task(args.tasks_per_executor);
            println!(
                "machine  {cores} cores; 1 task per worker per stage, {partitions} partitions \
                 each (a slot: a partition); median of {} run(s)\n",
                args.repeat
            );
            partitions
        }
    };
    println!(
        "{:>9} {:>7} {:>9} {:>12}   {:>8} {:>6} {:>10} {:>10} {:>8}",
        "executors",
        "slots",
        "wall s",
        "rows/s",
        "executor",
        "tasks",
        "file tasks",
        "MiB read",
        "busy s"
    );
    for &n in &args.executors {
        let slots = n * per_executor;
        let cluster = Cluster::start(args.engine, n, args.tasks_per_executor, &storage).await?;
        let mut runs = Vec::new();
        for _ in 0..args.repeat {
            runs.push(run_once(&cluster, &table, &query, args.tasks_per_executor, n).await?);
        }
        runs.sort_by_key(|(wall, _)| *wall);
        let Some((wall, shares)) = runs.get(runs.len() / 2).cloned() else {
            continue;
        };
        let rows: u64 = shares.values().map(|s| s.rows).sum();
        let busy: Duration = shares.values().map(|s| s.busy).sum();
        let rate = rows as f64 / wall.as_secs_f64().max(1e-9);
        for (i, (executor, share)) in shares.iter().enumerate() {
            let (head_n, head_slots, head_wall, head_rate) = if i == 0 {
                (
                    n.to_string(),
                    slots.to_string(),
                    format!("{:.3}", wall.as_secs_f64()),
                    format!("{rate:.0}"),
                )
            } else {
                Default::default()
            };
            println!(
                "{head_n:>9} {head_slots:>7} {head_wall:>9} {head_rate:>12}   {:>8} {:>6} {:>10} {:>10.1} {:>8.3}",
                if *executor == COORDINATOR {
                    "coord".to_string()
                } else {
                    format!("e{}", executor + 1)
                },
                share.tasks,
                share.file_tasks,
                share.bytes as f64 / (1024.0 * 1024.0),
                share.busy.as_secs_f64()
            );
        }
        // A Ballista task runs on one slot; a worker's task runs its partitions at once, so
        // its busy time is already the wall time with a core per partition.
        let (units, per) = match args.engine {
            Engine::Ballista => (slots, "a core per slot".to_string()),
            Engine::Distributed => (n, format!("{per_executor} cores per task")),
        };
        println!(
            "{:>41}busy over {units} task slot(s): {:.3} s (the wall time with {per}){}",
            "",
            busy.as_secs_f64() / units as f64,
            if slots > cores {
                format!("; {slots} slots share {cores} cores here")
            } else {
                String::new()
            }
        );
        drop(cluster);
    }
    Ok(())
}

/// One run: plans, submits and collects the query; the wall time and each executor's share.
async fn run_once(
    cluster: &Cluster,
    table: &DeltaTable,
    query: &str,
    tasks_per_executor: usize,
    executors: usize,
) -> Result<(Duration, BTreeMap<usize, Share>), DeltaError> {
    let df = |e: datafusion::error::DataFusionError| invalid(format!("query failed: {e}"));
    let _ = cluster.take_reports();
    let mut coordinator = None;
    let start = Instant::now();
    match cluster {
        Cluster::Ballista(cluster) => {
            let slots = executors * tasks_per_executor;
            let config = ballista_session_config().with_target_partitions(slots);
            let ctx = SessionContext::new_with_config(config.clone());
            // The scan is split for the cluster's slots, not for this machine's cores.
            let plan = physical_plan(&ctx, table, slots, query).await.map_err(df)?;
            let stream = execute_on_ballista(&cluster.scheduler.url(), plan, config)
                .await
                .map_err(df)?;
            let _batches: Vec<_> = stream.try_collect().await.map_err(df)?;
        }
        Cluster::Distributed(workers) => {
            use delta_arrow_reader::distributed::workers::{spread_session_state, WorkerUrls};
            // One task per worker for every scan, as `dar sql --engine distributed` does.
            let urls = WorkerUrls(workers.urls().to_vec());
            let state = spread_session_state(urls, tasks_per_executor).map_err(df)?;
            let ctx = SessionContext::new_with_state(state);
            let plan = physical_plan(&ctx, table, tasks_per_executor, query)
                .await
                .map_err(df)?;
            let _batches = datafusion::physical_plan::collect(Arc::clone(&plan), ctx.task_ctx())
                .await
                .map_err(df)?;
            coordinator = Some(coordinator_share(&plan, start.elapsed()));
        }
    }
    let wall = start.elapsed();
    // Reports travel through the executors' output: wait briefly for the last ones.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut shares: BTreeMap<usize, Share> =
        (0..executors).map(|i| (i, Share::default())).collect();
    for (executor, r) in cluster.take_reports() {
        let s = shares.entry(executor).or_default();
        s.tasks += 1;
        s.file_tasks += r.delta_file_tasks;
        s.bytes += r.delta_bytes;
        s.rows += r.delta_rows;
        s.busy += Duration::from_micros(r.micros);
    }
    if let Some(share) = coordinator.filter(|s| s.file_tasks > 0) {
        shares.insert(COORDINATOR, share);
    }
    Ok((wall, shares))
}

/// `table` registered in `ctx` as `t`, its scans planned for `partitions` partitions, and
/// the physical plan of `query`.
async fn physical_plan(
    ctx: &SessionContext,
    table: &DeltaTable,
    partitions: usize,
    query: &str,
) -> datafusion::error::Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
    let options = ScanOptions {
        target_partitions: Some(partitions),
        ..ScanOptions::default()
    };
    register_table(ctx, "t", table.clone(), options)?;
    ctx.sql(query).await?.create_physical_plan().await
}

/// The key of the coordinator's own share in a run's table.
const COORDINATOR: usize = usize::MAX;

/// What the coordinator's own plan read (the stages datafusion-distributed ran there): its
/// Delta scans outside the plans sent to workers.
fn coordinator_share(
    plan: &Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    busy: Duration,
) -> Share {
    use delta_arrow_reader::distributed::{delta_scans, scan_totals};
    let (file_tasks, bytes, rows) = scan_totals(&delta_scans(plan));
    Share {
        tasks: 1,
        file_tasks,
        bytes,
        rows,
        busy,
    }
}
