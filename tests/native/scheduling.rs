//! Read scheduling and scan metrics (issue 4): whole-file grouping into partitions, the
//! scan-wide and per-partition permit caps, prefetch keeping task order, backpressure,
//! cancellation releasing permits, the whole-file read threshold, the shared row limit, and
//! the metrics of a full scan.
//!
//! The tables are built in memory with the fixture writer and read through a probing store
//! that counts the data files with requests in flight, can hold every data request at a gate
//! until it is opened, can delay requests per file, and counts held requests that were
//! dropped before they finished.

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::io::{BoxFuture, MemoryStore, RangeRead};
use delta_arrow_reader::{DeltaScan, DeltaScanExecutionOptions};
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder, Result};
use futures::StreamExt;
use serde_json::json;

/// What the probing store saw.
#[derive(Debug, Default)]
struct Probe {
    /// Data file → requests in flight.
    in_flight: Mutex<HashMap<String, usize>>,
    /// Most data files with a request in flight at once.
    max_files: AtomicUsize,
    /// Data files in the order of their first request.
    opened: Mutex<Vec<String>>,
    /// Data requests made.
    requests: AtomicUsize,
    /// Held requests dropped before they finished.
    dropped: AtomicUsize,
    /// Closed: data requests wait. Wakers of the waiting requests.
    gate: Mutex<(bool, Vec<Waker>)>,
    /// Per file, a delay before each request is answered.
    delays: Mutex<HashMap<String, Duration>>,
}

impl Probe {
    fn new(open: bool) -> Arc<Self> {
        let p = Probe::default();
        if let Ok(mut g) = p.gate.lock() {
            g.0 = open;
        }
        Arc::new(p)
    }

    fn open_gate(&self) {
        let wakers = match self.gate.lock() {
            Ok(mut g) => {
                g.0 = true;
                std::mem::take(&mut g.1)
            }
            Err(_) => Vec::new(),
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    async fn pass_gate(&self) {
        futures::future::poll_fn(|cx| match self.gate.lock() {
            Ok(mut g) if !g.0 => {
                g.1.push(cx.waker().clone());
                Poll::Pending
            }
            _ => Poll::Ready(()),
        })
        .await
    }

    fn files_in_flight(&self) -> usize {
        self.in_flight.lock().map(|m| m.len()).unwrap_or(0)
    }

    fn opened(&self) -> Vec<String> {
        self.opened.lock().map(|o| o.clone()).unwrap_or_default()
    }
}

/// Registers a request in flight; on drop, unregisters it and counts it as dropped unless it
/// finished.
struct InFlight {
    probe: Arc<Probe>,
    path: String,
    finished: bool,
}

impl InFlight {
    fn enter(probe: &Arc<Probe>, path: &str) -> Self {
        if let Ok(mut m) = probe.in_flight.lock() {
            *m.entry(path.to_string()).or_insert(0) += 1;
            probe.max_files.fetch_max(m.len(), Ordering::SeqCst);
        }
        if let Ok(mut o) = probe.opened.lock() {
            if !o.iter().any(|p| p == path) {
                o.push(path.to_string());
            }
        }
        probe.requests.fetch_add(1, Ordering::SeqCst);
        InFlight {
            probe: Arc::clone(probe),
            path: path.to_string(),
            finished: false,
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut m) = self.probe.in_flight.lock() {
            if let Some(n) = m.get_mut(&self.path) {
                *n -= 1;
                if *n == 0 {
                    m.remove(&self.path);
                }
            }
        }
        if !self.finished {
            self.probe.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[derive(Debug)]
struct ProbeStore {
    inner: MemoryStore,
    probe: Arc<Probe>,
}

fn is_data(path: &str) -> bool {
    path.ends_with(".parquet") && !path.starts_with("_delta_log")
}

impl ProbeStore {
    fn held<'a>(
        &'a self,
        path: &str,
        inner: BoxFuture<'a, Result<Bytes>>,
    ) -> BoxFuture<'a, Result<Bytes>> {
        if !is_data(path) {
            return inner;
        }
        let probe = Arc::clone(&self.probe);
        let path = path.to_string();
        Box::pin(async move {
            let mut guard = InFlight::enter(&probe, &path);
            probe.pass_gate().await;
            let delay = probe.delays.lock().ok().and_then(|d| d.get(&path).copied());
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            let r = inner.await;
            guard.finished = true;
            r
        })
    }
}

impl RangeRead for ProbeStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        self.held(path, self.inner.get_range(path, range))
    }
    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        self.held(path, self.inner.get(path))
    }
    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<delta_arrow_reader::io::ListEntry>>>> {
        self.inner.list(prefix, start_after)
    }
}

