//! Time travel by timestamp: the newest version committed at or before a given instant.
//!
//! A commit's time is its in-commit timestamp (`commitInfo.inCommitTimestamp`) when the table
//! writes them, else the commit file's modification time from the listing, else (stores that
//! give no times) `commitInfo.timestamp`. Whether the table writes in-commit timestamps is
//! learnt from its newest commit. With file times the search needs no reads; with in-commit
//! timestamps it reads the newest commit, then binary-searches, one commit file per round.
//! A timestamp after the newest commit selects the newest version.

use std::collections::HashMap;

use bytes::Bytes;

use super::checkpoint::json_actions;
use super::step::Step;
use super::Action;
use crate::error::{DeltaError, Result};

/// Times of one commit, as far as known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct CommitTimes {
    in_commit: Option<i64>,
    info: Option<i64>,
}

/// What the search needs next: commit versions to read, or the version to load.
pub type SearchStep = Step<u64, u64>;

/// A search over the commits of a table.
#[derive(Debug, Clone)]
pub struct TimestampSearch {
    target_ms: i64,
    /// Commit versions ascending, with file modification times where known.
    commits: Vec<(u64, Option<i64>)>,
    read: HashMap<u64, CommitTimes>,
    uses_in_commit: Option<bool>,
    lo: usize,
    hi: usize,
}

/// The time of a commit from its actions: in-commit timestamp and `commitInfo.timestamp`.
fn commit_times<'a>(actions: impl IntoIterator<Item = &'a Action>) -> CommitTimes {
    let info = actions.into_iter().find_map(|a| match a {
        Action::CommitInfo(info) => Some(info),
        _ => None,
    });
    CommitTimes {
        in_commit: info.and_then(|i| i.in_commit_timestamp),
        info: info.and_then(|i| i.timestamp),
    }
}

fn format_ms(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| format!("{ms} ms"))
}

impl TimestampSearch {
    /// Searches `commits` (version and file time, any order) for `target_ms`.
    pub fn new(target_ms: i64, mut commits: Vec<(u64, Option<i64>)>) -> Result<Self> {
        commits.sort_by_key(|c| c.0);
        if commits.is_empty() {
            return Err(DeltaError::TimestampNotFound {
                timestamp: format_ms(target_ms),
                reason: "the log has no commit files".into(),
            });
        }
        let hi = commits.len() - 1;
        Ok(TimestampSearch {
            target_ms,
            commits,
            read: HashMap::new(),
            uses_in_commit: None,
            lo: 0,
            hi,
        })
    }

    /// Records the bytes of a commit file that was asked for.
    pub fn push(&mut self, version: u64, path: &str, data: &Bytes) -> Result<()> {
        let actions = json_actions(path, data)?;
        self.push_actions(version, &actions);
        Ok(())
    }

    /// Records a commit file that was asked for, as its decoded actions.
    pub fn push_actions<'a>(
        &mut self,
        version: u64,
        actions: impl IntoIterator<Item = &'a Action>,
    ) {
        self.read.insert(version, commit_times(actions));
    }

    /// Time of the commit at index `i`, if known without more reads.
    fn time_of(&self, i: usize) -> Option<Option<i64>> {
        let (version, mtime) = self.commits.get(i).copied()?;
        let read = self.read.get(&version);
        match self.uses_in_commit {
            Some(true) => read.map(|t| t.in_commit.or(mtime).or(t.info)),
            _ => match mtime {
                Some(m) => Some(Some(m)),
                None => read.map(|t| t.info),
            },
        }
    }

    /// Decides what to do next.
    pub fn poll(&mut self) -> Result<SearchStep> {
        let newest = self.commits[self.commits.len() - 1].0;
        if self.uses_in_commit.is_none() {
            match self.read.get(&newest) {
                None => return Ok(Step::Need(vec![newest])),
                Some(t) => self.uses_in_commit = Some(t.in_commit.is_some()),
            }
        }
        // Check the oldest commit first: a timestamp before it has no version.
        let oldest = match self.time_of(0) {
            None => return Ok(Step::Need(vec![self.commits[0].0])),
            Some(t) => t,
        };
        if let Some(t) = oldest {
            if self.target_ms < t && self.lo == 0 {
                return Err(DeltaError::TimestampNotFound {
                    timestamp: format_ms(self.target_ms),
                    reason: format!("the oldest available commit was made at {}", format_ms(t)),
                });
            }
        }
        while self.lo < self.hi {
            let mid = (self.lo + self.hi).div_ceil(2);
            match self.time_of(mid) {
                None => return Ok(Step::Need(vec![self.commits[mid].0])),
                Some(Some(t)) if t <= self.target_ms => self.lo = mid,
                Some(Some(_)) => self.hi = mid - 1,
                // No time at all for this commit: treat it as not after the target.
                Some(None) => self.lo = mid,
            }
        }
        Ok(Step::Ready(self.commits[self.lo].0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(ict: Option<i64>, ts: i64) -> Bytes {
        let ict = ict
            .map(|t| format!(",\"inCommitTimestamp\":{t}"))
            .unwrap_or_default();
        Bytes::from(format!("{{\"commitInfo\":{{\"timestamp\":{ts}{ict}}}}}\n"))
    }

    fn run(s: &mut TimestampSearch, files: &HashMap<u64, Bytes>) -> (Result<u64>, usize) {
        let mut reads = 0;
        loop {
            match s.poll() {
                Ok(Step::Ready(v)) => return (Ok(v), reads),
                Ok(Step::Need(vs)) => {
                    for v in vs {
                        reads += 1;
                        let data = files.get(&v).cloned().unwrap_or_default();
                        if let Err(e) = s.push(v, "x", &data) {
                            return (Err(e), reads);
                        }
                    }
                }
                Err(e) => return (Err(e), reads),
            }
        }
    }

    #[test]
    fn by_file_times() {
        let files: HashMap<u64, Bytes> = (0..10).map(|v| (v, commit(None, 0))).collect();
        let commits: Vec<(u64, Option<i64>)> = (0..10).map(|v| (v, Some(v as i64 * 100))).collect();
        for (t, want) in [(0, 0), (150, 1), (900, 9), (10_000, 9), (899, 8)] {
            let mut s = TimestampSearch::new(t, commits.clone()).unwrap_or_else(|e| panic!("{e}"));
            let (v, reads) = run(&mut s, &files);
            assert_eq!(v.ok(), Some(want), "t={t}");
            assert_eq!(reads, 1, "only the newest commit is read");
        }
        let mut s = TimestampSearch::new(-5, commits).unwrap_or_else(|e| panic!("{e}"));
        let (v, _) = run(&mut s, &files);
        assert_eq!(v.err().map(|e| e.code()), Some("timestamp_not_found"));
    }

    #[test]
    fn by_in_commit_timestamps() {
        // File times say nothing useful (all equal); in-commit timestamps are 1000 * v.
        let files: HashMap<u64, Bytes> = (0..64)
            .map(|v| (v, commit(Some(v as i64 * 1000), 7)))
            .collect();
        let commits: Vec<(u64, Option<i64>)> = (0..64).map(|v| (v, Some(5))).collect();
        let mut s = TimestampSearch::new(40_500, commits).unwrap_or_else(|e| panic!("{e}"));
        let (v, reads) = run(&mut s, &files);
        assert_eq!(v.ok(), Some(40));
        assert!(reads <= 9, "{reads} reads");
    }
}
