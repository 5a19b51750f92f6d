//! Names of files in `_delta_log/`, parsed into a typed [`LogPath`] with no I/O.
//!
//! - `NNNNNNNNNNNNNNNNNNNN.json`: a commit;
//! - `NNNNNNNNNNNNNNNNNNNN.checkpoint.parquet`: a classic (single-file) checkpoint;
//! - `NNNNNNNNNNNNNNNNNNNN.checkpoint.PPPPPPPPPP.TTTTTTTTTT.parquet`: part P of T of a
//!   multi-part checkpoint;
//! - `NNNNNNNNNNNNNNNNNNNN.checkpoint.UUID.(json|parquet)`: a v2 checkpoint;
//! - anything else (`.crc`, compacted commits, `_last_checkpoint`, stray files): ignored.

/// The folder of the log, relative to the table root.
pub const LOG_DIR: &str = "_delta_log/";

/// The `_last_checkpoint` hint file, relative to the table root.
pub const LAST_CHECKPOINT: &str = "_delta_log/_last_checkpoint";

/// Encoding of a v2 checkpoint's top-level file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum V2Format {
    /// Newline-delimited JSON actions.
    Json,
    /// Parquet.
    Parquet,
}

/// The kind of a versioned log file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LogFileKind {
    /// `N.json`
    Commit,
    /// `N.checkpoint.parquet`
    ClassicCheckpoint,
    /// `N.checkpoint.P.T.parquet`
    MultiPartCheckpoint {
        /// 1-based part number.
        part: u32,
        /// Number of parts.
        parts: u32,
    },
    /// `N.checkpoint.UUID.json|parquet`
    V2Checkpoint {
        /// Encoding of the file.
        format: V2Format,
    },
}

/// A versioned file of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPath {
    /// Path relative to the table root (`_delta_log/...`).
    pub path: String,
    /// The table version the file belongs to.
    pub version: u64,
    /// What the file is.
    pub kind: LogFileKind,
    /// Size in bytes, where known.
    pub size: Option<u64>,
    /// Modification time (ms since the epoch), where known.
    pub last_modified_ms: Option<i64>,
}

/// The largest table version: the protocol's versions are longs (`i64`), so a file named
/// past it (up to `99999999999999999999`) is not a log file of the table.
pub const MAX_VERSION: u64 = i64::MAX as u64;

impl LogPath {
    /// Parses a path relative to the table root; `None` for files that are not versioned log
    /// files.
    pub fn parse(path: &str) -> Option<LogPath> {
        let name = path.strip_prefix(LOG_DIR)?;
        if name.contains('/') {
            return None;
        }
        let (version, rest) = name.split_once('.')?;
        if version.len() != 20 || !version.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let version: u64 = version.parse().ok()?;
        if version > MAX_VERSION {
            return None;
        }
        let kind = parse_kind(rest)?;
        Some(LogPath {
            path: path.to_string(),
            version,
            kind,
            size: None,
            last_modified_ms: None,
        })
    }

    /// Parses the path of a listed file (relative to the table root), keeping the size and
    /// modification time the listing gave; `None` for a file that is not a log file.
    pub fn listed(path: &str, size: u64, last_modified_ms: Option<i64>) -> Option<LogPath> {
        let mut p = LogPath::parse(path)?;
        p.size = Some(size);
        p.last_modified_ms = last_modified_ms;
        Some(p)
    }

    /// Whether the file is any kind of checkpoint.
    pub fn is_checkpoint(&self) -> bool {
        !matches!(self.kind, LogFileKind::Commit)
    }
}

