//! Parquet checkpoints read by byte ranges: for every corpus table with a checkpoint, at
//! every checkpoint version and the newest, in both load scopes, a load that reads them by
//! ranges (the default tail, and a tail so small that the footer takes a second request)
//! gives exactly what a load that fetches them whole gives; and a table-only load of a large
//! checkpoint fetches a small part of it.

use std::collections::BTreeMap;
use std::sync::Arc;

use delta_arrow_reader::io::MemoryStore;
use delta_arrow_reader::log::{
    CheckpointReads, LoadScope, LoadedLog, SnapshotLoader, VersionTarget, CHECKPOINT_TAIL,
};
use delta_arrow_reader::DeltaTableBuilder;
use serde_json::json;

use crate::common;
use crate::snapshot_loader::drive_counted;

/// A load of `store` at `target`; the loaded log (or the error's code) and the bytes
/// received per file.
async fn load(
    store: &MemoryStore,
    target: VersionTarget,
    scope: LoadScope,
    reads: CheckpointReads,
) -> (Result<LoadedLog, String>, BTreeMap<String, u64>) {
    let loader = SnapshotLoader::new("mem://t", target)
        .with_scope(scope)
        .with_checkpoint_reads(reads);
    let mut bytes = BTreeMap::new();
    let log = drive_counted(store, loader, &mut Vec::new(), &mut bytes).await;
    (log.map_err(|e| e.code().to_string()), bytes)
}

/// What a load found, to compare loads.
fn facts(log: &Result<LoadedLog, String>) -> String {
    match log {
        Err(code) => format!("error {code}"),
        Ok(l) => {
            let r = &l.reconciled;
            let mut config: Vec<_> = r.metadata.configuration.iter().collect();
            config.sort();
            format!(
                "v{} cp{:?} {:?} {} {:?} {:?} files {:?} segment {:?}",
                r.version,
                l.checkpoint_version,
                r.protocol,
                r.metadata.schema_string,
                r.metadata.partition_columns,
                config,
                r.files,
                l.segment
            )
        }
    }
}

