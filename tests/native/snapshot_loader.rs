//! [`SnapshotLoader`], the log's state machine, driven through its public API from a store
//! holding a corpus table's log: a table-only load gives the full load's protocol, metadata,
//! version and segment without fetching sidecars, and a replay of the full load's segment
//! asks for exactly the segment's files (and sidecars) and gives the same files in the same
//! order.

use std::collections::{BTreeMap, BTreeSet};

use delta_arrow_reader::io::{MemoryStore, RangeRead};
use delta_arrow_reader::log::{
    LoadScope, LoadStep, LoadedLog, LogPath, LogRequest, SnapshotLoader, VersionTarget,
};

use crate::common;

/// Answers `loader`'s requests from `store` until it finishes; notes the files it read.
async fn drive(store: &MemoryStore, loader: SnapshotLoader, read: &mut Vec<String>) -> LoadedLog {
    drive_counted(store, loader, read, &mut BTreeMap::new())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// [`drive`], also counting the bytes received per file; the first error.
pub(crate) async fn drive_counted(
    store: &MemoryStore,
    mut loader: SnapshotLoader,
    read: &mut Vec<String>,
    bytes: &mut BTreeMap<String, u64>,
) -> delta_arrow_reader::Result<LoadedLog> {
    loop {
        let needs = match loader.poll()? {
            LoadStep::Ready(log) => return Ok(*log),
            LoadStep::Need(needs) => needs,
        };
        for need in needs {
            let pushed = match need {
                LogRequest::List {
                    prefix,
                    start_after,
                } => {
                    let entries = store.list(&prefix, start_after.as_deref()).await?;
                    loader.push_listing(entries.map(|entries| {
                        entries
                            .iter()
                            .filter_map(|e| LogPath::listed(&e.path, e.size, e.last_modified_ms))
                            .collect()
                    }))
                }
                LogRequest::GetRange { path, range } => {
                    let data = store.get_range(&path, range.clone()).await?;
                    if !read.contains(&path) {
                        read.push(path.clone());
                    }
                    *bytes.entry(path.clone()).or_default() += data.len() as u64;
                    loader.push_range(&path, range, data)
                }
                LogRequest::Get { path, optional } => match store.get(&path).await {
                    Ok(data) => {
                        read.push(path.clone());
                        *bytes.entry(path.clone()).or_default() += data.len() as u64;
                        loader.push_file(&path, Some(data))
                    }
                    Err(e) if optional && e.code() == "not_found" => loader.push_file(&path, None),
                    Err(e) => return Err(e),
                },
            };
            pushed?;
        }
    }
}

#[tokio::test]
async fn table_only_scope_and_segment_replay() {
    let cases = [
        ("kernel__v2-checkpoints-parquet-with-sidecars", 101usize),
        ("kernel__v1-multi-part-struct-stats-only", 5),
        ("golden__v2-checkpoint-json", 4),
    ];
    for (name, files) in cases {
        let store = common::table_in_memory(name, "_delta_log");
        let (mut full_read, mut only_read, mut replay_read) = (Vec::new(), Vec::new(), Vec::new());
        let full = drive(
            &store,
            SnapshotLoader::new("mem://t", VersionTarget::Latest),
            &mut full_read,
        )
        .await;
        let loader =
            SnapshotLoader::new("mem://t", VersionTarget::Latest).with_scope(LoadScope::TableOnly);
        let table_only = drive(&store, loader, &mut only_read).await;
        let loader = SnapshotLoader::for_segment("mem://t", full.segment.clone(), full.discovery);
        let replayed = drive(&store.without_listing(), loader, &mut replay_read).await;

        assert_eq!(full.reconciled.files.len(), files, "{name}");
        // Table only: same protocol, metadata, version and segment, no files, no sidecars.
        assert!(table_only.reconciled.files.is_empty(), "{name}");
        assert_eq!(table_only.reconciled.protocol, full.reconciled.protocol);
        assert_eq!(
            table_only.reconciled.metadata.schema_string,
            full.reconciled.metadata.schema_string
        );
        assert_eq!(table_only.reconciled.version, full.reconciled.version);
        assert_eq!(table_only.segment, full.segment, "{name}");
        assert!(
            !only_read.iter().any(|p| p.contains("/_sidecars/")),
            "{name}: a table-only load fetched sidecars: {only_read:?}"
        );
        // The replay reads the segment (and sidecars) with no listing or hint, and gives the
        // same files in the same order.
        assert_eq!(replayed.reconciled.files, full.reconciled.files, "{name}");
        assert_eq!(replayed.reconciled.version, full.reconciled.version);
        assert!(!replay_read.iter().any(|p| p.ends_with("_last_checkpoint")));
        let segment: Vec<String> = full.segment.files().map(|f| f.path.clone()).collect();
        assert!(segment.iter().all(|p| replay_read.contains(p)), "{name}");
        let extra: Vec<&String> = replay_read
            .iter()
            .filter(|p| !segment.contains(p))
            .collect();
        assert!(
            extra.iter().all(|p| p.contains("/_sidecars/")),
            "{name}: the replay read {extra:?}"
        );
        let distinct: BTreeSet<&String> = full_read.iter().collect();
        assert_eq!(full_read.len(), distinct.len(), "{name}: a file read twice");
    }
}
