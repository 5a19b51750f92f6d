//! Every checkpoint of the corpus, through the public API: each table that has one loads at
//! each checkpoint version from that checkpoint (`LoadInfo::checkpoint_version`), with exactly
//! the `add` rows a plain read of the checkpoint finds (its parts, or its sidecars for a v2
//! checkpoint); checkpoints that keep statistics only as `stats_parsed` give the files the
//! statistics their commits wrote; and multi-part and v2 checkpoints load the same by listing
//! and by probing (a store that cannot list).
//!
//! Tables the inventory says must fail are left to `corpus_load`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch, StructArray};
use bytes::Bytes;
use delta_arrow_reader::io::MemoryStore;
use delta_arrow_reader::log::{
    decode_commit_actions, Action, AddStats, LoadScope, SUPPORTED_READER_FEATURES,
};
use delta_arrow_reader::predicate::{FileStats, StatsColumns};
use delta_arrow_reader::{DeltaTable, DeltaTableBuilder};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

use crate::common;

/// The files of one checkpoint: every part, or the top-level file of a v2 checkpoint.
#[derive(Debug, Default)]
struct Checkpoint {
    parts: Vec<PathBuf>,
    /// Parts a multi-part checkpoint says it has (1 otherwise).
    declared: usize,
}

/// A table's checkpoints by version, then by kind (`classic`, `parts of N`, or a v2 UUID).
fn checkpoints(table: &Path) -> BTreeMap<u64, BTreeMap<String, Checkpoint>> {
    let mut out: BTreeMap<u64, BTreeMap<String, Checkpoint>> = BTreeMap::new();
    let log = table.join("_delta_log");
    let Ok(entries) = std::fs::read_dir(&log) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((version, rest)) = name.split_once(".checkpoint.") else {
            continue;
        };
        let Ok(version) = version.parse::<u64>() else {
            continue;
        };
        let pieces: Vec<&str> = rest.split('.').collect();
        let (kind, declared) = match pieces.as_slice() {
            ["parquet"] => ("classic".to_string(), 1),
            [_, n, "parquet"] => match n.parse::<usize>() {
                Ok(n) => (format!("parts of {n}"), n),
                Err(_) => continue,
            },
            [uuid, "parquet" | "json"] => (uuid.to_string(), 1),
            _ => continue,
        };
        let c = out.entry(version).or_default().entry(kind).or_default();
        c.parts.push(entry.path());
        c.declared = declared;
    }
    out
}

fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let data =
        Bytes::from(std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    ParquetRecordBatchReaderBuilder::try_new(data)
        .and_then(|b| b.build())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|b| b.unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .collect()
}

/// The non-null values of `column.field` (strings) in `batches`.
fn struct_strings(batches: &[RecordBatch], column: &str, field: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        let Some(c) = b.column_by_name(column) else {
            continue;
        };
        let Some(s) = c.as_any().downcast_ref::<StructArray>() else {
            continue;
        };
        let Some(values) = s.column_by_name(field) else {
            continue;
        };
        let values = values.as_string::<i32>();
        for i in 0..s.len() {
            if s.is_valid(i) && values.is_valid(i) {
                out.push(values.value(i).to_string());
            }
        }
    }
    out
}

/// The `add` paths of a checkpoint found by a plain read: its Parquet parts, or the lines of
/// a JSON v2 checkpoint, and the sidecars either names.
fn plain_add_paths(c: &Checkpoint) -> Vec<String> {
    let mut adds = Vec::new();
    let mut sidecars = Vec::new();
    for part in &c.parts {
        if part.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(part).unwrap_or_else(|e| panic!("{e}"));
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}"));
                if let Some(p) = v["add"]["path"].as_str() {
                    adds.push(p.to_string());
                }
                if let Some(p) = v["sidecar"]["path"].as_str() {
                    sidecars.push(p.to_string());
                }
            }
        } else {
            let batches = read_parquet(part);
            adds.extend(struct_strings(&batches, "add", "path"));
            sidecars.extend(struct_strings(&batches, "sidecar", "path"));
        }
    }
    for s in sidecars {
        let file = c.parts[0].with_file_name("_sidecars").join(&s);
        adds.extend(struct_strings(&read_parquet(&file), "add", "path"));
    }
    adds.sort();
    adds
}

