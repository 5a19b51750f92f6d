//! Choosing the files that make up one version of a table from a listing of `_delta_log/`:
//! the newest complete checkpoint at or before the version, and the contiguous commits after
//! it. Pure: the listing comes in as data.

use std::collections::{BTreeMap, HashMap};

use super::path::{LogFileKind, LogPath, V2Format};
use crate::error::{DeltaError, Result};

/// The files to replay for one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSegment {
    /// The version the segment ends at.
    pub version: u64,
    /// Version of the checkpoint, if one is used.
    pub checkpoint_version: Option<u64>,
    /// Files of the checkpoint (all parts of a multi-part one), empty when none is used.
    pub checkpoint: Vec<LogPath>,
    /// Commits after the checkpoint up to `version`, ascending and contiguous.
    pub commits: Vec<LogPath>,
    /// The modification time of the commit file of `version`, where a listing gave it:
    /// the version's time when the segment ends at its checkpoint (no commit is read).
    /// Made to rise with the versions listed before it (see `timestamp`).
    pub version_file_time_ms: Option<i64>,
}

impl LogSegment {
    /// Every file of the segment, checkpoint first.
    pub fn files(&self) -> impl Iterator<Item = &LogPath> {
        self.checkpoint.iter().chain(self.commits.iter())
    }
}

/// The newest version a listing shows (commits and checkpoints), if any.
pub fn latest_version(entries: &[LogPath]) -> Option<u64> {
    entries.iter().map(|e| e.version).max()
}

/// Chooses the segment for `target` (the latest version when `None`) from a listing.
pub fn segment_from_listing(
    entries: &[LogPath],
    target: Option<u64>,
    location: &str,
) -> Result<LogSegment> {
    let latest = latest_version(entries).ok_or_else(|| DeltaError::NotATable {
        location: location.to_string(),
    })?;
    let version = match target {
        Some(v) if v > latest => {
            return Err(DeltaError::VersionNotFound {
                requested: v,
                reason: format!("the latest version is {latest}"),
            })
        }
        Some(v) => v,
        None => latest,
    };
    let checkpoint = best_checkpoint(entries, version);
    let checkpoint_version = checkpoint.first().map(|c| c.version);
    let commits_by_version: BTreeMap<u64, &LogPath> = entries
        .iter()
        .filter(|e| e.kind == LogFileKind::Commit && e.version <= version)
        .filter(|e| checkpoint_version.is_none_or(|c| e.version > c))
        .map(|e| (e.version, e))
        .collect();
    let mut expected = checkpoint_version.map_or(0, |c| c.saturating_add(1));
    if checkpoint_version.is_none() && commits_by_version.is_empty() {
        // Neither a checkpoint nor a commit at or before `version`: its history was removed
        // (or never listed); say from which version on the table can be read.
        let earliest = entries
            .iter()
            .filter(|e| e.kind == LogFileKind::Commit || e.is_checkpoint())
            .map(|e| e.version)
            .filter(|&v| v > version)
            .min();
        return Err(DeltaError::VersionNotFound {
            requested: version,
            reason: match earliest {
                Some(e) => format!(
                    "the log history before version {e} has been removed (no commit or \
                     checkpoint at or before version {version} is left)"
                ),
                None => format!("no commit or checkpoint at or before version {version}"),
            },
        });
    }
    if checkpoint_version.is_none() {
        if let Some((&first, _)) = commits_by_version.iter().next() {
            if first > 0 {
                return Err(DeltaError::VersionNotFound {
                    requested: version,
                    reason: format!(
                        "no checkpoint at or before it and the log history before version \
                         {first} has been removed"
                    ),
                });
            }
        }
    }
    let mut commits = Vec::with_capacity(commits_by_version.len());
    for (&v, e) in &commits_by_version {
        if v != expected {
            return Err(DeltaError::NonContiguousLog { expected, found: v });
        }
        commits.push((*e).clone());
        expected = v.saturating_add(1);
    }
    if expected != version.saturating_add(1) {
        // The last commits up to `version` are missing (only possible for an explicit target).
        return Err(DeltaError::VersionNotFound {
            requested: version,
            reason: format!("commit file of version {expected} is missing"),
        });
    }
    let version_file_time_ms = version_file_time(entries, version);
    Ok(LogSegment {
        version,
        checkpoint_version,
        checkpoint,
        commits,
        version_file_time_ms,
    })
}