fn ok<T, E: std::fmt::Display>(r: std::result::Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// File `k` holds ids `k * 1000 .. k * 1000 + rows[k]`.
fn file_path(k: usize) -> String {
    format!("part-{k:03}.parquet")
}

fn file_index(path: &str) -> usize {
    path.trim_start_matches("part-")
        .trim_end_matches(".parquet")
        .parse()
        .unwrap_or(usize::MAX)
}

/// A table of one `id` column, file `k` with `rows[k]` rows.
fn table_store(rows: &[usize]) -> MemoryStore {
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}},
    ]});
    let mut w = TableWriter::new();
    let mut actions = TableWriter::create_actions(
        &schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    let arrow = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    for (k, &n) in rows.iter().enumerate() {
        let ids = Int64Array::from_iter_values((0..n as i64).map(|i| k as i64 * 1000 + i));
        let batch = ok(RecordBatch::try_new(
            Arc::clone(&arrow),
            vec![Arc::new(ids)],
        ));
        actions.push(ok(w.write_data_file(
            &file_path(k),
            &batch,
            json!({}),
            None,
        )));
    }
    w.commit("WRITE", actions);
    w.store().clone()
}

async fn load(rows: &[usize], probe: &Arc<Probe>) -> DeltaTable {
    let store = ProbeStore {
        inner: table_store(rows),
        probe: Arc::clone(probe),
    };
    // Eager: these scans' requests are data reads only.
    ok(DeltaTableBuilder::new("memory://sched/")
        .with_store(Arc::new(store))
        .load_table_with_eager_scan_metadata()
        .await)
}

fn all_ids(rows: &[usize]) -> Vec<i64> {
    let mut v: Vec<i64> = rows
        .iter()
        .enumerate()
        .flat_map(|(k, &n)| (0..n as i64).map(move |i| k as i64 * 1000 + i))
        .collect();
    v.sort_unstable();
    v
}

/// The ids a partition reads, in its task order.
fn partition_ids(scan: &DeltaScan, partition: usize, rows: &[usize]) -> Vec<i64> {
    scan.partition_tasks()[partition]
        .iter()
        .flat_map(|t| {
            let k = file_index(&t.path);
            (0..rows[k] as i64).map(move |i| k as i64 * 1000 + i)
        })
        .collect()
}

fn options(
    target: usize,
    scan_wide: Option<usize>,
    per_partition: usize,
    prefetch: usize,
) -> DeltaScanExecutionOptions {
    DeltaScanExecutionOptions {
        target_partitions: Some(target),
        max_concurrent_file_reads: scan_wide,
        max_concurrent_file_reads_per_partition: per_partition,
        prefetch_files_per_partition: Some(prefetch),
        ..Default::default()
    }
}

async fn wait_until(what: &str, f: impl Fn() -> bool) {
    for _ in 0..1000 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("timed out waiting until {what}");
}

