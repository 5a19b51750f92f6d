//! Delta scans on a real Ballista cluster on loopback (feature `distributed`): a scheduler
//! in the test process and executors as `dar cluster executor` processes.
//!
//! - `dar sql --scheduler` and `dar sql --executors 2` give the rows `dar sql` gives in one
//!   process: counts and sums over corpus tables with deletion vectors, column mapping and
//!   partitions, and a join with a group-by across two Delta tables;
//! - the work is spread: both executors run tasks of one query;
//! - an executor killed in the middle of a query: the scheduler runs its tasks again on the
//!   other one and the result is right, or the query fails with an error; never other rows.

use crate::common;

use std::net::SocketAddr;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use datafusion::prelude::SessionContext;
use delta_arrow_reader::datafusion::{register_table, ScanOptions};
use delta_arrow_reader::distributed::ballista::{
    ballista_session_config, execute_on_ballista, BallistaScheduler,
};
use delta_arrow_reader::distributed::TaskReport;
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::DeltaTableBuilder;
use futures::TryStreamExt;
use serde_json::json;

pub(crate) const DV: &str = "golden__dv-partitioned-with-checkpoint";
pub(crate) const LETTERS: &str = "dat__basic_partitioned";
pub(crate) const MAPPED: &str = "golden__table-with-columnmapping-mode-name";
pub(crate) const DV_LOGS: &str = "deltars__table_with_deletion_logs";

/// Executor processes, stopped when dropped: each is sent SIGTERM (it removes its shuffle
/// folder and ends at once), and killed if it still runs after 5 s.
struct Executors(Vec<Child>);

