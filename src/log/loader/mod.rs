//! [`SnapshotLoader`]: the sans-io state machine that turns a table's log into a reconciled
//! snapshot.
//!
//! The loader never does I/O. Its caller (the driver) repeats:
//!
//! 1. [`SnapshotLoader::poll`] → [`Step::Need`] with listing, file and byte range requests,
//!    or [`Step::Ready`] with the result;
//! 2. answers every request with [`SnapshotLoader::push_listing`] /
//!    [`SnapshotLoader::push_file`] / [`SnapshotLoader::push_range`] (in any order; a missing
//!    optional file is `None`, a missing required one is the driver's error to return);
//! 3. polls again.
//!
//! Discovery: `_last_checkpoint` is read first. A store that lists is then listed from the
//! hinted checkpoint on (or from the start when the hint is missing, corrupt, stale, or newer
//! than a requested version). A store that cannot list is probed (see `probe`); when the
//! caller says so up front ([`SnapshotLoader::without_listing`]), the first round asks for
//! `_last_checkpoint` together with the first [`SPECULATIVE_COMMITS`] commits, so a small
//! table without a checkpoint is found in that one round. Then the
//! segment's commits are fetched in one round, with the tail of each Parquet checkpoint file
//! of known size ([`LogRequest::GetRange`]; the footer, and all of a small file); one more
//! round fetches the column chunks the load needs that the tail did not hold (a footer
//! longer than the tail takes one more), v2 sidecars take the same rounds again, and the
//! segment is replayed. A checkpoint of unknown size (a probed log) or a JSON one is
//! fetched whole ([`LogRequest::Get`]), as every checkpoint is with [`CheckpointReads::Whole`].
//!
//! Scope: a loader made with [`LoadScope::ActiveFiles`] reconciles the active `add` actions;
//! with [`LoadScope::TableOnly`] it keeps only protocol and metadata (only the `protocol` and
//! `metaData` column chunks of a checkpoint are fetched, sidecars not at all).
//! [`SnapshotLoader::for_segment`] replays a segment found by an earlier load again, with no
//! discovery: this is how a lazily loaded table gets its files for each scan.
//!
//! Inside, the loader is a [`State`] and a [`Context`] (settings, requests out, answers in,
//! counters). Each state's handler is a method of the context that takes the state's data by
//! value and returns the next state ([`Transition`]); it cannot reach the loader's state, and
//! [`SnapshotLoader::poll`] is the one place that sets it. The handlers of discovery are in
//! `discover`, those of fetching and replaying the segment in `fetch`.

mod discover;
mod fetch;

use fetch::FileRead;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::mem;
use std::ops::Range;

use bytes::Bytes;

use super::actions::Action;
use super::checkpoint::{json_actions_scoped, CHECKPOINT_TAIL};
use super::last_checkpoint::LastCheckpointHint;
use super::path::LogPath;
use super::probe::CommitProbe;
use super::replay::Reconciled;
use super::segment::LogSegment;
use super::step::Step;
use super::timestamp::TimestampSearch;
use crate::error::{DeltaError, Result};

/// Which version of the table to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
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
#[non_exhaustive]
pub enum LoadScope {
    /// Protocol, metadata and the reconciled active files.
    #[default]
    ActiveFiles,
    /// Protocol and metadata only ([`Reconciled::files`] is empty).
    TableOnly,
}

/// A request from the loader to its driver.
///
/// Exhaustive on purpose (unlike most public enums here): a driver must answer every kind,
/// so a new kind of request is a compile error in drivers rather than a request left
/// unanswered at run time.
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
    /// Read bytes `range` of a file (which must exist); answer with
    /// [`SnapshotLoader::push_range`].
    GetRange {
        /// Path relative to the table root.
        path: String,
        /// The bytes wanted, inside the file.
        range: Range<u64>,
    },
}

