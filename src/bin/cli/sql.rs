//! `dar sql`: a SQL query (DataFusion) over one or more tables registered by name, printed
//! as a grid, CSV or JSON lines (feature `datafusion`). Only queries run: statements that
//! would create, change or write anything are refused.

use arrow_array::RecordBatch;
use clap::Args;
use datafusion::execution::context::SQLOptions;
use datafusion::prelude::{DataFrame, SessionContext};
use delta_arrow_reader::datafusion::{register_table, ScanOptions};
use delta_arrow_reader::{DeltaError, DeltaTableBuilder};
#[cfg(feature = "distributed")]
use url::Url;

/// Arguments of `dar sql`.
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The query, e.g. "SELECT letter, count(*) FROM t GROUP BY letter".
    pub query: String,
    /// A table the query names: NAME=TABLE (path or URL), repeatable. NAME@N=TABLE opens
    /// version N, NAME@TIME=TABLE the newest version committed at or before TIME (as
    /// --timestamp takes it): `--table old@3=PATH --table new=PATH` compares two versions.
    #[arg(long = "table", value_name = "NAME[@VERSION]=TABLE", required = true)]
    pub tables: Vec<String>,
    /// Storage option KEY=VALUE for every table (repeatable).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Print newline-delimited JSON objects instead of a grid.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV with a header row instead of a grid.
    #[arg(long)]
    pub csv: bool,
    /// The most memory the query's operators may hold (sorts, joins, aggregations), e.g.
    /// 512M or 4G; past it they spill to temporary files where DataFusion can, or the query
    /// fails with `limit_exceeded`. Default: no limit.
    #[arg(long, value_name = "BYTES", value_parser = super::parse_bytes)]
    pub memory_limit: Option<u64>,
    /// Run the query on a cluster of N executors started on loopback for it: Ballista's (the
    /// scheduler in this process, each executor a child process) or, with `--engine
    /// distributed`, N datafusion-distributed workers (each a child process; this process
    /// coordinates). At most 64.
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "N")]
    pub executors: Option<usize>,
    /// Tasks each executor runs at once (with --executors; with `--engine distributed`, the
    /// partitions each task of a stage runs).
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "K", default_value_t = 2, requires = "executors")]
    pub tasks_per_executor: usize,
    /// Run the query on the Ballista scheduler at HOST:PORT, whose executors have the Delta
    /// codec (`dar cluster executor`).
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "HOST:PORT", value_parser = super::cluster::host_port, conflicts_with_all = ["executors", "workers"])]
    pub scheduler: Option<std::net::SocketAddr>,
    /// Run the query on the datafusion-distributed worker at URL (`dar cluster worker`;
    /// repeatable, at least twice: with one worker the planner keeps every stage in this
    /// process; implies `--engine distributed`).
    #[cfg(feature = "distributed")]
    #[arg(long = "worker", value_name = "URL", conflicts_with = "executors")]
    pub workers: Vec<url::Url>,
    /// The distributed engine (with --executors).
    #[cfg(feature = "distributed")]
    #[arg(long, value_enum, default_value = "ballista")]
    pub engine: Engine,
    /// Partitions to plan the query for (with --executors, --scheduler or --worker; default
    /// 2).
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub partitions: Option<usize>,
}

/// The engine a distributed query runs on.
#[cfg(feature = "distributed")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// Apache DataFusion Ballista.
    Ballista,
    /// datafusion-distributed.
    Distributed,
}

fn invalid(reason: String) -> DeltaError {
    DeltaError::InvalidArgument { reason }
}

/// A cluster service (a scheduler, a worker) that could not be reached or did not run the
/// query: an `io` error at its address, not a bad argument.
#[cfg(feature = "distributed")]
fn service_failed(path: String, message: String) -> DeltaError {
    DeltaError::Io {
        path,
        message,
        phase: delta_arrow_reader::Phase::Read,
        transient: false,
    }
}