/// The listed time of the commit file of `version`, made to rise with the versions listed
/// before it as a search by timestamp takes it (`timestamp::monotonic_file_times`).
fn version_file_time(entries: &[LogPath], version: u64) -> Option<i64> {
    let mut times: Vec<(u64, Option<i64>)> = entries
        .iter()
        .filter(|e| e.kind == LogFileKind::Commit && e.version <= version)
        .map(|e| (e.version, e.last_modified_ms))
        .collect();
    super::timestamp::monotonic_file_times(&mut times);
    times.last().filter(|t| t.0 == version).and_then(|t| t.1)
}

/// The files of the newest complete checkpoint at or before `version`.
fn best_checkpoint(entries: &[LogPath], version: u64) -> Vec<LogPath> {
    let mut by_version: BTreeMap<u64, Vec<&LogPath>> = BTreeMap::new();
    for e in entries
        .iter()
        .filter(|e| e.is_checkpoint() && e.version <= version && !too_small(e))
    {
        by_version.entry(e.version).or_default().push(e);
    }
    for (_, files) in by_version.into_iter().rev() {
        if let Some(chosen) = complete_checkpoint(&files) {
            return chosen;
        }
    }
    Vec::new()
}

/// Whether a listed checkpoint file is too small to be one (a writer that crashed on a file
/// system without atomic renames can leave it empty): it does not count, so an older
/// complete checkpoint is used. A size the listing did not give is not held against it.
fn too_small(file: &LogPath) -> bool {
    file.size
        .is_some_and(|size| too_small_checkpoint(&file.kind, size))
}

/// Whether a checkpoint file of `size` bytes is too small to be one: a JSON v2 checkpoint
/// of no bytes, a Parquet file shorter than its magic numbers and footer length. Probing
/// (which fetches a named checkpoint whole) applies it too, so that over HTTP such a file
/// is passed over as it is in a listing.
pub(crate) fn too_small_checkpoint(kind: &LogFileKind, size: u64) -> bool {
    let least = match kind {
        LogFileKind::V2Checkpoint {
            format: V2Format::Json,
        } => 1,
        _ => crate::limits::parquet_tail::MIN_PARQUET_SIZE,
    };
    size < least
}

