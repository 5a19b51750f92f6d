//! The loader's discovery states: `_last_checkpoint`, the listing, probing on stores that
//! cannot list, and the timestamp search. Each handler takes its state's data by value and
//! returns the next state; the last of them is always [`State::FetchSegment`].

use super::{Context, Discovery, LogRequest, State, VersionTarget, SPECULATIVE_COMMITS};
use crate::error::{DeltaError, Phase, Result};
use crate::log::last_checkpoint::LastCheckpointHint;
use crate::log::path::{commit_path, LogFileKind, LogPath, LAST_CHECKPOINT, LOG_DIR};
use crate::log::probe::{within_max_commits, CommitProbe, FAR_TARGET};
use crate::log::segment::{segment_from_listing, too_small_checkpoint, LogSegment};
use crate::log::step::Step;
use crate::log::timestamp::TimestampSearch;

impl Context {
    /// [`State::Start`]: asks for `_last_checkpoint`, and on a store that cannot list the
    /// first commits too (up to the target version, if one is given; none for a target so
    /// far that the probe asks for it alone first).
    pub(super) fn on_start(&mut self) -> State {
        self.get(LAST_CHECKPOINT.to_string(), true);
        let far = self.target_version().is_some_and(|t| t >= FAR_TARGET);
        if !self.lists && !far {
            let end = self
                .target_version()
                .map_or(SPECULATIVE_COMMITS, |t| t.saturating_add(1))
                .min(SPECULATIVE_COMMITS);
            for v in 0..end {
                self.get(commit_path(v), true);
            }
        }
        State::AwaitHint
    }

    /// [`State::AwaitHint`]: lists the log, from the hinted checkpoint on when the hint can
    /// serve the target; probes at once on a store that cannot list.
    pub(super) fn on_hint(&mut self) -> Result<State> {
        let hint = self
            .files
            .get(LAST_CHECKPOINT)
            .and_then(|b| b.as_deref())
            .and_then(LastCheckpointHint::parse);
        if !self.lists {
            return self.start_probing(hint);
        }
        let usable = match self.target {
            _ if self.list_whole => None,
            VersionTarget::Latest => hint.as_ref(),
            VersionTarget::Version(v) => hint.as_ref().filter(|h| h.version <= v),
            VersionTarget::Timestamp(_) => None,
        };
        let start_after = usable.map(|h| format!("{LOG_DIR}{:020}", h.version));
        self.pending.push(LogRequest::List {
            prefix: LOG_DIR.to_string(),
            start_after: start_after.clone(),
        });
        Ok(State::AwaitListing {
            hint,
            partial: start_after.is_some(),
        })
    }

    /// [`State::AwaitListing`]: picks the segment from the listing, or probes when the store
    /// cannot list.
    pub(super) fn on_listing(
        &mut self,
        hint: Option<LastCheckpointHint>,
        partial: bool,
    ) -> Result<State> {
        match self.listing.take().flatten() {
            None => self.start_probing(hint),
            Some(entries) => self.use_listing(hint, partial, entries),
        }
    }

    fn use_listing(
        &mut self,
        hint: Option<LastCheckpointHint>,
        partial: bool,
        paths: Vec<LogPath>,
    ) -> Result<State> {
        if let VersionTarget::Timestamp(ts) = self.target {
            let commits = paths
                .iter()
                .filter(|p| p.kind == LogFileKind::Commit)
                .map(|p| (p.version, p.last_modified_ms))
                .collect();
            let search = Box::new(TimestampSearch::new(ts, commits)?);
            return self.continue_search(search, Some(paths), hint);
        }
        match segment_from_listing(&paths, self.target_version(), &self.location) {
            Ok(segment) if !partial || segment.checkpoint_version.is_some() => {
                self.fetch_segment(segment, Discovery::Listing)
            }
            // A partial listing that does not show the hinted checkpoint (stale or wrong
            // `_last_checkpoint`): list everything.
            _ if partial => {
                self.pending.push(LogRequest::List {
                    prefix: LOG_DIR.to_string(),
                    start_after: None,
                });
                Ok(State::AwaitListing {
                    hint: None,
                    partial: false,
                })
            }
            Err(DeltaError::NotATable { .. }) if paths.is_empty() => Err(DeltaError::NotATable {
                location: self.location.clone(),
            }),
            Err(e) => Err(e),
            Ok(_) => Err(DeltaError::Internal {
                reason: "the listing was neither a segment nor an error".into(),
                phase: Phase::Load,
            }),
        }
    }