/// A DataFusion error as a reader error: the reader's own error when it is one.
fn from_df(e: datafusion::error::DataFusionError) -> DeltaError {
    match delta_arrow_reader::datafusion::into_delta_error(e) {
        Ok(reader) => reader,
        // DataFusion's messages run over lines ("…nope.\nValid fields are …"): one line here.
        Err(e) => invalid(format!(
            "query failed: {}",
            e.to_string().replace('\n', " ")
        )),
    }
}

/// Registers the tables in `ctx`, plans the query there (refusing anything but queries) and
/// gives its DataFusion frame.
async fn plan(
    ctx: &SessionContext,
    args: &SqlArgs,
    options: &ScanOptions,
) -> Result<DataFrame, DeltaError> {
    let storage = super::parse_options(&args.options)?;
    for spec in &args.tables {
        let (name, location) = spec
            .split_once('=')
            .filter(|(n, l)| !n.trim().is_empty() && !l.is_empty())
            .ok_or_else(|| invalid(format!("--table '{spec}' is not NAME=TABLE")))?;
        let (name, at) = match name.trim().split_once('@') {
            Some((name, at)) => (name.trim(), Some(at.trim())),
            None => (name.trim(), None),
        };
        // A name SQL can spell unquoted (`t.x` would name table x of schema t): letters,
        // digits and `_`, not starting with a digit.
        let plain = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !plain {
            return Err(invalid(format!(
                "--table '{spec}': the name must be letters, digits and _ (not starting with a \
                 digit), as SQL spells a table unquoted"
            )));
        }
        // The table as written: a path may end in a space (`t=sales ` is not `sales`).
        let mut builder = DeltaTableBuilder::new(location).with_storage_options(storage.clone());
        match at {
            Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
                let version = v.parse::<u64>().map_err(|_| {
                    invalid(format!("--table '{spec}': version {v} is past the largest"))
                })?;
                builder = builder.with_version(version);
            }
            Some(t) if !t.is_empty() => builder = builder.with_timestamp_str(t)?,
            Some(_) => {
                return Err(invalid(format!(
                    "--table '{spec}': give a version or a time after @ (NAME@3=TABLE)"
                )))
            }
            None => {}
        }
        let table = builder.load_table_with_eager_scan_metadata().await?;
        register_table(ctx, name, table, options.clone()).map_err(from_df)?;
    }
    // A read tool: DDL (CREATE, DROP), DML (INSERT, COPY … TO, which writes files) and
    // other statements (SET, PREPARE) are refused before anything runs.
    let read_only = SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false);
    // `22222.22222` is the exact decimal it spells, as in Spark SQL (DataFusion reads it as a
    // double by default: `decimal_col = 22222.22222` found no row, and a decimal(38) literal
    // failed to cast).
    ctx.state_ref()
        .write()
        .config_mut()
        .options_mut()
        .sql_parser
        .parse_float_as_decimal = true;
    let frame = ctx
        .sql_with_options(&args.query, read_only)
        .await
        .map_err(from_df)?;
    let depth = deepest_expression(frame.logical_plan());
    if depth > MAX_EXPRESSION_DEPTH {
        return Err(DeltaError::LimitExceeded {
            limit: "expression nesting depth (a chain of AND, OR or operators nests one level \
                    per term; an IN list does not)",
            found: depth as u64,
            max: MAX_EXPRESSION_DEPTH as u64,
            path: None,
            phase: delta_arrow_reader::Phase::Plan,
        });
    }
    Ok(frame)
}

/// The deepest expression a query may hold. DataFusion's optimizer walks expressions
/// recursively, some of its passes without a guard, and a chain of 5,500 `AND`s overflowed
/// the thread's stack (the process aborted); 2,000 levels plan and run in a debug build.
const MAX_EXPRESSION_DEPTH: usize = 2000;