async fn load_at(dir: &Path, version: u64) -> delta_arrow_reader::Result<DeltaTable> {
    DeltaTableBuilder::new(dir.to_string_lossy())
        .with_version(version)
        .load_table_with_eager_scan_metadata()
        .await
}

fn paths(t: &DeltaTable) -> Vec<String> {
    let mut p: Vec<String> = t
        .eager_files()
        .unwrap_or_else(|| panic!("an eager table"))
        .iter()
        .map(|f| f.path.clone())
        .collect();
    p.sort();
    p
}

/// Tables whose rows the inventory says must load, by name.
fn loadable_tables() -> Vec<(String, PathBuf)> {
    let must_fail: Vec<String> = common::inventory()
        .into_iter()
        .filter(|r| r.must_fail(SUPPORTED_READER_FEATURES).is_some())
        .map(|r| r.name().to_string())
        .collect();
    common::corpus_tables()
        .into_iter()
        .filter(|(name, _)| !must_fail.contains(name))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_checkpoint_loads_with_the_adds_it_holds() {
    let (mut checked, mut adds, mut failures) = (0usize, 0usize, Vec::new());
    for (name, dir) in loadable_tables() {
        for (version, kinds) in checkpoints(&dir) {
            let complete: Vec<(&String, &Checkpoint)> = kinds
                .iter()
                .filter(|(_, c)| c.parts.len() == c.declared)
                .collect();
            let wants: Vec<Vec<String>> =
                complete.iter().map(|(_, c)| plain_add_paths(c)).collect();
            let Some(want) = wants.first() else {
                println!("{name} v{version}: no complete checkpoint ({kinds:?})");
                continue;
            };
            if wants.iter().any(|w| w != want) {
                failures.push(format!(
                    "{name} v{version}: checkpoints of one version differ"
                ));
                continue;
            }
            let table = match load_at(&dir, version).await {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{name} v{version}: {e}"));
                    continue;
                }
            };
            if table.load_info().checkpoint_version != Some(version) {
                failures.push(format!(
                    "{name} v{version}: loaded from checkpoint {:?}",
                    table.load_info().checkpoint_version
                ));
            }
            let got = paths(&table);
            if &got != want {
                failures.push(format!(
                    "{name} v{version}: {} files, the checkpoint holds {} adds",
                    got.len(),
                    want.len()
                ));
            }
            for f in table.eager_files().into_iter().flatten() {
                if let Some(s) = &f.stats {
                    let json = s.json();
                    let object = json.as_deref().map(serde_json::from_str::<Value>);
                    if !object.is_some_and(|v| v.is_ok_and(|v| v.is_object())) {
                        failures.push(format!("{name} v{version} {}: stats {s:?}", f.path));
                    }
                }
            }
            checked += 1;
            adds += want.len();
        }
    }
    println!("{checked} checkpoints, {adds} adds");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if !common::corpus_overridden() {
        assert!(checked >= 60, "only {checked} checkpoints checked");
        assert!(adds > 500, "only {adds} adds");
    }
}

/// Flattens a JSON object to `a.b.c -> leaf`.
fn leaves(v: &Value, prefix: &str, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                leaves(v, &format!("{prefix}{k}."), out);
            }
        }
        other => {
            out.insert(prefix.trim_end_matches('.').to_string(), other.clone());
        }
    }
}

/// True when a Parquet checkpoint part stores `add.stats_parsed` and no `add.stats`.
fn struct_stats_only(part: &Path) -> bool {
    if part.extension().is_none_or(|e| e != "parquet") {
        return false;
    }
    let data = Bytes::from(std::fs::read(part).unwrap_or_else(|e| panic!("{e}")));
    let b = ParquetRecordBatchReaderBuilder::try_new(data).unwrap_or_else(|e| panic!("{e}"));
    let columns: Vec<String> = b
        .parquet_schema()
        .columns()
        .iter()
        .map(|c| c.path().string())
        .collect();
    !columns.iter().any(|p| p == "add.stats")
        && columns.iter().any(|p| p.starts_with("add.stats_parsed."))
}

