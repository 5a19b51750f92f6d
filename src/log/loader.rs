//! [`SnapshotLoader`]: the sans-io state machine that turns a table's log into a reconciled
//! snapshot.
//!
//! The loader never does I/O. Its caller (the driver) repeats:
//!
//! 1. [`SnapshotLoader::poll`] → [`LoadStep::Need`] with listing and file requests, or
//!    [`LoadStep::Ready`] with the result;
//! 2. answers every request with [`SnapshotLoader::push_listing`] /
//!    [`SnapshotLoader::push_file`] (in any order; a missing optional file is `None`, a missing
//!    required one is the driver's error to return);
//! 3. polls again.
//!
//! Discovery: `_last_checkpoint` is read first. A store that lists is then listed from the
//! hinted checkpoint on (or from the start when the hint is missing, corrupt, stale, or newer
//! than a requested version). A store that cannot list is probed (see `probe`). Then the
//! segment's checkpoint files and commits are fetched in one round, v2 sidecars in one more,
//! and replayed.
//!
//! Scope: a loader made with [`LoadScope::ActiveFiles`] reconciles the active `add` actions;
//! with [`LoadScope::TableOnly`] it keeps only protocol and metadata (checkpoint `add` columns
//! are not decoded, sidecars not fetched). [`SnapshotLoader::for_segment`] replays a segment
//! found by an earlier load again, with no discovery: this is how a lazily loaded table gets
//! its files for each scan.

use std::collections::HashMap;
use std::mem;

use bytes::Bytes;

use super::actions::Action;
use super::checkpoint::{json_actions_each, json_actions_scoped, parquet_actions, ActionKinds};
use super::last_checkpoint::LastCheckpointHint;
use super::path::{commit_path, sidecar_path, LogFileKind, LogPath, LAST_CHECKPOINT, LOG_DIR};
use super::probe::{CommitProbe, ProbeNext};
use super::protocol::validate_reader_protocol;
use super::replay::{Reconciled, Replay};
use super::segment::{segment_from_listing, LogSegment};
use super::timestamp::{SearchNext, TimestampSearch};
use crate::error::{DeltaError, Result};

/// Which version of the table to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionTarget {
    /// The newest version.
    #[default]
    Latest,
    /// An exact version.
    Version(u64),
    /// The newest version committed at or before this instant (ms since the epoch).
    Timestamp(i64),
}

/// What a load keeps from the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadScope {
    /// Protocol, metadata and the reconciled active files.
    #[default]
    ActiveFiles,
    /// Protocol and metadata only ([`Reconciled::files`] is empty).
    TableOnly,
}

/// A request from the loader to its driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogRequest {
    /// List objects under `prefix` (after `start_after`, when given).
    List {
        /// Path prefix, relative to the table root.
        prefix: String,
        /// Only objects sorting after this path.
        start_after: Option<String>,
    },
    /// Read a whole file.
    Get {
        /// Path relative to the table root.
        path: String,
        /// Whether "not found" is an answer (`None`) rather than an error.
        optional: bool,
    },
}

/// How the log was discovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Discovery {
    /// By listing `_delta_log/`.
    Listing,
    /// By asking for commit files by name (the store cannot list).
    Probing,
}

/// A loaded log: the reconciled snapshot and how it was found.
#[derive(Debug, Clone)]
pub struct LoadedLog {
    /// Protocol, metadata and active files.
    pub reconciled: Reconciled,
    /// Version of the checkpoint used, if any.
    pub checkpoint_version: Option<u64>,
    /// Time of the snapshot's commit (ms since the epoch), where known.
    pub timestamp_ms: Option<i64>,
    /// How the log was discovered.
    pub discovery: Discovery,
    /// Log files read (including `_last_checkpoint` and sidecars).
    pub files_read: u64,
    /// Rounds of requests the driver made.
    pub round_trips: u64,
    /// The log files replayed, to replay them again with [`SnapshotLoader::for_segment`].
    pub segment: LogSegment,
}

/// What the driver must do next.
#[derive(Debug)]
pub enum LoadStep {
    /// Answer these requests, then poll again.
    Need(Vec<LogRequest>),
    /// The snapshot is loaded.
    Ready(Box<LoadedLog>),
}

