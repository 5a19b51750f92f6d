//! Tests of [`SnapshotLoader`] fed with bytes directly: no store, no async. Each scenario runs
//! against a listing and against a store that cannot list (probing), and where the answers
//! must agree, they are compared.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)] // tests: files, clocks, block_on

use std::collections::BTreeMap;

use bytes::Bytes;
use serde_json::json;

use super::*;
use crate::fixture::TableWriter;
use crate::io::RangeRead;
use crate::log::path::{commit_path, LogPath};

/// Objects of a table: path → (bytes, modification time).
type Files = BTreeMap<String, (Bytes, i64)>;

struct Run {
    result: Result<LoadedLog>,
    requests: usize,
}

/// Answers the loader's requests from `files` until it finishes. A store that cannot list is
/// driven both ways: told up front ([`SnapshotLoader::without_listing`], as the driver does
/// for such a store, whose run is returned) and finding out from a listing of `None`; both
/// must give the same snapshot or the same error.
fn drive(files: &Files, can_list: bool, target: VersionTarget) -> Run {
    let loader = || SnapshotLoader::new("mem://t", target);
    if can_list {
        return drive_loader(files, true, loader(), &mut Vec::new());
    }
    let asked_first = drive_loader(files, false, loader(), &mut Vec::new());
    let told = drive_loader(files, false, loader().without_listing(), &mut Vec::new());
    let outcome = |run: &Run| match &run.result {
        Ok(log) => Ok((log.reconciled.version, active(log), log.discovery)),
        Err(e) => Err(e.code()),
    };
    assert_eq!(
        outcome(&asked_first),
        outcome(&told),
        "a store that cannot list, told up front or not"
    );
    told
}

/// Answers `loader`'s requests from `files` until it finishes, noting the paths asked for.
fn drive_loader(
    files: &Files,
    can_list: bool,
    loader: SnapshotLoader,
    asked: &mut Vec<String>,
) -> Run {
    drive_changing(&mut files.clone(), can_list, loader, asked, &mut |_, _| {})
}

/// [`drive_loader`] where every `Get` of a path in `forbidden` fails as a host that forbids
/// it answers (an `io` error, not missing), whether the file exists or not.
fn drive_forbidding(files: &Files, forbidden: &[String], loader: SnapshotLoader) -> Run {
    let mut files = files.clone();
    let mut loader = loader;
    for _ in 0..1000 {
        let needs = match loader.poll() {
            Err(e) => {
                return Run {
                    result: Err(e),
                    requests: 0,
                }
            }
            Ok(LoadStep::Ready(done)) => {
                return Run {
                    result: Ok(*done),
                    requests: 0,
                }
            }
            Ok(LoadStep::Need(needs)) => needs,
        };
        for need in needs {
            let pushed = match need {
                LogRequest::Get { path, optional } if forbidden.contains(&path) => {
                    let e = DeltaError::Io {
                        path: path.clone(),
                        message: "unexpected answer: HTTP 403 Forbidden".into(),
                        phase: crate::error::Phase::Load,
                        transient: false,
                    };
                    if optional {
                        loader.push_failure(&path, e)
                    } else {
                        Err(e)
                    }
                }
                LogRequest::Get { path, .. } => {
                    loader.push_file(&path, files.remove(&path).map(|(b, _)| b))
                }
                other => panic!("a store that cannot list was asked {other:?}"),
            };
            if let Err(e) = pushed {
                return Run {
                    result: Err(e),
                    requests: 0,
                };
            }
        }
    }
    panic!("loader did not finish");
}