/// The `stats` the commits up to `version` wrote, by file path.
fn commit_stats(dir: &Path, version: u64) -> HashMap<String, AddStats> {
    let mut stats = HashMap::new();
    for v in 0..=version {
        let path = format!("_delta_log/{v:020}.json");
        let Ok(bytes) = std::fs::read(dir.join(&path)) else {
            continue;
        };
        let actions = decode_commit_actions(&path, &bytes, LoadScope::ActiveFiles)
            .unwrap_or_else(|e| panic!("{e}"));
        for a in actions {
            if let Action::Add(a) = a {
                if let Some(s) = a.stats {
                    stats.insert(a.path, s);
                }
            }
        }
    }
    stats
}

/// Checkpoints that keep statistics only as `stats_parsed`: the statistics of the loaded files
/// stay typed, read as file skipping reads them they agree with the `stats` the commits wrote
/// for the same files, and so does their JSON form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn struct_only_checkpoint_stats_agree_with_commit_stats() {
    let (mut compared, mut timestamps, mut typed_values) = (0, 0, 0);
    for (name, dir) in loadable_tables() {
        for (version, kinds) in checkpoints(&dir) {
            let only_struct = kinds.len() == 1
                && kinds
                    .values()
                    .all(|c| c.parts.iter().all(|p| struct_stats_only(p)));
            if !only_struct {
                continue;
            }
            let theirs = commit_stats(&dir, version);
            let table = load_at(&dir, version)
                .await
                .unwrap_or_else(|e| panic!("{name} v{version}: {e}"));
            for f in table.eager_files().into_iter().flatten() {
                let Some(theirs) = theirs.get(&f.path) else {
                    continue;
                };
                let parsed = f
                    .stats
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name} v{version}: {} has no stats", f.path));
                assert!(
                    matches!(parsed, AddStats::Parsed(_)),
                    "{name}: the checkpoint's typed statistics are kept typed"
                );
                let columns = StatsColumns::new(table.delta_schema(), table.column_mapping_mode())
                    .unwrap_or_else(|e| panic!("{e}"));
                let typed = FileStats::from_add(parsed, &columns).unwrap_or_else(|e| panic!("{e}"));
                let text = FileStats::from_add(theirs, &columns).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(typed.num_records, text.num_records, "{name} {}", f.path);
                for path in columns.logical_paths() {
                    let (Some(t), Some(o)) = (text.column(path), typed.column(path)) else {
                        assert!(
                            text.column(path).is_none(),
                            "{name} {path:?}: no typed stats"
                        );
                        continue;
                    };
                    // Where the JSON gives a value, the typed statistics give the same one
                    // (they may know more: decimals of more digits than a JSON double keeps).
                    for (side, tv, ov) in [("min", &t.min, &o.min), ("max", &t.max, &o.max)] {
                        if tv.is_some() {
                            assert_eq!(tv, ov, "{name} {} {path:?} {side}", f.path);
                        }
                    }
                    if t.null_count.is_some() {
                        assert_eq!(t.null_count, o.null_count, "{name} {path:?} nulls");
                    }
                    typed_values += 1;
                }
                let ours = parsed
                    .json()
                    .unwrap_or_else(|| panic!("{name}: no JSON form"));
                let ours = ours.as_ref();
                let theirs = theirs
                    .json()
                    .unwrap_or_else(|| panic!("{name}: commit stats"));
                let theirs = theirs.as_ref();
                let (mut o, mut t) = (BTreeMap::new(), BTreeMap::new());
                leaves(
                    &serde_json::from_str(ours).unwrap_or_else(|e| panic!("{e}")),
                    "",
                    &mut o,
                );
                leaves(
                    &serde_json::from_str(theirs).unwrap_or_else(|e| panic!("{e}")),
                    "",
                    &mut t,
                );
                assert!(o.contains_key("numRecords"), "{ours}");
                for (k, v) in &o {
                    let tv = t
                        .get(k)
                        .unwrap_or_else(|| panic!("{name}: {k} not in {theirs}"));
                    let same = match (v.as_f64(), tv.as_f64()) {
                        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                        _ => v == tv,
                    };
                    assert!(same, "{name} {}: {k}: ours {v}, commit {tv}", f.path);
                    timestamps += usize::from(v.as_str().is_some_and(|s| s.ends_with('Z')));
                }
                compared += 1;
            }
        }
    }
    assert!(compared >= 20, "compared {compared}");
    assert!(timestamps > 0);
    assert!(
        typed_values >= 40,
        "typed column statistics compared: {typed_values}"
    );
    println!("{compared} files, {typed_values} typed column statistics compared");
}