#[derive(Debug)]
enum State {
    Start,
    AwaitHint,
    AwaitListing {
        hint: Option<LastCheckpointHint>,
        partial: bool,
    },
    Probing {
        hint: Option<LastCheckpointHint>,
        probe: CommitProbe,
    },
    Searching {
        search: TimestampSearch,
        listing: Option<Vec<LogPath>>,
        hint: Option<LastCheckpointHint>,
        asked: Vec<u64>,
    },
    FetchSegment {
        segment: LogSegment,
        discovery: Discovery,
    },
    FetchSidecars {
        segment: LogSegment,
        discovery: Discovery,
        checkpoint: Vec<Action>,
        sidecars: Vec<String>,
    },
    Done,
}

/// The log replay state machine. See the module documentation for the calling protocol.
#[derive(Debug)]
pub struct SnapshotLoader {
    location: String,
    target: VersionTarget,
    scope: LoadScope,
    state: State,
    pending: Vec<LogRequest>,
    listing: Option<Option<Vec<LogPath>>>,
    files: HashMap<String, Option<Bytes>>,
    /// Actions of commit files the caller decoded (see
    /// [`push_decoded_commit`](SnapshotLoader::push_decoded_commit)), by path.
    decoded: HashMap<String, Vec<Vec<Action>>>,
    files_read: u64,
    round_trips: u64,
    /// A version `_last_checkpoint` vouches for although its checkpoint was not found:
    /// probing that ends below it would silently return a stale snapshot.
    stale_hint: Option<u64>,
}

impl SnapshotLoader {
    /// A loader for the table at `location` (used in messages only).
    pub fn new(location: impl Into<String>, target: VersionTarget) -> Self {
        SnapshotLoader {
            location: location.into(),
            target,
            scope: LoadScope::ActiveFiles,
            state: State::Start,
            pending: Vec::new(),
            listing: None,
            files: HashMap::new(),
            decoded: HashMap::new(),
            files_read: 0,
            round_trips: 0,
            stale_hint: None,
        }
    }

    /// Sets what the load keeps (by default the active files).
    pub fn with_scope(mut self, scope: LoadScope) -> Self {
        self.scope = scope;
        self
    }

    /// A loader that replays `segment` (from an earlier load's [`LoadedLog::segment`]) with
    /// no discovery: its first step asks for exactly the segment's files.
    pub fn for_segment(
        location: impl Into<String>,
        segment: LogSegment,
        discovery: Discovery,
    ) -> Self {
        let target = VersionTarget::Version(segment.version);
        let mut loader = SnapshotLoader::new(location, target);
        loader.fetch_segment(segment, discovery);
        loader.round_trips = 1;
        loader
    }

    /// Answers a [`LogRequest::List`] with the log files listed (see [`LogPath::listed`]; other
    /// files may be left out or not): `None` when the store cannot list.
    pub fn push_listing(&mut self, entries: Option<Vec<LogPath>>) -> Result<()> {
        let before = self.pending.len();
        self.pending
            .retain(|r| !matches!(r, LogRequest::List { .. }));
        if before == self.pending.len() {
            return Err(DeltaError::InvalidArgument {
                reason: "a listing was pushed that the loader did not ask for".into(),
            });
        }
        self.listing = Some(entries);
        Ok(())
    }

    /// Answers a [`LogRequest::Get`]: `None` when an optional file does not exist.
    pub fn push_file(&mut self, path: &str, data: Option<Bytes>) -> Result<()> {
        let before = self.pending.len();
        self.pending
            .retain(|r| !matches!(r, LogRequest::Get { path: p, .. } if p == path));
        if before == self.pending.len() {
            return Err(DeltaError::InvalidArgument {
                reason: format!("file {path} was pushed but the loader did not ask for it"),
            });
        }
        if data.is_some() {
            self.files_read += 1;
        }
        self.files.insert(path.to_string(), data);
        Ok(())
    }

    /// Answers a [`LogRequest::Get`] of a commit file (`_delta_log/N.json`) with its bytes and
    /// its actions, decoded by the caller with [`decode_commit_actions`] in this load's
    /// [`scope`](Self::scope) (for example in parallel, while other files arrive), as runs
    /// of consecutive lines. The runs must hold the file's actions in file order: replay uses
    /// them instead of decoding the bytes.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // used by the native driver only
    pub fn push_decoded_commit(
        &mut self,
        path: &str,
        data: Bytes,
        runs: Vec<Vec<Action>>,
    ) -> Result<()> {
        self.push_file(path, Some(data))?;
        self.decoded.insert(path.to_string(), runs);
        Ok(())
    }

    /// What this load keeps.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // used by the native driver only
    pub fn scope(&self) -> LoadScope {
        self.scope
    }