/// How a loader reads the Parquet checkpoint files whose size it knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckpointReads {
    /// One whole-file request per file.
    Whole,
    /// The file's last `tail` bytes first (its footer, and all of a file no larger), then
    /// only the column chunks the load needs.
    Ranged {
        /// Bytes asked for from the end of the file first.
        tail: u64,
    },
}

impl Default for CheckpointReads {
    /// Ranged, with a tail of [`CHECKPOINT_TAIL`] bytes.
    fn default() -> Self {
        CheckpointReads::Ranged {
            tail: CHECKPOINT_TAIL,
        }
    }
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
    /// Bytes of log files received (whole files and ranges).
    pub bytes_read: u64,
    /// Rounds of requests the driver made.
    pub round_trips: u64,
    /// The log files replayed, to replay them again with [`SnapshotLoader::for_segment`].
    pub segment: LogSegment,
}

/// What the driver of a [`SnapshotLoader`] must do next: answer these requests, or take the
/// loaded snapshot.
pub type LoadStep = Step<LogRequest, Box<LoadedLog>>;

/// Where a load is. Each variant holds what its handler needs, by value.
#[derive(Debug)]
enum State {
    /// Nothing asked yet.
    Start,
    /// `_last_checkpoint` asked for.
    AwaitHint,
    /// The log listed (from the hinted checkpoint on when `partial`).
    AwaitListing {
        hint: Option<LastCheckpointHint>,
        partial: bool,
    },
    /// Commit files asked for by name (the store cannot list).
    Probing {
        hint: Option<LastCheckpointHint>,
        probe: CommitProbe,
    },
    /// Commit files read to find the version of a timestamp.
    Searching {
        search: Box<TimestampSearch>,
        listing: Option<Vec<LogPath>>,
        hint: Option<LastCheckpointHint>,
        asked: Vec<u64>,
    },
    /// A segment known beforehand (see [`SnapshotLoader::for_segment`]): nothing asked yet.
    Replay {
        segment: LogSegment,
        discovery: Discovery,
    },
    /// The segment's commit files asked for, its checkpoint files being read.
    FetchSegment {
        segment: LogSegment,
        discovery: Discovery,
        reads: Vec<FileRead>,
    },
    /// A v2 checkpoint's sidecars being read.
    FetchSidecars {
        segment: LogSegment,
        discovery: Discovery,
        checkpoint: Vec<Action>,
        reads: Vec<FileRead>,
    },
    /// The snapshot was handed out (or a step failed).
    Done,
}

/// What a state's handler returns.
#[derive(Debug)]
enum Transition {
    /// The next state (polled once its requests, if any, are answered).
    Next(State),
    /// The snapshot is complete.
    Ready(Box<LoadedLog>),
}

impl From<State> for Transition {
    fn from(state: State) -> Self {
        Transition::Next(state)
    }
}

/// Everything of a load but its state: settings, the requests out, the answers in and the
/// counters. The state handlers are its methods.
#[derive(Debug)]
struct Context {
    location: String,
    target: VersionTarget,
    scope: LoadScope,
    checkpoint_reads: CheckpointReads,
    /// The requests of the current step, in the order they were made; a `Get` answered is
    /// dropped from it at the next poll (see `pending_gets`).
    pending: Vec<LogRequest>,
    /// The paths of the `Get`s of `pending` not answered yet: a step can ask for 10,000
    /// commits, and finding each answer in `pending` would cost a scan of it.
    pending_gets: HashSet<String>,
    listing: Option<Option<Vec<LogPath>>>,
    files: HashMap<String, Option<Bytes>>,
    /// Optional files whose read failed (other than as missing; see
    /// [`push_failure`](SnapshotLoader::push_failure)), by path: the load fails with the
    /// first of them after the step, unless the step found that it did not need the file.
    failed: BTreeMap<String, DeltaError>,
    /// Byte ranges pushed and not yet handed to their file's read, by path.
    ranges: HashMap<String, Vec<(Range<u64>, Bytes)>>,
    /// Actions of commit files the caller decoded (see
    /// [`push_decoded_commit`](SnapshotLoader::push_decoded_commit)), by path.
    decoded: HashMap<String, Vec<Vec<Action>>>,
    files_read: u64,
    bytes_read: u64,
    round_trips: u64,
    /// A version `_last_checkpoint` vouches for although its checkpoint was not found:
    /// probing that ends below it would silently return a stale snapshot.
    stale_hint: Option<u64>,
    /// Whether the store may list (see [`SnapshotLoader::without_listing`]).
    lists: bool,
    /// Whether the listing starts at the log's first file whatever `_last_checkpoint` says
    /// (see [`SnapshotLoader::listing_whole_log`]).
    list_whole: bool,
    /// The most commits the load replays (see [`SnapshotLoader::with_max_commits`]).
    max_commits: u64,
}