#[tokio::test]
async fn files_are_grouped_into_partitions_and_zero_is_an_error() {
    let rows = [5, 40, 10, 30, 20, 8, 16];
    let probe = Probe::new(true);
    let t = load(&rows, &probe).await;

    let scan = ok(t.scan().with_target_partitions(3).build().await);
    assert_eq!(scan.partitions(), 3);
    assert_eq!(scan.metrics().partitions_planned(), 3);
    assert_eq!(scan.metrics().files_planned(), 7);
    let expected: Vec<Vec<i64>> = (0..3).map(|p| partition_ids(&scan, p, &rows)).collect();
    assert!(expected.iter().all(|e| !e.is_empty()));
    let streams = scan.into_partition_streams();
    assert_eq!(streams.len(), 3);
    let mut union = Vec::new();
    for (p, s) in streams.into_iter().enumerate() {
        let got = common::ids(&ok(s.collect_batches().await));
        assert_eq!(got, expected[p], "partition {p} keeps its task order");
        union.extend(got);
    }
    union.sort_unstable();
    assert_eq!(union, all_ids(&rows));

    // Without a limit the merged stream hands batches out as the partitions yield them (and
    // the partitions share the files: see partitions_of_the_merged_stream_share_the_files):
    // every row once, each file's rows in their order.
    let scan = ok(t
        .scan()
        .with_batch_size(3)
        .with_target_partitions(3)
        .build()
        .await);
    assert_eq!(scan.partitions(), 3);
    let got = common::ids(&ok(scan.into_stream().collect_batches().await));
    for k in 0..rows.len() as i64 {
        let file: Vec<i64> = got.iter().copied().filter(|id| id / 1000 == k).collect();
        assert!(
            file.windows(2).all(|w| w[0] < w[1]),
            "file {k}'s rows in their order in the merge: {file:?}"
        );
    }
    let mut sorted = got;
    sorted.sort_unstable();
    assert_eq!(sorted, all_ids(&rows));

    // With a limit, in the scan's task (log) order: the first rows are the first in the log.
    let total = all_ids(&rows).len();
    let scan = ok(t
        .scan()
        .with_batch_size(3)
        .with_target_partitions(3)
        .with_limit(total)
        .build()
        .await);
    let got = common::ids(&ok(scan.into_stream().collect_batches().await));
    assert_eq!(got, all_ids(&rows));

    // A scan-wide limit too small for every partition to hold its files while it waits for
    // its turn in the ordered merge: fewer partitions are read (4 permits, 3 per partition →
    // 2). Without a limit every partition is drained as it yields, so all 3 are read.
    let scan = ok(t
        .scan()
        .with_execution_options(options(3, Some(4), 3, 5))
        .with_limit(total)
        .build()
        .await);
    assert_eq!(scan.partitions(), 3);
    let stream = scan.into_stream();
    assert_eq!(stream.metrics().partitions_planned(), 2);
    let got = common::ids(&ok(stream.collect_batches().await));
    assert_eq!(got, all_ids(&rows));
    let scan = ok(t
        .scan()
        .with_execution_options(options(3, Some(4), 3, 5))
        .build()
        .await);
    let stream = scan.into_stream();
    assert_eq!(stream.metrics().partitions_planned(), 3);
    let mut got = common::ids(&ok(stream.collect_batches().await));
    got.sort_unstable();
    assert_eq!(got, all_ids(&rows));

    // Never more partitions than files; the merged stream returns every row.
    let scan = ok(t.scan().with_target_partitions(50).build().await);
    assert_eq!(scan.partitions(), 7);
    let mut got = common::ids(&ok(scan.into_stream().collect_batches().await));
    got.sort_unstable();
    assert_eq!(got, all_ids(&rows));

    for bad in [
        t.scan().with_target_partitions(0).build().await,
        t.scan()
            .with_execution_options(DeltaScanExecutionOptions {
                batches_ahead_per_partition: 0,
                ..Default::default()
            })
            .build()
            .await,
        t.scan()
            .with_execution_options(options(2, Some(0), 3, 2))
            .build()
            .await,
        t.scan()
            .with_execution_options(options(2, None, 0, 2))
            .build()
            .await,
    ] {
        assert_eq!(bad.err().map(|e| e.code()), Some("invalid_argument"));
    }

    // An empty scan has no partitions and ends at once.
    let scan = ok(t.scan().with_limit(0).build().await);
    assert_eq!(scan.partitions(), 0);
    assert!(ok(scan.into_stream().collect_batches().await).is_empty());
}

/// Runs a scan with every data request held, checks how many files it opens, then lets it
/// finish and checks the rows and the most files ever open at once.
async fn caps_hold(rows: &[usize], opts: DeltaScanExecutionOptions, cap: usize) {
    let probe = Probe::new(false);
    let t = load(rows, &probe).await;
    let scan = ok(t.scan().with_execution_options(opts).build().await);
    let consumer = tokio::spawn(scan.into_stream().collect_batches());
    wait_until("the cap is reached", || probe.files_in_flight() == cap).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(probe.files_in_flight(), cap, "nothing opened past the cap");
    assert_eq!(probe.opened().len(), cap);
    probe.open_gate();
    let mut got = common::ids(&ok(ok(consumer.await)));
    got.sort_unstable();
    assert_eq!(got, all_ids(rows));
    assert!(
        probe.max_files.load(Ordering::SeqCst) <= cap,
        "at most {cap} files open at once, saw {}",
        probe.max_files.load(Ordering::SeqCst)
    );
}

