//! The DataFusion adapter against corpus tables: SQL returns the rows of the streaming API
//! (full scans, filters on partition and data columns, aggregates, a join, projection and
//! limit; deletion vectors and column mapping included), partition targets, DataFusion's
//! file repartitioning into byte ranges, and conservative dynamic partition pruning. (Ranged
//! tasks against whole files in general: `ranged_tasks`.)

use crate::common;

use common::sorted_rows as rows;

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use delta_arrow_reader::datafusion::{
    register_table, DeltaScanExec, IntraFileRepartitioning, ScanOptions,
};
use delta_arrow_reader::{DeltaScanExecutionOptions, DeltaTable, DeltaTableBuilder};
use futures::StreamExt;

const DV: &str = "golden__dv-partitioned-with-checkpoint";
const LETTERS: &str = "dat__basic_partitioned";
const MAPPED: &str = "golden__table-with-columnmapping-mode-name";
const DV_LOGS: &str = "deltars__table_with_deletion_logs";

async fn load(name: &str) -> DeltaTable {
    DeltaTableBuilder::new(common::table_dir(name).to_string_lossy())
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

async fn ctx_with(
    tables: &[(&str, &str)],
    options: ScanOptions,
    config: SessionConfig,
) -> SessionContext {
    let ctx = SessionContext::new_with_config(config);
    for (name, table) in tables {
        register_table(&ctx, name, load(table).await, options.clone())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    ctx
}

async fn ctx(tables: &[(&str, &str)]) -> SessionContext {
    ctx_with(
        tables,
        ScanOptions::default(),
        SessionConfig::new().with_target_partitions(4),
    )
    .await
}

async fn sql(ctx: &SessionContext, query: &str) -> Vec<String> {
    let batches = ctx
        .sql(query)
        .await
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    rows(&batches)
}

/// Rows of the streaming API.
async fn streamed(table: &str, columns: Option<&[&str]>, filter: Option<&str>) -> Vec<String> {
    let mut scan = load(table).await.scan();
    if let Some(c) = columns {
        scan = scan.with_projection(c.iter().copied());
    }
    if let Some(f) = filter {
        scan = scan.with_filter(f);
    }
    let batches = scan
        .build()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_stream()
        .collect_batches()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    rows(&batches)
}

#[tokio::test]
async fn full_scans_equal_the_streaming_api() {
    for table in [DV, LETTERS, MAPPED, DV_LOGS] {
        let c = ctx(&[("t", table)]).await;
        let expected = streamed(table, None, None).await;
        assert!(!expected.is_empty(), "{table}");
        assert_eq!(sql(&c, "SELECT * FROM t").await, expected, "{table}");
    }
    // 35 rows are left after the deletion vectors.
    let c = ctx(&[("t", DV)]).await;
    assert_eq!(sql(&c, "SELECT count(*) FROM t").await, vec!["35"]);
}

#[tokio::test]
async fn filters_on_partition_and_data_columns() {
    let c = ctx(&[("d", DV), ("l", LETTERS), ("m", MAPPED)]).await;
    let all = streamed(DV, None, None).await.len();
    for (query, table, filter) in [
        ("SELECT * FROM d WHERE part = 1", DV, "part = 1"),
        (
            "SELECT * FROM d WHERE col1 > 10 AND part <> 2",
            DV,
            "col1 > 10 and part != 2",
        ),
        (
            "SELECT * FROM d WHERE part IN (0, 3) OR col2 = 'foo'",
            DV,
            "part in (0, 3) or col2 = 'foo'",
        ),
        (
            "SELECT * FROM l WHERE letter = 'a' OR number >= 5",
            LETTERS,
            "letter = 'a' or number >= 5",
        ),
        (
            "SELECT * FROM l WHERE letter IS NULL",
            LETTERS,
            "letter is null",
        ),
        (
            "SELECT * FROM m WHERE \"LongType\" > 2",
            MAPPED,
            "LongType > 2",
        ),
    ] {
        let expected = streamed(table, None, Some(filter)).await;
        assert_eq!(sql(&c, query).await, expected, "{query}");
        if table == DV {
            assert!(
                !expected.is_empty() && expected.len() < all,
                "{query}: {}",
                expected.len()
            );
        }
    }
    // A filter the reader cannot take (a function) still gives the right rows.
    let upper = sql(&c, "SELECT number FROM l WHERE upper(letter) = 'A'").await;
    assert_eq!(
        upper,
        streamed(LETTERS, Some(&["number"]), Some("letter = 'a'")).await
    );
}

/// A pushed-down filter gives the rows the same predicate evaluated row by row gives, for
/// the forms DataFusion rewrites after the filter was classified (`in`/`not in` lists with
/// a null become `x = 1 or null`, `x != 1 and null`): before, such a filter was dropped and
/// every row came back. Checked as rows and as `count(*)`, which statistics may answer.
#[tokio::test]
async fn filters_with_null_constants_keep_their_meaning() {
    let c = ctx(&[("d", DV), ("l", LETTERS)]).await;
    for (table, predicate) in [
        ("l", "number IN (1, NULL)"),
        ("l", "letter IN ('a', NULL)"),
        ("l", "number NOT IN (1, NULL)"),
        ("l", "NOT (number IN (1, NULL))"),
        ("l", "number IN (1, CAST(NULL AS INT))"),
        ("l", "letter IN ('a') OR letter IN (NULL)"),
        ("l", "number NOT IN (1, 2) AND number IN (NULL, 3)"),
        ("l", "number = 1 OR NULL"),
        ("d", "part IN (0, NULL)"),
        ("d", "part NOT IN (0, NULL)"),
    ] {
        let pushed = sql(&c, &format!("SELECT * FROM {table} WHERE {predicate}")).await;
        let by_row = sql(
            &c,
            &format!(
                "SELECT * EXCLUDE (keep) FROM (SELECT *, ({predicate}) AS keep FROM {table}) \
                 WHERE keep IS TRUE"
            ),
        )
        .await;
        assert_eq!(pushed, by_row, "{predicate}");
        let count = sql(
            &c,
            &format!("SELECT count(*) FROM {table} WHERE {predicate}"),
        )
        .await;
        assert_eq!(
            count,
            vec![by_row.len().to_string()],
            "count(*) where {predicate}"
        );
    }
}

/// Filters handed to the scan that the reader cannot take exactly (here one DataFusion
/// would have called inexact, given straight to the provider) are applied above it, on
/// columns read for them alone, and a limit does not stop the scan before them: the rows
/// out all match, in the columns asked for, however DataFusion planned around the scan.
#[tokio::test]
async fn filters_the_reader_cannot_take_are_applied_above_the_scan() {
    use datafusion::catalog::TableProvider;
    use datafusion::prelude::{col, lit};
    let c = ctx(&[]).await;
    let provider = delta_arrow_reader::datafusion::DeltaTableProvider::try_new(
        load(LETTERS).await,
        ScanOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let number = provider
        .schema()
        .index_of("number")
        .unwrap_or_else(|e| panic!("{e}"));
    let upper = datafusion::functions::string::expr_fn::upper(col("letter"));
    let filter = upper.eq(lit("B")).and(col("number").gt(lit(0i64)));
    for limit in [None, Some(1)] {
        let plan = provider
            .scan(
                &c.state(),
                Some(&vec![number]),
                std::slice::from_ref(&filter),
                limit,
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.schema().fields().len(), 1, "only the column asked for");
        let got = rows(
            &datafusion::physical_plan::collect(plan, c.task_ctx())
                .await
                .unwrap_or_else(|e| panic!("{e}")),
        );
        let want = streamed(
            LETTERS,
            Some(&["number"]),
            Some("letter = 'b' and number > 0"),
        )
        .await;
        assert!(!want.is_empty());
        match limit {
            None => assert_eq!(got, want),
            Some(n) => assert!(
                got.len() >= n && got.iter().all(|r| want.contains(r)),
                "{got:?}"
            ),
        }
    }
}

#[tokio::test]
async fn aggregates_group_by() {
    let c = ctx(&[("d", DV), ("m", MAPPED)]).await;
    let got = sql(
        &c,
        "SELECT part, count(*), sum(col1), min(col1), max(col2) FROM d GROUP BY part",
    )
    .await;
    // The same from the streaming API's rows.
    let mut groups: BTreeMap<String, (u64, i64, i64, String)> = BTreeMap::new();
    for row in streamed(DV, Some(&["part", "col1", "col2"]), None).await {
        let cells: Vec<&str> = row.split('|').collect();
        let v: i64 = cells[1].parse().unwrap_or_else(|e| panic!("{row}: {e}"));
        let g = groups
            .entry(cells[0].to_string())
            .or_insert((0, 0, i64::MAX, String::new()));
        g.0 += 1;
        g.1 += v;
        g.2 = g.2.min(v);
        if cells[2] > g.3.as_str() {
            g.3 = cells[2].to_string();
        }
    }
    let mut expected: Vec<String> = groups
        .iter()
        .map(|(p, (n, s, mn, mx))| format!("{p}|{n}|{s}|{mn}|{mx}"))
        .collect();
    expected.sort();
    assert!(expected.len() > 1);
    assert_eq!(got, expected);

    let m = streamed(MAPPED, Some(&["LongType"]), None).await;
    let sum: i64 = m.iter().filter_map(|v| v.parse::<i64>().ok()).sum();
    assert_eq!(
        sql(&c, "SELECT count(*), sum(\"LongType\") FROM m").await,
        vec![format!("{}|{sum}", m.len())]
    );
}

#[tokio::test]
async fn join_of_two_tables() {
    let c = ctx(&[("d", DV), ("l", LETTERS)]).await;
    let got = sql(
        &c,
        "SELECT d.part, d.col1, l.letter FROM d JOIN l ON d.part = l.number",
    )
    .await;
    let left = streamed(DV, Some(&["part", "col1"]), None).await;
    let right = streamed(LETTERS, Some(&["number", "letter"]), None).await;
    let mut expected = Vec::new();
    for a in &left {
        let (part, col1) = a.split_once('|').unwrap_or_else(|| panic!("{a}"));
        for b in &right {
            let (number, letter) = b.split_once('|').unwrap_or_else(|| panic!("{b}"));
            if part == number && part != "NULL" {
                expected.push(format!("{part}|{col1}|{letter}"));
            }
        }
    }
    expected.sort();
    assert!(!expected.is_empty());
    assert_eq!(got, expected);
}

#[tokio::test]
async fn projection_and_limit() {
    let c = ctx(&[("d", DV), ("l", LETTERS)]).await;
    let got = sql(&c, "SELECT col2, part FROM d LIMIT 7").await;
    assert_eq!(got.len(), 7);
    let mut pool = streamed(DV, Some(&["col2", "part"]), None).await;
    for row in &got {
        let at = pool
            .iter()
            .position(|r| r == row)
            .unwrap_or_else(|| panic!("{row} is not a row of the table"));
        pool.remove(at);
    }
    let first = sql(&c, "SELECT number FROM l ORDER BY number LIMIT 3").await;
    assert_eq!(first, vec!["1", "2", "3"]);
    let filtered = sql(&c, "SELECT part FROM d WHERE part = 2 LIMIT 2").await;
    assert_eq!(filtered, vec!["2", "2"]);
}

/// The [`DeltaScanExec`] of a query's physical plan.
fn find_exec(plan: &Arc<dyn ExecutionPlan>) -> Option<&DeltaScanExec> {
    if let Some(e) = (plan.as_ref() as &dyn std::any::Any).downcast_ref::<DeltaScanExec>() {
        return Some(e);
    }
    plan.children().into_iter().find_map(find_exec)
}

async fn physical(ctx: &SessionContext, query: &str) -> Arc<dyn ExecutionPlan> {
    ctx.sql(query)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .create_physical_plan()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn target_partitions_capped_by_the_session_and_explicit_wins() {
    // 13 files: the target, not the file count, bounds the partitions.
    let session = |n| {
        SessionConfig::new()
            .with_target_partitions(n)
            .with_repartition_file_scans(false)
    };
    let c = ctx_with(&[("d", DV)], ScanOptions::default(), session(2)).await;
    let plan = physical(&c, "SELECT * FROM d").await;
    let exec = find_exec(&plan).unwrap_or_else(|| panic!("no DeltaScanExec"));
    assert!(exec.scan().target_partitions() <= 2);
    assert_eq!(exec.scan().partitions(), exec.scan().target_partitions());

    let explicit = ScanOptions {
        target_partitions: Some(5),
        ..ScanOptions::default()
    };
    let c = ctx_with(&[("d", DV)], explicit, session(2)).await;
    let plan = physical(&c, "SELECT * FROM d").await;
    let exec = find_exec(&plan).unwrap_or_else(|| panic!("no DeltaScanExec"));
    assert_eq!(exec.scan().target_partitions(), 5);
    assert_eq!(exec.properties().partitioning.partition_count(), 5);
    assert_eq!(
        sql(&c, "SELECT * FROM d").await,
        streamed(DV, None, None).await
    );
}

/// Runs every partition of `plan` and returns its rows.
async fn run(plan: Arc<dyn ExecutionPlan>, ctx: &SessionContext) -> Vec<String> {
    let mut batches = Vec::new();
    for p in 0..plan.properties().partitioning.partition_count() {
        let mut s = plan
            .execute(p, ctx.task_ctx())
            .unwrap_or_else(|e| panic!("{e}"));
        while let Some(b) = s.next().await {
            batches.push(b.unwrap_or_else(|e| panic!("{e}")));
        }
    }
    rows(&batches)
}

/// A session with `table` registered as `t` and the physical plan of `SELECT * FROM t`.
async fn scan_plan(table: &str, options: ScanOptions) -> (SessionContext, Arc<dyn ExecutionPlan>) {
    let c = ctx_with(&[("t", table)], options, SessionConfig::new()).await;
    let plan = physical(&c, "SELECT * FROM t").await;
    (c, plan)
}

fn exec_of(plan: &Arc<dyn ExecutionPlan>) -> &DeltaScanExec {
    find_exec(plan).unwrap_or_else(|| panic!("no DeltaScanExec"))
}

#[tokio::test]
async fn datafusion_repartitioning_splits_files_into_ranges() {
    use datafusion::config::ConfigOptions;
    let options = |mode| ScanOptions {
        target_partitions: Some(4),
        intra_file_repartitioning: mode,
        ..ScanOptions::default()
    };
    let mut config = ConfigOptions::new();
    config.optimizer.repartition_file_scans = true;
    config.optimizer.repartition_file_min_size = 0;
    let mut off = config.clone();
    off.optimizer.repartition_file_scans = false;
    let mut big = config.clone();
    big.optimizer.repartition_file_min_size = 1 << 30;
    let split = |plan: &Arc<dyn ExecutionPlan>, config: &ConfigOptions| {
        exec_of(plan)
            .repartitioned(4, config)
            .unwrap_or_else(|e| panic!("{e}"))
    };

    // One file, four partitions wanted: below the target, so it is split into ranges.
    let (c, plan) = scan_plan(DV_LOGS, options(IntraFileRepartitioning::WhenBelowTarget)).await;
    let ranged = split(&plan, &config).unwrap_or_else(|| panic!("not repartitioned"));
    assert_eq!(ranged.properties().partitioning.partition_count(), 4);
    assert_eq!(run(ranged, &c).await, streamed(DV_LOGS, None, None).await);
    // With tasks capped at 2 KiB by the execution options: more, smaller ranges.
    let capped = ScanOptions {
        execution_options: DeltaScanExecutionOptions {
            max_task_bytes: 2048,
            ..DeltaScanExecutionOptions::default()
        },
        ..options(IntraFileRepartitioning::WhenBelowTarget)
    };
    let (c2, plan2) = scan_plan(DV_LOGS, capped).await;
    let small = split(&plan2, &config).unwrap_or_else(|| panic!("not repartitioned"));
    let tasks = exec_of(&small).scan().tasks();
    assert!(tasks.len() > 4, "{} tasks", tasks.len());
    assert!(tasks
        .iter()
        .all(|t| t.range.as_ref().is_some_and(|r| r.end - r.start <= 2048)));
    assert_eq!(small.properties().partitioning.partition_count(), 4);
    assert_eq!(run(small, &c2).await, streamed(DV_LOGS, None, None).await);
    // Off, or too small in total: whole files.
    assert!(split(&plan, &off).is_none());
    assert!(split(&plan, &big).is_none());

    // Many files in 4 groups: not below the target; `Always` splits anyway.
    let (_, plan) = scan_plan(DV, options(IntraFileRepartitioning::WhenBelowTarget)).await;
    assert!(split(&plan, &config).is_none());
    let (c, plan) = scan_plan(DV, options(IntraFileRepartitioning::Always)).await;
    let ranged = split(&plan, &config).unwrap_or_else(|| panic!("not repartitioned"));
    assert!(exec_of(&ranged)
        .scan()
        .tasks()
        .iter()
        .any(|t| t.range.is_some()));
    assert_eq!(run(ranged, &c).await, streamed(DV, None, None).await);
}

/// `exec` with `filter` pushed into it the way DataFusion pushes dynamic filters.
fn push_filter(
    exec: &DeltaScanExec,
    filter: Arc<dyn datafusion::physical_plan::PhysicalExpr>,
    ctx: &SessionContext,
) -> Arc<dyn ExecutionPlan> {
    use datafusion::physical_plan::filter_pushdown::{
        ChildFilterPushdownResult, ChildPushdownResult, FilterPushdownPhase, PushedDown,
    };
    let result = ChildPushdownResult {
        parent_filters: vec![ChildFilterPushdownResult {
            filter,
            child_results: vec![],
        }],
        self_filters: vec![],
    };
    let propagation = exec
        .handle_child_pushdown_result(
            FilterPushdownPhase::Post,
            result,
            ctx.state().config_options(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    // Used for skipping only: DataFusion must keep applying it.
    assert!(matches!(propagation.filters.as_slice(), [PushedDown::No]));
    propagation
        .updated_node
        .unwrap_or_else(|| panic!("the filter was not taken"))
}

#[tokio::test]
async fn dynamic_filters_skip_only_tasks_proven_not_to_match() {
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{
        binary, col, lit, BinaryExpr, DynamicFilterPhysicalExpr,
    };
    use datafusion::physical_plan::PhysicalExpr;

    let options = ScanOptions {
        target_partitions: Some(2),
        ..ScanOptions::default()
    };
    let (c, plan) = scan_plan(DV, options.clone()).await;
    let exec = exec_of(&plan);
    let schema = exec.schema();
    let column = |name: &str| col(name, &schema).unwrap_or_else(|e| panic!("{e}"));
    let files = exec.scan().tasks().len();
    let part1 = exec
        .scan()
        .files()
        .iter()
        .filter(|a| a.partition_values.get("part").cloned().flatten().as_deref() == Some("1"))
        .count();
    assert!(part1 > 0 && part1 < files);
    let dynamic = |expr: Arc<dyn PhysicalExpr>| -> Arc<dyn PhysicalExpr> {
        let f = DynamicFilterPhysicalExpr::new(vec![column("part")], lit(true));
        f.update(expr).unwrap_or_else(|e| panic!("{e}"));
        Arc::new(f)
    };
    let equals = |name: &str, value: i32| {
        binary(column(name), Operator::Eq, lit(value), &schema).unwrap_or_else(|e| panic!("{e}"))
    };

    // `part = 1`: every file of another partition is skipped, unread.
    let pruned = push_filter(exec, dynamic(equals("part", 1)), &c);
    let got = run(Arc::clone(&pruned), &c).await;
    assert_eq!(got, streamed(DV, None, Some("part = 1")).await);
    let m = exec_of(&pruned).scan_metrics();
    assert_eq!(m.file_tasks_skipped(), (files - part1) as u64);
    assert_eq!(m.file_tasks_started(), part1 as u64);

    // Doubt reads every task: a data column, or an expression that fails to evaluate.
    let all = streamed(DV, None, None).await;
    let failing = Arc::new(BinaryExpr::new(column("part"), Operator::Eq, lit("x")));
    for filter in [dynamic(equals("col1", 1)), dynamic(failing)] {
        let (c, plan) = scan_plan(DV, options.clone()).await;
        let kept = push_filter(exec_of(&plan), filter, &c);
        assert_eq!(run(Arc::clone(&kept), &c).await, all);
        assert_eq!(exec_of(&kept).scan_metrics().file_tasks_skipped(), 0);
    }
}

#[tokio::test]
async fn a_hash_join_build_side_prunes_the_probe_side_by_partition() {
    let c = ctx(&[("d", DV)]).await;
    let query =
        "SELECT d.part, d.col1, d.col2 FROM (VALUES (1), (3)) AS s(k) JOIN d ON d.part = s.k";
    let plan = physical(&c, query).await;
    let got = {
        let batches = datafusion::physical_plan::collect(Arc::clone(&plan), c.task_ctx())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        rows(&batches)
    };
    assert_eq!(got, streamed(DV, None, Some("part in (1, 3)")).await);
    let exec = exec_of(&plan);
    assert!(!exec.pushed_filters().is_empty());
    let m = exec.scan_metrics();
    let outside = exec
        .scan()
        .files()
        .iter()
        .filter(|a| {
            let p = a.partition_values.get("part").cloned().flatten();
            !matches!(p.as_deref(), Some("1" | "3"))
        })
        .count();
    assert!(outside > 0);
    assert_eq!(m.file_tasks_skipped(), outside as u64);
}

/// A writer's null counts can disagree with the data: `kernel__parsed-stats` counts 0 nulls
/// in `ts_col`, which no data file holds (every value is null). `count(ts_col)` must come
/// from the data, whichever other aggregates share the query.
#[tokio::test]
async fn count_of_a_column_agrees_with_the_data_not_the_logs_null_counts() {
    let c = ctx(&[("p", "kernel__parsed-stats")]).await;
    assert_eq!(sql(&c, "SELECT count(ts_col) FROM p").await, vec!["0"]);
    assert_eq!(
        sql(&c, "SELECT count(ts_col), count(*), min(ts_col) FROM p").await,
        vec!["0|600|NULL"]
    );
    assert_eq!(sql(&c, "SELECT count(id) FROM p").await, vec!["600"]);
}

/// `map['key']` on a map of string keys: the scan gives map keys as `Utf8` even when strings
/// are views, because DataFusion compares the key with a `Utf8` literal and refused a
/// `Utf8View` key ("Invalid comparison operation: Utf8 == Utf8View"). Values stay views.
#[tokio::test]
async fn map_lookup_by_a_string_key() {
    let c = ctx(&[("m", "golden__hive-deltatbl-map-types-correctly")]).await;
    assert_eq!(
        sql(&c, "SELECT c14['foo'], c14['bar'] IS NULL, c13[1] FROM m").await,
        vec!["123|true|foo"]
    );
    assert_eq!(
        sql(&c, "SELECT count(*) FROM m WHERE c14['foo'] = 123").await,
        vec!["1"]
    );
    let t = sql(&c, "SELECT arrow_typeof(c14), arrow_typeof(c6) FROM m").await;
    assert!(
        t[0].contains("\"key\": non-null Utf8,") && t[0].ends_with("|Utf8View"),
        "{t:?}"
    );
}
