//! Discovering commits on a store that cannot list (static HTTPS): ask for commit files by
//! name and find the first that does not exist.
//!
//! Probing starts after the checkpoint named by `_last_checkpoint` (or at version 0). Each
//! round asks for every file the answers so far prove must exist (they are needed for the
//! replay anyway) together with a few probes that narrow down where the log ends:
//!
//! - the first round asks for the [`FIRST_PROBE_BATCH`] commits after the start, and three
//!   sparse ones (start + 15, 31, 63), so a table with a few commits after its checkpoint is
//!   found in one round;
//! - while no probe has missed, the next round asks for [`EXPONENTIAL_PROBES`] points at
//!   doubling distances beyond the newest commit found (start + 2^k - 1);
//! - once the end lies between a commit found and a commit missing, each round asks for
//!   [`SEARCH_PROBES`] evenly spaced versions in between, or all of them when at most
//!   [`DENSE_GAP`] remain.
//!
//! A log of `n` commits after its checkpoint is so found in about
//! `2 + log_33(n / 2)` rounds (10,000 commits: 6), with fewer than a hundred requests for
//! missing files. An explicit target version needs one round: every file up to it is asked
//! for at once. A missing commit below one that exists is a [`DeltaError::NonContiguousLog`].

use std::collections::BTreeMap;

use bytes::Bytes;

use super::step::Step;
use crate::error::{DeltaError, Phase, Result};

/// `Err` ([`DeltaError::LimitExceeded`]) when `commits` are more than `max_commits`, the
/// most one load replays.
pub(crate) fn within_max_commits(commits: u64, max_commits: u64) -> Result<()> {
    if commits > max_commits {
        return Err(DeltaError::limit_exceeded(
            "commits replayed in one load after the checkpoint (option max_commits)",
            commits,
            max_commits,
            None,
            Phase::Load,
        ));
    }
    Ok(())
}

/// The consecutive commits the first round asks for.
pub const FIRST_PROBE_BATCH: u64 = 8;

/// Sparse offsets from the start, also asked for in the first round.
const FIRST_SPARSE_OFFSETS: [u64; 3] = [15, 31, 63];

/// Probes at doubling distances in a round that has not yet seen a missing commit.
pub const EXPONENTIAL_PROBES: u32 = 16;

/// Evenly spaced probes per round once the end is bracketed.
pub const SEARCH_PROBES: u64 = 32;

/// A bracket of at most this many unknown versions is asked for whole.
pub const DENSE_GAP: u64 = 64;

/// A target this far past the known commits is probed alone before the versions below it.
pub const FAR_TARGET: u64 = 1024;

/// The commits probed so far, from a start version, and what is still unknown.
#[derive(Debug, Clone)]
pub struct CommitProbe {
    start: u64,
    /// Probed versions: `Some(bytes)` found, `None` missing.
    seen: BTreeMap<u64, Option<Bytes>>,
    /// Exact last version wanted, when the caller asked for one.
    target: Option<u64>,
    /// Versions of the last [`Step::Need`] not yet answered.
    asked: Vec<u64>,
    /// The most commits a log may have from `start` on (see [`CommitProbe::with_max_commits`]).
    max_commits: u64,
    /// The first version answered with something that is not a commit, and what it was.
    not_a_commit: Option<(u64, &'static str)>,
    /// Versions found missing below a commit that exists, asked for a second time.
    rechecked: Vec<u64>,
}

/// What a probe needs next: commit versions to ask for, or, when discovery is over, the
/// newest existing commit (commits `start..=last` exist; `None`: none after `start - 1`).
pub type ProbeStep = Step<u64, Option<u64>>;

/// Where the answers so far put the end of the log.
struct Bounds {
    /// The first version from `start` on not known to exist.
    contiguous_end: u64,
    /// The newest version known to exist.
    newest_found: Option<u64>,
    /// The oldest version known to be missing.
    oldest_missing: Option<u64>,
}

impl CommitProbe {
    /// Probes commits from `start`, up to exactly `target` if given, else to the end.
    pub fn new(start: u64, target: Option<u64>) -> Self {
        CommitProbe {
            start,
            seen: BTreeMap::new(),
            target,
            asked: Vec::new(),
            max_commits: crate::limits::DEFAULT_MAX_COMMITS_PER_LOAD,
            not_a_commit: None,
            rechecked: Vec::new(),
        }
    }

