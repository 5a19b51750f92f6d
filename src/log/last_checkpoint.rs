//! The `_last_checkpoint` hint: which checkpoint is newest, so that a reader need not list the
//! whole log. It is only a hint: a corrupt or stale one is ignored, never trusted over a
//! listing. A hint of more than [`MAX_CHECKPOINT_PARTS`] parts is taken as corrupt: a store
//! that cannot list would be asked for every part, and their paths alone would fill memory
//! (4,294,967,295 parts: 96 GiB).

use serde::Deserialize;

use super::path::{classic_checkpoint_path, multi_part_checkpoint_path, LOG_DIR};

/// The fields of `_last_checkpoint` a reader uses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastCheckpointHint {
    /// Version of the checkpoint.
    pub version: u64,
    /// Number of actions in it.
    #[serde(default)]
    pub size: Option<u64>,
    /// Number of parts of a multi-part checkpoint.
    #[serde(default)]
    pub parts: Option<u32>,
    /// For a v2 checkpoint: its top-level file.
    #[serde(default)]
    pub v2_checkpoint: Option<V2CheckpointHint>,
}

/// The `v2Checkpoint` field of `_last_checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct V2CheckpointHint {
    /// File name of the v2 checkpoint, relative to `_delta_log/`.
    pub path: String,
}

/// The most parts a multi-part checkpoint hint may declare (writers cut checkpoints into
/// parts of a million or so actions; 10,000 parts would be a checkpoint of billions of
/// actions).
pub const MAX_CHECKPOINT_PARTS: u32 = 10_000;

impl LastCheckpointHint {
    /// Parses the file's bytes; `None` when it is not valid (a corrupt hint is ignored).
    pub fn parse(bytes: &[u8]) -> Option<LastCheckpointHint> {
        let text = std::str::from_utf8(bytes).ok()?;
        let hint: LastCheckpointHint = serde_json::from_str(text.trim()).ok()?;
        if hint.version > super::path::MAX_VERSION {
            return None;
        }
        match hint.parts {
            Some(0) => None,
            Some(parts) if parts > MAX_CHECKPOINT_PARTS => None,
            _ => Some(hint),
        }
    }

    /// The same hint without its v2 file name: writers may name a v2 checkpoint with the
    /// classic name and still describe it under `v2Checkpoint`.
    pub fn without_v2(&self) -> Option<LastCheckpointHint> {
        self.v2_checkpoint.as_ref()?;
        Some(LastCheckpointHint {
            v2_checkpoint: None,
            ..self.clone()
        })
    }

    /// Paths of the checkpoint's files, relative to the table root, guessed from the hint
    /// (for stores that cannot list).
    pub fn checkpoint_paths(&self) -> Vec<String> {
        if let Some(v2) = &self.v2_checkpoint {
            let name = v2.path.rsplit('/').next().unwrap_or(&v2.path);
            return vec![format!("{LOG_DIR}{name}")];
        }
        match self.parts {
            Some(parts) if parts > 1 => (1..=parts)
                .map(|p| multi_part_checkpoint_path(self.version, p, parts))
                .collect(),
            _ => vec![classic_checkpoint_path(self.version)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let h = LastCheckpointHint::parse(br#"{"version":10,"size":13,"parts":2}"#);
        assert_eq!(h.as_ref().map(|h| h.checkpoint_paths().len()), Some(2));
        assert_eq!(LastCheckpointHint::parse(b"{not json"), None);
        assert_eq!(LastCheckpointHint::parse(br#"{"size":3}"#), None);
        // A part count past the bound is a corrupt hint, not 4 billion paths to guess.
        let h = LastCheckpointHint::parse(br#"{"version":10,"parts":10000}"#);
        assert_eq!(h.map(|h| h.checkpoint_paths().len()), Some(10_000));
        // A version past the protocol's longs cannot name a checkpoint.
        let max = format!(r#"{{"version":{}}}"#, i64::MAX);
        assert!(LastCheckpointHint::parse(max.as_bytes()).is_some());
        for version in [i64::MAX as u64 + 1, u64::MAX] {
            let text = format!(r#"{{"version":{version}}}"#);
            assert_eq!(
                LastCheckpointHint::parse(text.as_bytes()),
                None,
                "{version}"
            );
        }
        for parts in [10_001u64, u64::from(u32::MAX)] {
            let text = format!(r#"{{"version":10,"parts":{parts}}}"#);
            assert_eq!(LastCheckpointHint::parse(text.as_bytes()), None, "{parts}");
        }
        let h = LastCheckpointHint::parse(
            br#"{"version":2,"size":3,"v2Checkpoint":{"path":"00000000000000000002.checkpoint.x.json","sizeInBytes":1,"modificationTime":0}}"#,
        );
        assert_eq!(
            h.map(|h| h.checkpoint_paths()),
            Some(vec![
                "_delta_log/00000000000000000002.checkpoint.x.json".to_string()
            ])
        );
    }
}