#[tokio::test]
async fn permit_caps_are_never_exceeded() {
    let rows = [10; 12];
    // Per partition: one partition, 2 permits, prefetch would allow 6.
    caps_hold(&rows, options(1, None, 2, 5), 2).await;
    // Scan-wide: three partitions of 3 permits each, 4 over the scan.
    caps_hold(&rows, options(3, Some(4), 3, 5), 4).await;
    // Prefetch: one current file and one prefetched, for files not read whole.
    let ranged = |opts: DeltaScanExecutionOptions| DeltaScanExecutionOptions {
        parquet_full_file_read_threshold_bytes: None,
        ..opts
    };
    caps_hold(&rows, ranged(options(1, None, 3, 1)), 2).await;
    // Files small enough to be read whole fill the partition's permits past the prefetch
    // depth (each holds one request's bytes at most), never past the permits.
    caps_hold(&rows, options(1, None, 3, 1), 3).await;
    caps_hold(&rows, options(3, Some(4), 3, 1), 4).await;
    // Prefetch 0: a file opens only when the previous one is drained, small or not.
    caps_hold(&rows, options(1, None, 3, 0), 1).await;
}

#[tokio::test]
async fn prefetch_keeps_task_order_within_a_partition() {
    let rows = [20, 20, 20, 20, 20, 20];
    let probe = Probe::new(true);
    // Earlier files answer slower, so prefetched files finish first.
    if let Ok(mut d) = probe.delays.lock() {
        for k in 0..rows.len() {
            d.insert(
                file_path(k),
                Duration::from_millis(5 * (rows.len() - k) as u64),
            );
        }
    }
    let t = load(&rows, &probe).await;
    let scan = ok(t
        .scan()
        .with_batch_size(7)
        .with_execution_options(options(1, None, 3, 2))
        .build()
        .await);
    assert_eq!(scan.partitions(), 1);
    let expected = partition_ids(&scan, 0, &rows);
    let got = common::ids(&ok(scan.into_stream().collect_batches().await));
    assert_eq!(got, expected);
    assert_eq!(
        probe.max_files.load(Ordering::SeqCst),
        3,
        "two files were prefetched"
    );
}

#[tokio::test]
async fn a_consumer_that_stops_polling_stops_the_reads() {
    let rows = [30; 8];
    let probe = Probe::new(true);
    let t = load(&rows, &probe).await;
    let mut opts = options(1, None, 3, 1);
    opts.batches_ahead_per_partition = 1;
    let scan = ok(t
        .scan()
        .with_batch_size(10)
        .with_execution_options(opts)
        .build()
        .await);
    let mut stream = scan.into_stream();
    let first = ok(stream.next().await.unwrap_or_else(|| panic!("no batch")));
    assert_eq!(first.num_rows(), 10);
    let opened = probe.opened().len();
    let requests = probe.requests.load(Ordering::SeqCst);
    // The current file, one prefetched, and (the files are small enough to be read whole)
    // one more up to the partition's 3 permits.
    assert!(
        opened <= 3,
        "at most the partition's 3 permits, saw {opened}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(probe.opened().len(), opened, "no file opened while idle");
    assert_eq!(probe.requests.load(Ordering::SeqCst), requests);
    let m = stream.metrics();
    assert_eq!(m.batches_emitted(), 1);
    assert!(m.file_tasks_started() <= 3);
    // Reading on finishes the scan.
    let rest = ok(stream.collect_batches().await);
    assert_eq!(common::ids(&rest).len() + 10, 240);
    assert_eq!(m.file_tasks_completed(), 8);
}

#[tokio::test]
async fn dropping_a_stream_releases_its_permits() {
    let rows = [10; 8];
    let probe = Probe::new(false);
    let t = load(&rows, &probe).await;
    let scan = ok(t
        .scan()
        .with_execution_options(options(2, Some(2), 2, 2))
        .build()
        .await);
    let metrics = scan.metrics();
    let p1_files: BTreeSet<String> = scan.partition_tasks()[1]
        .iter()
        .map(|t| t.path.clone())
        .collect();
    let mut streams = scan.into_partition_streams();
    assert_eq!(streams.len(), 2);
    let p1 = streams.pop().unwrap_or_else(|| panic!("two partitions"));
    let p0 = streams.pop().unwrap_or_else(|| panic!("two partitions"));
    let first = tokio::spawn(p0.collect_batches());
    wait_until("partition 0 holds both scan-wide permits", || {
        probe.files_in_flight() == 2
    })
    .await;
    let second = tokio::spawn(p1.collect_batches());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        probe.opened().iter().all(|p| !p1_files.contains(p)),
        "partition 1 waits without opening a file"
    );
    assert_eq!(metrics.partitions_started(), 2);

    // Dropping partition 0 drops its held requests and hands its permits to partition 1.
    first.abort();
    assert!(first.await.is_err());
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 2);
    wait_until("partition 1 opens its files", || {
        probe.opened().iter().any(|p| p1_files.contains(p))
    })
    .await;
    probe.open_gate();
    let got = common::ids(&ok(ok(second.await)));
    assert_eq!(got.len(), p1_files.len() * 10);
    assert_eq!(metrics.partitions_completed(), 1);

    // A second scan of the same table runs to the end.
    let again = ok(t
        .scan()
        .with_execution_options(options(2, Some(2), 2, 2))
        .build()
        .await);
    let mut got = common::ids(&ok(again.into_stream().collect_batches().await));
    got.sort_unstable();
    assert_eq!(got, all_ids(&rows));
}