    fn start_probing(&mut self, hint: Option<LastCheckpointHint>) -> Result<State> {
        let base = match self.target {
            VersionTarget::Latest => hint,
            VersionTarget::Version(v) => hint.filter(|h| h.version <= v),
            VersionTarget::Timestamp(_) => None,
        };
        if let Some(h) = &base {
            for p in h.checkpoint_paths() {
                self.get(p, true);
            }
        }
        let start = base.as_ref().map_or(0, |h| h.version.saturating_add(1));
        let mut probe =
            CommitProbe::new(start, self.target_version()).with_max_commits(self.max_commits);
        self.use_speculative_commits(&mut probe);
        self.continue_probing(base, probe)
    }

    /// Hands the commits the first round asked for speculatively (see `on_start`) to a
    /// probe that starts at or below them, and forgets those below its start.
    fn use_speculative_commits(&mut self, probe: &mut CommitProbe) {
        if self.lists {
            return;
        }
        for v in 0..SPECULATIVE_COMMITS {
            let path = commit_path(v);
            if v < probe.start() {
                // Not needed: a failed read of it is forgiven.
                self.files.remove(&path);
                self.failed.remove(&path);
            } else if self.decoded.contains_key(&path) {
                probe.push_decoded(v);
            } else if let Some(answer) = self.files.get(&path) {
                probe.push(v, answer.clone());
            }
        }
    }

    /// [`State::Probing`]: hands the answers to the probe and goes on.
    pub(super) fn on_probe(
        &mut self,
        hint: Option<LastCheckpointHint>,
        mut probe: CommitProbe,
    ) -> Result<State> {
        for v in probe.take_asked() {
            let path = commit_path(v);
            if self.decoded.contains_key(&path) {
                probe.push_decoded(v);
                continue;
            }
            let data = self.files.get(&path).cloned().flatten();
            probe.push(v, data);
        }
        self.continue_probing(hint, probe)
    }

    fn continue_probing(
        &mut self,
        hint: Option<LastCheckpointHint>,
        mut probe: CommitProbe,
    ) -> Result<State> {
        // The hinted checkpoint is asked for with the first probes; until it is answered the
        // probe may ask for more, but not end (the commits it was seeded with can already
        // decide the end, see `use_speculative_commits`).
        let unanswered = hint.as_ref().is_some_and(|h| {
            h.checkpoint_paths()
                .iter()
                .any(|p| !self.files.contains_key(p))
        });
        // A hinted checkpoint that does not exist (or is too small to be one, as a listing
        // would pass it over): start again from version 0.
        if let Some(h) = hint.as_ref().filter(|_| !unanswered) {
            let missing = h
                .checkpoint_paths()
                .iter()
                .any(|p| match self.files.get(p) {
                    Some(None) => true,
                    Some(Some(bytes)) => LogPath::parse(p)
                        .is_some_and(|f| too_small_checkpoint(&f.kind, bytes.len() as u64)),
                    None => false,
                });
            if missing {
                if let Some(classic) = h.without_v2() {
                    for p in classic.checkpoint_paths() {
                        self.get(p, true);
                    }
                    return Ok(State::Probing {
                        hint: Some(classic),
                        probe,
                    });
                }
                self.stale_hint = Some(h.version);
                let probe =
                    CommitProbe::new(0, self.target_version()).with_max_commits(self.max_commits);
                return self.continue_probing(None, probe);
            }
        }
        let step = match probe.poll() {
            Err(DeltaError::VersionNotFound { .. })
                if hint.is_none() && probe.commit(0).is_none() =>
            {
                return Err(self.not_a_table_or(probe.start()))
            }
            other => other?,
        };
        let last = match step {
            Step::Need(versions) => {
                for v in versions {
                    let path = commit_path(v);
                    // Asked again (a commit missing below one found): the answer before is
                    // forgotten, so that the file is fetched again.
                    if probe.rechecks(v) && matches!(self.files.get(&path), Some(None)) {
                        self.files.remove(&path);
                    }
                    self.get(path, true);
                }
                return Ok(State::Probing { hint, probe });
            }
            Step::Ready(_) if unanswered => return Ok(State::Probing { hint, probe }),
            Step::Ready(last) => last,
        };
        if let Some(hinted) = self.stale_hint {
            if last.is_none_or(|l| l < hinted) && self.target == VersionTarget::Latest {
                return Err(DeltaError::InvalidLog {
                    path: LAST_CHECKPOINT.to_string(),
                    reason: format!(
                        "it names a checkpoint at version {hinted} that does not exist, and \
                         commits are found only up to {}; the store cannot list, so the newest \
                         version cannot be determined",
                        last.map_or("none".to_string(), |l| l.to_string())
                    ),
                });
            }
        }
        let checkpoint_version = hint.as_ref().map(|h| h.version);
        let version = match (last, checkpoint_version) {
            (Some(l), _) => l,
            (None, Some(c)) => c,
            (None, None) => return Err(self.not_a_table_or(probe.start())),
        };
        if let VersionTarget::Timestamp(ts) = self.target {
            let commits = (probe.start()..=version).map(|v| (v, None)).collect();
            let search = Box::new(TimestampSearch::new(ts, commits)?);
            return self.continue_search(search, None, hint);
        }
        let segment = probed_segment(hint.as_ref(), probe.start(), version, self.max_commits)?;
        self.fetch_segment(segment, Discovery::Probing)
    }