/// [`drive_loader`] over files that change: `after_missing(path, files)` runs after each
/// request answered that `path` does not exist (a writer adding commits meanwhile).
fn drive_changing(
    files: &mut Files,
    can_list: bool,
    mut loader: SnapshotLoader,
    asked: &mut Vec<String>,
    after_missing: &mut dyn FnMut(&str, &mut Files),
) -> Run {
    let mut requests = 0;
    for _ in 0..1000 {
        let step = match loader.poll() {
            Ok(s) => s,
            Err(e) => {
                return Run {
                    result: Err(e),
                    requests,
                }
            }
        };
        let needs = match step {
            LoadStep::Ready(done) => {
                return Run {
                    result: Ok(*done),
                    requests,
                }
            }
            LoadStep::Need(needs) => needs,
        };
        for need in needs {
            requests += 1;
            let pushed = match need {
                LogRequest::List {
                    prefix,
                    start_after,
                } => {
                    let entries = can_list.then(|| {
                        files
                            .iter()
                            .filter(|(p, _)| p.starts_with(&prefix))
                            .filter(|(p, _)| {
                                start_after.as_ref().is_none_or(|s| p.as_str() > s.as_str())
                            })
                            .filter_map(|(p, (b, t))| LogPath::listed(p, b.len() as u64, Some(*t)))
                            .collect()
                    });
                    loader.push_listing(entries)
                }
                LogRequest::GetRange { path, range } => {
                    asked.push(path.clone());
                    let data = files.get(&path).map(|(b, _)| {
                        let (start, end) = (range.start as usize, range.end as usize);
                        b.slice(start.min(b.len())..end.min(b.len()))
                    });
                    loader.push_range(&path, range, data.unwrap_or_default())
                }
                LogRequest::Get { path, optional } => match files.get(&path).inspect(|_| {
                    asked.push(path.clone());
                }) {
                    Some((b, _)) => loader.push_file(&path, Some(b.clone())),
                    None if optional => {
                        let pushed = loader.push_file(&path, None);
                        after_missing(&path, files);
                        pushed
                    }
                    None => {
                        let e = DeltaError::NotFound {
                            path,
                            phase: crate::error::Phase::Load,
                        };
                        return Run {
                            result: Err(e),
                            requests,
                        };
                    }
                },
            };
            if let Err(e) = pushed {
                return Run {
                    result: Err(e),
                    requests,
                };
            }
        }
    }
    panic!("loader did not finish");
}

fn files_of(writer: &TableWriter) -> Files {
    let store = writer.store();
    store
        .paths()
        .into_iter()
        .filter_map(|p| {
            let data = futures::executor::block_on(store.get(&p)).ok()?;
            Some((p, (data, 0)))
        })
        .enumerate()
        .map(|(i, (p, (d, _)))| (p, (d, i as i64 * 1000)))
        .collect()
}

fn schema() -> serde_json::Value {
    json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": true, "metadata": {}},
    ]})
}

fn add(path: &str) -> serde_json::Value {
    json!({"add": {"path": path, "partitionValues": {}, "size": 10,
        "modificationTime": 0, "dataChange": true}})
}

fn remove(path: &str) -> serde_json::Value {
    json!({"remove": {"path": path, "deletionTimestamp": 0, "dataChange": true}})
}