#[tokio::test]
async fn an_error_ends_the_partition() {
    let rows = [10; 6];
    let probe = Probe::new(true);
    let store = table_store(&rows);
    store.delete(&file_path(2));
    let t = ok(DeltaTableBuilder::new("memory://sched/")
        .with_store(Arc::new(ProbeStore {
            inner: store,
            probe: Arc::clone(&probe),
        }))
        .load_table()
        .await);
    let scan = ok(t
        .scan()
        .with_execution_options(options(1, None, 1, 0))
        .build()
        .await);
    let metrics = scan.metrics();
    let mut stream = scan.into_stream();
    let mut seen = Vec::new();
    let mut error = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(b) => seen.extend(common::ids(&[b])),
            Err(e) => {
                error = Some(e.code());
            }
        }
    }
    assert_eq!(error, Some("not_found"));
    // Files 0 and 1 were read; nothing after the failing file was opened.
    assert_eq!(seen.len(), 20);
    assert!(probe.opened().iter().all(|p| file_index(p) <= 2));
    assert_eq!(metrics.partitions_completed(), 0);
}

#[tokio::test]
async fn small_files_are_fetched_whole_once() {
    let rows = [10; 4];
    let probe = Probe::new(true);
    let t = load(&rows, &probe).await;
    let whole = ok(t
        .scan()
        .with_execution_options(DeltaScanExecutionOptions {
            parquet_full_file_read_threshold_bytes: Some(u64::MAX),
            ..Default::default()
        })
        .build()
        .await);
    let m = whole.metrics();
    let mut got = common::ids(&ok(whole.into_stream().collect_batches().await));
    got.sort_unstable();
    assert_eq!(got, all_ids(&rows));
    assert_eq!(m.io().requests, 4, "one request per file");
    // By default files up to 64 KiB (natively) are read whole too: these are a few KiB.
    let default = ok(t.scan().build().await);
    let m = default.metrics();
    ok(default.into_stream().collect_batches().await);
    assert_eq!(m.io().requests, 4, "the default reads small files whole");
    let ranged = ok(t
        .scan()
        .with_execution_options(DeltaScanExecutionOptions {
            parquet_full_file_read_threshold_bytes: None,
            ..Default::default()
        })
        .build()
        .await);
    let m = ranged.metrics();
    ok(ranged.into_stream().collect_batches().await);
    // Off, each file's footer read (its last 64 KiB) already holds its pages, which are
    // served from it (`kept_tail`): still one request per file.
    assert_eq!(
        m.io().requests,
        4,
        "off: the footer's read serves the pages"
    );
}

#[tokio::test]
async fn the_row_limit_holds_across_partitions() {
    let rows = [10; 6];
    let probe = Probe::new(true);
    let t = load(&rows, &probe).await;
    let scan = ok(t
        .scan()
        .with_limit(15)
        .with_target_partitions(3)
        .build()
        .await);
    let m = scan.metrics();
    let got = ok(scan.into_stream().collect_batches().await);
    assert_eq!(common::ids(&got).len(), 15);
    assert_eq!(m.rows_emitted(), 15);
}