fn parse_kind(rest: &str) -> Option<LogFileKind> {
    if rest == "json" {
        return Some(LogFileKind::Commit);
    }
    let cp = rest.strip_prefix("checkpoint.")?;
    if cp == "parquet" {
        return Some(LogFileKind::ClassicCheckpoint);
    }
    let parts: Vec<&str> = cp.split('.').collect();
    match parts.as_slice() {
        [p, t, "parquet"] if is_digits(p, 10) && is_digits(t, 10) => {
            let part: u32 = p.parse().ok()?;
            let parts: u32 = t.parse().ok()?;
            (part >= 1 && part <= parts).then_some(LogFileKind::MultiPartCheckpoint { part, parts })
        }
        [uuid, "json"] if is_uuid(uuid) => Some(LogFileKind::V2Checkpoint {
            format: V2Format::Json,
        }),
        [uuid, "parquet"] if is_uuid(uuid) => Some(LogFileKind::V2Checkpoint {
            format: V2Format::Parquet,
        }),
        _ => None,
    }
}

fn is_digits(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// Path of the commit file of `version`.
pub fn commit_path(version: u64) -> String {
    format!("{LOG_DIR}{version:020}.json")
}

/// Path of the classic checkpoint of `version`.
pub fn classic_checkpoint_path(version: u64) -> String {
    format!("{LOG_DIR}{version:020}.checkpoint.parquet")
}

/// Path of part `part` of `parts` of the multi-part checkpoint of `version`.
pub fn multi_part_checkpoint_path(version: u64, part: u32, parts: u32) -> String {
    format!("{LOG_DIR}{version:020}.checkpoint.{part:010}.{parts:010}.parquet")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind() {
        // Versions are longs: a name past i64::MAX is not a log file.
        let top = format!("_delta_log/{:020}.checkpoint.parquet", i64::MAX);
        assert_eq!(LogPath::parse(&top).map(|p| p.version), Some(MAX_VERSION));
        for name in [
            "09223372036854775808",
            "18446744073709551615",
            "99999999999999999999",
        ] {
            for suffix in [
                "json",
                "checkpoint.parquet",
                "checkpoint.0000000001.0000000001.parquet",
            ] {
                assert_eq!(LogPath::parse(&format!("_delta_log/{name}.{suffix}")), None);
            }
        }
        let c = LogPath::parse("_delta_log/00000000000000000010.json");
        assert_eq!(
            c.map(|p| (p.version, p.kind)),
            Some((10, LogFileKind::Commit))
        );
        let k =
            LogPath::parse("_delta_log/00000000000000000010.checkpoint.parquet").map(|p| p.kind);
        assert_eq!(k, Some(LogFileKind::ClassicCheckpoint));
        let k = LogPath::parse(
            "_delta_log/00000000000000000010.checkpoint.0000000002.0000000003.parquet",
        )
        .map(|p| p.kind);
        assert_eq!(
            k,
            Some(LogFileKind::MultiPartCheckpoint { part: 2, parts: 3 })
        );
        let k = LogPath::parse(
            "_delta_log/00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json",
        )
        .map(|p| p.kind);
        assert_eq!(
            k,
            Some(LogFileKind::V2Checkpoint {
                format: V2Format::Json
            })
        );
    }

    #[test]
    fn ignores_other_files() {
        for p in [
            "_delta_log/_last_checkpoint",
            "_delta_log/00000000000000000010.crc",
            "_delta_log/.00000000000000000010.json.crc",
            "_delta_log/00000000000000000001.00000000000000000004.compacted.json",
            "_delta_log/._00000000000000000000.json",
            "_delta_log/0000000000000000001.json",
            "_delta_log/_sidecars/00000000000000000010.json",
            "_delta_log/00000000000000000010.checkpoint.0000000004.0000000003.parquet",
            "part-0000.parquet",
        ] {
            assert_eq!(LogPath::parse(p), None, "{p}");
        }
    }

    #[test]
    fn builds_paths() {
        assert_eq!(commit_path(3), "_delta_log/00000000000000000003.json");
        assert_eq!(
            multi_part_checkpoint_path(3, 1, 2),
            "_delta_log/00000000000000000003.checkpoint.0000000001.0000000002.parquet"
        );
    }
}