impl Drop for Executors {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status();
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        for c in &mut self.0 {
            while matches!(c.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn start_executors(scheduler: SocketAddr, n: usize) -> Executors {
    Executors(
        (0..n)
            .map(|_| {
                Command::new(env!("CARGO_BIN_EXE_dar"))
                    .args(["cluster", "executor", "--concurrent-tasks", "2"])
                    .arg("--scheduler")
                    .arg(scheduler.to_string())
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap_or_else(|e| panic!("cannot start an executor: {e}"))
            })
            .collect(),
    )
}

async fn cluster(n: usize) -> (BallistaScheduler, Executors) {
    let scheduler = BallistaScheduler::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let executors = start_executors(scheduler.address(), n);
    scheduler
        .wait_for_executors(n, Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (scheduler, executors)
}

pub(crate) fn dar(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dar"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("dar: {e}"))
}

/// `dar sql --csv` with `extra` arguments: its sorted lines.
pub(crate) fn sql_lines(query: &str, tables: &[(&str, &str)], extra: &[String]) -> Vec<String> {
    let specs: Vec<String> = tables
        .iter()
        .map(|(name, table)| format!("{name}={}", common::table_dir(table).display()))
        .collect();
    sql_lines_of(query, &specs, extra)
}

/// `dar sql --csv` over `--table` specs NAME=TABLE with `extra` arguments: its sorted lines.
pub(crate) fn sql_lines_of(query: &str, specs: &[String], extra: &[String]) -> Vec<String> {
    let mut args = vec!["sql".to_string(), "--csv".into(), query.into()];
    for spec in specs {
        args.push("--table".into());
        args.push(spec.clone());
    }
    args.extend(extra.iter().cloned());
    let out = dar(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

pub(crate) const QUERIES: &[(&str, &[(&str, &str)])] = &[
    ("SELECT count(*) AS n, sum(col1) AS s FROM d", &[("d", DV)]),
    (
        "SELECT part, count(*) AS n, sum(col1) AS s, max(col2) AS m FROM d GROUP BY part",
        &[("d", DV)],
    ),
    (
        "SELECT count(*) AS n, sum(\"LongType\") AS s, min(\"StringType\") AS m FROM m",
        &[("m", MAPPED)],
    ),
    (
        "SELECT letter, count(*) AS n, sum(number) AS s FROM l GROUP BY letter",
        &[("l", LETTERS)],
    ),
    ("SELECT count(*) AS n FROM g", &[("g", DV_LOGS)]),
    // A scan that selects no file (partitions pruned): one row of count 0, as here.
    (
        "SELECT count(*) AS n, max(col1) AS m FROM d WHERE part = 999",
        &[("d", DV)],
    ),
    (
        "SELECT l.letter, count(*) AS n, sum(d.col1) AS s \
         FROM d JOIN l ON d.part = l.number GROUP BY l.letter",
        &[("d", DV), ("l", LETTERS)],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_on_two_executors_equal_one_process() {
    let (scheduler, _executors) = cluster(2).await;
    let remote = vec!["--scheduler".to_string(), scheduler.address().to_string()];
    for (query, tables) in QUERIES {
        let local = sql_lines(query, tables, &[]);
        assert!(local.len() >= 2, "{query}: {local:?}");
        let distributed = sql_lines(query, tables, &remote);
        assert_eq!(distributed, local, "{query}");
    }
    // The cluster `dar sql --executors` starts itself gives the same.
    let (query, tables) = QUERIES[QUERIES.len() - 1];
    let own = ["--executors".to_string(), "2".into()];
    assert_eq!(
        sql_lines(query, tables, &own),
        sql_lines(query, tables, &[])
    );
    // An empty table: its CSV header, no row, no executor panic.
    let empty = [("e", "deltars__delta-0.8-empty")];
    let query = "SELECT * FROM e ORDER BY \"column\" LIMIT 5";
    assert_eq!(sql_lines(query, &empty, &remote), ["column"], "{query}");
    assert_eq!(sql_lines(query, &empty, &[]), ["column"], "{query}");
}

/// `dar sql --executors` leaves no shuffle folder behind: each executor keeps its files in a
/// folder of its own, removed as it ends. Run with a temporary folder of its own
/// (`TMPDIR`), which must be empty afterwards (Ballista's default folders were left there).
#[test]
fn loopback_executors_leave_no_shuffle_folder() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let table = format!("d={}", common::table_dir(DV).display());
    let out = Command::new(env!("CARGO_BIN_EXE_dar"))
        .args([
            "sql",
            "--csv",
            "SELECT count(*) AS n FROM d",
            "--table",
            &table,
        ])
        .args(["--executors", "2"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap_or_else(|e| panic!("dar: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in the temporary folder: {left:?}");
}

#[test]
fn bad_cluster_arguments_are_refused() {
    let table = format!("t={}", common::table_dir(DV).display());
    for (extra, expected) in [
        (vec!["--executors", "0"], "at least 1"),
        (
            vec!["--executors", "1", "--tasks-per-executor", "0"],
            "at least 1",
        ),
        (
            vec!["--scheduler", "127.0.0.1:1"],
            "[io]: I/O error on http://127.0.0.1:1: the Ballista scheduler did not run",
        ),
    ] {
        assert_sql_refused("SELECT 1", &table, &extra, expected);
    }
}

/// `dar sql QUERY --table TABLE EXTRA…` fails, saying `expected` on stderr.
pub(crate) fn assert_sql_refused(query: &str, table: &str, extra: &[&str], expected: &str) {
    let mut args: Vec<String> = vec!["sql".into(), query.into(), "--table".into(), table.into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = dar(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{extra:?}");
    assert!(err.contains(expected), "{extra:?}: {err}");
}

/// A table big enough that a shuffle query takes a while: `files` files of `rows` rows,
/// `k` with many distinct values.
pub(crate) fn big_table(files: usize, rows: usize) -> tempfile::TempDir {
    let schema = json!({"type": "struct", "fields": [
        {"name": "k", "type": "long", "nullable": true, "metadata": {}},
        {"name": "v", "type": "long", "nullable": true, "metadata": {}},
        {"name": "s", "type": "string", "nullable": true, "metadata": {}}]});
    let arrow = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, true),
        Field::new("v", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
    ]));
    let mut w = TableWriter::new();
    let mut actions = TableWriter::create_actions(
        &schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    for f in 0..files {
        let base = (f * rows) as i64;
        let k: Vec<i64> = (0..rows as i64).map(|i| (base + i) % 50_000).collect();
        let v: Vec<i64> = (0..rows as i64).map(|i| base + i).collect();
        let s: Vec<String> = (0..rows).map(|i| format!("row-{}", i % 977)).collect();
        let batch = RecordBatch::try_new(
            Arc::clone(&arrow),
            vec![
                Arc::new(Int64Array::from(k)),
                Arc::new(Int64Array::from(v)),
                Arc::new(StringArray::from(s)),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let add = w
            .write_data_file(&format!("part-{f:03}.parquet"), &batch, json!({}), None)
            .unwrap_or_else(|e| panic!("{e}"));
        actions.push(add);
    }
    w.commit("WRITE", actions);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    w.write_to_dir(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// Executors that report each finished task on stdout (`--report-tasks`), one task slot
/// each; the reports arrive on the channel with the index of their executor.
fn reporting_executors(
    scheduler: SocketAddr,
    n: usize,
) -> (Executors, std::sync::mpsc::Receiver<(usize, TaskReport)>) {
    let (sender, reports) = std::sync::mpsc::channel();
    let mut executors = Executors(Vec::new());
    for index in 0..n {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dar"))
            .args([
                "cluster",
                "executor",
                "--concurrent-tasks",
                "1",
                "--report-tasks",
            ])
            .arg("--scheduler")
            .arg(scheduler.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start an executor: {e}"));
        let out = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let sender = sender.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(report) = serde_json::from_str::<TaskReport>(&line) {
                    let _ = sender.send((index, report));
                }
            }
        });
        executors.0.push(child);
    }
    (executors, reports)
}

/// The physical plan of `query` in `ctx`.
pub(crate) async fn physical(
    ctx: &SessionContext,
    query: &str,
) -> Arc<dyn datafusion::physical_plan::ExecutionPlan> {
    let frame = ctx
        .sql(query)
        .await
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    frame
        .create_physical_plan()
        .await
        .unwrap_or_else(|e| panic!("{query}: {e}"))
}

async fn planned(
    table: &std::path::Path,
    query: &str,
    partitions: usize,
) -> (
    SessionContext,
    Arc<dyn datafusion::physical_plan::ExecutionPlan>,
) {
    let config = ballista_session_config().with_target_partitions(partitions);
    let ctx = SessionContext::new_with_config(config);
    // Split for the cluster's slots, not this machine's cores.
    register_t(&ctx, &table.to_string_lossy(), partitions).await;
    let plan = physical(&ctx, query).await;
    (ctx, plan)
}

/// The table at `location` (path or URL) registered in `ctx` as `t`, its scans planned for
/// `partitions` partitions.
pub(crate) async fn register_t(ctx: &SessionContext, location: &str, partitions: usize) {
    let t = DeltaTableBuilder::new(location)
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let options = ScanOptions {
        target_partitions: Some(partitions),
        ..ScanOptions::default()
    };
    register_table(ctx, "t", t, options).unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_executor_killed_mid_query_never_gives_other_rows() {
    let dir = big_table(16, 60_000);
    let query = "SELECT k % 1000 AS g, count(*) AS n, sum(v) AS s, count(DISTINCT s) AS d \
                 FROM t GROUP BY k % 1000";
    // The single-process result.
    let (ctx, plan) = planned(dir.path(), query, 4).await;
    let expected = common::sorted_rows(
        &datafusion::physical_plan::collect(plan, ctx.task_ctx())
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    assert_eq!(expected.len(), 1000);
    // Executors that report each finished task on stdout: the kill comes right after the
    // first task of the query ends, while the others still run or wait.
    let scheduler = BallistaScheduler::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (mut executors, reports) = reporting_executors(scheduler.address(), 2);
    scheduler
        .wait_for_executors(2, Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (_ctx, plan) = planned(dir.path(), query, 8).await;
    let url = scheduler.url();
    let config = ballista_session_config().with_target_partitions(8);
    let run = tokio::spawn(async move {
        let stream = execute_on_ballista(&url, plan, config).await?;
        stream.try_collect::<Vec<RecordBatch>>().await
    });
    let first = tokio::task::spawn_blocking(move || reports.recv_timeout(Duration::from_secs(60)));
    let (reporter, _) = first
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("no task finished within 60 s: {e}"));
    // The executor that just finished a task holds its shuffle output: the harder loss.
    let victim = executors.0.remove(reporter);
    drop(Executors(vec![victim]));
    assert!(
        !run.is_finished(),
        "the query ended before the kill: make it longer"
    );
    outcome_after_kill(run, &expected).await;
}

/// Waits (at most 120 s) for a query whose cluster lost a process: it must give `expected`
/// or fail with an error that says something; never other rows, never a hang.
pub(crate) async fn outcome_after_kill<E: std::fmt::Display>(
    run: tokio::task::JoinHandle<Result<Vec<RecordBatch>, E>>,
    expected: &[String],
) {
    let outcome = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .unwrap_or_else(|_| panic!("the query did not end within 120 s of the kill"))
        .unwrap_or_else(|e| panic!("the query task panicked: {e}"));
    match outcome {
        Ok(batches) => assert_eq!(common::sorted_rows(&batches), expected),
        Err(e) => {
            // Failing is allowed; the error must say what happened.
            let text = e.to_string();
            assert!(!text.is_empty());
            eprintln!("the query failed after the kill: {text}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_logical_path_plans_on_the_scheduler_at_the_pinned_version() {
    use ballista_core::extension::SessionStateExt;
    use datafusion::execution::SessionStateBuilder;

    let (scheduler, _executors) = cluster(2).await;
    // Pinned to an older version: the scheduler must read that one, not the newest.
    let table = common::table_dir(DV);
    let old = DeltaTableBuilder::new(table.to_string_lossy())
        .with_version(3)
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let newest = DeltaTableBuilder::new(table.to_string_lossy())
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let query = "SELECT count(*) AS n FROM t";
    let local = |t: delta_arrow_reader::DeltaTable| async move {
        let ctx = SessionContext::new();
        register_table(&ctx, "t", t, ScanOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let plan = physical(&ctx, query).await;
        let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx()).await;
        common::sorted_rows(&batches.unwrap_or_else(|e| panic!("{e}")))
    };
    let (expected, newest_rows) = (local(old.clone()).await, local(newest).await);
    assert_ne!(
        expected, newest_rows,
        "pick versions with different row counts"
    );

    let state = SessionStateBuilder::new()
        .with_config(ballista_session_config().with_target_partitions(4))
        .with_default_features()
        .build()
        .upgrade_for_ballista(scheduler.url())
        .unwrap_or_else(|e| panic!("{e}"));
    let ctx = SessionContext::new_with_state(state);
    register_table(&ctx, "t", old, ScanOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let batches = ctx
        .sql(query)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(common::sorted_rows(&batches), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_file_is_read_once_and_the_work_is_spread() {
    let (files, rows) = (16, 20_000);
    let dir = big_table(files, rows);
    let scheduler = BallistaScheduler::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (_executors, reports) = reporting_executors(scheduler.address(), 2);
    scheduler
        .wait_for_executors(2, Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let query = "SELECT count(*) AS n, sum(v) AS s FROM t WHERE s <> 'none'";
    let (_ctx, plan) = planned(dir.path(), query, 8).await;
    let config = ballista_session_config().with_target_partitions(8);
    let stream = execute_on_ballista(&scheduler.url(), plan, config)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let batches: Vec<RecordBatch> = stream.try_collect().await.unwrap_or_else(|e| panic!("{e}"));
    let total = (files * rows) as i64;
    assert_eq!(
        common::sorted_rows(&batches),
        vec![format!("{total}|{}", total * (total - 1) / 2)]
    );
    // The reports of every task: each file read once, by both executors between them.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut per_executor = [(0u64, 0u64); 2];
    while let Ok((index, r)) = reports.try_recv() {
        assert!(r.succeeded, "{r:?}");
        per_executor[index].0 += r.delta_file_tasks;
        per_executor[index].1 += r.delta_rows;
    }
    let file_tasks: u64 = per_executor.iter().map(|e| e.0).sum();
    let rows_read: u64 = per_executor.iter().map(|e| e.1).sum();
    assert_eq!(file_tasks, files as u64, "{per_executor:?}");
    assert_eq!(rows_read, total as u64, "{per_executor:?}");
    assert!(
        per_executor.iter().all(|e| e.0 > 0),
        "one executor read nothing: {per_executor:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_tables_are_read_with_the_executors_own_credentials() {
    use crate::s3_moto::{bucket, options, start_moto, upload, BUCKET};

    let moto = start_moto().await;
    upload(&bucket(moto.port), &common::table_dir(DV), "dv").await;
    let url = format!("s3://{BUCKET}/dv");
    let query = "SELECT part, count(*) AS n, sum(col1) AS s FROM t GROUP BY part";
    let local = sql_lines(query, &[("t", DV)], &[]);
    assert!(local.len() > 2, "{local:?}");

    let storage: Vec<String> = options(moto.port)
        .into_iter()
        .flat_map(|(k, v)| ["-o".to_string(), format!("{k}={v}")])
        .collect();
    // `dar sql --executors` hands its storage options to its executors (in their
    // environment): the same rows as from disk.
    let mut own = storage.clone();
    own.extend(["--executors".to_string(), "2".into()]);
    assert_eq!(sql_lines_of(query, &[format!("t={url}")], &own), local);

    // The plan the executors got carries none of the credentials: they used their own.
    let table = DeltaTableBuilder::new(&url)
        .with_storage_options(options(moto.port))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ctx = SessionContext::new_with_config(ballista_session_config());
    register_table(&ctx, "t", table, ScanOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let plan = physical(&ctx, query).await;
    let scans = delta_arrow_reader::distributed::delta_scans(&plan);
    assert!(!scans.is_empty());
    for scan in scans {
        let exec = scan
            .downcast_ref::<delta_arrow_reader::datafusion::DeltaScanExec>()
            .unwrap_or_else(|| panic!("not a scan"));
        let wire =
            delta_arrow_reader::distributed::encode_scan(exec).unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&wire);
        assert!(text.contains(&url), "{text}");
        for (key, value) in options(moto.port) {
            if ["aws_endpoint", "aws_access_key_id", "aws_secret_access_key"]
                .contains(&key.as_str())
            {
                assert!(!text.contains(&value), "{key}'s value is in the wire form");
            }
        }
    }
}