/// Commits asked for with `_last_checkpoint` in the first round of a load that knows its
/// store cannot list (versions `0..5`): with `_last_checkpoint`, six requests, the
/// connections a browser opens to one host, so the round is one wave of requests.
pub const SPECULATIVE_COMMITS: u64 = 5;

/// The log replay state machine. See the module documentation for the calling protocol.
#[derive(Debug)]
pub struct SnapshotLoader {
    state: State,
    cx: Context,
}

impl SnapshotLoader {
    /// A loader for the table at `location`: its URL, used in messages and as the root that
    /// an absolute sidecar URI must lie under.
    pub fn new(location: impl Into<String>, target: VersionTarget) -> Self {
        SnapshotLoader {
            state: State::Start,
            cx: Context {
                location: location.into(),
                target,
                scope: LoadScope::ActiveFiles,
                checkpoint_reads: CheckpointReads::default(),
                pending: Vec::new(),
                pending_gets: HashSet::new(),
                listing: None,
                files: HashMap::new(),
                failed: BTreeMap::new(),
                ranges: HashMap::new(),
                decoded: HashMap::new(),
                files_read: 0,
                bytes_read: 0,
                round_trips: 0,
                stale_hint: None,
                lists: true,
                list_whole: false,
                max_commits: crate::limits::DEFAULT_MAX_COMMITS_PER_LOAD,
            },
        }
    }

    /// Sets what the load keeps (by default the active files).
    pub fn with_scope(mut self, scope: LoadScope) -> Self {
        self.cx.scope = scope;
        self
    }

    /// Tells the loader that the store cannot list (its listing would be `None`, see
    /// `RangeRead::can_list`): no listing is asked for, and the first round asks for
    /// `_last_checkpoint` and the first [`SPECULATIVE_COMMITS`] commits at once. Those
    /// commits are used when the probe starts at or below them and dropped otherwise.
    pub fn without_listing(mut self) -> Self {
        self.cx.lists = false;
        self
    }

    /// Lists the whole log, not only from the checkpoint `_last_checkpoint` names: for a
    /// store whose listing reads the whole folder anyway (local files), so that the loaded
    /// version's time is its commit file's time made to rise with every commit before it, the
    /// time a search by timestamp gives that version (from the checkpoint on only, times that
    /// tie or go back across the checkpoint would give another).
    pub fn listing_whole_log(mut self) -> Self {
        self.cx.list_whole = true;
        self
    }

    /// Refuses, with [`DeltaError::LimitExceeded`], a segment of more than `max` commits after
    /// its checkpoint (default [`DEFAULT_MAX_COMMITS_PER_LOAD`]), before they are asked for;
    /// probing stops at that many commits found.
    ///
    /// [`DEFAULT_MAX_COMMITS_PER_LOAD`]: crate::limits::DEFAULT_MAX_COMMITS_PER_LOAD
    pub fn with_max_commits(mut self, max: u64) -> Self {
        self.cx.max_commits = max;
        self
    }

