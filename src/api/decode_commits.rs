//! Decoding large commit files on every core while a log load goes on (native only).
//!
//! The loader decodes commit files one after the other when it replays them; a log of a few
//! huge commits (300,000 `add`s in three files of 15 MB) is then bound by one core's JSON
//! decoding. The load's driver hands each commit file of at least [`PARALLEL_DECODE_BYTES`]
//! here instead: it is cut at line boundaries into one run of lines per core, each decoded on
//! Tokio's blocking pool as soon as the file arrives, and the actions, in file order, go to
//! the loader with the bytes ([`SnapshotLoader::push_decoded_commit`]).
//!
//! A run of lines that fails to decode gives the file to the loader as bytes, so the error
//! it reports names the line counted from the start of the file. Without a Tokio runtime,
//! files are not handed here.

use std::future::Future;

use bytes::Bytes;

use crate::error::Result;
use crate::log::{decode_commit_actions, Action, LoadScope, SnapshotLoader};

/// Commit files at least this large are decoded here, in parallel.
pub const PARALLEL_DECODE_BYTES: usize = 1 << 20;

/// Runs of lines are at least this long (smaller files get fewer runs).
const MIN_RUN_BYTES: usize = 256 * 1024;

/// A commit file being decoded: its path, its bytes, and the actions of its runs of lines
/// once decoded, in file order (`None` when a run failed: the loader then decodes the bytes
/// itself, for its error).
pub(crate) type Decoded = (String, Bytes, Option<Vec<Vec<Action>>>);

/// Starts decoding `data`, the commit file `path` of a load of `scope`, when it is large and
/// a Tokio runtime is current; the future resolves once every run is decoded. `Err` gives the
/// bytes back when the file is to be pushed as it is.
pub(crate) fn start(
    path: &str,
    data: Bytes,
    scope: LoadScope,
) -> std::result::Result<impl Future<Output = Decoded> + Send + 'static, Bytes> {
    if data.len() < PARALLEL_DECODE_BYTES || !is_commit(path) {
        return Err(data);
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return Err(data);
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let runs = line_runs(&data, cores.min(data.len() / MIN_RUN_BYTES).max(1));
    // Spawned now, so the runs decode while the caller waits for other files.
    let tasks: Vec<_> = runs
        .into_iter()
        .map(|run| {
            let (path, bytes) = (path.to_string(), data.slice(run));
            runtime.spawn_blocking(move || decode_commit_actions(&path, &bytes, scope))
        })
        .collect();
    let path = path.to_string();
    Ok(async move {
        let mut runs = Vec::with_capacity(tasks.len());
        let mut failed = false;
        for task in tasks {
            match task.await {
                Ok(Ok(run)) => runs.push(run),
                _ => failed = true,
            }
        }
        (path, data, (!failed).then_some(runs))
    })
}

/// Pushes a decoded commit file to `loader`: its actions, or its bytes alone when a run of
/// lines failed to decode.
pub(crate) fn push(loader: &mut SnapshotLoader, decoded: Decoded) -> Result<()> {
    match decoded {
        (path, data, Some(runs)) => loader.push_decoded_commit(&path, data, runs),
        (path, data, None) => loader.push_file(&path, Some(data)),
    }
}

/// Whether `path` names a commit file (`_delta_log/N.json`).
fn is_commit(path: &str) -> bool {
    crate::log::path::LogPath::parse(path)
        .is_some_and(|p| p.kind == crate::log::path::LogFileKind::Commit)
}

