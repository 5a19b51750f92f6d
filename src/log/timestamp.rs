//! Time travel by timestamp: the newest version committed at or before a given instant.
//!
//! A commit's time is its in-commit timestamp (`commitInfo.inCommitTimestamp`) when the table
//! writes them, else the commit file's modification time from the listing, else (stores that
//! give no times) `commitInfo.timestamp`. Whether the table writes in-commit timestamps is
//! learnt from its newest commit. With file times the search needs no reads; with in-commit
//! timestamps it reads the newest commit, then binary-searches, one commit file per round.
//! A timestamp after the newest commit selects the newest version.
//!
//! File times need not rise with the version (a table copied or restored, a clock set
//! back): like Delta Spark's history, each listed commit's file time is taken as at least one
//! millisecond after the one before it ([`monotonic_file_times`]), so the versions' times
//! rise and a search by any of them finds that version.
//!
//! A table that turned in-commit timestamps on after its first commit has two clocks, as the
//! protocol's reader rules say: from the enablement version on (the oldest commit with an
//! in-commit timestamp, found by a binary search) only in-commit timestamps count, before it
//! only file times. A target at or after the enablement commit's timestamp is searched among
//! the commits from it on, an earlier one among those before it. A commit after the
//! enablement version without an in-commit timestamp is a corrupt log, and so are in-commit
//! timestamps that go back (the protocol has each greater than the one before): the search
//! assumes they rise, so among the commits it reads, a later one with an earlier timestamp
//! is refused rather than answered one way for one target and another for the next.

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
    /// With in-commit timestamps: the bounds of the search for the enablement commit (the
    /// oldest with one), then its index once found.
    enablement: Enablement,
    lo: usize,
    hi: usize,
}