/// A table of `n` commits: commit 0 creates it and adds f0; commit k adds fk and removes
/// f(k-1) when k is even.
fn table(n: u64) -> TableWriter {
    let mut w = TableWriter::new();
    let mut create = TableWriter::create_actions(
        &schema(),
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    create.push(add("f0"));
    w.commit("CREATE", create);
    for k in 1..n {
        let mut actions = vec![add(&format!("f{k}"))];
        if k % 2 == 0 {
            actions.push(remove(&format!("f{}", k - 1)));
        }
        w.commit("WRITE", actions);
    }
    w
}

fn active(log: &LoadedLog) -> Vec<String> {
    let mut p: Vec<String> = log
        .reconciled
        .files
        .iter()
        .map(|f| f.path.clone())
        .collect();
    p.sort();
    p
}

fn expected_active(n: u64) -> Vec<String> {
    let mut p: Vec<String> = (0..n)
        .filter(|k| !(k % 2 == 1 && k + 1 < n))
        .map(|k| format!("f{k}"))
        .collect();
    p.sort();
    p
}

#[test]
fn listing_and_probing_agree_on_commits_only() {
    for n in [1u64, 2, 7, 8, 9, 40] {
        let files = files_of(&table(n));
        let listed = drive(&files, true, VersionTarget::Latest);
        let probed = drive(&files, false, VersionTarget::Latest);
        let listed = listed.result.unwrap_or_else(|e| panic!("n={n}: {e}"));
        let probed_log = probed.result.unwrap_or_else(|e| panic!("n={n}: {e}"));
        assert_eq!(listed.reconciled.version, n - 1);
        assert_eq!(probed_log.reconciled.version, n - 1);
        assert_eq!(active(&listed), expected_active(n));
        assert_eq!(active(&probed_log), expected_active(n));
        assert_eq!(listed.discovery, Discovery::Listing);
        assert_eq!(probed_log.discovery, Discovery::Probing);
        // _last_checkpoint, the refused listing, every commit once, and misses: at most the
        // first round's 11 and one dense gap of 64.
        assert!(
            probed.requests as u64 <= 2 + n + 11 + 64,
            "n={n}: {} requests",
            probed.requests
        );
    }
}

#[test]
fn probing_round_trips_are_logarithmic() {
    let files = files_of(&table(100));
    let probed = drive(&files, false, VersionTarget::Latest);
    let log = probed.result.unwrap_or_else(|e| panic!("{e}"));
    // _last_checkpoint, then three rounds of probes (see `probe`), 1 more to list.
    assert!(log.round_trips <= 6, "{} round trips", log.round_trips);
}

#[test]
fn time_travel_by_version_both_ways() {
    let files = files_of(&table(10));
    for v in [0u64, 3, 9] {
        for can_list in [true, false] {
            let run = drive(&files, can_list, VersionTarget::Version(v));
            let log = run.result.unwrap_or_else(|e| panic!("v={v}: {e}"));
            assert_eq!(log.reconciled.version, v);
            assert_eq!(active(&log), expected_active(v + 1));
        }
    }
    for can_list in [true, false] {
        let run = drive(&files, can_list, VersionTarget::Version(10));
        assert_eq!(
            run.result.err().map(|e| e.code()),
            Some("version_not_found")
        );
    }
}

#[test]
fn time_travel_by_timestamp() {
    // Commit k is written at 1_704_067_200_000 + k minutes (file time and commitInfo).
    let w = table(6);
    let mut files = files_of(&w);
    let base = 1_704_067_200_000i64;
    for (p, (_, t)) in files.iter_mut() {
        if let Some(lp) = LogPath::parse(p) {
            *t = base + lp.version as i64 * 60_000;
        }
    }
    for (offset, want) in [(0, 0u64), (90_000, 1), (300_000, 5), (10_000_000, 5)] {
        for can_list in [true, false] {
            let run = drive(&files, can_list, VersionTarget::Timestamp(base + offset));
            let log = run.result.unwrap_or_else(|e| panic!("{offset}: {e}"));
            assert_eq!(
                log.reconciled.version, want,
                "offset {offset} listing {can_list}"
            );
        }
    }
    let run = drive(&files, true, VersionTarget::Timestamp(base - 1));
    assert_eq!(
        run.result.err().map(|e| e.code()),
        Some("timestamp_not_found")
    );
}

#[test]
fn gaps_in_versions_fail() {
    let mut files = files_of(&table(6));
    files.remove(&commit_path(3));
    for can_list in [true, false] {
        let run = drive(&files, can_list, VersionTarget::Latest);
        let code = run.result.err().map(|e| e.code());
        assert_eq!(code, Some("non_contiguous_log"), "listing {can_list}");
    }
}

#[test]
fn a_commit_written_while_the_log_is_probed_is_read_not_a_gap() {
    // Commits 0..=7, of which 6 is answered missing the first time it is asked for: asked
    // before it was written, while 7 was asked after (side by side, answers in any order).
    let whole = files_of(&table(8));
    let mut files = whole.clone();
    files.remove(&commit_path(6));
    let mut misses_of_6 = 0;
    let run = drive_changing(
        &mut files,
        false,
        SnapshotLoader::new("mem://t", VersionTarget::Latest).without_listing(),
        &mut Vec::new(),
        &mut |path, files| {
            if path == commit_path(6) {
                misses_of_6 += 1;
                if let Some(file) = whole.get(path) {
                    files.insert(path.to_string(), file.clone());
                }
            }
        },
    );
    let log = run.result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(log.reconciled.version, 7);
    assert_eq!(active(&log), expected_active(8));
    assert_eq!(misses_of_6, 1, "the second ask found it");
}

#[test]
fn empty_location_is_not_a_table() {
    for can_list in [true, false] {
        for target in [
            VersionTarget::Latest,
            VersionTarget::Version(3),
            VersionTarget::Version(1_000_000),
            VersionTarget::Version(u64::MAX),
        ] {
            let run = drive(&Files::new(), can_list, target);
            let code = run.result.err().map(|e| e.code());
            assert_eq!(code, Some("not_a_table"), "{target:?}, listing {can_list}");
        }
    }
}

#[test]
fn a_far_version_that_does_not_exist_is_version_not_found_in_one_round() {
    let files = files_of(&table(10));
    for can_list in [true, false] {
        for v in [1_000_000u64, u64::MAX - 1, u64::MAX] {
            let run = drive(&files, can_list, VersionTarget::Version(v));
            let code = run.result.err().map(|e| e.code());
            assert_eq!(code, Some("version_not_found"), "v={v}, listing {can_list}");
            assert!(run.requests <= 4, "v={v}: {} requests", run.requests);
        }
    }
}

/// A v2 JSON checkpoint at version `v` holding the table's state, named in
/// `_last_checkpoint`.
fn add_v2_json_checkpoint(files: &mut Files, v: u64, live: &[String]) {
    let name = format!("{v:020}.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json");
    let mut lines = vec![
        json!({"checkpointMetadata": {"version": v}}).to_string(),
        json!({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
            "readerFeatures": ["v2Checkpoint"], "writerFeatures": ["v2Checkpoint"]}})
        .to_string(),
        json!({"metaData": {"id": "x", "format": {"provider": "parquet", "options": {}},
            "schemaString": schema().to_string(), "partitionColumns": [],
            "configuration": {}}})
        .to_string(),
    ];
    lines.extend(live.iter().map(|p| add(p).to_string()));
    files.insert(
        format!("_delta_log/{name}"),
        (Bytes::from(lines.join("\n")), 0),
    );
    let hint = json!({"version": v, "size": lines.len(),
        "v2Checkpoint": {"path": name, "sizeInBytes": 1, "modificationTime": 0}});
    files.insert(
        "_delta_log/_last_checkpoint".into(),
        (Bytes::from(hint.to_string()), 0),
    );
}