/// How deeply the expressions of `plan` (and of its inputs) nest, counted without recursion
/// into them (the plan's own nodes are few and are walked as DataFusion walks them).
fn deepest_expression(plan: &datafusion::logical_expr::LogicalPlan) -> usize {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    let mut deepest = 0;
    let _ = plan.apply(|node| {
        for root in node.expressions() {
            let mut pending = vec![(&root, 1usize)];
            while let Some((expr, depth)) = pending.pop() {
                deepest = deepest.max(depth);
                let _ = expr.apply_children(|child| {
                    pending.push((child, depth + 1));
                    Ok(TreeNodeRecursion::Continue)
                });
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    deepest
}

/// The result's rows as they come, and its schema.
type Rows = (
    arrow_schema::SchemaRef,
    futures::stream::BoxStream<'static, Result<RecordBatch, DeltaError>>,
);

/// Runs the query here (its rows streamed as they are computed), or on a cluster when asked
/// to (its rows gathered there first).
async fn result(args: &SqlArgs) -> Result<Rows, DeltaError> {
    use futures::StreamExt;
    #[cfg(feature = "distributed")]
    {
        check_cluster_args(args)?;
        let gathered = if !args.workers.is_empty() || args.engine == Engine::Distributed {
            Some(on_workers(args).await?)
        } else if args.executors.is_some() || args.scheduler.is_some() {
            Some(distributed(args).await?)
        } else {
            None
        };
        if let Some((schema, batches)) = gathered {
            // The plan's schema: a result of no batches still has its columns (its CSV
            // header).
            let schema = distinct_names(&schema, &[]);
            let named = std::sync::Arc::clone(&schema);
            let rows = batches.into_iter().map(move |b| renamed(b, &named));
            return Ok((schema, futures::stream::iter(rows).boxed()));
        }
    }
    #[cfg(feature = "distributed")]
    if args.partitions.is_some() {
        return Err(invalid(
            "--partitions applies to a cluster: give --executors, --scheduler or --worker".into(),
        ));
    }
    let ctx = match args.memory_limit {
        None => SessionContext::new(),
        Some(bytes) => {
            // A bounded query spills to disk: into a folder of this process, removed at the
            // end and on an interrupt (DataFusion's own temporary folders outlive a Ctrl-C).
            let spill = make_spill_folder()?;
            use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
            let disk =
                DiskManagerBuilder::default().with_mode(DiskManagerMode::Directories(vec![spill]));
            let runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
                .with_memory_limit(usize::try_from(bytes).unwrap_or(usize::MAX), 1.0)
                .with_disk_manager_builder(disk)
                .build_arc()
                .map_err(from_df)?;
            SessionContext::new_with_config_rt(datafusion::prelude::SessionConfig::new(), runtime)
        }
    };
    let frame = plan(&ctx, args, &ScanOptions::default()).await?;
    // A result of no rows is still printed with its columns, each under a name of its own.
    let tables: Vec<Option<String>> = frame
        .schema()
        .iter()
        .map(|(table, _)| table.map(ToString::to_string))
        .collect();
    let schema = distinct_names(
        &std::sync::Arc::new(frame.schema().as_arrow().clone()),
        &tables,
    );
    let memory_limit = args.memory_limit;
    let query_error =
        move |e: datafusion::error::DataFusionError| match (e.find_root(), memory_limit) {
            (datafusion::error::DataFusionError::ResourcesExhausted(_), Some(max)) => {
                DeltaError::LimitExceeded {
                    limit: "query memory (--memory-limit, bytes)",
                    found: max.saturating_add(1),
                    max,
                    path: None,
                    phase: delta_arrow_reader::Phase::Read,
                }
            }
            _ => from_df(e),
        };
    let stream = frame.execute_stream().await.map_err(query_error)?;
    let named = std::sync::Arc::clone(&schema);
    let rows = stream.map(move |b| b.map_err(query_error).and_then(|b| renamed(b, &named)));
    Ok((schema, rows.boxed()))
}

/// `schema` with each column under a name no other column has: a name that repeats (`id` of
/// both tables of a join) is written with its table's name (`t.id`, `u.id`; `tables` holds
/// each column's, where known), and one that still repeats (no table, or the same one) gets
/// a count (`id_2`). JSON lines with two `id` keys lose one column in most readers, and a
/// CSV header with two is ambiguous.
fn distinct_names(
    schema: &arrow_schema::SchemaRef,
    tables: &[Option<String>],
) -> arrow_schema::SchemaRef {
    use std::collections::{HashMap, HashSet};
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for field in schema.fields() {
        *seen.entry(field.name().as_str()).or_default() += 1;
    }
    if seen.values().all(|&n| n == 1) {
        return std::sync::Arc::clone(schema);
    }
    let mut taken: HashSet<String> = HashSet::new();
    let fields: Vec<arrow_schema::FieldRef> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let name = field.name();
            let mut candidate = match tables.get(i) {
                Some(Some(table)) if seen.get(name.as_str()).is_some_and(|&n| n > 1) => {
                    format!("{table}.{name}")
                }
                _ => name.clone(),
            };
            let base = candidate.clone();
            let mut count = 1;
            while taken.contains(&candidate) {
                count += 1;
                candidate = format!("{base}_{count}");
            }
            taken.insert(candidate.clone());
            std::sync::Arc::new(field.as_ref().clone().with_name(candidate))
        })
        .collect();
    std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    ))
}