/// Multi-part and v2 checkpoints (Parquet and JSON, with sidecars) give the same snapshot
/// whether the log is listed or probed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_part_and_v2_checkpoints_by_listing_and_by_probing() {
    let cases = [
        ("kernel__v1-multi-part-struct-stats-only", 5u64, 5usize),
        ("kernel__v1-multi-part-partitioned-struct-stats-only", 5, 5),
        ("kernel__v2-checkpoints-parquet-with-sidecars", 6, 101),
        ("kernel__v2-checkpoints-json-with-sidecars", 6, 101),
        ("kernel__v2-classic-checkpoint-parquet", 1, 4),
        ("golden__v2-checkpoint-json", 2, 4),
    ];
    for (name, version, files) in cases {
        let listing = common::table_in_memory(name, "_delta_log");
        let mut seen = Vec::new();
        for store in [listing.clone(), listing.without_listing()] {
            let table = DeltaTableBuilder::new("memory://bucket/table/")
                .with_store(Arc::new(store))
                .load_table_with_eager_scan_metadata()
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(table.version(), version, "{name}");
            assert_eq!(paths(&table).len(), files, "{name}");
            assert!(table.load_info().checkpoint_version.is_some(), "{name}");
            seen.push(common::file_set(&table));
        }
        assert_eq!(seen[0], seen[1], "{name}: listing and probing differ");
    }
}

/// The log-only stress table `kernel__300k-add-files-100-col-partitioned` has only commits:
/// its actions, written as one classic checkpoint by the project's fixture, load from that
/// checkpoint alone; prints the times. Run: `cargo test --release --features
/// kernel,datafusion --test native stress_300k -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "stress: about 1 GB of memory"]
async fn stress_300k_adds_from_one_checkpoint() {
    use std::time::Instant;
    let log = common::table_dir("kernel__300k-add-files-100-col-partitioned").join("_delta_log");
    let t = Instant::now();
    let mut actions = Vec::new();
    for v in 0..=4u64 {
        let text = std::fs::read_to_string(log.join(format!("{v:020}.json")))
            .unwrap_or_else(|e| panic!("{e}"));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            actions.push(serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}")));
        }
    }
    let checkpoint =
        delta_arrow_reader::fixture::checkpoint_parquet(&actions).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} actions written as a {:.1} MB checkpoint in {:?}",
        actions.len(),
        checkpoint.len() as f64 / 1e6,
        t.elapsed()
    );
    let store = MemoryStore::new();
    store.put(
        "_delta_log/00000000000000000004.checkpoint.parquet",
        checkpoint,
    );
    store.put(
        "_delta_log/_last_checkpoint",
        serde_json::json!({"version": 4, "size": actions.len()}).to_string(),
    );
    let t = Instant::now();
    let table = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(store))
        .load_table_with_eager_scan_metadata()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "loaded 300000 adds from the checkpoint in {:?}",
        t.elapsed()
    );
    assert_eq!(table.version(), 4);
    assert_eq!(table.load_info().checkpoint_version, Some(4));
    let files = table.eager_files().unwrap_or_default();
    assert_eq!(files.len(), 300_000);
    assert!(files.iter().all(|f| f.stats.is_some()));
}