/// Byte ranges of `data` cutting it into at most `n` runs of whole lines (each ends after a
/// newline, or at the end of the data), in order, covering all of it.
fn line_runs(data: &[u8], n: usize) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::with_capacity(n);
    let mut start = 0;
    for i in 1..n {
        let guess = (data.len() / n * i).max(start);
        let Some(newline) = data[guess..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let end = guess + newline + 1;
        if end > start {
            runs.push(start..end);
            start = end;
        }
    }
    if start < data.len() || runs.is_empty() {
        runs.push(start..data.len());
    }
    runs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fixture::TableWriter;
    use crate::io::RangeRead;
    use crate::log::VersionTarget;

    /// A table whose second commit adds `files` files and removes every tenth of the first
    /// commit's (several MB of JSON).
    fn big_commit_table(files: usize) -> TableWriter {
        let schema = json!({"type": "struct", "fields": [
            {"name": "id", "type": "long", "nullable": true, "metadata": {}}]});
        let add = |path: String| {
            json!({"add": {"path": path, "partitionValues": {}, "size": 1,
                           "modificationTime": 0, "dataChange": true,
                           "stats": "{\"numRecords\":1}"}})
        };
        let mut w = TableWriter::new();
        let mut first = TableWriter::create_actions(
            &schema,
            &[],
            json!({}),
            json!({"minReaderVersion": 1, "minWriterVersion": 2}),
        );
        first.extend((0..100).map(|i| add(format!("old-{i}.parquet"))));
        w.commit("WRITE", first);
        let mut second: Vec<_> = (0..files)
            .map(|i| add(format!("new-{i:06}.parquet")))
            .collect();
        second.extend(
            (0..100).step_by(10).map(
                |i| json!({"remove": {"path": format!("old-{i}.parquet"), "dataChange": true}}),
            ),
        );
        w.commit("WRITE", second);
        w
    }

    /// The version and active files of a load of `store` at `target` with the async driver
    /// (in a runtime: big commits decoded here) and with the loader alone (every commit
    /// decoded by it).
    async fn both_ways(
        store: &crate::io::MemoryStore,
        target: VersionTarget,
    ) -> (Result<(u64, Vec<String>)>, Result<(u64, Vec<String>)>) {
        let paths = |r: &crate::log::Reconciled| {
            let files = r.files.iter().map(|f| f.path.clone()).collect();
            (r.version, files)
        };
        let driven = crate::api::load::load_log(
            store,
            "memory://t/",
            target,
            LoadScope::ActiveFiles,
            16,
            crate::limits::DEFAULT_MAX_COMMITS_PER_LOAD,
        )
        .await
        .map(|l| paths(&l.reconciled));
        let mut loader = SnapshotLoader::new("memory://t/", target);
        let alone = loop {
            match loader.poll() {
                Err(e) => break Err(e),
                Ok(crate::log::Step::Ready(l)) => break Ok(paths(&l.reconciled)),
                Ok(crate::log::Step::Need(requests)) => {
                    for r in requests {
                        let pushed = match r {
                            crate::log::LogRequest::List {
                                prefix,
                                start_after,
                            } => {
                                let entries = store.list(&prefix, start_after.as_deref()).await;
                                entries.and_then(|e| {
                                    loader
                                        .push_listing(e.as_deref().map(crate::api::load::log_files))
                                })
                            }
                            crate::log::LogRequest::Get { path, .. } => {
                                let data = store.get(&path).await.ok();
                                loader.push_file(&path, data)
                            }
                            crate::log::LogRequest::GetRange { path, range } => {
                                let data = store.get_range(&path, range.clone()).await;
                                data.and_then(|d| loader.push_range(&path, range, d))
                            }
                        };
                        if let Err(e) = pushed {
                            panic!("{e}");
                        }
                    }
                }
            }
        };
        (driven, alone)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_big_commit_decoded_in_runs_replays_like_one_decoded_whole() {
        let w = big_commit_table(30_000);
        let big = w
            .store()
            .get("_delta_log/00000000000000000001.json")
            .await
            .map(|b| b.len())
            .unwrap_or(0);
        assert!(big > 2 * PARALLEL_DECODE_BYTES, "{big} bytes");
        let (driven, alone) = both_ways(w.store(), VersionTarget::Latest).await;
        let driven = driven.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(driven.1.len(), 30_000 + 90);
        assert_eq!(Some(driven), alone.ok());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_bad_line_in_a_big_commit_is_named_by_its_line_in_the_file() {
        let w = big_commit_table(30_000);
        let path = "_delta_log/00000000000000000001.json";
        let data = w.store().get(path).await.unwrap_or_default();
        let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        // A line in the last run of lines.
        lines[25_000] = b"{\"add\": {\"path\": 7}}";
        w.store().put(path, lines.join(&b'\n'));
        let (driven, alone) = both_ways(w.store(), VersionTarget::Latest).await;
        let (driven, alone) = (driven.err(), alone.err());
        let text = driven.as_ref().map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("line 25001"), "{text}");
        assert_eq!(driven.map(|e| e.to_string()), alone.map(|e| e.to_string()));
    }

    /// Time travel by in-commit timestamp reads the commits' `commitInfo`: from the actions
    /// of big commits decoded here (their bytes are not kept), as the loader alone does
    /// from the bytes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_search_by_in_commit_timestamp_reads_big_commits_decoded_here() {
        let w = big_commit_table(30_000);
        let store = w.store();
        // In-commit timestamps 1000, 2000, 3000; file times that would pick other versions.
        for (version, ict) in [(0u64, 1_000i64), (1, 2_000)] {
            let path = format!("_delta_log/{version:020}.json");
            let data = store.get(&path).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&data);
            let info = json!({"commitInfo": {"inCommitTimestamp": ict, "timestamp": 5}});
            let lines: Vec<String> = std::iter::once(info.to_string())
                .chain(text.lines().skip(1).map(str::to_string))
                .collect();
            store.put_with_time(path, lines.join("\n") + "\n", 9_000_000 - ict);
        }
        let mut third = vec![json!({"commitInfo": {"inCommitTimestamp": 3_000, "timestamp": 5}})];
        third.extend((0..30_000).map(|i| {
            json!({"add": {"path": format!("third-{i:06}.parquet"), "partitionValues": {},
                           "size": 1, "modificationTime": 0, "dataChange": true}})
        }));
        let body: Vec<String> = third.iter().map(|l| l.to_string()).collect();
        store.put_with_time(
            "_delta_log/00000000000000000002.json",
            body.join("\n") + "\n",
            1,
        );
        for (ms, want) in [(1_500, 0), (2_500, 1), (3_500, 2)] {
            let (driven, alone) = both_ways(store, VersionTarget::Timestamp(ms)).await;
            let driven = driven.unwrap_or_else(|e| panic!("{ms}: {e}"));
            assert_eq!(driven.0, want, "{ms}");
            assert_eq!(Some(driven), alone.ok(), "{ms}");
        }
    }

    #[test]
    fn runs_cover_the_data_in_whole_lines() {
        let lines: Vec<String> = (0..1000).map(|i| format!("{{\"line\":{i}}}")).collect();
        let data = lines.join("\n");
        for n in [1, 2, 3, 7, 64, 5000] {
            let runs = line_runs(data.as_bytes(), n);
            assert!(!runs.is_empty() && runs.len() <= n, "{n}: {}", runs.len());
            assert_eq!(runs[0].start, 0);
            assert_eq!(runs.last().map(|r| r.end), Some(data.len()));
            for pair in runs.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
                assert_eq!(data.as_bytes()[pair[0].end - 1], b'\n');
            }
        }
        assert_eq!(line_runs(b"", 4), vec![0..0]);
        assert_eq!(line_runs(b"no newline at all", 4), vec![0..17]);
    }
}