#[tokio::test]
async fn metrics_of_a_full_scan() {
    let dir = common::table_dir("golden__dv-partitioned-with-checkpoint");
    let t = ok(DeltaTableBuilder::new(dir.to_string_lossy().to_string())
        .load_table()
        .await);
    let scan = ok(t.scan().with_target_partitions(2).build().await);
    let files = scan.tasks().len() as u64;
    let dvs = scan
        .tasks()
        .iter()
        .filter(|t| t.deletion_vector.is_some())
        .count() as u64;
    let deleted: u64 = scan
        .tasks()
        .iter()
        .filter_map(|t| t.deletion_vector.as_ref())
        .map(|d| d.cardinality as u64)
        .sum();
    assert!(dvs > 0 && deleted > 0);
    let partitions = scan.partitions() as u64;
    let stream = scan.into_stream();
    let metrics = stream.metrics();
    let batches = ok(stream.collect_batches().await);
    let rows: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
    let m = metrics.snapshot();
    assert_eq!(m.partitions_planned, partitions);
    assert_eq!(m.partitions_started, partitions);
    assert_eq!(m.partitions_completed, partitions);
    assert_eq!(m.files_planned, files);
    assert_eq!(m.files_skipped_by_partition, 0);
    assert_eq!(m.files_skipped_by_stats, 0);
    assert_eq!(m.file_tasks_started, files);
    assert_eq!(m.file_tasks_completed, files);
    assert_eq!(m.batches_emitted, batches.len() as u64);
    assert_eq!(m.rows_emitted, rows);
    assert_eq!(m.deletion_vectors_loaded, dvs);
    assert_eq!(m.rows_deleted, deleted);
    // A lazy table replays its segment at the build: the checkpoint of version 10 and the
    // commits 11 to 15 (not `_last_checkpoint`, read once at load), from the copies its
    // load kept.
    assert_eq!(m.log_files_read, 6);
    assert_eq!(t.load_info().log_files_read, 7);
    assert!(m.requests >= files, "{m:?}");
    assert!(m.bytes_received > 0 && m.bytes_requested >= m.bytes_received);
    assert!(m.time_to_first_batch_us.is_some());
    assert!(metrics
        .time_to_first_batch()
        .is_some_and(|d| d > Duration::ZERO));

    // The stream is gone: the counts stay, and another scan does not change them.
    ok(ok(t.scan().build().await)
        .into_stream()
        .collect_batches()
        .await);
    assert_eq!(metrics.snapshot(), m);

    // An eager table's scan reads no log file, and its requests are the data reads alone.
    // The lazy table's replay was answered from the commits its load kept: of its 6 log
    // files only the Parquet checkpoint is requested again (the load read its protocol and
    // metadata columns by range; ranges are not kept).
    let eager = ok(DeltaTableBuilder::new(dir.to_string_lossy().to_string())
        .load_table_with_eager_scan_metadata()
        .await);
    let eager_scan = ok(eager.scan().with_target_partitions(2).build().await);
    let eager_metrics = eager_scan.metrics();
    ok(eager_scan.into_stream().collect_batches().await);
    assert_eq!(eager_metrics.log_files_read(), 0);
    assert_eq!(eager_metrics.io().requests + 1, m.requests);

    // Skips are counted from the file selection.
    let filtered = ok(t.scan().with_filter("part = 0").build().await);
    let sel = filtered.file_selection();
    assert_eq!(
        filtered.metrics().files_skipped_by_partition(),
        sel.skipped_by_partition as u64
    );
}

/// A store whose first data requests wait, blocking their thread, until a second thread makes
/// one too (or a timeout passes): two arriving means two partitions decode at once on two
/// threads. Polling every partition from one thread can never bring the second.
#[derive(Debug)]
struct Rendezvous {
    inner: MemoryStore,
    /// The threads that arrived, and whether two met (`None` while undecided, `Some(false)`
    /// once one gave up waiting).
    seen: Mutex<(Vec<std::thread::ThreadId>, Option<bool>)>,
    met: std::sync::Condvar,
}

impl Rendezvous {
    fn arrive(&self) {
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        if seen.1.is_some() {
            return;
        }
        let me = std::thread::current().id();
        if !seen.0.contains(&me) {
            seen.0.push(me);
        }
        if seen.0.len() >= 2 {
            seen.1 = Some(true);
            self.met.notify_all();
            return;
        }
        // Blocks this thread: nothing else it would poll can make progress meanwhile.
        if let Ok((mut seen, _)) = self
            .met
            .wait_timeout_while(seen, Duration::from_secs(10), |s| s.1.is_none())
        {
            seen.1.get_or_insert(false);
        }
    }

