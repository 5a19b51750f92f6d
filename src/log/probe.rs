//! Discovering commits on a store that cannot list (static HTTPS): ask for commit files by
//! name and stop at the first that does not exist.
//!
//! Probing starts after the checkpoint named by `_last_checkpoint` (or at version 0) and asks
//! for a batch of consecutive commit files at once, doubling the batch each round (8, 16, 32,
//! ...). A table with `n` commits after its checkpoint is found in `⌈log2(n / 8 + 1)⌉ + 1`
//! rounds at most. An explicit target version needs one round: every file up to it is asked
//! for at once.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::error::{DeltaError, Result};

/// The first batch of commits asked for.
pub const FIRST_PROBE_BATCH: u64 = 8;

/// The commits probed so far, from a start version, and what is still unknown.
#[derive(Debug, Clone)]
pub struct CommitProbe {
    start: u64,
    /// Probed versions: `Some(bytes)` found, `None` missing.
    seen: BTreeMap<u64, Option<Bytes>>,
    /// Exact last version wanted, when the caller asked for one.
    target: Option<u64>,
    batch: u64,
}

/// What a probe needs next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeNext {
    /// Ask for these commit versions.
    Fetch(Vec<u64>),
    /// Discovery is over: commits `start..=last` exist (`None`: none after `start - 1`).
    Done {
        /// The newest existing commit version, if any.
        last: Option<u64>,
    },
}

impl CommitProbe {
    /// Probes commits from `start`, up to exactly `target` if given, else to the end.
    pub fn new(start: u64, target: Option<u64>) -> Self {
        CommitProbe {
            start,
            seen: BTreeMap::new(),
            target,
            batch: FIRST_PROBE_BATCH,
        }
    }

    /// The first version probed.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Records the answer for one version.
    pub fn push(&mut self, version: u64, data: Option<Bytes>) {
        self.seen.insert(version, data);
    }

    /// Bytes of a found commit.
    pub fn commit(&self, version: u64) -> Option<&Bytes> {
        self.seen.get(&version).and_then(|d| d.as_ref())
    }

    /// Decides what to ask next, from the answers so far.
    pub fn next(&mut self) -> Result<ProbeNext> {
        let mut expected = self.start;
        let mut first_missing = None;
        for (&v, data) in self.seen.range(self.start..) {
            if v != expected {
                break;
            }
            match (data, first_missing) {
                (Some(_), None) => expected = v + 1,
                (None, None) => {
                    first_missing = Some(v);
                    expected = v + 1;
                }
                (Some(_), Some(missing)) => {
                    return Err(DeltaError::NonContiguousLog {
                        expected: missing,
                        found: v,
                    })
                }
                (None, Some(_)) => expected = v + 1,
            }
        }
        if let Some(missing) = first_missing {
            if let Some(t) = self.target {
                if missing <= t {
                    return Err(DeltaError::VersionNotFound {
                        requested: t,
                        reason: format!("commit file of version {missing} does not exist"),
                    });
                }
            }
            return Ok(ProbeNext::Done {
                last: missing.checked_sub(1).filter(|&l| l >= self.start),
            });
        }
        // Every version from start to expected - 1 exists.
        if let Some(t) = self.target {
            if expected > t {
                return Ok(ProbeNext::Done {
                    last: (t >= self.start).then_some(t),
                });
            }
            return Ok(ProbeNext::Fetch((expected..=t).collect()));
        }
        let batch = if self.seen.is_empty() {
            self.batch
        } else {
            self.batch = self.batch.saturating_mul(2);
            self.batch
        };
        Ok(ProbeNext::Fetch(
            (expected..expected.saturating_add(batch)).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(existing: &[u64], start: u64, target: Option<u64>) -> (Result<Option<u64>>, usize) {
        let mut p = CommitProbe::new(start, target);
        let mut rounds = 0;
        loop {
            match p.next() {
                Ok(ProbeNext::Fetch(vs)) => {
                    rounds += 1;
                    for v in vs {
                        let data = existing.contains(&v).then(|| Bytes::from_static(b"{}"));
                        p.push(v, data);
                    }
                }
                Ok(ProbeNext::Done { last }) => return (Ok(last), rounds),
                Err(e) => return (Err(e), rounds),
            }
        }
    }

    #[test]
    fn finds_the_end_in_few_rounds() {
        let all: Vec<u64> = (0..100).collect();
        let (last, rounds) = run(&all, 0, None);
        assert_eq!(last.ok(), Some(Some(99)));
        // 8 + 16 + 32 + 64 = 120 >= 100: four rounds.
        assert_eq!(rounds, 4);
        let (last, rounds) = run(&all[..3], 0, None);
        assert_eq!((last.ok(), rounds), (Some(Some(2)), 1));
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
    }

    #[test]
    fn gap_is_an_error() {
        let (last, _) = run(&[0, 1, 3, 4], 0, None);
        assert_eq!(last.err().map(|e| e.code()), Some("non_contiguous_log"));
    }
}