    /// Sets how Parquet checkpoint files of known size are read (by default by ranges, see
    /// [`CheckpointReads`]).
    pub fn with_checkpoint_reads(mut self, reads: CheckpointReads) -> Self {
        self.cx.checkpoint_reads = reads;
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
        SnapshotLoader {
            state: State::Replay { segment, discovery },
            ..SnapshotLoader::new(location, target)
        }
    }

    /// Answers a [`LogRequest::List`] with the log files listed (see [`LogPath::listed`]; other
    /// files may be left out or not): `None` when the store cannot list.
    pub fn push_listing(&mut self, entries: Option<Vec<LogPath>>) -> Result<()> {
        let cx = &mut self.cx;
        let before = cx.pending.len();
        cx.pending.retain(|r| !matches!(r, LogRequest::List { .. }));
        if before == cx.pending.len() {
            return Err(DeltaError::InvalidArgument {
                reason: "a listing the loader did not ask for".into(),
            });
        }
        cx.listing = Some(entries);
        Ok(())
    }

    /// Answers a [`LogRequest::Get`]: `None` when an optional file does not exist.
    pub fn push_file(&mut self, path: &str, data: Option<Bytes>) -> Result<()> {
        let cx = &mut self.cx;
        if !cx.pending_gets.remove(path) {
            return Err(DeltaError::InvalidArgument {
                reason: format!("file {path} was pushed but the loader did not ask for it"),
            });
        }
        if let Some(data) = &data {
            cx.files_read += 1;
            cx.bytes_read += data.len() as u64;
        }
        cx.files.insert(path.to_string(), data);
        Ok(())
    }

    /// Answers a [`LogRequest::Get`] of an optional file whose read failed other than as
    /// missing (a `403` for commit 0 on a host that forbids what it does not have, a server
    /// error): the load fails with `error` after this step, unless the step finds that it
    /// does not need the file (a commit asked for speculatively, below the checkpoint
    /// `_last_checkpoint` names).
    pub fn push_failure(&mut self, path: &str, error: DeltaError) -> Result<()> {
        let cx = &mut self.cx;
        if !cx.pending_gets.remove(path) {
            return Err(DeltaError::InvalidArgument {
                reason: format!("file {path} failed but the loader did not ask for it"),
            });
        }
        cx.files.insert(path.to_string(), None);
        cx.failed.insert(path.to_string(), error);
        Ok(())
    }

    /// Answers a [`LogRequest::GetRange`] with exactly the bytes of `range`.
    pub fn push_range(&mut self, path: &str, range: Range<u64>, data: Bytes) -> Result<()> {
        let cx = &mut self.cx;
        let asked = cx.pending.iter().position(
            |r| matches!(r, LogRequest::GetRange { path: p, range: q } if p == path && *q == range),
        );
        let Some(at) = asked else {
            return Err(DeltaError::InvalidArgument {
                reason: format!(
                    "bytes {}..{} of {path} were pushed but the loader did not ask for them",
                    range.start, range.end
                ),
            });
        };
        if data.len() as u64 != range.end - range.start {
            return Err(DeltaError::InvalidArgument {
                reason: format!(
                    "bytes {}..{} of {path} were pushed as {} bytes",
                    range.start,
                    range.end,
                    data.len()
                ),
            });
        }
        cx.pending.remove(at);
        cx.bytes_read += data.len() as u64;
        cx.ranges
            .entry(path.to_string())
            .or_default()
            .push((range, data));
        Ok(())
    }

