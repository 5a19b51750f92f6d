//! Delta scans on datafusion-distributed workers on loopback (feature `distributed`): the
//! workers are `dar cluster worker` processes, coordinated by `dar sql --engine distributed`
//! or by the test.
//!
//! - `dar sql --worker URL …` and `dar sql --engine distributed --executors 2` give the rows
//!   `dar sql` gives in one process: counts and sums over corpus tables with deletion
//!   vectors, column mapping and partitions, and a join with a group-by across two tables;
//! - the split: each task of a scan's stage gets its own plan, the file tasks (whole files
//!   or byte ranges) divided among them, each exactly once;
//! - a worker killed in the middle of a query: the query fails with an error or gives the
//!   right rows; it never gives other rows and never hangs.

use crate::common;
use crate::distributed_ballista::{
    assert_sql_refused, big_table, dar, outcome_after_kill, physical, register_t, sql_lines, DV,
    QUERIES,
};

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::DistributedLeafExec;
use delta_arrow_reader::datafusion::{register_table, DeltaScanExec, ScanOptions};
use delta_arrow_reader::distributed::workers::{spread_session_state, WorkerUrls};
use delta_arrow_reader::DeltaTableBuilder;
use url::Url;

/// Worker processes, killed when dropped.
struct Workers {
    children: Vec<Child>,
    urls: Vec<Url>,
}

impl Drop for Workers {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `n` workers on free loopback ports, each started when it has printed its URL.
fn start_workers(n: usize) -> Workers {
    let mut workers = Workers {
        children: Vec::new(),
        urls: Vec::new(),
    };
    for _ in 0..n {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dar"))
            .args(["cluster", "worker", "--bind", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start a worker: {e}"));
        let out = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let (sender, line) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut lines = std::io::BufReader::new(out).lines();
            let _ = sender.send(lines.next().and_then(Result::ok));
            for _ in lines.map_while(Result::ok) {}
        });
        let line = line
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("the worker printed nothing within 60 s: {e}"))
            .unwrap_or_else(|| panic!("the worker exited before it printed its URL"));
        let url = line
            .strip_prefix("worker listening on ")
            .unwrap_or_else(|| panic!("not a worker's first line: {line}"));
        workers
            .urls
            .push(Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}")));
        workers.children.push(child);
    }
    workers
}

fn worker_args(workers: &Workers) -> Vec<String> {
    workers
        .urls
        .iter()
        .flat_map(|u| ["--worker".to_string(), u.to_string()])
        .collect()
}

#[test]
fn queries_on_two_workers_equal_one_process() {
    let workers = start_workers(2);
    let remote = worker_args(&workers);
    for (query, tables) in QUERIES {
        let local = sql_lines(query, tables, &[]);
        assert!(local.len() >= 2, "{query}: {local:?}");
        assert_eq!(sql_lines(query, tables, &remote), local, "{query}");
    }
    // The workers `dar sql --engine distributed --executors` starts itself give the same.
    let own: Vec<String> = ["--engine", "distributed", "--executors", "2"]
        .map(String::from)
        .to_vec();
    for (query, tables) in [QUERIES[0], QUERIES[QUERIES.len() - 1]] {
        assert_eq!(
            sql_lines(query, tables, &own),
            sql_lines(query, tables, &[]),
            "{query}"
        );
    }
}