    fn met(&self) -> bool {
        self.seen.lock().map(|s| s.1 == Some(true)).unwrap_or(false)
    }
}

impl RangeRead for Rendezvous {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        let inner = self.inner.get_range(path, range);
        let data = is_data(path);
        Box::pin(async move {
            if data {
                self.arrive();
            }
            inner.await
        })
    }
    // Small data files are read whole by default: they meet here.
    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        let inner = self.inner.get(path);
        let data = is_data(path);
        Box::pin(async move {
            if data {
                self.arrive();
            }
            inner.await
        })
    }
    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<delta_arrow_reader::io::ListEntry>>>> {
        self.inner.list(prefix, start_after)
    }
}

/// A table of files of `rows` rows whose store waits (see [`Rendezvous`]) until two data
/// reads are in flight at once, and that store.
async fn rendezvous_table(rows: &[usize]) -> (Arc<Rendezvous>, DeltaTable) {
    let store = Arc::new(Rendezvous {
        inner: table_store(rows),
        seen: Mutex::new((Vec::new(), None)),
        met: std::sync::Condvar::new(),
    });
    let table = ok(DeltaTableBuilder::new("memory://rendezvous/")
        .with_store(Arc::clone(&store) as Arc<dyn RangeRead>)
        .load_table_with_eager_scan_metadata()
        .await);
    (store, table)
}

/// A table of files of `rows` rows whose first file answers 300 ms late.
async fn first_file_slow(rows: &[usize]) -> DeltaTable {
    let probe = Probe::new(true);
    if let Ok(mut d) = probe.delays.lock() {
        d.insert(file_path(0), Duration::from_millis(300));
    }
    load(rows, &probe).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn into_stream_decodes_partitions_on_two_threads_at_once() {
    let rows = [200; 6];
    let (store, table) = rendezvous_table(&rows).await;
    // Default options apart from the partitions: two, whatever this machine's cores.
    let scan = ok(table.scan().with_target_partitions(2).build().await);
    assert_eq!(scan.partitions(), 2);
    let metrics = scan.metrics();
    let mut got = common::ids(&ok(scan.into_stream().collect_batches().await));
    got.sort_unstable();
    assert_eq!(got, all_ids(&rows), "same rows as ever");
    assert!(
        store.met(),
        "two partitions must have been in flight on two threads at once"
    );
    assert_eq!(metrics.partitions_completed(), 2);
    wait_until("every task is gone", || {
        metrics.partition_tasks_running() == 0 && metrics.file_reads_open() == 0
    })
    .await;
}

/// The ordered stream: every row in the log's order (files in order, each file's rows in
/// order), while two partitions still decode on two threads at once; a slow first file
/// holds the output back but not the order; dropping it mid-scan ends every task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn into_ordered_stream_keeps_the_log_order_on_two_threads_at_once() {
    let rows = [200; 6];
    let (store, table) = rendezvous_table(&rows).await;
    let scan = ok(table
        .scan()
        .with_target_partitions(2)
        .with_batch_size(7)
        .build()
        .await);
    let metrics = scan.metrics();
    let got = common::ids(&ok(scan.into_ordered_stream().collect_batches().await));
    assert_eq!(got, all_ids(&rows), "every row once, in the log's order");
    assert!(
        store.met(),
        "two partitions in flight on two threads at once"
    );
    assert_eq!(metrics.partitions_completed(), 2);

    let rows = [50; 8];
    let table = first_file_slow(&rows).await;
    let ordered = |batch_size| {
        let table = table.clone();
        async move {
            ok(table
                .scan()
                .with_batch_size(batch_size)
                .with_execution_options(options(2, None, 2, 1))
                .build()
                .await)
            .into_ordered_stream()
        }
    };
    let ids = common::ids(&ok(ordered(8192).await.collect_batches().await));
    assert_eq!(ids, all_ids(&rows), "the slow first file still comes first");

    let mut stream = ordered(5).await;
    let metrics = stream.metrics();
    for _ in 0..3 {
        assert!(ok(stream.next().await.unwrap_or_else(|| panic!("no batch"))).num_rows() > 0);
    }
    drop(stream);
    wait_until(
        "tasks and permits are gone after a partial ordered read",
        || metrics.partition_tasks_running() == 0 && metrics.file_reads_open() == 0,
    )
    .await;
}

