//! The files a scan leaves out and why ([`DeltaScan::skipped_files`](super::DeltaScan::skipped_files)):
//! the positions and reasons that file selection returned, kept beside the snapshot's active
//! files they point into, so a scan holds one small entry per skipped file, not a copy of
//! its `add` action.

use std::sync::Arc;

use crate::log::Add;
use crate::plan::SkipReason;

/// The files a scan's predicate ruled out before reading, in the snapshot's order.
#[derive(Debug, Clone, Default)]
pub struct SkippedFiles {
    active: Arc<Vec<Add>>,
    skipped: Vec<(usize, SkipReason)>,
}

/// One file a scan left out.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SkippedFile<'a> {
    /// The file's `add` action (its path, size, partition values, statistics).
    pub add: &'a Add,
    /// Why the scan does not read it.
    pub reason: SkipReason,
}

impl SkippedFiles {
    /// `skipped` as file selection returned it: positions in `active`, with reasons.
    /// Positions past the end of `active` are dropped (selection never makes them).
    pub(crate) fn new(active: Arc<Vec<Add>>, mut skipped: Vec<(usize, SkipReason)>) -> Self {
        skipped.retain(|(i, _)| *i < active.len());
        SkippedFiles { active, skipped }
    }

    /// How many files were left out.
    pub fn len(&self) -> usize {
        self.skipped.len()
    }

    /// True when the scan reads every active file.
    pub fn is_empty(&self) -> bool {
        self.skipped.is_empty()
    }

    /// The files left out, in the snapshot's order.
    pub fn iter(&self) -> impl Iterator<Item = SkippedFile<'_>> + '_ {
        self.skipped.iter().filter_map(move |&(i, reason)| {
            self.active.get(i).map(|add| SkippedFile { add, reason })
        })
    }

    /// The bytes of the files left out, by reason: (partition values, statistics, a
    /// filter false for every row).
    pub fn bytes_by_reason(&self) -> (u64, u64, u64) {
        self.iter().fold((0, 0, 0), |(p, s, n), f| {
            let size = u64::try_from(f.add.size).unwrap_or(0);
            match f.reason {
                SkipReason::Partition => (p + size, s, n),
                SkipReason::Stats => (p, s + size, n),
                SkipReason::Filter => (p, s, n + size),
            }
        })
    }
}