#[test]
fn v2_json_checkpoint_without_earlier_commits() {
    let mut files = files_of(&table(12));
    add_v2_json_checkpoint(&mut files, 9, &expected_active(10));
    // History before the checkpoint is gone: only the checkpoint can rebuild version 9.
    for v in 0..=9 {
        files.remove(&commit_path(v));
    }
    for can_list in [true, false] {
        let run = drive(&files, can_list, VersionTarget::Latest);
        let log = run
            .result
            .unwrap_or_else(|e| panic!("listing {can_list}: {e}"));
        assert_eq!(log.reconciled.version, 11);
        assert_eq!(log.checkpoint_version, Some(9));
        assert_eq!(active(&log), expected_active(12));
        assert_eq!(log.reconciled.protocol.min_reader_version, 3);
    }
    // Before the checkpoint: the history is gone.
    let run = drive(&files, true, VersionTarget::Version(5));
    assert_eq!(
        run.result.err().map(|e| e.code()),
        Some("version_not_found")
    );
}

#[test]
fn corrupt_or_stale_last_checkpoint_falls_back() {
    let clean = files_of(&table(12));
    let mut with_cp = clean.clone();
    add_v2_json_checkpoint(&mut with_cp, 9, &expected_active(10));
    // The table with `_last_checkpoint` saying `hint`, and (when given) these bytes as the
    // classic checkpoint at version 4.
    let hinted = |hint: serde_json::Value, checkpoint: Option<Bytes>| {
        let mut f = clean.clone();
        if let Some(bytes) = checkpoint {
            let path = "_delta_log/00000000000000000004.checkpoint.parquet";
            f.insert(path.into(), (bytes, 0));
        }
        f.insert(
            "_delta_log/_last_checkpoint".into(),
            (Bytes::from(hint.to_string()), 0),
        );
        f
    };
    let cases: Vec<(&str, Files)> = vec![
        ("corrupt", {
            let mut f = with_cp.clone();
            f.insert(
                "_delta_log/_last_checkpoint".into(),
                (Bytes::from("{\"vers"), 0),
            );
            f
        }),
        (
            "stale: names a checkpoint that does not exist",
            hinted(json!({"version": 4, "size": 3, "parts": 2}), None),
        ),
        (
            "declares 4,294,967,295 parts",
            hinted(json!({"version": 4, "size": 3, "parts": u32::MAX}), None),
        ),
        (
            "names an empty checkpoint (a crashed writer's)",
            hinted(json!({"version": 4, "size": 3}), Some(Bytes::new())),
        ),
        (
            "names a Parquet checkpoint shorter than its footer",
            hinted(
                json!({"version": 4, "size": 3}),
                Some(Bytes::from_static(b"PAR1")),
            ),
        ),
        (
            "hint newer than the table",
            hinted(json!({"version": 50, "size": 3}), None),
        ),
    ];
    for (what, files) in cases {
        for can_list in [true, false] {
            let run = drive(&files, can_list, VersionTarget::Latest);
            if !can_list && what.starts_with("hint newer") {
                // Without listing, a hint beyond every commit found means files exist that
                // cannot be discovered: refuse rather than return a stale version.
                assert_eq!(
                    run.result.err().map(|e| e.code()),
                    Some("invalid_log"),
                    "{what}"
                );
                continue;
            }
            let log = run
                .result
                .unwrap_or_else(|e| panic!("{what}, listing {can_list}: {e}"));
            assert_eq!(log.reconciled.version, 11, "{what}");
            assert_eq!(active(&log), expected_active(12), "{what}");
        }
    }
}