/// A worker (or executor) that `dar sql --executors` starts ends with that process, however
/// it ends (SIGKILL included): it exits once the pipe on its standard input closes. A
/// single `--worker` is refused (the planner would run every stage here), as is
/// `--executors` past 64.
#[test]
fn children_end_with_their_parent_and_executor_counts_are_bounded() {
    // (An executor does the same, started by `LocalCluster`; it needs a scheduler to stay up.)
    {
        let args = [
            "cluster",
            "worker",
            "--bind",
            "127.0.0.1:0",
            "--exit-with-parent",
        ];
        let mut child = Command::new(env!("CARGO_BIN_EXE_dar"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(Duration::from_millis(500));
        assert!(
            child.try_wait().unwrap_or_else(|e| panic!("{e}")).is_none(),
            "the worker runs while the pipe is open"
        );
        // The parent's end of the pipe closes, as it does when the parent is killed.
        drop(child.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap_or_else(|e| panic!("{e}")) {
                break Some(status);
            }
            if std::time::Instant::now() >= deadline {
                let _ = child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let status = status.unwrap_or_else(|| panic!("{args:?} outlived its parent's pipe"));
        assert!(!status.success(), "{args:?}: {status}");
    }
    let table = format!("t={}", common::table_dir(DV).display());
    assert_sql_refused(
        "SELECT sum(col1) FROM t",
        &table,
        &["--worker", "http://127.0.0.1:1/"],
        "at least two --worker URLs",
    );
    assert_sql_refused(
        "SELECT sum(col1) FROM t",
        &table,
        &["--executors", "1000000"],
        "at most 64",
    );
}

#[test]
fn bad_worker_arguments_are_refused() {
    let table = format!("t={}", common::table_dir(DV).display());
    for (extra, expected) in [
        (
            vec!["--engine", "distributed"],
            "runs on --executors N or on --worker URL",
        ),
        (
            vec!["--engine", "distributed", "--executors", "0"],
            "at least 1",
        ),
        // (Two: with one worker, the planner runs every stage on the coordinator. Either may
        // be the one found unreachable first.)
        (
            vec![
                "--worker",
                "http://127.0.0.1:1/",
                "--worker",
                "http://127.0.0.1:2/",
            ],
            "the worker cannot be reached",
        ),
        (vec!["--worker", "not a url"], "not a url"),
    ] {
        // (Not count(*): the log's statistics answer it without a scan.)
        assert_sql_refused("SELECT sum(col1) FROM t", &table, &extra, expected);
    }
}

/// A `--worker` that takes the connection and never answers (not a worker, or a stuck
/// one): an `io` error within about 10 s naming it, never a wait without end.
#[test]
fn a_worker_that_never_answers_is_an_error_not_a_hang() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = silent.local_addr().map(|a| a.port()).unwrap_or_default();
    // Takes every connection and holds it, silent.
    std::thread::spawn(move || {
        let held: Vec<_> = silent.incoming().flatten().collect();
        drop(held);
    });
    let table = format!("t={}", common::table_dir(DV).display());
    let started = std::time::Instant::now();
    let url = format!("http://127.0.0.1:{port}/");
    // Two (one is refused as too few), both silent.
    let other = format!("{url}other/");
    assert_sql_refused(
        "SELECT sum(col1) FROM t",
        &table,
        &["--worker", &url, "--worker", &other],
        "answered nothing within 10 s",
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

/// A coordinator over `urls`, the table at `dir` registered as `t`, `per_task` partitions
/// per task, every scan spread over every worker.
async fn coordinator(urls: &[Url], dir: &std::path::Path, per_task: usize) -> SessionContext {
    coordinator_at(urls, &dir.to_string_lossy(), per_task).await
}

/// [`coordinator`] for the table at `location` (a path or URL).
async fn coordinator_at(urls: &[Url], location: &str, per_task: usize) -> SessionContext {
    let state =
        spread_session_state(WorkerUrls(urls.to_vec()), per_task).unwrap_or_else(|e| panic!("{e}"));
    let ctx = SessionContext::new_with_state(state);
    register_t(&ctx, location, per_task).await;
    ctx
}

/// The `DistributedLeafExec` nodes of `plan`, depth first.
fn leaves(plan: &Arc<dyn ExecutionPlan>) -> Vec<Arc<dyn ExecutionPlan>> {
    let mut out = Vec::new();
    if plan.downcast_ref::<DistributedLeafExec>().is_some() {
        out.push(Arc::clone(plan));
    }
    for child in plan.children() {
        out.extend(leaves(child));
    }
    out
}

/// A file task as a path and its byte range, if it has one.
type TaskSpan = (String, Option<(u64, u64)>);

/// Per variant of a Delta scan's leaf: its file tasks.
fn variant_tasks(leaf: &Arc<dyn ExecutionPlan>) -> Vec<Vec<TaskSpan>> {
    let leaf = leaf
        .downcast_ref::<DistributedLeafExec>()
        .unwrap_or_else(|| panic!("not a leaf"));
    assert!(leaf.original().downcast_ref::<DeltaScanExec>().is_some());
    let partitions: Vec<usize> = leaf
        .variants()
        .iter()
        .map(|v| v.properties().partitioning.partition_count())
        .collect();
    assert!(
        partitions.windows(2).all(|w| w[0] == w[1]),
        "{partitions:?}"
    );
    leaf.variants()
        .iter()
        .map(|v| {
            let scan = v
                .downcast_ref::<DeltaScanExec>()
                .unwrap_or_else(|| panic!("a variant is not a Delta scan: {}", v.name()));
            scan.scan()
                .tasks()
                .iter()
                .map(|t| (t.path.clone(), t.range.as_ref().map(|r| (r.start, r.end))))
                .collect()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_task_reads_its_own_files_and_the_rows_are_the_tables() {
    let workers = start_workers(2);
    let (files, rows) = (16, 5_000);
    let dir = big_table(files, rows);
    let query = "SELECT count(*) AS n, sum(v) AS s FROM t WHERE s <> 'none'";
    let total = (files * rows) as i64;
    let expected = vec![format!("{total}|{}", total * (total - 1) / 2)];
    let ctx = coordinator(&workers.urls, dir.path(), 2).await;
    let plan = physical(&ctx, query).await;
    let found = leaves(&plan);
    assert_eq!(
        found.len(),
        1,
        "{}",
        datafusion_distributed::display_plan_ascii(plan.as_ref(), false)
    );
    let tasks = variant_tasks(&found[0]);
    assert_eq!(tasks.len(), 2, "one plan per worker");
    assert!(tasks.iter().all(|t| !t.is_empty()), "{tasks:?}");
    // Whole files, each in exactly one task.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (path, range) in tasks.iter().flatten() {
        assert_eq!(*range, None, "{path}: 16 files need no byte ranges");
        *seen.entry(path.clone()).or_default() += 1;
    }
    assert_eq!(seen.len(), files);
    assert!(seen.values().all(|&n| n == 1), "{seen:?}");
    let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(common::sorted_rows(&batches), expected);

    // One file, two tasks: byte ranges, which between them give every row once.
    let one = big_table(1, 40_000);
    let ctx = coordinator(&workers.urls, one.path(), 2).await;
    let plan = physical(&ctx, query).await;
    let found = leaves(&plan);
    assert_eq!(found.len(), 1);
    let tasks = variant_tasks(&found[0]);
    assert_eq!(tasks.len(), 2);
    assert!(
        tasks.iter().flatten().all(|(_, r)| r.is_some()),
        "{tasks:?}"
    );
    let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let total = 40_000i64;
    assert_eq!(
        common::sorted_rows(&batches),
        vec![format!("{total}|{}", total * (total - 1) / 2)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_reads_every_row_once_whatever_the_task_count() {
    // Files of a corpus table with deletion vectors and partitions, split 1 to 7 ways in
    // this process: the variants' rows together are the scan's rows.
    let table = DeltaTableBuilder::new(common::table_dir(DV).to_string_lossy())
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    register_table(&ctx, "t", table, ScanOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let plan = physical(&ctx, "SELECT * FROM t").await;
    let scans = delta_arrow_reader::distributed::delta_scans(&plan);
    let scan = scans[0]
        .downcast_ref::<DeltaScanExec>()
        .unwrap_or_else(|| panic!("not a scan"));
    let whole = common::sorted_rows(
        &datafusion::physical_plan::collect(Arc::clone(&scans[0]), ctx.task_ctx())
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    assert!(whole.len() > 10);
    let config = ctx.state().config_options().as_ref().clone();
    for tasks in 1..=7 {
        let variants = scan.split_for_tasks(tasks, &config);
        assert_eq!(variants.len(), tasks);
        let width = variants[0].properties().partitioning.partition_count();
        let mut rows = Vec::new();
        for v in variants {
            assert_eq!(v.properties().partitioning.partition_count(), width);
            let v: Arc<dyn ExecutionPlan> = Arc::new(v);
            let batches = datafusion::physical_plan::collect(v, ctx.task_ctx())
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            rows.extend(common::sorted_rows(&batches));
        }
        rows.sort();
        assert_eq!(rows, whole, "{tasks} tasks");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_query_never_gives_other_rows() {
    let dir = big_table(16, 60_000);
    let query = "SELECT k % 1000 AS g, count(*) AS n, sum(v) AS s, count(DISTINCT s) AS d \
                 FROM t GROUP BY k % 1000";
    let local = SessionContext::new();
    let table = DeltaTableBuilder::new(dir.path().to_string_lossy())
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    register_table(&local, "t", table, ScanOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let expected = common::sorted_rows(
        &local
            .sql(query)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    assert_eq!(expected.len(), 1000);

    // Served over loopback HTTP with 100 ms per request, so that each worker's files take
    // a second or more: the kill comes while both are reading.
    let server =
        delta_arrow_reader::serve::StaticServer::start(delta_arrow_reader::serve::ServeConfig {
            latency: Duration::from_millis(100),
            ..delta_arrow_reader::serve::ServeConfig::new(dir.path())
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut workers = start_workers(2);
    let ctx = coordinator_at(&workers.urls, &server.url_for(""), 2).await;
    let started = std::time::Instant::now();
    let run = tokio::spawn(async move { ctx.sql(query).await?.collect().await });
    tokio::time::sleep(Duration::from_millis(400)).await;
    if run.is_finished() {
        let early = run.await.unwrap_or_else(|e| panic!("{e}"));
        panic!(
            "the query ended within {:?}, before the kill ({:?}): make it longer",
            started.elapsed(),
            early.map(|b| common::sorted_rows(&b).len())
        );
    }
    assert!(
        !run.is_finished(),
        "the query ended within {:?}, before the kill: make it longer",
        started.elapsed()
    );
    let mut victim = workers.children.remove(1);
    let _ = victim.kill();
    let _ = victim.wait();
    outcome_after_kill(run, &expected).await;

    // `dar sql` on two workers, one killed while it reads: an error naming the workers, or
    // the right rows.
    let mut workers = start_workers(2);
    let mut args: Vec<String> = vec![
        "sql".into(),
        "--csv".into(),
        query.into(),
        "--table".into(),
        format!("t={}", server.url_for("")),
    ];
    args.extend(worker_args(&workers));
    let child = Command::new(env!("CARGO_BIN_EXE_dar"))
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("dar: {e}"));
    tokio::time::sleep(Duration::from_millis(700)).await;
    let mut victim = workers.children.remove(0);
    let _ = victim.kill();
    let _ = victim.wait();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("dar sql after the kill: {}: {err}", out.status);
    if out.status.success() {
        let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .skip(1)
            .map(|l| l.replace(',', "|"))
            .collect();
        lines.sort();
        assert_eq!(lines, expected, "{err}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("failed on the datafusion-distributed workers")
                && err.contains(workers.urls[1].as_str()),
            "{err}"
        );
    }
}

#[test]
fn the_scaling_table_shows_every_file_read_once_by_the_workers() {
    let (files, rows) = (8, 2_000);
    let dir = big_table(files, rows);
    let out = dar(&[
        "cluster".into(),
        "bench".into(),
        dir.path().to_string_lossy().into_owned(),
        "--engine".into(),
        "distributed".into(),
        "--executors".into(),
        "2".into(),
        "--repeat".into(),
        "1".into(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Rows of the table: `2 4 WALL RATE e1 TASKS FILE_TASKS MIB BUSY`, then `e2 …`.
    let mut file_tasks = BTreeMap::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words
            .iter()
            .position(|w| w.starts_with('e') && w[1..].parse::<u32>().is_ok())
        else {
            continue;
        };
        let n: u64 = words
            .get(at + 2)
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("no file tasks in {line}"));
        file_tasks.insert(words[at].to_string(), n);
    }
    assert_eq!(file_tasks.len(), 2, "{text}");
    assert!(file_tasks.values().all(|&n| n > 0), "{text}");
    assert_eq!(file_tasks.values().sum::<u64>(), files as u64, "{text}");
}