    /// Answers a [`LogRequest::Get`] of a commit file (`_delta_log/N.json`) with its bytes and
    /// its actions, decoded by the caller with [`decode_commit_actions`] in this load's
    /// [`scope`](Self::scope) (for example in parallel, while other files arrive), as runs
    /// of consecutive lines. The runs must hold the file's actions in file order: replay (and
    /// a search by timestamp) uses them instead of decoding the bytes, which are not kept.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // used by the native driver only
    pub fn push_decoded_commit(
        &mut self,
        path: &str,
        data: Bytes,
        runs: Vec<Vec<Action>>,
    ) -> Result<()> {
        self.push_file(path, Some(data))?;
        // The actions stand for the bytes from now on: a large log is not held twice.
        self.cx.files.insert(path.to_string(), Some(Bytes::new()));
        self.cx.decoded.insert(path.to_string(), runs);
        Ok(())
    }

    /// What this load keeps.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // used by the native driver only
    pub fn scope(&self) -> LoadScope {
        self.cx.scope
    }

    /// Advances as far as the answers allow.
    pub fn poll(&mut self) -> Result<LoadStep> {
        let Context {
            pending,
            pending_gets,
            ..
        } = &mut self.cx;
        pending.retain(|r| match r {
            LogRequest::Get { path, .. } => pending_gets.contains(path),
            _ => true,
        });
        loop {
            if !self.cx.pending.is_empty() {
                return Ok(Step::Need(self.cx.pending.clone()));
            }
            // A failed step leaves the loader done. A failed read the step needed is the
            // cause of whatever the step made of the file's absence.
            let state = mem::replace(&mut self.state, State::Done);
            let step = self.cx.transition(state);
            if let Some((_, failure)) = self.cx.failed.pop_first() {
                return Err(failure);
            }
            match step? {
                Transition::Next(next) => self.state = next,
                Transition::Ready(loaded) => return Ok(Step::Ready(loaded)),
            }
            if !self.cx.pending.is_empty() {
                self.cx.round_trips += 1;
            }
        }
    }
}

impl Context {
    /// Hands `state` to its handler: the one dispatch of the machine.
    fn transition(&mut self, state: State) -> Result<Transition> {
        Ok(match state {
            State::Start => self.on_start().into(),
            State::AwaitHint => self.on_hint()?.into(),
            State::AwaitListing { hint, partial } => self.on_listing(hint, partial)?.into(),
            State::Probing { hint, probe } => self.on_probe(hint, probe)?.into(),
            State::Searching {
                search,
                listing,
                hint,
                asked,
            } => self.on_search(search, listing, hint, asked)?.into(),
            State::Replay { segment, discovery } => self.fetch_segment(segment, discovery)?.into(),
            State::FetchSegment {
                segment,
                discovery,
                reads,
            } => self.on_segment(segment, discovery, reads)?,
            State::FetchSidecars {
                segment,
                discovery,
                checkpoint,
                reads,
            } => self.on_sidecars(segment, discovery, checkpoint, reads)?,
            State::Done => {
                return Err(DeltaError::InvalidArgument {
                    reason: "the loader was polled after it finished".into(),
                })
            }
        })
    }

    fn get(&mut self, path: String, optional: bool) {
        if !self.files.contains_key(&path) && self.pending_gets.insert(path.clone()) {
            self.pending.push(LogRequest::Get { path, optional });
        }
    }

    /// The bytes of a file pushed earlier (a cheap clone; the loader keeps them).
    fn file_bytes(&self, path: &str) -> Result<Bytes> {
        match self.files.get(path) {
            Some(Some(b)) => Ok(b.clone()),
            _ => Err(missing_file(path)),
        }
    }

    /// Like [`file_bytes`](Self::file_bytes), and forgets the file: for the last use of its
    /// bytes, so a long log is not held twice (as bytes and as actions).
    fn remove_file(&mut self, path: &str) -> Result<Bytes> {
        match self.files.remove(path) {
            Some(Some(b)) => Ok(b),
            _ => Err(missing_file(path)),
        }
    }

    /// The exact version asked for, if any.
    fn target_version(&self) -> Option<u64> {
        match self.target {
            VersionTarget::Version(v) => Some(v),
            _ => None,
        }
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

#[cfg(test)]
mod tests;