    /// Advances as far as the answers allow.
    pub fn poll(&mut self) -> Result<LoadStep> {
        loop {
            if !self.pending.is_empty() {
                return Ok(LoadStep::Need(self.pending.clone()));
            }
            let state = mem::replace(&mut self.state, State::Done);
            if let Some(done) = self.transition(state)? {
                return Ok(LoadStep::Ready(Box::new(done)));
            }
            if !self.pending.is_empty() {
                self.round_trips += 1;
            }
        }
    }

    fn get(&mut self, path: String, optional: bool) {
        if !self.files.contains_key(&path) {
            self.pending.push(LogRequest::Get { path, optional });
        }
    }

    fn take_file(&mut self, path: &str) -> Result<Bytes> {
        match self.files.get(path) {
            Some(Some(b)) => Ok(b.clone()),
            _ => Err(missing_file(path)),
        }
    }

    /// Like [`take_file`](Self::take_file), and forgets the file: for the last use of its
    /// bytes, so a long log is not held twice (as bytes and as actions).
    fn remove_file(&mut self, path: &str) -> Result<Bytes> {
        match self.files.remove(path) {
            Some(Some(b)) => Ok(b),
            _ => Err(missing_file(path)),
        }
    }

    /// One step; `Some` when the snapshot is complete.
    fn transition(&mut self, state: State) -> Result<Option<LoadedLog>> {
        match state {
            State::Start => {
                self.get(LAST_CHECKPOINT.to_string(), true);
                self.state = State::AwaitHint;
            }
            State::AwaitHint => {
                let hint = self
                    .files
                    .get(LAST_CHECKPOINT)
                    .and_then(|b| b.as_deref())
                    .and_then(LastCheckpointHint::parse);
                let usable = match self.target {
                    VersionTarget::Latest => hint.as_ref(),
                    VersionTarget::Version(v) => hint.as_ref().filter(|h| h.version <= v),
                    VersionTarget::Timestamp(_) => None,
                };
                let start_after = usable.map(|h| format!("{LOG_DIR}{:020}", h.version));
                self.pending.push(LogRequest::List {
                    prefix: LOG_DIR.to_string(),
                    start_after: start_after.clone(),
                });
                self.state = State::AwaitListing {
                    hint,
                    partial: start_after.is_some(),
                };
            }
            State::AwaitListing { hint, partial } => {
                let listing = self.listing.take().flatten();
                match listing {
                    None => self.start_probing(hint)?,
                    Some(entries) => self.use_listing(hint, partial, entries)?,
                }
            }
            State::Probing { hint, mut probe } => {
                for v in probe.take_asked() {
                    let data = self.files.get(&commit_path(v)).cloned().flatten();
                    probe.push(v, data);
                }
                self.continue_probing(hint, probe)?;
            }
            State::Searching {
                mut search,
                listing,
                hint,
                asked,
            } => {
                for v in asked {
                    let path = commit_path(v);
                    let data = self.take_file(&path)?;
                    search.push(v, &path, &data)?;
                }
                self.continue_search(search, listing, hint)?;
            }
            State::FetchSegment { segment, discovery } => {
                let mut checkpoint = Vec::new();
                let mut sidecars = Vec::new();
                let with_files = self.scope == LoadScope::ActiveFiles;
                for file in &segment.checkpoint {
                    let data = self.remove_file(&file.path)?;
                    for action in decode_checkpoint(file, data, with_files)? {
                        match action {
                            Action::Sidecar(s) if with_files => {
                                sidecars.push(sidecar_path(&s.path))
                            }
                            Action::Sidecar(_) => {}
                            Action::Add(_) if !with_files => {}
                            other => checkpoint.push(other),
                        }
                    }
                }
                if sidecars.is_empty() {
                    return self.finish(segment, discovery, checkpoint).map(Some);
                }
                // A sidecar named twice holds its files once.
                let mut named = std::collections::HashSet::new();
                sidecars.retain(|s| named.insert(s.clone()));
                for s in &sidecars {
                    self.get(s.clone(), false);
                }
                self.state = State::FetchSidecars {
                    segment,
                    discovery,
                    checkpoint,
                    sidecars,
                };
            }
            State::FetchSidecars {
                segment,
                discovery,
                mut checkpoint,
                sidecars,
            } => {
                // Removes in a checkpoint are vacuum tombstones: they never hide its adds.
                let kinds = ActionKinds::ADD;
                for path in &sidecars {
                    let data = self.remove_file(path)?;
                    checkpoint.extend(parquet_actions(path, data, kinds)?);
                }
                return self.finish(segment, discovery, checkpoint).map(Some);
            }
            State::Done => {
                return Err(DeltaError::InvalidArgument {
                    reason: "the snapshot loader was polled after it finished".into(),
                })
            }
        }
        Ok(None)
    }