#[test]
fn a_store_that_cannot_list_finds_a_small_log_in_its_first_round() {
    for n in 1..=SPECULATIVE_COMMITS - 1 {
        let files = files_of(&table(n));
        let mut asked = Vec::new();
        let loader = SnapshotLoader::new("mem://t", VersionTarget::Latest).without_listing();
        let run = drive_loader(&files, false, loader, &mut asked);
        let log = run.result.unwrap_or_else(|e| panic!("n={n}: {e}"));
        assert_eq!(log.reconciled.version, n - 1);
        assert_eq!(active(&log), expected_active(n));
        assert_eq!(log.round_trips, 1, "n={n}: one round for the log");
        assert_eq!(run.requests as u64, 1 + SPECULATIVE_COMMITS, "n={n}");
    }
    // As many commits as the first round asks for: the end is not yet seen, and probing
    // goes on as it would without the first round (doubling, then the gap).
    let files = files_of(&table(SPECULATIVE_COMMITS));
    let loader = SnapshotLoader::new("mem://t", VersionTarget::Latest).without_listing();
    let log = drive_loader(&files, false, loader, &mut Vec::new())
        .result
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(log.reconciled.version, SPECULATIVE_COMMITS - 1);
    assert_eq!(log.round_trips, 3);
}

#[test]
fn speculative_commits_below_a_checkpoint_are_dropped_not_replayed() {
    // 25 commits and a checkpoint at 20 (with `_last_checkpoint`): the first round also
    // fetched commits 0..5, which the snapshot must not depend on.
    let mut files = files_of(&table(25));
    add_v2_json_checkpoint(&mut files, 20, &expected_active(21));
    let loader = SnapshotLoader::new("mem://t", VersionTarget::Latest).without_listing();
    let mut asked = Vec::new();
    let run = drive_loader(&files, false, loader, &mut asked);
    let log = run.result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(log.reconciled.version, 24);
    assert_eq!(active(&log), expected_active(25));
    assert!(
        asked.contains(&commit_path(0)),
        "commit 0 was asked for speculatively"
    );
    // Without commits 0..5 (cleaned up, say) the same snapshot loads.
    let mut cleaned = files.clone();
    for v in 0..SPECULATIVE_COMMITS {
        cleaned.remove(&commit_path(v));
    }
    let loader = SnapshotLoader::new("mem://t", VersionTarget::Latest).without_listing();
    let log = drive_loader(&cleaned, false, loader, &mut Vec::new())
        .result
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(log.reconciled.version, 24);
    assert_eq!(active(&log), expected_active(25));
    // A checkpoint inside the speculative range: the commits after it that the first round
    // fetched decide the end while the checkpoint is still being read.
    for (commits, checkpoint) in [(4u64, 2u64), (6, 2), (5, 0), (3, 1)] {
        let mut files = files_of(&table(commits));
        add_v2_json_checkpoint(&mut files, checkpoint, &expected_active(checkpoint + 1));
        for listing in [true, false] {
            let run = drive(&files, listing, VersionTarget::Latest);
            let log = run
                .result
                .unwrap_or_else(|e| panic!("{commits} commits, checkpoint {checkpoint}: {e}"));
            assert_eq!(log.reconciled.version, commits - 1);
            assert_eq!(log.checkpoint_version, Some(checkpoint));
            assert_eq!(active(&log), expected_active(commits));
        }
    }
    // A target below the speculative range asks for no commit above it.
    let mut asked = Vec::new();
    let loader = SnapshotLoader::new("mem://t", VersionTarget::Version(1)).without_listing();
    let log = drive_loader(&files, false, loader, &mut asked)
        .result
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(log.reconciled.version, 1);
    assert!(!asked.contains(&commit_path(2)), "{asked:?}");
}