    /// Refuses, with [`DeltaError::LimitExceeded`], a log of more than `max` commits from the
    /// start: found (a store answering every path would otherwise be probed without end) or
    /// implied by the target version (every commit up to it would be asked for).
    pub fn with_max_commits(mut self, max: u64) -> Self {
        self.max_commits = max;
        self
    }

    /// `Err` when versions `start..=last` are more commits than allowed: found by probing,
    /// where a server that answers every path (a fallback page, a JSON error with `200`)
    /// looks like an endless log, which the message says.
    fn within_max(&self, last: u64) -> Result<()> {
        let commits = last.saturating_add(1).saturating_sub(self.start);
        if commits > self.max_commits {
            return Err(DeltaError::limit_exceeded(
                "commits found by probing after the checkpoint (option max_commits; a server \
                 that answers 200 for files it does not have looks like an endless log)",
                commits,
                self.max_commits,
                None,
                Phase::Load,
            ));
        }
        Ok(())
    }

    /// The first version probed.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Whether `version` is asked for a second time, having been answered missing below a
    /// commit that exists (the caller must fetch it again, not reuse that answer).
    pub fn rechecks(&self, version: u64) -> bool {
        self.rechecked.contains(&version)
    }

    /// The versions asked for by the last [`Step::Need`] and not yet pushed.
    pub fn take_asked(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.asked)
    }

    /// Records the answer for one version.
    pub fn push(&mut self, version: u64, data: Option<Bytes>) {
        if let (None, Some(what)) = (&self.not_a_commit, data.as_deref().and_then(not_a_commit)) {
            self.not_a_commit = Some((version, what));
        }
        self.seen.insert(version, data);
    }

    /// Records a version found whose commit was already decoded as JSON lines (its bytes
    /// are no longer kept), so it needs no look at its first bytes.
    pub fn push_decoded(&mut self, version: u64) {
        self.seen.insert(version, Some(Bytes::new()));
    }

    /// Bytes of a found commit.
    pub fn commit(&self, version: u64) -> Option<&Bytes> {
        self.seen.get(&version).and_then(|d| d.as_ref())
    }

    fn bounds(&self) -> Bounds {
        let mut contiguous_end = self.start;
        while let Some(Some(_)) = self.seen.get(&contiguous_end) {
            contiguous_end += 1;
        }
        let in_range = || self.seen.range(self.start..);
        Bounds {
            contiguous_end,
            newest_found: in_range().rev().find(|(_, d)| d.is_some()).map(|(&v, _)| v),
            oldest_missing: in_range().find(|(_, d)| d.is_none()).map(|(&v, _)| v),
        }
    }