    fn use_listing(
        &mut self,
        hint: Option<LastCheckpointHint>,
        partial: bool,
        paths: Vec<LogPath>,
    ) -> Result<()> {
        if let VersionTarget::Timestamp(ts) = self.target {
            let commits = paths
                .iter()
                .filter(|p| p.kind == LogFileKind::Commit)
                .map(|p| (p.version, p.last_modified_ms))
                .collect();
            let search = TimestampSearch::new(ts, commits)?;
            return self.continue_search(search, Some(paths), hint);
        }
        let target = match self.target {
            VersionTarget::Version(v) => Some(v),
            _ => None,
        };
        match segment_from_listing(&paths, target, &self.location) {
            Ok(segment) if !partial || segment.checkpoint_version.is_some() => {
                self.fetch_segment(segment, Discovery::Listing);
                Ok(())
            }
            // A partial listing that does not show the hinted checkpoint (stale or wrong
            // `_last_checkpoint`): list everything.
            _ if partial => {
                self.pending.push(LogRequest::List {
                    prefix: LOG_DIR.to_string(),
                    start_after: None,
                });
                self.state = State::AwaitListing {
                    hint: None,
                    partial: false,
                };
                Ok(())
            }
            Err(DeltaError::NotATable { .. }) if paths.is_empty() => Err(DeltaError::NotATable {
                location: self.location.clone(),
            }),
            Err(e) => Err(e),
            Ok(_) => Err(DeltaError::InvalidArgument {
                reason: "unreachable listing state".into(),
            }),
        }
    }

    fn fetch_segment(&mut self, segment: LogSegment, discovery: Discovery) {
        let paths: Vec<String> = segment.files().map(|f| f.path.clone()).collect();
        for p in paths {
            self.get(p, false);
        }
        self.state = State::FetchSegment { segment, discovery };
    }

    fn start_probing(&mut self, hint: Option<LastCheckpointHint>) -> Result<()> {
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
        let start = base.as_ref().map_or(0, |h| h.version + 1);
        let target = match self.target {
            VersionTarget::Version(v) => Some(v),
            _ => None,
        };
        self.continue_probing(base, CommitProbe::new(start, target))
    }