/// A host that forbids what it does not have (or may not show) answers `403` for the
/// speculative commit 0 of a table whose early commits were cleaned up after a checkpoint:
/// the table loads from the checkpoint `_last_checkpoint` names. A `403` on a commit the
/// load needs fails it with that answer, not with what its absence would look like.
#[test]
fn a_failed_speculative_commit_below_the_checkpoint_is_not_needed() {
    let mut files = files_of(&table(25));
    add_v2_json_checkpoint(&mut files, 20, &expected_active(21));
    for v in 0..20 {
        files.remove(&commit_path(v));
    }
    let forbidden: Vec<String> = (0..SPECULATIVE_COMMITS).map(commit_path).collect();
    let loader = SnapshotLoader::new("mem://t", VersionTarget::Latest).without_listing();
    let log = drive_forbidding(&files, &forbidden, loader)
        .result
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(log.reconciled.version, 24);
    assert_eq!(active(&log), expected_active(25));
    // Without `_last_checkpoint` commit 0 is needed: its failure is the error.
    files.remove(crate::log::path::LAST_CHECKPOINT);
    let loader = SnapshotLoader::new("mem://t", VersionTarget::Latest).without_listing();
    let err = drive_forbidding(&files, &forbidden, loader).result.err();
    assert_eq!(err.as_ref().map(DeltaError::code), Some("io"), "{err:?}");
    assert!(err.is_some_and(|e| e.to_string().contains("403")));
    // A failed commit after the checkpoint: the error, never a shorter log.
    let mut files = files_of(&table(4));
    add_v2_json_checkpoint(&mut files, 1, &expected_active(2));
    let loader = SnapshotLoader::new("mem://t", VersionTarget::Latest).without_listing();
    let err = drive_forbidding(&files, &[commit_path(3)], loader)
        .result
        .err();
    assert_eq!(err.as_ref().map(DeltaError::code), Some("io"), "{err:?}");
}

#[test]
fn a_log_past_the_commit_limit_is_refused_listed_probed_and_by_target() {
    let files = files_of(&table(12));
    let limited = |target| SnapshotLoader::new("mem://t", target).with_max_commits(11);
    for (can_list, loader) in [
        (true, limited(VersionTarget::Latest)),
        (false, limited(VersionTarget::Latest).without_listing()),
        (true, limited(VersionTarget::Version(11))),
        (false, limited(VersionTarget::Version(11)).without_listing()),
        (
            false,
            limited(VersionTarget::Timestamp(i64::MAX)).without_listing(),
        ),
    ] {
        let run = drive_loader(&files, can_list, loader, &mut Vec::new());
        match run.result {
            Err(DeltaError::LimitExceeded {
                found: 12, max: 11, ..
            }) => {}
            other => panic!(
                "listing {can_list}: {:?}",
                other.map(|l| l.reconciled.version)
            ),
        }
    }
    // One version less, or a limit of 12, loads.
    let below = limited(VersionTarget::Version(10));
    assert!(drive_loader(&files, true, below, &mut Vec::new())
        .result
        .is_ok());
    let at = SnapshotLoader::new("mem://t", VersionTarget::Latest).with_max_commits(12);
    let log = drive_loader(&files, false, at.without_listing(), &mut Vec::new()).result;
    assert_eq!(log.map(|l| l.reconciled.version).ok(), Some(11));
}

#[test]
fn a_version_at_its_checkpoint_takes_its_commit_files_time() {
    let mut files = files_of(&table(12));
    add_v2_json_checkpoint(&mut files, 9, &expected_active(10));
    if let Some(commit) = files.get_mut(&commit_path(9)) {
        commit.1 = 123_456;
    }
    // No commit is replayed at version 9: the listing gives its commit file's time.
    let run = drive(&files, true, VersionTarget::Version(9));
    let log = run.result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(log.checkpoint_version, Some(9));
    assert_eq!(log.timestamp_ms, Some(123_456));
}