    fn not_a_table_or(&self, start: u64) -> DeltaError {
        if start == 0 && !matches!(self.files.get(LAST_CHECKPOINT), Some(Some(_))) {
            DeltaError::NotATable {
                location: self.location.clone(),
            }
        } else {
            DeltaError::InvalidLog {
                path: commit_path(start),
                reason: "the commit after the last checkpoint cannot be found, and the store \
                         cannot list the log"
                    .into(),
            }
        }
    }

    /// [`State::Searching`]: hands the commits read to the search and goes on.
    pub(super) fn on_search(
        &mut self,
        mut search: Box<TimestampSearch>,
        listing: Option<Vec<LogPath>>,
        hint: Option<LastCheckpointHint>,
        asked: Vec<u64>,
    ) -> Result<State> {
        for v in asked {
            let path = commit_path(v);
            match self.decoded.get(&path) {
                // Decoded by the driver: its bytes were not kept.
                Some(runs) => search.push_actions(v, runs.iter().flatten()),
                None => search.push(v, &path, &self.file_bytes(&path)?)?,
            }
        }
        self.continue_search(search, listing, hint)
    }

    fn continue_search(
        &mut self,
        mut search: Box<TimestampSearch>,
        listing: Option<Vec<LogPath>>,
        hint: Option<LastCheckpointHint>,
    ) -> Result<State> {
        let version = match search.poll()? {
            Step::Need(versions) => {
                for &v in &versions {
                    self.get(commit_path(v), false);
                }
                return Ok(State::Searching {
                    search,
                    listing,
                    hint,
                    asked: versions,
                });
            }
            Step::Ready(version) => version,
        };
        let (segment, discovery) = match &listing {
            Some(paths) => (
                segment_from_listing(paths, Some(version), &self.location)?,
                Discovery::Listing,
            ),
            None => (
                probed_segment(
                    hint.as_ref().filter(|h| h.version <= version),
                    0,
                    version,
                    self.max_commits,
                )?,
                Discovery::Probing,
            ),
        };
        self.fetch_segment(segment, discovery)
    }
}

/// The segment of a probed log: the hinted checkpoint (if any) and commits up to `version`,
/// at most `max_commits` of them.
fn probed_segment(
    hint: Option<&LastCheckpointHint>,
    start: u64,
    version: u64,
    max_commits: u64,
) -> Result<LogSegment> {
    let checkpoint: Vec<LogPath> = hint
        .map(|h| {
            h.checkpoint_paths()
                .iter()
                .filter_map(|p| LogPath::parse(p))
                .collect()
        })
        .unwrap_or_default();
    let checkpoint_version = hint.map(|h| h.version);
    let first = checkpoint_version.map_or(start, |c| c.saturating_add(1));
    within_max_commits(version.saturating_add(1).saturating_sub(first), max_commits)?;
    let commits = (first..=version)
        .filter_map(|v| LogPath::parse(&commit_path(v)))
        .collect();
    Ok(LogSegment {
        version,
        checkpoint_version,
        checkpoint,
        commits,
        version_file_time_ms: None,
    })
}