/// `batch` under `schema` (the same columns, named by [`distinct_names`]).
fn renamed(
    batch: RecordBatch,
    schema: &arrow_schema::SchemaRef,
) -> Result<RecordBatch, DeltaError> {
    if batch
        .schema()
        .fields()
        .iter()
        .zip(schema.fields())
        .all(|(a, b)| a.name() == b.name())
    {
        return Ok(batch);
    }
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(
        std::sync::Arc::clone(schema),
        batch.columns().to_vec(),
        &options,
    )
    .map_err(super::arrow_error)
}

/// Makes the folder `dar sql --memory-limit` spills into: `dar-sql-spill-PID-RANDOM` in the
/// temporary folder, new, removed on an interrupt and at the end of `run_sql`.
fn make_spill_folder() -> Result<std::path::PathBuf, DeltaError> {
    use std::hash::{BuildHasher, RandomState};
    let temp = std::env::temp_dir();
    for _ in 0..100 {
        // A name nobody can guess, made exclusively (a planted folder or link of that name
        // is never used, so never removed either).
        let salt = RandomState::new().hash_one(std::time::SystemTime::now());
        let dir = temp.join(format!("dar-sql-spill-{}-{salt:016x}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                super::output::remove_on_interrupt(dir.clone());
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(super::output::io_error(&dir, e)),
        }
    }
    Err(super::output::io_error(
        &temp,
        "cannot make a spill folder (100 names taken)",
    ))
}

/// Runs the query on Ballista: a loopback cluster started for it, or the given scheduler.
#[cfg(feature = "distributed")]
async fn distributed(
    args: &SqlArgs,
) -> Result<(arrow_schema::SchemaRef, Vec<RecordBatch>), DeltaError> {
    use delta_arrow_reader::distributed::ballista::{ballista_session_config, execute_on_ballista};
    use futures::TryStreamExt;
    let (cluster, url, partitions) = match (args.executors, args.scheduler) {
        (Some(0), _) => return Err(invalid("--executors must be at least 1".into())),
        (_, _) if args.tasks_per_executor == 0 => {
            return Err(invalid("--tasks-per-executor must be at least 1".into()))
        }
        (Some(n), _) => {
            let cluster = super::cluster::LocalCluster::start(
                n,
                args.tasks_per_executor,
                false,
                &super::parse_options(&args.options)?,
            )
            .await?;
            let url = cluster.scheduler.url();
            (Some(cluster), url, n * args.tasks_per_executor)
        }
        (None, Some(address)) => (
            None,
            format!("http://{address}"),
            args.partitions.unwrap_or(2),
        ),
        (None, None) => return Err(invalid("no cluster to run on".into())),
    };
    if partitions == 0 {
        return Err(invalid("--partitions must be at least 1".into()));
    }
    let config = ballista_session_config().with_target_partitions(partitions);
    let ctx = SessionContext::new_with_config(config.clone());
    // The scans are split for the cluster's slots, not for this machine's cores.
    let options = ScanOptions {
        target_partitions: Some(partitions),
        ..ScanOptions::default()
    };
    let physical = plan(&ctx, args, &options)
        .await?
        .create_physical_plan()
        .await
        .map_err(from_df)?;
    let schema = physical.schema();
    // The scheduler unreachable or refusing the job is a failure to reach a service (as an
    // unreachable worker is), not a bad argument.
    let run = async {
        let stream = execute_on_ballista(&url, physical, config)
            .await
            .map_err(|e| {
                service_failed(
                    url.clone(),
                    format!("the Ballista scheduler did not run the query: {e}"),
                )
            })?;
        stream.try_collect().await.map_err(from_df)
    };
    let batches = match cluster {
        Some(_) => run.await?,
        None => with_queue_notice(run, &url).await?,
    };
    drop(cluster);
    Ok((schema, batches))
}

/// How long a query on a given scheduler runs before `dar sql` says what it may be waiting
/// for.
#[cfg(feature = "distributed")]
const QUEUE_NOTICE_AFTER: std::time::Duration = std::time::Duration::from_secs(20);

/// Runs `query`; if it has not finished after `after`, calls `notice` once and waits on. A
/// Ballista scheduler keeps a job queued until an executor takes it (it has no call that
/// lists its executors, so a client cannot tell a queued job from a long one), and a
/// scheduler without executors would otherwise look like a hang.
#[cfg(feature = "distributed")]
async fn notice_if_slow<T>(
    query: impl std::future::Future<Output = T>,
    after: std::time::Duration,
    notice: impl FnOnce(),
) -> T {
    tokio::pin!(query);
    tokio::select! {
        done = &mut query => return done,
        () = tokio::time::sleep(after) => {}
    }
    notice();
    query.await
}

/// [`notice_if_slow`] with the notice `dar sql --scheduler` prints on standard error.
#[cfg(feature = "distributed")]
async fn with_queue_notice<T>(query: impl std::future::Future<Output = T>, url: &str) -> T {
    let address = url.trim_start_matches("http://");
    notice_if_slow(query, QUEUE_NOTICE_AFTER, || {
        super::terminal::message(&format!(
            "dar: the query has run {} s on the scheduler at {address}; a job waits there \
             until an executor takes it: if none is registered, start one with `dar cluster \
             executor --scheduler {address}` (Ctrl-C stops this query)",
            QUEUE_NOTICE_AFTER.as_secs()
        ))
    })
    .await
}

#[cfg(feature = "distributed")]
/// The most executors (or workers) `--executors` starts on this machine: each is a process
/// of its own, so a typo (`--executors 1000000`) must not start thousands.
const MAX_EXECUTORS: usize = 64;

#[cfg(feature = "distributed")]
/// The most tasks one executor (or partitions one worker's task) may run at once: each is
/// a thread or more (100,000 made the executors panic and the query hang).
const MAX_TASKS_PER_EXECUTOR: usize = 256;

/// Refuses cluster arguments that cannot work: too many executors or tasks, a --worker given
/// twice (one worker counted as two).
#[cfg(feature = "distributed")]
fn check_cluster_args(args: &SqlArgs) -> Result<(), DeltaError> {
    if args.executors.is_some_and(|n| n > MAX_EXECUTORS) {
        return Err(invalid(format!(
            "--executors starts at most {MAX_EXECUTORS} processes on this machine; for more, \
             start them with dar cluster and give --scheduler or --worker"
        )));
    }
    if args.tasks_per_executor > MAX_TASKS_PER_EXECUTOR
        || args.partitions.is_some_and(|p| p > MAX_TASKS_PER_EXECUTOR)
    {
        return Err(invalid(format!(
            "--tasks-per-executor and --partitions are at most {MAX_TASKS_PER_EXECUTOR}"
        )));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = args.workers.iter().find(|u| !seen.insert(u.as_str())) {
        return Err(invalid(format!("--worker {twice} is given twice")));
    }
    Ok(())
}

/// Runs the query on datafusion-distributed: workers started on loopback for it, or the
/// given ones; this process plans and coordinates.
#[cfg(feature = "distributed")]
async fn on_workers(
    args: &SqlArgs,
) -> Result<(arrow_schema::SchemaRef, Vec<RecordBatch>), DeltaError> {
    use delta_arrow_reader::distributed::workers::{spread_session_state, WorkerUrls};
    let per_task = match args.executors {
        Some(_) => args.tasks_per_executor,
        None => args.partitions.unwrap_or(2),
    };
    if per_task == 0 {
        return Err(invalid(
            "--tasks-per-executor and --partitions must be at least 1".into(),
        ));
    }
    let (local, urls) = match args.executors {
        Some(0) => return Err(invalid("--executors must be at least 1".into())),
        Some(n) => {
            let workers = super::workers::LocalWorkers::start(
                n,
                false,
                &super::parse_options(&args.options)?,
            )?;
            let urls = workers.urls().to_vec();
            (Some(workers), urls)
        }
        None if args.workers.len() == 1 => {
            // datafusion-distributed puts a stage on workers only when it has two or more:
            // with one, the whole query would run here, the worker never asked.
            return Err(invalid(
                "a query runs on datafusion-distributed workers only when there are two or more \
                 (with one, every stage runs in this process): give at least two --worker URLs"
                    .into(),
            ));
        }
        None if !args.workers.is_empty() => {
            // All at once: each may take the whole bound.
            futures::future::try_join_all(args.workers.iter().map(worker_answers)).await?;
            (None, args.workers.clone())
        }
        None => {
            return Err(invalid(
                "--engine distributed runs on --executors N or on --worker URL".into(),
            ))
        }
    };
    // Every scan is spread over every worker, whatever the size of the table.
    let state = spread_session_state(WorkerUrls(urls.clone()), per_task).map_err(from_df)?;
    let ctx = SessionContext::new_with_state(state);
    let options = ScanOptions {
        target_partitions: Some(per_task),
        ..ScanOptions::default()
    };
    let listed = urls.iter().map(Url::as_str).collect::<Vec<_>>().join(", ");
    let frame = plan(&ctx, args, &options).await?;
    let schema: arrow_schema::SchemaRef = std::sync::Arc::new(frame.schema().as_arrow().clone());
    let batches = frame.collect().await.map_err(|e| match e.find_root() {
        // A reader error of this process (planning, the coordinator's own stages).
        datafusion::error::DataFusionError::External(inner)
            if inner.downcast_ref::<DeltaError>().is_some() =>
        {
            from_df(e)
        }
        // A worker's error, or a worker that could not be reached or went away: they
        // come back through gRPC as text.
        _ => service_failed(
            listed.clone(),
            format!("the query failed on the datafusion-distributed workers: {e}"),
        ),
    })?;
    drop(local);
    Ok((schema, batches))
}

/// How long a `--worker` has to answer the opening of an HTTP/2 connection.
#[cfg(feature = "distributed")]
const WORKER_ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Checks that something answers at a `--worker` URL before the query is planned on it: it
/// is sent the opening of an HTTP/2 connection (what gRPC starts with) and must send any
/// byte back within [`WORKER_ANSWER_WITHIN`]. A server that takes the connection and never
/// answers held `dar sql` for ever (the gRPC client has no such bound); one that answers
/// something else fails later with the client's own error.
#[cfg(feature = "distributed")]
async fn worker_answers(url: &Url) -> Result<(), DeltaError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let unreachable = |why: String| {
        service_failed(
            url.to_string(),
            format!("the worker cannot be reached: {why}"),
        )
    };
    let host = url.host_str().unwrap_or_default().to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let check = async {
        let mut stream = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        // The HTTP/2 connection preface, then an empty SETTINGS frame.
        let mut opening = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        opening.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        stream
            .write_all(&opening)
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        let mut first = [0u8; 1];
        match stream.read(&mut first).await {
            Ok(0) => Err(unreachable(
                "it closed the connection without a word".into(),
            )),
            Ok(_) => Ok(()),
            Err(e) => Err(unreachable(e.to_string())),
        }
    };
    tokio::time::timeout(WORKER_ANSWER_WITHIN, check)
        .await
        .map_err(|_| {
            unreachable(format!(
                "it took the connection but answered nothing within {} s (is it a `dar cluster \
                 worker`?)",
                WORKER_ANSWER_WITHIN.as_secs()
            ))
        })?
}

/// Registers the tables, runs the query and prints its result.
pub async fn run_sql(args: &SqlArgs) -> Result<(), DeltaError> {
    let result = print_result(args).await;
    // The spill folder, if the query made one.
    super::output::remove_registered();
    result
}

async fn print_result(args: &SqlArgs) -> Result<(), DeltaError> {
    use super::rows_out::{gather_for_grid, print_rows, RowFormat};
    let (schema, rows) = result(args).await?;
    if args.json {
        return print_rows(rows, RowFormat::Json).await;
    }
    if args.csv {
        // A result of no rows still has its header.
        let rows = futures::StreamExt::boxed(futures::StreamExt::chain(
            futures::stream::iter([Ok(RecordBatch::new_empty(schema.clone()))]),
            rows,
        ));
        return print_rows(rows, RowFormat::Csv).await;
    }
    // The grid shows the first GRID_MAX_ROWS rows; the rest are counted, not kept.
    let gathered = gather_for_grid(rows, true).await?;
    let grid = super::data_grid::format(&schema, &gathered.batches)?;
    let total = gathered.total;
    let rows = if gathered.shown < total {
        format!(
            "{total} rows, the first {} shown (--csv or --json print them all)",
            gathered.shown
        )
    } else {
        format!("{total} row{}", if total == 1 { "" } else { "s" })
    };
    super::terminal::print_text(&format!("{grid}\n{rows}\n"))
}

#[cfg(test)]
mod tests {
    use super::distinct_names;
    #[cfg(feature = "distributed")]
    use super::notice_if_slow;
    #[cfg(feature = "distributed")]
    use std::cell::Cell;
    #[cfg(feature = "distributed")]
    use std::time::Duration;

    #[test]
    fn repeated_column_names_are_told_apart() {
        use arrow_schema::{DataType, Field, Schema};
        let schema = std::sync::Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
            Field::new("id", DataType::Int64, true),
            Field::new("t.id", DataType::Int64, true),
            Field::new("x", DataType::Int64, true),
            Field::new("x", DataType::Int64, true),
        ]));
        let tables =
            [Some("t"), Some("t"), Some("u"), None, None, None].map(|t| t.map(str::to_string));
        let names: Vec<String> = distinct_names(&schema, &tables)
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(names, ["t.id", "name", "u.id", "t.id_2", "x", "x_2"]);
        // Names that are already distinct are kept as they are.
        let plain = std::sync::Arc::new(Schema::new(vec![Field::new("a", DataType::Int8, true)]));
        assert!(std::sync::Arc::ptr_eq(&distinct_names(&plain, &[]), &plain));
    }

    #[cfg(feature = "distributed")]
    #[tokio::test]
    async fn a_slow_query_is_noticed_once_and_still_awaited() {
        let noticed = Cell::new(0);
        let slow = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            7
        };
        let out = notice_if_slow(slow, Duration::from_millis(20), || {
            noticed.set(noticed.get() + 1)
        })
        .await;
        assert_eq!((out, noticed.get()), (7, 1));
    }

    #[cfg(feature = "distributed")]
    #[tokio::test]
    async fn a_quick_query_is_not_noticed() {
        let noticed = Cell::new(false);
        let out = notice_if_slow(async { 3 }, Duration::from_secs(5), || noticed.set(true)).await;
        assert_eq!((out, noticed.get()), (3, false));
    }
}
