//! Tables served over plain HTTP by a static server that cannot list (loopback, started
//! here): the log is discovered from `_last_checkpoint` and by probing commit names, and the
//! result equals what a local listing gives. Request counts are printed per table.

use crate::common;

use std::process::Command;

use delta_arrow_reader::log::{Discovery, SUPPORTED_READER_FEATURES};
use delta_arrow_reader::serve::{ServeConfig, StaticServer};
use delta_arrow_reader::DeltaTableBuilder;
use serde_json::Value;

/// True when the local log has no `_last_checkpoint` and no commit 0: without listing there is
/// no way to find where the log starts.
fn undiscoverable_without_listing(name: &str) -> bool {
    let log = common::table_dir(name).join("_delta_log");
    !log.join("_last_checkpoint").exists() && !log.join(format!("{:020}.json", 0)).exists()
}

/// The newest version a reader that cannot list can find, judged from the folder: from the
/// checkpoint `_last_checkpoint` names (when it exists) or from version 0, the last commit
/// before the first missing one. Versions past a gap (`deltars__err-logs-table_g` has a lone
/// checkpoint and commit at 9999) are visible to a listing only.
fn probe_reachable_version(name: &str) -> Option<u64> {
    let log = common::table_dir(name).join("_delta_log");
    let hinted = std::fs::read_to_string(log.join("_last_checkpoint"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["version"].as_u64())
        .filter(|v| log.join(format!("{v:020}.checkpoint.parquet")).exists());
    let mut next = hinted.map_or(0, |v| v + 1);
    while log.join(format!("{next:020}.json")).exists() {
        next += 1;
    }
    next.checked_sub(1).or(hinted)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_loadable_table_reads_the_same_over_http() {
    let server = StaticServer::start(ServeConfig::new(common::corpus_dir().join("tables")))
        .await
        .unwrap_or_else(|e| panic!("cannot start the static server: {e}"));
    let mut failures = Vec::new();
    let (mut passed, mut total_requests) = (0usize, 0u64);
    for row in common::inventory() {
        let name = row.name().to_string();
        if row.must_fail(SUPPORTED_READER_FEATURES).is_some() {
            continue;
        }
        let local = DeltaTableBuilder::new(common::table_dir(&name).to_string_lossy())
            .load_table_with_eager_scan_metadata()
            .await;
        let Ok(local) = local else {
            failures.push(format!("{name}: does not load locally"));
            continue;
        };
        let url = server.url_for(&format!("{name}/"));
        let before = server.stats().requests();
        let remote = DeltaTableBuilder::new(url.clone())
            .load_table_with_eager_scan_metadata()
            .await;
        let requests = server.stats().requests() - before;
        total_requests += requests;
        match remote {
            Ok(remote)
                if probe_reachable_version(&name)
                    .is_some_and(|r| r < local.version() && r == remote.version()) =>
            {
                passed += 1;
                println!(
                    "{name}: version {} over HTTP; version {} is visible to a listing only",
                    remote.version(),
                    local.version()
                );
            }
            Ok(remote) => {
                let same = remote.version() == local.version()
                    && remote.schema() == local.schema()
                    && common::file_set(&remote) == common::file_set(&local)
                    && remote.protocol() == local.protocol();
                if !same {
                    failures.push(format!("{name}: HTTP snapshot differs from local"));
                } else if remote.load_info().discovery != Discovery::Probing {
                    failures.push(format!("{name}: HTTP load did not probe"));
                } else {
                    passed += 1;
                    println!(
                        "{name}: version {} in {requests} HTTP requests, {} round trips",
                        remote.version(),
                        remote.load_info().round_trips
                    );
                }
            }
            Err(e) if undiscoverable_without_listing(&name) => {
                passed += 1;
                println!("{name}: cannot be discovered without listing, as expected: {e}");
            }
            Err(e) => failures.push(format!("{name}: over HTTP [{}] {e}", e.code())),
        }
    }
    server.shutdown().await;
    for f in &failures {
        println!("FAIL {f}");
    }
    println!(
        "http probing: {passed} passed, {} failed ({total_requests} requests)",
        failures.len()
    );
    assert!(failures.is_empty());
}

fn dar(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_dar"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run dar: {e}"));
    assert!(
        out.status.success(),
        "dar {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("dar {args:?}: not JSON: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dar_info_over_http_equals_local() {
    let server = StaticServer::start(ServeConfig::new(common::corpus_dir().join("tables")))
        .await
        .unwrap_or_else(|e| panic!("cannot start the static server: {e}"));
    let tables = [
        "dat__basic_partitioned",
        "deltars__simple_table_with_checkpoint",
        "golden__dv-partitioned-with-checkpoint",
        "kernel__v2-checkpoints-parquet-with-sidecars",
        "kernel__v1-multi-part-struct-stats-only",
        "golden__corrupted-last-checkpoint-kernel",
        "golden__table-with-columnmapping-mode-name",
    ];
    for name in tables {
        let local_path = common::table_dir(name).to_string_lossy().into_owned();
        let url = server.url_for(&format!("{name}/"));
        let before = server.stats().requests();
        let (local, remote) = tokio::task::spawn_blocking(move || {
            (
                dar(&["info", "--json", &local_path]),
                dar(&["info", "--json", &url]),
            )
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let requests = server.stats().requests() - before;
        for key in [
            "version",
            "protocol",
            "partitionColumns",
            "numFiles",
            "sizeBytes",
            "columnMapping",
            "numColumns",
        ] {
            assert_eq!(local[key], remote[key], "{name}: {key}");
        }
        assert_eq!(remote["load"]["discovery"], "probing", "{name}");
        assert_eq!(local["load"]["discovery"], "listing", "{name}");
        println!(
            "dar info {name}: version {} over HTTP in {requests} requests ({} log files)",
            remote["version"], remote["load"]["logFilesRead"]
        );
        // The table's own facts: a probe costs one request per commit after the
        // checkpoint, plus the doubling batches' misses (at most 8 + twice the commits).
        assert!(requests > 0 && requests < 64, "{name}: {requests} requests");
    }
    server.shutdown().await;
}

/// A store that counts the requests in flight at once (and the most seen) around another.
#[derive(Debug)]
struct InFlight {
    inner: delta_arrow_reader::io::Store,
    now: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

impl InFlight {
    async fn around<T>(
        &self,
        request: impl std::future::Future<Output = delta_arrow_reader::Result<T>>,
    ) -> delta_arrow_reader::Result<T> {
        use std::sync::atomic::Ordering::SeqCst;
        let n = self.now.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(n, SeqCst);
        let out = request.await;
        self.now.fetch_sub(1, SeqCst);
        out
    }
}

impl delta_arrow_reader::io::RangeRead for InFlight {
    fn get_range(
        &self,
        path: &str,
        range: std::ops::Range<u64>,
    ) -> delta_arrow_reader::io::BoxFuture<'_, delta_arrow_reader::Result<bytes::Bytes>> {
        let path = path.to_string();
        Box::pin(async move { self.around(self.inner.get_range(&path, range)).await })
    }

    fn get(
        &self,
        path: &str,
    ) -> delta_arrow_reader::io::BoxFuture<'_, delta_arrow_reader::Result<bytes::Bytes>> {
        let path = path.to_string();
        Box::pin(async move { self.around(self.inner.get(&path)).await })
    }
}

/// A table of `commits` commits (one `add` each) and no checkpoint, written to a new folder.
fn long_log(commits: u64) -> tempfile::TempDir {
    use delta_arrow_reader::fixture::TableWriter;
    let schema = serde_json::json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": true, "metadata": {}},
    ]});
    let mut w = TableWriter::new();
    w.commit(
        "CREATE",
        TableWriter::create_actions(
            &schema,
            &[],
            serde_json::json!({}),
            serde_json::json!({"minReaderVersion": 1, "minWriterVersion": 2}),
        ),
    );
    for k in 1..commits {
        let add = w.add_action(
            &format!("part-{k:05}.parquet"),
            100,
            1,
            serde_json::json!({}),
            None,
        );
        w.commit("WRITE", vec![add]);
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    w.write_to_dir(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_log_is_probed_in_few_rounds_and_fetched_within_the_bound() {
    const COMMITS: u64 = 3_000;
    let dir = long_log(COMMITS);
    let config = ServeConfig::new(dir.path()).with_latency(std::time::Duration::from_millis(5));
    let server = StaticServer::start(config)
        .await
        .unwrap_or_else(|e| panic!("cannot start the static server: {e}"));
    let url = format!("{}/", server.url());
    for bound in [8usize, 48] {
        let location =
            delta_arrow_reader::io::TableLocation::parse(&url).unwrap_or_else(|e| panic!("{e}"));
        let http =
            delta_arrow_reader::io::ObjectStoreRange::from_location(&location, &Default::default())
                .unwrap_or_else(|e| panic!("{e}"));
        let store = std::sync::Arc::new(InFlight {
            inner: std::sync::Arc::new(http),
            now: Default::default(),
            most: Default::default(),
        });
        let before = server.stats().requests();
        let table = DeltaTableBuilder::new(&url)
            .with_store(store.clone())
            .with_log_concurrency(bound)
            .load_table_with_eager_scan_metadata()
            .await
            .unwrap_or_else(|e| panic!("bound {bound}: {e}"));
        let requests = server.stats().requests() - before;
        let info = table.load_info();
        assert_eq!(table.version(), COMMITS - 1);
        assert_eq!(
            table.eager_files().map(|f| f.len()),
            Some(COMMITS as usize - 1)
        );
        assert_eq!(info.discovery, Discovery::Probing);
        // _last_checkpoint, then the probing rounds (see `log::probe`).
        assert!(
            info.round_trips <= 8,
            "bound {bound}: {} round trips",
            info.round_trips
        );
        // Every commit once, `_last_checkpoint`, and fewer than a hundred misses.
        assert!(
            (COMMITS..=COMMITS + 101).contains(&requests),
            "bound {bound}: {requests} requests"
        );
        let most = store.most.load(std::sync::atomic::Ordering::SeqCst);
        assert!(
            most <= bound,
            "bound {bound}: {most} requests in flight at once"
        );
        if bound < COMMITS as usize {
            assert_eq!(most, bound, "the bound is used: {most} in flight at most");
        }
        println!(
            "bound {bound}: {requests} requests, {} rounds, {most} in flight at most",
            info.round_trips
        );
    }
}