/// Versions of a table's checkpoints, from their file names.
fn checkpoint_versions(store: &MemoryStore) -> Vec<u64> {
    let mut versions: Vec<u64> = store
        .paths()
        .iter()
        .filter(|p| p.contains(".checkpoint.") && !p.contains("/_sidecars/"))
        .filter_map(|p| p.strip_prefix("_delta_log/")?.get(..20)?.parse().ok())
        .collect();
    versions.dedup();
    versions
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranged_checkpoint_reads_give_what_whole_reads_give() {
    let (mut loads, mut ranged_bytes, mut whole_bytes) = (0usize, 0u64, 0u64);
    for (name, dir) in common::corpus_tables() {
        if !dir.join("_delta_log").is_dir() {
            continue;
        }
        let store = common::table_in_memory(&name, "_delta_log");
        let versions = checkpoint_versions(&store);
        if versions.is_empty() {
            continue;
        }
        let targets = versions
            .iter()
            .map(|&v| VersionTarget::Version(v))
            .chain([VersionTarget::Latest]);
        for target in targets {
            for scope in [LoadScope::ActiveFiles, LoadScope::TableOnly] {
                let (whole, whole_read) = load(&store, target, scope, CheckpointReads::Whole).await;
                let want = facts(&whole);
                for reads in [
                    CheckpointReads::default(),
                    CheckpointReads::Ranged { tail: 1024 },
                ] {
                    let (ranged, ranged_read) = load(&store, target, scope, reads).await;
                    assert_eq!(
                        facts(&ranged),
                        want,
                        "{name} {target:?} {scope:?} {reads:?}"
                    );
                    if reads != CheckpointReads::default() {
                        ranged_bytes += ranged_read.values().sum::<u64>();
                        whole_bytes += whole_read.values().sum::<u64>();
                    }
                    loads += 1;
                }
            }
        }
    }
    println!("{loads} ranged loads; with a 1 KiB tail {ranged_bytes} bytes, whole {whole_bytes}");
    assert!(loads >= 100, "{loads} loads: is the corpus there?");
}

/// A table whose only log file is a classic checkpoint of `files` adds (with statistics).
fn large_checkpoint_table(files: usize) -> (MemoryStore, u64) {
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": true, "metadata": {}},
        {"name": "name", "type": "string", "nullable": true, "metadata": {}},
    ]});
    let mut actions = delta_arrow_reader::fixture::TableWriter::create_actions(
        &schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 1, "minWriterVersion": 2}),
    );
    for i in 0..files {
        let stats = json!({"numRecords": 100, "minValues": {"id": i * 100, "name": "a"},
            "maxValues": {"id": i * 100 + 99, "name": "z"}, "nullCount": {"id": 0, "name": 0}});
        actions.push(json!({"add": {"path": format!("part-{i:06}.parquet"),
            "partitionValues": {}, "size": 1000 + i, "modificationTime": 0,
            "dataChange": true, "stats": stats.to_string()}}));
    }
    let checkpoint =
        delta_arrow_reader::fixture::checkpoint_parquet(&actions).unwrap_or_else(|e| panic!("{e}"));
    let size = checkpoint.len() as u64;
    let store = MemoryStore::new();
    store.put(
        "_delta_log/00000000000000000007.checkpoint.parquet",
        checkpoint,
    );
    store.put(
        "_delta_log/_last_checkpoint",
        json!({"version": 7, "size": actions.len()}).to_string(),
    );
    (store, size)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_only_load_reads_a_small_part_of_a_large_checkpoint() {
    let (store, size) = large_checkpoint_table(50_000);
    let checkpoint = "_delta_log/00000000000000000007.checkpoint.parquet";
    let (table_only, read) = load(
        &store,
        VersionTarget::Latest,
        LoadScope::TableOnly,
        CheckpointReads::default(),
    )
    .await;
    let fetched = read.get(checkpoint).copied().unwrap_or(0);
    let (whole, whole_read) = load(
        &store,
        VersionTarget::Latest,
        LoadScope::TableOnly,
        CheckpointReads::Whole,
    )
    .await;
    let (full, full_read) = load(
        &store,
        VersionTarget::Latest,
        LoadScope::ActiveFiles,
        CheckpointReads::default(),
    )
    .await;
    println!(
        "checkpoint of {size} bytes: a table-only load fetched {fetched} bytes of it by \
         ranges ({} whole); a load of the files fetched {}",
        whole_read.get(checkpoint).copied().unwrap_or(0),
        full_read.get(checkpoint).copied().unwrap_or(0)
    );
    assert!(size > 20 * CHECKPOINT_TAIL, "{size} bytes");
    assert!(
        fetched > 0 && fetched <= 2 * CHECKPOINT_TAIL,
        "{fetched} of {size} bytes"
    );
    assert_eq!(facts(&table_only), facts(&whole));
    let full = full.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(full.reconciled.files.len(), 50_000);
    assert_eq!(full.bytes_read, full_read.values().sum::<u64>());
    // The column chunks that begin before the tail are fetched whole: at most the tail is
    // fetched twice.
    let files_read = full_read.get(checkpoint).copied().unwrap_or(0);
    assert!(files_read <= size + CHECKPOINT_TAIL, "{files_read} bytes");

    // Through the public API: the lazy load is table-only, its first scan reads the files.
    let table = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(store))
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let lazy = table.io_counters().snapshot().bytes_received;
    assert!(
        lazy <= 2 * CHECKPOINT_TAIL,
        "the lazy load received {lazy} bytes"
    );
    let files = table.active_files().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(files.len(), 50_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_largest_corpus_checkpoint_is_read_in_part_with_a_small_tail() {
    // 41,898 bytes, 20,718 of them footer (corpus checkpoints are small and mostly footer):
    // the default tail takes it in one request; a table-only load with a 1 KiB tail reads
    // the footer and the protocol and metaData chunks (about 30 KB).
    let name = "deltars__delta-checkpoint-stats-optional";
    let checkpoint = "_delta_log/00000000000000000002.checkpoint.parquet";
    let store = common::table_in_memory(name, "_delta_log");
    let present = store.paths().contains(&checkpoint.to_string());
    assert!(present, "{name} has no {checkpoint}");
    let mut fetched = Vec::new();
    for (scope, reads) in [
        (LoadScope::TableOnly, CheckpointReads::Whole),
        (LoadScope::TableOnly, CheckpointReads::default()),
        (LoadScope::TableOnly, CheckpointReads::Ranged { tail: 1024 }),
        (
            LoadScope::ActiveFiles,
            CheckpointReads::Ranged { tail: 1024 },
        ),
    ] {
        let (log, read) = load(&store, VersionTarget::Latest, scope, reads).await;
        assert!(log.is_ok(), "{name} {scope:?} {reads:?}: {:?}", log.err());
        fetched.push(read.get(checkpoint).copied().unwrap_or(0));
    }
    println!(
        "{name}: checkpoint bytes fetched (whole, default tail, 1 KiB tail, files): {fetched:?}"
    );
    let whole = fetched[0];
    assert_eq!(
        fetched[1], whole,
        "a checkpoint within the tail comes whole"
    );
    assert!(fetched[2] < whole * 3 / 4, "{fetched:?}");
    assert!(fetched[3] <= whole, "{fetched:?}");
}