/// Where in-commit timestamps start among the commits.
#[derive(Debug, Clone, Copy)]
enum Enablement {
    /// Somewhere in `lo..=hi` (the commit at `hi` has one).
    Between { lo: usize, hi: usize },
    /// At this index.
    At(usize),
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

/// Sorts `commits` by version and makes their file times rise: a time at or before the one
/// of the commit before it becomes that one's plus 1 ms, as Delta Spark adjusts them
/// (`monotonizeCommitTimestamps`). Commits without a time are left out of the comparison.
pub fn monotonic_file_times(commits: &mut [(u64, Option<i64>)]) {
    commits.sort_by_key(|c| c.0);
    let mut before: Option<i64> = None;
    for (_, time) in commits.iter_mut() {
        if let Some(t) = time {
            if let Some(b) = before.filter(|&b| *t <= b) {
                *t = b.saturating_add(1);
            }
            before = Some(*t);
        }
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
        monotonic_file_times(&mut commits);
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
            enablement: Enablement::Between { lo: 0, hi },
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

    /// Time of the commit at index `i`, if known without more reads: its in-commit timestamp
    /// from the enablement commit `from` on, else its file time (or `commitInfo.timestamp`).
    fn time_of(&self, i: usize, from: Option<usize>) -> Option<Result<Option<i64>>> {
        let (version, mtime) = self.commits.get(i).copied()?;
        let read = self.read.get(&version);
        match from {
            Some(from) if i >= from => read.map(|t| match t.in_commit {
                Some(ict) => Ok(Some(ict)),
                None => Err(DeltaError::InvalidLog {
                    path: format!("_delta_log/{version:020}.json"),
                    reason: format!(
                        "the commit has no inCommitTimestamp, though the table writes them \
                         since version {}",
                        self.commits[from].0
                    ),
                }),
            }),
            _ => match mtime {
                Some(m) => Some(Ok(Some(m))),
                None => read.map(|t| Ok(t.info)),
            },
        }
    }

    /// With in-commit timestamps, the index of the enablement commit, or the commit to read
    /// next to find it.
    fn enablement(&mut self) -> std::result::Result<usize, u64> {
        loop {
            match self.enablement {
                Enablement::At(i) => return Ok(i),
                Enablement::Between { lo, hi } if lo >= hi => self.enablement = Enablement::At(hi),
                Enablement::Between { lo, hi } => {
                    // The oldest commit first: most tables write them from their creation.
                    let probe = if lo == 0 { 0 } else { lo + (hi - lo) / 2 };
                    let version = self.commits[probe].0;
                    let Some(times) = self.read.get(&version) else {
                        return Err(version);
                    };
                    self.enablement = match times.in_commit {
                        Some(_) => Enablement::Between { lo, hi: probe },
                        None => Enablement::Between { lo: probe + 1, hi },
                    };
                }
            }
        }
    }

    /// The in-commit timestamps read so far, from the enablement commit `from` on, rise
    /// with the version.
    fn check_rising(&self, from: usize) -> Result<()> {
        let mut last: Option<(u64, i64)> = None;
        for &(version, _) in &self.commits[from..] {
            let Some(ict) = self.read.get(&version).and_then(|t| t.in_commit) else {
                continue;
            };
            if let Some((before, t)) = last.filter(|&(_, t)| ict < t) {
                return Err(DeltaError::InvalidLog {
                    path: format!("_delta_log/{version:020}.json"),
                    reason: format!(
                        "inCommitTimestamp {} is before version {before}'s {}",
                        format_ms(ict),
                        format_ms(t)
                    ),
                });
            }
            last = Some((version, ict));
        }
        Ok(())
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
        let from = match self.uses_in_commit {
            Some(true) => match self.enablement() {
                Ok(from) => Some(from),
                Err(version) => return Ok(Step::Need(vec![version])),
            },
            _ => None,
        };
        if let Some(from) = from {
            // Which clock the target is read on: in-commit timestamps from the enablement
            // commit's own on, file times before it.
            let enabled_at = match self.time_of(from, Some(from)) {
                None => return Ok(Step::Need(vec![self.commits[from].0])),
                Some(t) => t?,
            };
            if from > 0 && (self.lo, self.hi) == (0, self.commits.len() - 1) {
                if enabled_at.is_some_and(|t| self.target_ms >= t) {
                    self.lo = from;
                } else {
                    self.hi = from - 1;
                }
            }
        }
        if let Some(from) = from {
            self.check_rising(from)?;
        }
        // Check the oldest commit of the range first: a timestamp before it has no version
        // (the search only ever moves `lo` to a commit at or before the target).
        let oldest = match self.time_of(self.lo, from) {
            None => return Ok(Step::Need(vec![self.commits[self.lo].0])),
            Some(t) => t?,
        };
        if let Some(t) = oldest {
            if self.target_ms < t {
                return Err(DeltaError::TimestampNotFound {
                    timestamp: format_ms(self.target_ms),
                    reason: format!("the oldest available commit was made at {}", format_ms(t)),
                });
            }
        }
        while self.lo < self.hi {
            let mid = (self.lo + self.hi).div_ceil(2);
            match self.time_of(mid, from) {
                None => return Ok(Step::Need(vec![self.commits[mid].0])),
                Some(t) => match t? {
                    Some(t) if t <= self.target_ms => self.lo = mid,
                    Some(_) => self.hi = mid - 1,
                    // No time at all for this commit: treat it as not after the target.
                    None => self.lo = mid,
                },
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
    fn file_times_that_go_back_are_made_to_rise() {
        // A copied table: version 0 newest on disk, each later one 10 s older.
        let t = 1_700_000_000_000i64;
        let files: HashMap<u64, Bytes> = (0..4).map(|v| (v, commit(None, 0))).collect();
        let commits: Vec<(u64, Option<i64>)> =
            (0..4).map(|v| (v, Some(t - v as i64 * 10_000))).collect();
        let mut adjusted = commits.clone();
        monotonic_file_times(&mut adjusted);
        assert_eq!(
            adjusted,
            vec![
                (0, Some(t)),
                (1, Some(t + 1)),
                (2, Some(t + 2)),
                (3, Some(t + 3))
            ]
        );
        for (target, want) in [
            (t, Some(0)),
            (t + 2, Some(2)),
            (t + 60_000, Some(3)),
            (t - 1, None),
        ] {
            let mut s =
                TimestampSearch::new(target, commits.clone()).unwrap_or_else(|e| panic!("{e}"));
            let (v, _) = run(&mut s, &files);
            assert_eq!(v.ok(), want, "target {target}");
        }
        // Unknown times are skipped over; equal times move on by 1 ms.
        let mut mixed = vec![
            (0, Some(5)),
            (1, None),
            (2, Some(5)),
            (3, Some(4)),
            (4, Some(9)),
        ];
        monotonic_file_times(&mut mixed);
        assert_eq!(
            mixed,
            vec![
                (0, Some(5)),
                (1, None),
                (2, Some(6)),
                (3, Some(7)),
                (4, Some(9))
            ]
        );
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

    #[test]
    fn enabled_later_two_clocks() {
        // Commits 0-4 without in-commit timestamps, their files copied in 2031 (file times
        // 2031 + v); in-commit timestamps from version 5 on: 5000, 6000, 7000.
        let late = 1_924_992_000_000;
        let files: HashMap<u64, Bytes> = (0..8)
            .map(|v| {
                let ict = (v >= 5).then_some(v as i64 * 1000);
                (v, commit(ict, 1))
            })
            .collect();
        let commits: Vec<(u64, Option<i64>)> = (0..8).map(|v| (v, Some(late + v as i64))).collect();
        for (target, want) in [
            (6_500, Some(6)),
            (5_000, Some(5)),
            (9_999_999, Some(7)),
            (late + 1, Some(7)),
            // Before the enablement timestamp: file times, which are all later.
            (4_999, None),
        ] {
            let mut s =
                TimestampSearch::new(target, commits.clone()).unwrap_or_else(|e| panic!("{e}"));
            let (v, _) = run(&mut s, &files);
            assert_eq!(v.ok(), want, "target {target}");
        }
        // File times before the enablement: a target among them picks by file time.
        let commits: Vec<(u64, Option<i64>)> = (0..8).map(|v| (v, Some(v as i64 * 100))).collect();
        for (target, want) in [(250, 2), (499, 4), (4_999, 4), (0, 0)] {
            let mut s =
                TimestampSearch::new(target, commits.clone()).unwrap_or_else(|e| panic!("{e}"));
            let (v, _) = run(&mut s, &files);
            assert_eq!(v.ok(), Some(want), "target {target}");
        }
    }

    #[test]
    fn a_commit_without_its_in_commit_timestamp_after_the_enablement_is_refused() {
        let files: HashMap<u64, Bytes> = (0..8)
            .map(|v| {
                let ict = (v >= 2 && v != 6).then_some(v as i64 * 1000);
                (v, commit(ict, 1))
            })
            .collect();
        let commits: Vec<(u64, Option<i64>)> = (0..8).map(|v| (v, Some(v as i64))).collect();
        let mut s = TimestampSearch::new(6_500, commits).unwrap_or_else(|e| panic!("{e}"));
        let (v, _) = run(&mut s, &files);
        assert_eq!(v.err().map(|e| e.code()), Some("invalid_log"));
    }

    #[test]
    fn in_commit_timestamps_that_go_back_are_refused() {
        // deltars__cdc_ict_table: version 1's in-commit timestamp is years before version 0's.
        let times = [
            1_783_874_203_271,
            1_683_874_206_883,
            1_783_874_212_175,
            1_783_874_213_881,
        ];
        let files: HashMap<u64, Bytes> = (0..4u64)
            .map(|v| (v, commit(Some(times[v as usize]), 1)))
            .collect();
        let commits: Vec<(u64, Option<i64>)> = (0..4).map(|v| (v, Some(5))).collect();
        // Targets whose search reads version 1 (one that reads only versions 0, 2 and 3 sees
        // nothing wrong).
        for target in [times[0], times[0] + 1, times[2] - 1] {
            let mut s =
                TimestampSearch::new(target, commits.clone()).unwrap_or_else(|e| panic!("{e}"));
            let (v, _) = run(&mut s, &files);
            let err = v
                .err()
                .unwrap_or_else(|| panic!("target {target}: answered"));
            assert_eq!(err.code(), "invalid_log", "{err}");
            assert!(err.to_string().contains("before version 0's"), "{err}");
        }
        // After the newest commit the search reads nothing between: the newest version.
        let mut s = TimestampSearch::new(times[3] + 1, commits).unwrap_or_else(|e| panic!("{e}"));
        assert!(run(&mut s, &files).0.is_ok());
    }
}