    fn continue_probing(
        &mut self,
        hint: Option<LastCheckpointHint>,
        mut probe: CommitProbe,
    ) -> Result<()> {
        // A hinted checkpoint that does not exist: start again from version 0.
        if let Some(h) = &hint {
            let missing = h
                .checkpoint_paths()
                .iter()
                .any(|p| matches!(self.files.get(p), Some(None)));
            if missing {
                if let Some(classic) = h.without_v2() {
                    for p in classic.checkpoint_paths() {
                        self.get(p, true);
                    }
                    self.state = State::Probing {
                        hint: Some(classic),
                        probe,
                    };
                    return Ok(());
                }
                let target = match self.target {
                    VersionTarget::Version(v) => Some(v),
                    _ => None,
                };
                self.stale_hint = Some(h.version);
                return self.continue_probing(None, CommitProbe::new(0, target));
            }
        }
        let next = match probe.next() {
            Err(DeltaError::VersionNotFound { .. })
                if hint.is_none() && probe.commit(0).is_none() =>
            {
                return Err(self.not_a_table_or(probe.start()))
            }
            other => other?,
        };
        match next {
            ProbeNext::Fetch(versions) => {
                for v in versions {
                    self.get(commit_path(v), true);
                }
                self.state = State::Probing { hint, probe };
            }
            ProbeNext::Done { last } => {
                if let Some(hinted) = self.stale_hint {
                    if last.is_none_or(|l| l < hinted) && self.target == VersionTarget::Latest {
                        return Err(DeltaError::InvalidLog {
                            path: LAST_CHECKPOINT.to_string(),
                            reason: format!(
                                "it names a checkpoint at version {hinted} that does not exist, \
                                 and commits are found only up to {}; the store cannot list, so \
                                 the newest version cannot be determined",
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
                    let search = TimestampSearch::new(ts, commits)?;
                    return self.continue_search(search, None, hint);
                }
                let segment = probed_segment(hint.as_ref(), probe.start(), version);
                self.fetch_segment(segment, Discovery::Probing);
            }
        }
        Ok(())
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

    fn continue_search(
        &mut self,
        mut search: TimestampSearch,
        listing: Option<Vec<LogPath>>,
        hint: Option<LastCheckpointHint>,
    ) -> Result<()> {
        match search.next()? {
            SearchNext::Fetch(versions) => {
                for &v in &versions {
                    self.get(commit_path(v), false);
                }
                self.state = State::Searching {
                    search,
                    listing,
                    hint,
                    asked: versions,
                };
            }
            SearchNext::Found(version) => {
                let segment = match &listing {
                    Some(paths) => segment_from_listing(paths, Some(version), &self.location)?,
                    None => {
                        probed_segment(hint.as_ref().filter(|h| h.version <= version), 0, version)
                    }
                };
                let discovery = if listing.is_some() {
                    Discovery::Listing
                } else {
                    Discovery::Probing
                };
                self.fetch_segment(segment, discovery);
            }
        }
        Ok(())
    }

    fn finish(
        &mut self,
        segment: LogSegment,
        discovery: Discovery,
        checkpoint: Vec<Action>,
    ) -> Result<LoadedLog> {
        let mut replay = Replay::new();
        let mut timestamp_ms = None;
        for (i, commit) in segment.commits.iter().rev().enumerate() {
            let data = self.remove_file(&commit.path)?;
            let with_files = self.scope == LoadScope::ActiveFiles;
            replay.begin_commit();
            match self.decoded.remove(&commit.path) {
                Some(runs) => {
                    drop(data);
                    replay.reserve_commit(runs.iter().map(Vec::len).sum());
                    for run in runs {
                        run.into_iter().for_each(|a| replay.push_commit_action(a));
                    }
                }
                None => json_actions_each(&commit.path, &data, with_files, |a| {
                    replay.push_commit_action(a)
                })?,
            }
            replay.end_commit();
            if i == 0 {
                timestamp_ms = commit.last_modified_ms;
            }
        }
        replay.push_checkpoint(checkpoint);
        let reconciled = replay.finish(segment.version)?;
        validate_reader_protocol(&reconciled.protocol)?;
        let info = reconciled.latest_commit_info.as_ref();
        let timestamp_ms = info
            .and_then(|i| i.in_commit_timestamp)
            .or(timestamp_ms)
            .or(info.and_then(|i| i.timestamp));
        Ok(LoadedLog {
            checkpoint_version: segment.checkpoint_version,
            reconciled,
            timestamp_ms,
            discovery,
            files_read: self.files_read,
            round_trips: self.round_trips,
            segment,
        })
    }
}

/// Decodes the actions of (a run of whole lines of) the commit file `path` for a load of
/// `scope`: every action, except `add` and `remove` when the load keeps no active files (they
/// are then checked and skipped). Errors name lines counted from the start of `data`.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))] // used by the native driver only
pub fn decode_commit_actions(path: &str, data: &[u8], scope: LoadScope) -> Result<Vec<Action>> {
    json_actions_scoped(path, data, scope == LoadScope::ActiveFiles)
}

fn missing_file(path: &str) -> DeltaError {
    DeltaError::NotFound {
        path: path.to_string(),
        phase: crate::error::Phase::Load,
    }
}

/// The segment of a probed log: the hinted checkpoint (if any) and commits up to `version`.
fn probed_segment(hint: Option<&LastCheckpointHint>, start: u64, version: u64) -> LogSegment {
    let checkpoint: Vec<LogPath> = hint
        .map(|h| {
            h.checkpoint_paths()
                .iter()
                .filter_map(|p| LogPath::parse(p))
                .collect()
        })
        .unwrap_or_default();
    let checkpoint_version = hint.map(|h| h.version);
    let first = checkpoint_version.map_or(start, |c| c + 1);
    let commits = (first..=version)
        .filter_map(|v| LogPath::parse(&commit_path(v)))
        .collect();
    LogSegment {
        version,
        checkpoint_version,
        checkpoint,
        commits,
    }
}

/// Decodes one checkpoint file (any kind) into actions, sidecar references included; the
/// `add` columns of a Parquet checkpoint only `with_files`.
fn decode_checkpoint(file: &LogPath, data: Bytes, with_files: bool) -> Result<Vec<Action>> {
    let json = file.path.ends_with(".json");
    if json {
        json_actions_scoped(&file.path, &data, with_files)
    } else {
        let adds = if with_files {
            ActionKinds::ADD
        } else {
            ActionKinds::default()
        };
        let kinds = adds
            | ActionKinds::METADATA
            | ActionKinds::PROTOCOL
            | ActionKinds::SIDECAR
            | ActionKinds::CHECKPOINT_METADATA;
        parquet_actions(&file.path, data, kinds)
    }
}

#[cfg(test)]
#[path = "loader_tests.rs"]
mod tests;
