//! A `_last_checkpoint` answered from the log folder when a table has none (`dar serve` and
//! `dar view` ask for it with [`ServeConfig::with_checkpoint_hints`]).
//!
//! A reader over HTTP cannot list: it finds the log from `_last_checkpoint`, else from
//! commit 0 on. A table whose hint file is missing and whose early commits were removed (a
//! log that starts at a checkpoint, a log of one checkpoint) cannot be opened that way,
//! though a local reader lists it at once. The server can list, so it answers what a writer
//! would have written: the newest complete checkpoint's `version`, its `size` (actions: the
//! rows of its Parquet files, the lines of a JSON one), `parts` for a multi-part checkpoint
//! and `v2Checkpoint` (the file's name) for a v2 one. It answers only when the folder holds a
//! checkpoint that a listing reader would use; otherwise the request stays a 404.
//!
//! [`ServeConfig::with_checkpoint_hints`]: super::ServeConfig::with_checkpoint_hints

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::log::path::LOG_DIR;
use crate::log::{segment_from_listing, LogFileKind, LogPath};

/// Log folders whose hints are kept; past this the cache starts afresh.
const MAX_CACHED_FOLDERS: usize = 1024;

/// Hints already computed, by log folder, each kept while the folder's modification time
/// stays (adding, removing or renaming a file in it changes that): a hint costs a listing
/// of the folder and a read of the checkpoint's footers (0.25-0.9 s for a log of 50,000
/// commits), and 300 clients asking for it over and over kept every other request waiting
/// 30 s. One hint is computed at a time; requests for it meanwhile wait and take it.
#[derive(Debug, Default)]
pub(crate) struct HintCache {
    folders: tokio::sync::Mutex<HashMap<PathBuf, Computed>>,
}

/// A folder's hint (or its absence) and the folder's modification time when computed.
type Computed = (SystemTime, Option<Vec<u8>>);

impl HintCache {
    /// The hint for the log folder `dir` (see [`hint_for`]).
    pub(crate) async fn hint(&self, dir: PathBuf) -> Option<Vec<u8>> {
        let mut folders = self.folders.lock().await;
        let changed = tokio::fs::metadata(&dir).await.ok()?.modified().ok()?;
        if let Some((at, hint)) = folders.get(&dir) {
            if *at == changed {
                return hint.clone();
            }
        }
        let read = dir.clone();
        let hint = tokio::task::spawn_blocking(move || hint_for(&read))
            .await
            .ok()
            .flatten();
        if folders.len() >= MAX_CACHED_FOLDERS {
            folders.clear();
        }
        folders.insert(dir, (changed, hint.clone()));
        hint
    }
}

/// The request path's last two segments that name the hint.
pub(crate) fn names_hint(segments: &[String]) -> bool {
    matches!(segments, [.., log, name] if log == "_delta_log" && name == "_last_checkpoint")
}

/// The JSON of the hint for the log folder `log_dir`, or `None` (no checkpoint, or a folder
/// that cannot be read).
pub(crate) fn hint_for(log_dir: &Path) -> Option<Vec<u8>> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(log_dir).ok()?.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_millis()).ok());
        if let Some(p) = LogPath::listed(&format!("{LOG_DIR}{name}"), meta.len(), modified) {
            entries.push(p);
        }
    }
    let segment = segment_from_listing(&entries, None, "").ok()?;
    let first = segment.checkpoint.first()?;
    let mut hint = serde_json::json!({ "version": first.version });
    let mut size = Some(0u64);
    for file in &segment.checkpoint {
        let name = file.path.strip_prefix(LOG_DIR).unwrap_or(&file.path);
        let actions = actions_in(&log_dir.join(name), name.ends_with(".json"));
        size = size.zip(actions).map(|(a, b)| a.saturating_add(b));
    }
    if let Some(size) = size {
        hint["size"] = size.into();
    }
    match &first.kind {
        LogFileKind::MultiPartCheckpoint { parts, .. } => hint["parts"] = (*parts).into(),
        LogFileKind::V2Checkpoint { .. } => {
            let name = first.path.strip_prefix(LOG_DIR).unwrap_or(&first.path);
            hint["v2Checkpoint"] = serde_json::json!({
                "path": name,
                "sizeInBytes": first.size,
                "modificationTime": first.last_modified_ms,
            });
        }
        _ => {}
    }
    serde_json::to_vec(&hint).ok()
}

/// The actions in one checkpoint file: its rows (Parquet) or non-empty lines (JSON, read in
/// pieces: a checkpoint of gigabytes is counted in constant memory).
fn actions_in(file: &Path, json: bool) -> Option<u64> {
    if json {
        use std::io::BufRead;
        let mut reader = std::io::BufReader::new(std::fs::File::open(file).ok()?);
        let (mut lines, mut at_line_start) = (0u64, true);
        loop {
            let piece = reader.fill_buf().ok()?;
            if piece.is_empty() {
                return Some(lines);
            }
            for &b in piece {
                if b == b'\n' {
                    at_line_start = true;
                } else if at_line_start {
                    lines += 1;
                    at_line_start = false;
                }
            }
            let n = piece.len();
            reader.consume(n);
        }
    }
    let reader = std::fs::File::open(file).ok()?;
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&reader)
        .ok()?;
    u64::try_from(meta.file_metadata().num_rows()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/corpus/tables")
            .join(name)
            .join("_delta_log")
    }

    fn hint(name: &str) -> Option<serde_json::Value> {
        let dir = corpus(name);
        assert!(dir.is_dir(), "the corpus table {name} (../shared/corpus)");
        hint_for(&dir).and_then(|b| serde_json::from_slice(&b).ok())
    }

    #[test]
    fn names_the_newest_complete_checkpoint() {
        // A log that starts at checkpoint 5, with another at 10 and commits to 12.
        let h = hint("deltars__checkpoints_vacuumed").unwrap_or_default();
        assert_eq!(h["version"], 10, "{h}");
        assert!(h["size"].as_u64().is_some_and(|s| s > 0), "{h}");
        assert!(h.get("parts").is_none(), "{h}");
        // A log of one checkpoint and nothing else.
        let h = hint("deltars__table-with-domain-metadata").unwrap_or_default();
        assert_eq!(h["version"], 108, "{h}");
        // No checkpoint: no hint.
        assert_eq!(hint("dat__basic_append"), None);
    }

    #[test]
    fn a_json_checkpoint_counts_its_non_empty_lines() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("c.json");
        std::fs::write(&file, "{\"a\":1}\n\n{\"b\":2}\n{\"c\":3}")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(actions_in(&file, true), Some(3));
        std::fs::write(&file, "").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(actions_in(&file, true), Some(0));
    }

    #[test]
    fn the_hint_path() {
        let s = |p: &[&str]| p.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(names_hint(&s(&["t", "_delta_log", "_last_checkpoint"])));
        assert!(!names_hint(&s(&["_last_checkpoint"])));
        assert!(!names_hint(&s(&["t", "_delta_log", "x"])));
    }
}