/// Without a limit, the partitions of the merged stream share the scan's files: a partition
/// held up by a slow file leaves the files it would have been given to the others (with
/// fixed groups of 2 partitions, half of them would wait behind the slow one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_of_the_merged_stream_share_the_files() {
    let rows = [50; 8];
    let table = first_file_slow(&rows).await;
    let scan = ok(table
        .scan()
        .with_execution_options(options(2, None, 2, 1))
        .build()
        .await);
    assert_eq!(scan.partitions(), 2);
    let metrics = scan.metrics();
    let ids = common::ids(&ok(scan.into_stream().collect_batches().await));
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, all_ids(&rows), "every row once");
    // Files in the order their rows came.
    let mut order: Vec<i64> = Vec::new();
    for id in &ids {
        if order.last() != Some(&(id / 1000)) {
            order.push(id / 1000);
        }
    }
    assert_eq!(order.len(), 8, "each file's rows together: {order:?}");
    let slow = order.iter().position(|&f| f == 0);
    // Only the file prefetched behind the slow one, in its partition, may come after it.
    assert!(
        slow.is_some_and(|p| p >= 6),
        "the slow file came at {slow:?} of {order:?}"
    );
    assert_eq!(metrics.partitions_completed(), 2);
    // A limited (ordered) scan keeps its fixed groups: every row once, in task order.
    let limited = ok(table
        .scan()
        .with_execution_options(options(2, None, 2, 1))
        .with_limit(1000)
        .build()
        .await);
    let ids = common::ids(&ok(limited.into_stream().collect_batches().await));
    assert_eq!(ids, all_ids(&rows), "in task order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_merged_stream_mid_scan_ends_every_task_and_permit() {
    let rows = [50; 8];
    // Waiting reads: dropped while held.
    let probe = Probe::new(false);
    let t = load(&rows, &probe).await;
    let scan = ok(t
        .scan()
        .with_execution_options(options(2, None, 2, 1))
        .build()
        .await);
    let metrics = scan.metrics();
    let mut stream = scan.into_stream();
    assert!(
        tokio::time::timeout(Duration::from_millis(50), stream.next())
            .await
            .is_err(),
        "every read waits at the gate"
    );
    wait_until("both partitions hold their files", || {
        metrics.partition_tasks_running() == 2 && metrics.file_reads_open() == 4
    })
    .await;
    drop(stream);
    wait_until("tasks and permits are gone", || {
        metrics.partition_tasks_running() == 0 && metrics.file_reads_open() == 0
    })
    .await;
    assert!(
        probe.dropped.load(Ordering::SeqCst) >= 2,
        "held reads dropped"
    );

    // Reads under way: a few batches, then a drop.
    probe.open_gate();
    let scan = ok(t
        .scan()
        .with_batch_size(5)
        .with_execution_options(options(2, None, 2, 1))
        .build()
        .await);
    let metrics = scan.metrics();
    let mut stream = scan.into_stream();
    for _ in 0..3 {
        assert!(ok(stream.next().await.unwrap_or_else(|| panic!("no batch"))).num_rows() > 0);
    }
    drop(stream);
    wait_until("tasks and permits are gone after a partial read", || {
        metrics.partition_tasks_running() == 0 && metrics.file_reads_open() == 0
    })
    .await;

    // The table reads in full afterwards.
    let mut got = common::ids(&ok(t
        .scan()
        .with_target_partitions(2)
        .build()
        .await
        .map(DeltaScan::into_stream)
        .map(|s| s.collect_batches())
        .unwrap_or_else(|e| panic!("{e}"))
        .await));
    got.sort_unstable();
    assert_eq!(got, all_ids(&rows));
}

#[test]
fn into_stream_works_outside_a_runtime() {
    let rows = [20; 5];
    futures::executor::block_on(async {
        let table = ok(DeltaTableBuilder::new("memory://no-runtime/")
            .with_store(Arc::new(table_store(&rows)))
            .load_table_with_eager_scan_metadata()
            .await);
        let scan = ok(table.scan().with_target_partitions(3).build().await);
        let metrics = scan.metrics();
        let mut got = common::ids(&ok(scan.into_stream().collect_batches().await));
        got.sort_unstable();
        assert_eq!(got, all_ids(&rows));
        assert_eq!(metrics.partitions_completed(), 3);
        assert_eq!(metrics.partition_tasks_running(), 0);
        assert_eq!(metrics.file_reads_open(), 0);
    });
}