/// A complete checkpoint among files of one version: a v2 checkpoint (parquet before json),
/// a classic one, or every part of a multi-part one.
fn complete_checkpoint(files: &[&LogPath]) -> Option<Vec<LogPath>> {
    let pick = |kind: &LogFileKind| {
        let mut found: Vec<&&LogPath> = files.iter().filter(|f| &f.kind == kind).collect();
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found.first().map(|f| vec![(**f).clone()])
    };
    let v2_parquet = LogFileKind::V2Checkpoint {
        format: V2Format::Parquet,
    };
    let v2_json = LogFileKind::V2Checkpoint {
        format: V2Format::Json,
    };
    if let Some(f) = pick(&v2_parquet)
        .or_else(|| pick(&v2_json))
        .or_else(|| pick(&LogFileKind::ClassicCheckpoint))
    {
        return Some(f);
    }
    let mut sets: HashMap<u32, BTreeMap<u32, &LogPath>> = HashMap::new();
    for f in files {
        if let LogFileKind::MultiPartCheckpoint { part, parts } = f.kind {
            sets.entry(parts).or_default().insert(part, f);
        }
    }
    let mut complete: Vec<(u32, BTreeMap<u32, &LogPath>)> = sets
        .into_iter()
        .filter(|(parts, found)| found.len() as u32 == *parts)
        .collect();
    complete.sort_by_key(|(parts, _)| *parts);
    complete
        .into_iter()
        .next()
        .map(|(_, found)| found.into_values().cloned().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::path::{classic_checkpoint_path, commit_path, multi_part_checkpoint_path};

    fn listing(paths: &[String]) -> Vec<LogPath> {
        paths.iter().filter_map(|p| LogPath::parse(p)).collect()
    }

    #[test]
    fn commits_only() {
        let l = listing(&[commit_path(0), commit_path(1), commit_path(2)]);
        let s = segment_from_listing(&l, None, "t").ok();
        assert_eq!(s.as_ref().map(|s| s.version), Some(2));
        assert_eq!(s.map(|s| s.commits.len()), Some(3));
        let s = segment_from_listing(&l, Some(1), "t").ok();
        assert_eq!(s.map(|s| s.commits.len()), Some(2));
        let e = segment_from_listing(&l, Some(5), "t")
            .err()
            .map(|e| e.code());
        assert_eq!(e, Some("version_not_found"));
    }

    #[test]
    fn uses_newest_complete_checkpoint() {
        let mut paths: Vec<String> = (0..=12).map(commit_path).collect();
        paths.push(classic_checkpoint_path(5));
        // Incomplete multi-part checkpoint at 10: part 2 of 2 missing.
        paths.push(multi_part_checkpoint_path(10, 1, 2));
        let l = listing(&paths);
        let s = segment_from_listing(&l, None, "t");
        let s = s.as_ref().ok();
        assert_eq!(s.and_then(|s| s.checkpoint_version), Some(5));
        assert_eq!(
            s.map(|s| s.commits.first().map(|c| c.version)),
            Some(Some(6))
        );
        paths.push(multi_part_checkpoint_path(10, 2, 2));
        let l = listing(&paths);
        let s = segment_from_listing(&l, None, "t").ok();
        assert_eq!(s.as_ref().and_then(|s| s.checkpoint_version), Some(10));
        assert_eq!(s.map(|s| s.checkpoint.len()), Some(2));
        // Time travel before the checkpoint replays from 0.
        let s = segment_from_listing(&l, Some(4), "t").ok();
        assert_eq!(
            s.map(|s| (s.checkpoint_version, s.commits.len())),
            Some((None, 5))
        );
    }

    #[test]
    fn an_empty_checkpoint_file_is_passed_over() {
        let mut paths: Vec<String> = (0..=5).map(commit_path).collect();
        paths.push(classic_checkpoint_path(3));
        paths.push(classic_checkpoint_path(4));
        let sized = |sizes: [Option<u64>; 2]| -> Vec<LogPath> {
            let mut l = listing(&paths);
            for e in l.iter_mut().filter(|e| e.is_checkpoint()) {
                e.size = if e.version == 4 { sizes[1] } else { sizes[0] };
            }
            l
        };
        let chosen = |l: Vec<LogPath>| {
            segment_from_listing(&l, None, "t")
                .ok()
                .map(|s| (s.checkpoint_version, s.commits.len()))
        };
        // The newest checkpoint, 0 bytes (or too few for Parquet): the one before it.
        assert_eq!(chosen(sized([Some(900), Some(0)])), Some((Some(3), 2)));
        assert_eq!(chosen(sized([Some(900), Some(11)])), Some((Some(3), 2)));
        // Both empty: the commits from 0.
        assert_eq!(chosen(sized([Some(0), Some(0)])), Some((None, 6)));
        // Sizes not known (a store that cannot list them), or large enough: the newest.
        assert_eq!(chosen(sized([None, None])), Some((Some(4), 1)));
        assert_eq!(chosen(sized([Some(900), Some(12)])), Some((Some(4), 1)));
    }

    #[test]
    fn gaps_and_cleaned_history() {
        let l = listing(&[commit_path(0), commit_path(2)]);
        let e = segment_from_listing(&l, None, "t").err().map(|e| e.code());
        assert_eq!(e, Some("non_contiguous_log"));
        let l = listing(&[commit_path(3), commit_path(4)]);
        let e = segment_from_listing(&l, None, "t").err().map(|e| e.code());
        assert_eq!(e, Some("version_not_found"));
        let e = segment_from_listing(&[], None, "t").err().map(|e| e.code());
        assert_eq!(e, Some("not_a_table"));
        // A checkpoint with cleaned-up commits before it is fine.
        let l = listing(&[classic_checkpoint_path(3), commit_path(3), commit_path(4)]);
        let s = segment_from_listing(&l, None, "t").ok();
        assert_eq!(
            s.map(|s| (s.checkpoint_version, s.commits.len())),
            Some((Some(3), 1))
        );
        // A version before what is left names the first version that can be read.
        let l = listing(&[
            classic_checkpoint_path(19),
            commit_path(19),
            commit_path(20),
        ]);
        let e = segment_from_listing(&l, Some(5), "t").err();
        assert_eq!(e.as_ref().map(|e| e.code()), Some("version_not_found"));
        let text = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.contains("before version 19 has been removed"),
            "{text}"
        );
    }
}