    /// Decides what to ask next, from the answers so far.
    pub fn poll(&mut self) -> Result<ProbeStep> {
        if let Some((version, what)) = &self.not_a_commit {
            return Err(DeltaError::invalid_log(
                format!("_delta_log/{version:020}.json"),
                format!(
                    "not a commit: {what} (a server that answers 200 for files it does not \
                     have cannot serve a table it must probe)"
                ),
            ));
        }
        let b = self.bounds();
        // No commit at the start: nothing after the checkpoint (or no table); the caller
        // tells which. From version 0 the first round is asked for whole first: commits
        // found past a missing commit 0 are a log whose first commits were cleaned up after
        // a checkpoint nothing names (a gap, below), not a missing table.
        if self.target.is_none() && matches!(self.seen.get(&self.start), Some(None)) {
            if self.start == 0 {
                let unasked: Vec<u64> = first_round(0)
                    .filter(|v| !self.seen.contains_key(v))
                    .collect();
                if !unasked.is_empty() {
                    return Ok(self.fetch(unasked));
                }
            }
            if self.start > 0 || b.newest_found.is_none() {
                return Ok(Step::Ready(None));
            }
        }
        if let (Some(found), Some(missing)) = (b.newest_found, b.oldest_missing) {
            // A writer adds commit n + 1 only once n exists, so a missing commit below one
            // found was most likely asked for just before it was written (the table is
            // being written to): it is asked for once more before the gap is taken as one.
            if missing < found && !self.rechecked.contains(&missing) {
                self.rechecked.push(missing);
                self.seen.remove(&missing);
                return Ok(self.fetch(vec![missing]));
            }
            if missing < found {
                let found = self
                    .seen
                    .range(missing..)
                    .find(|(_, d)| d.is_some())
                    .map_or(found, |(&v, _)| v);
                return Err(DeltaError::NonContiguousLog {
                    expected: missing,
                    found,
                });
            }
        }
        if let Some(t) = self.target {
            if let Some(missing) = b.oldest_missing.filter(|&m| m <= t) {
                // Every commit from the start up to the missing one was found: the one
                // before it is the latest (as a listing would have said).
                let latest = if missing == b.contiguous_end && missing > self.start {
                    format!(": the latest version is {}", missing - 1)
                } else {
                    String::new()
                };
                return Err(DeltaError::VersionNotFound {
                    requested: t,
                    reason: format!("commit file of version {missing} does not exist{latest}"),
                });
            }
            if b.contiguous_end > t {
                return Ok(Step::Ready((t >= self.start).then_some(t)));
            }
            // A far target is asked for first, with only the start (whether the log exists at
            // all), so a version that does not exist costs one round, not a request per
            // version below it.
            if !self.seen.contains_key(&t) && t - b.contiguous_end >= FAR_TARGET {
                let mut first = vec![t];
                if !self.seen.contains_key(&self.start) {
                    first.insert(0, self.start);
                }
                return Ok(self.fetch(first));
            }
            self.within_max(t)?;
            let wanted = (b.contiguous_end..=t).filter(|v| !self.seen.contains_key(v));
            return Ok(self.fetch(wanted.collect()));
        }
        if b.oldest_missing == Some(b.contiguous_end) {
            let last = b.contiguous_end.checked_sub(1).filter(|&l| l >= self.start);
            if let Some(last) = last {
                self.within_max(last)?;
            }
            return Ok(Step::Ready(last));
        }
        // Everything up to the newest commit found must exist: ask for what is not known yet.
        let newest = b.newest_found.unwrap_or(self.start);
        self.within_max(newest)?;
        let mut wanted: Vec<u64> = (b.contiguous_end..=newest)
            .filter(|v| !self.seen.contains_key(v))
            .collect();
        match (self.seen.is_empty(), b.oldest_missing) {
            (true, _) => wanted.extend(first_round(self.start)),
            (false, None) => {
                // 2^k - 1 past the start, for the k beyond the newest commit found.
                let reach = newest - self.start + 1;
                let first_k = u64::BITS - reach.leading_zeros();
                for k in first_k..first_k.saturating_add(EXPONENTIAL_PROBES).min(63) {
                    wanted.push(self.start.saturating_add((1u64 << k) - 1));
                }
            }
            (false, Some(missing)) => {
                let gap = missing - newest - 1;
                if gap <= DENSE_GAP {
                    wanted.extend(newest + 1..missing);
                } else {
                    let step = gap / (SEARCH_PROBES + 1);
                    wanted.extend((1..=SEARCH_PROBES).map(|i| newest + i * step.max(1)));
                }
            }
        }
        wanted.retain(|v| !self.seen.contains_key(v));
        wanted.sort_unstable();
        wanted.dedup();
        Ok(self.fetch(wanted))
    }

    fn fetch(&mut self, versions: Vec<u64>) -> ProbeStep {
        self.asked.clone_from(&versions);
        Step::Need(versions)
    }
}

/// The versions a probe from `start` asks for first: [`FIRST_PROBE_BATCH`] in a row, then
/// the sparse ones.
fn first_round(start: u64) -> impl Iterator<Item = u64> {
    let dense = start..start.saturating_add(FIRST_PROBE_BATCH);
    let sparse = FIRST_SPARSE_OFFSETS
        .iter()
        .map(move |o| start.saturating_add(*o));
    dense.chain(sparse)
}

/// What makes `data` not a commit file, if anything: a commit is JSON lines, each an
/// object, so after an optional byte order mark and blank space it starts with `{`.
fn not_a_commit(data: &[u8]) -> Option<&'static str> {
    let text = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => None,
        Some(0x1f) => Some(super::checkpoint::GZIPPED),
        Some(_) => Some("it is not JSON lines"),
        None => Some("it is empty"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Probes a log whose commits are `exists(v)`; the answer, the rounds, and the requests
    /// for commits that did not exist.
    struct Run {
        last: Result<Option<u64>>,
        rounds: usize,
        misses: usize,
        requests: usize,
    }

    fn probe(exists: impl Fn(u64) -> bool, start: u64, target: Option<u64>) -> Run {
        probe_within(exists, start, target, u64::MAX)
    }

    /// [`probe`] with at most `max` commits allowed.
    fn probe_within(
        exists: impl Fn(u64) -> bool,
        start: u64,
        target: Option<u64>,
        max: u64,
    ) -> Run {
        let mut p = CommitProbe::new(start, target).with_max_commits(max);
        let mut asked = HashSet::new();
        let mut missed = HashSet::new();
        let (mut rounds, mut misses) = (0, 0);
        loop {
            match p.poll() {
                Ok(Step::Need(vs)) => {
                    rounds += 1;
                    assert!(!vs.is_empty(), "a fetch of nothing would never end");
                    assert!(rounds < 100, "probing does not end");
                    assert_eq!(p.take_asked(), vs);
                    for v in vs {
                        // Twice only to check again a commit missing below one found.
                        assert!(
                            asked.insert(v) || missed.remove(&v),
                            "version {v} asked for twice"
                        );
                        let found = exists(v);
                        if !found {
                            missed.insert(v);
                        }
                        misses += usize::from(!found);
                        p.push(v, found.then(|| Bytes::from_static(b"{}")));
                    }
                }
                Ok(Step::Ready(last)) => {
                    return Run {
                        last: Ok(last),
                        rounds,
                        misses,
                        requests: asked.len(),
                    }
                }
                Err(e) => {
                    return Run {
                        last: Err(e),
                        rounds,
                        misses,
                        requests: asked.len(),
                    }
                }
            }
        }
    }

    fn run(existing: &[u64], start: u64, target: Option<u64>) -> (Result<Option<u64>>, usize) {
        let r = probe(|v| existing.contains(&v), start, target);
        (r.last, r.rounds)
    }

    #[test]
    fn a_store_answering_every_version_stops_at_the_commit_limit() {
        // A web server with a fallback page answers every path: without a bound the probe
        // would ask for 2^38 versions in its fourth round.
        let r = probe_within(|_| true, 0, None, 100_000);
        let e = r.last.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("commits found by probing"), "{e}");
        assert!(e.contains("100000"), "{e}");
        assert!(r.rounds <= 3 && r.requests < 200, "{} rounds", r.rounds);
        // The default bound is the same.
        let mut p = CommitProbe::new(0, None);
        for v in 0..64 {
            p.push(v, Some(Bytes::from_static(b"{}")));
        }
        p.push(1 << 22, Some(Bytes::from_static(b"{}")));
        assert!(matches!(p.poll(), Err(DeltaError::LimitExceeded { .. })));
    }

    #[test]
    fn a_log_of_exactly_the_commit_limit_loads_and_one_more_is_refused() {
        for start in [0, 5] {
            let r = probe_within(|v| v >= start && v < start + 500, start, None, 500);
            assert_eq!(r.last.ok(), Some(Some(start + 499)));
            let r = probe_within(|v| v >= start && v < start + 501, start, None, 500);
            assert!(matches!(
                r.last,
                Err(DeltaError::LimitExceeded { found: 501, .. })
            ));
            // A target version: refused before every commit up to it is asked for.
            let r = probe_within(|v| v >= start, start, Some(start + 2000), 500);
            assert!(matches!(r.last, Err(DeltaError::LimitExceeded { .. })));
            assert!(r.requests <= 2, "{} requests", r.requests);
            // A far target that does not exist is still reported as not found.
            let r = probe_within(|v| v < start + 10, start, Some(start + 5000), 500);
            assert!(matches!(r.last, Err(DeltaError::VersionNotFound { .. })));
        }
    }

    #[test]
    fn a_version_past_the_end_names_the_latest() {
        let all: Vec<u64> = (0..16).collect();
        let (last, _) = run(&all, 0, Some(99));
        let e = last.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("version 99"), "{e}");
        assert!(e.contains("the latest version is 15"), "{e}");
        // A gap is not an end: no latest is claimed.
        let gap: Vec<u64> = (0..16).filter(|&v| v != 3).collect();
        let (last, _) = run(&gap, 0, Some(20));
        let e = last.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(!e.contains("latest"), "{e}");
    }

    #[test]
    fn finds_the_end_in_few_rounds() {
        let all: Vec<u64> = (0..100).collect();
        let (last, rounds) = run(&all, 0, None);
        assert_eq!(last.ok(), Some(Some(99)));
        // 0..8 and 15, 31, 63; then 8..63 and 127, 255, ...; then 64..126.
        assert_eq!(rounds, 3);
        let (last, rounds) = run(&all[..3], 0, None);
        assert_eq!((last.ok(), rounds), (Some(Some(2)), 1));
    }

    #[test]
    fn every_log_length_is_found_exactly_with_few_misses() {
        let lengths = (0..300).chain([511, 512, 513, 1000, 4095, 4096, 4097, 10_000, 123_457]);
        for n in lengths {
            for start in [0, 7] {
                let end = start + n;
                let r = probe(|v| v >= start && v < end, start, None);
                let want = (n > 0).then(|| end - 1);
                assert_eq!(r.last.ok(), Some(want), "n = {n}, start = {start}");
                assert!(r.misses <= 100, "n = {n}: {} misses", r.misses);
                assert_eq!(r.requests, n as usize + r.misses, "n = {n}");
                assert!(r.rounds <= 8, "n = {n}: {} rounds", r.rounds);
            }
        }
    }

    #[test]
    fn ten_thousand_commits_take_six_rounds() {
        let r = probe(|v| v < 10_000, 0, None);
        assert_eq!(r.last.ok(), Some(Some(9_999)));
        assert!(r.rounds <= 6, "{} rounds", r.rounds);
    }

    #[test]
    fn after_checkpoint_nothing_new() {
        let (last, rounds) = run(&[0, 1, 2], 3, None);
        assert_eq!((last.ok(), rounds), (Some(None), 1));
    }

    #[test]
    fn explicit_target_one_round() {
        let all: Vec<u64> = (0..50).collect();
        let (last, rounds) = run(&all, 0, Some(30));
        assert_eq!((last.ok(), rounds), (Some(Some(30)), 1));
        let (last, _) = run(&all, 0, Some(60));
        assert_eq!(last.err().map(|e| e.code()), Some("version_not_found"));
        // A missing first commit is no snapshot at the target either.
        let (last, _) = run(&all, 60, Some(70));
        assert_eq!(last.err().map(|e| e.code()), Some("version_not_found"));
    }

    #[test]
    fn a_far_target_that_does_not_exist_costs_one_round() {
        // The target and the start (which tells a missing version from a missing log).
        let r = probe(|v| v < 50, 0, Some(1_000_000_000_000));
        assert_eq!(r.last.err().map(|e| e.code()), Some("version_not_found"));
        assert_eq!((r.rounds, r.requests), (1, 2));
        let r = probe(|v| v < 5_000, 0, Some(4_000));
        assert_eq!(r.last.ok(), Some(Some(4_000)));
        assert_eq!((r.rounds, r.requests), (2, 4_001));
    }

    #[test]
    fn an_answer_that_is_not_a_commit_is_an_error() {
        for (body, shown) in [
            (&b"<!doctype html><html>"[..], "it is not JSON lines"),
            (b"", "it is empty (a server that answers 200"),
            (b" \n\n", "it is empty"),
            (b"\x1f\x8b\x08\x00", "gzip-compressed"),
        ] {
            let mut p = CommitProbe::new(0, None);
            let _ = p.poll();
            for v in p.take_asked() {
                let data = if v < 2 {
                    &b"{\"commitInfo\":{}}\n"[..]
                } else {
                    body
                };
                p.push(v, Some(Bytes::from(data.to_vec())));
            }
            let err = p.poll().err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                err.contains("00000000000000000002.json") && err.contains(shown),
                "{err}"
            );
        }
        let mut p = CommitProbe::new(0, None);
        let _ = p.poll();
        for v in p.take_asked() {
            let data = (v < 2).then(|| Bytes::from_static(b"\xEF\xBB\xBF {\"add\":{}}\n"));
            p.push(v, data);
        }
        assert!(
            matches!(p.poll(), Ok(Step::Ready(Some(1)))),
            "a BOM and blanks before the first object"
        );
    }

    #[test]
    fn a_commit_written_between_two_rounds_is_found_by_a_second_look() {
        // From a checkpoint at 7: versions 8..=13 exist; 14 and 15 are written after the
        // answer to the first ask for 14 and before the one for 15 (asked side by side).
        let mut p = CommitProbe::new(8, None);
        let mut written = false;
        let mut asks_of_14 = 0;
        let last = loop {
            match p.poll() {
                Ok(Step::Need(vs)) => {
                    for v in p.take_asked() {
                        if v == 14 {
                            asks_of_14 += 1;
                        }
                        let exists = v <= 13 || (written && v <= 15);
                        p.push(v, exists.then(|| Bytes::from_static(b"{}")));
                        written |= v == 14;
                    }
                    assert!(!vs.is_empty());
                }
                Ok(Step::Ready(last)) => break last,
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!(last, Some(15));
        assert_eq!(asks_of_14, 2);
        // A gap that stays one is still an error, after the second look.
        let (got, _) = run(&[0, 1, 2, 4, 5], 0, None);
        assert!(
            matches!(
                got,
                Err(DeltaError::NonContiguousLog {
                    expected: 3,
                    found: 4
                })
            ),
            "{got:?}"
        );
    }

    #[test]
    fn commits_past_a_missing_commit_zero_are_a_gap_not_a_missing_table() {
        // Commits 5..=12 (0..=4 cleaned up after a checkpoint nothing names).
        let (got, _) = run(&(5..=12).collect::<Vec<_>>(), 0, None);
        assert!(
            matches!(
                got,
                Err(DeltaError::NonContiguousLog {
                    expected: 0,
                    found: 5
                })
            ),
            "{got:?}"
        );
        // No commit at all: no log, whatever was asked.
        let (got, _) = run(&[], 0, None);
        assert!(matches!(got, Ok(None)), "{got:?}");
    }

    #[test]
    fn gap_is_an_error() {
        let (last, _) = run(&[0, 1, 3, 4], 0, None);
        assert_eq!(last.err().map(|e| e.code()), Some("non_contiguous_log"));
        // A gap below a sparse probe that exists.
        let exists = |v: u64| v != 20 && v < 500;
        let r = probe(exists, 0, None);
        assert_eq!(r.last.err().map(|e| e.code()), Some("non_contiguous_log"));
    }
}
