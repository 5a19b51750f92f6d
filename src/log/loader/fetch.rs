//! The loader's last states: the segment's checkpoint and commit files fetched, a v2
//! checkpoint's sidecars fetched, and the replay into a [`LoadedLog`].
//!
//! A Parquet checkpoint file (a part, a v2 checkpoint's top-level file, a sidecar) whose size
//! is known is read by byte ranges ([`ParquetRead`]): its tail, then only the column chunks of
//! the actions the load keeps. Sizes come from the listing, and for sidecars from their
//! `sidecar` action. Without a size (a probed log: `_last_checkpoint` names the checkpoint but
//! gives no size per file, and probing fetched it whole to learn that it exists), or with
//! [`CheckpointReads::Whole`], a file is fetched whole; JSON files always are.

use std::collections::HashSet;

use bytes::Bytes;

use super::{
    CheckpointReads, Context, Discovery, LoadScope, LoadedLog, LogRequest, State, Transition,
};
use crate::error::{DeltaError, Result};
use crate::log::actions::Action;
use crate::log::checkpoint::{
    json_actions_each, json_actions_scoped, parquet_actions, ActionKinds, ParquetRead,
};
use crate::log::protocol::validate_reader_protocol;
use crate::log::replay::Replay;
use crate::log::segment::LogSegment;
use crate::log::sidecar_path;
use crate::log::step::Step;

/// The read of one checkpoint file.
#[derive(Debug)]
pub(super) enum FileRead {
    /// Fetched whole: decoded once its bytes are in.
    Whole { path: String, want: ActionKinds },
    /// Read by byte ranges.
    Ranged(ParquetRead),
    /// Its actions.
    Decoded(Vec<Action>),
}

/// Where the reads of a set of checkpoint files are.
enum Progress {
    /// Some still wait for bytes.
    Reading(Vec<FileRead>),
    /// Every file's actions, in the order of the files.
    Done(Vec<Action>),
}

impl Context {
    /// Asks for every file of `segment` (the checkpoint's first), then replays it.
    pub(super) fn fetch_segment(
        &mut self,
        segment: LogSegment,
        discovery: Discovery,
    ) -> Result<State> {
        crate::log::probe::within_max_commits(segment.commits.len() as u64, self.max_commits)?;
        let want = self.checkpoint_kinds();
        let reads = segment
            .checkpoint
            .iter()
            .map(|f| self.start_read(&f.path, f.size, want))
            .collect::<Result<Vec<_>>>()?;
        let commits: Vec<String> = segment.commits.iter().map(|c| c.path.clone()).collect();
        for path in commits {
            self.get(path, false);
        }
        Ok(State::FetchSegment {
            segment,
            discovery,
            reads,
        })
    }

    /// The kinds of action this load reads from a checkpoint's files.
    fn checkpoint_kinds(&self) -> ActionKinds {
        let table =
            ActionKinds::METADATA | ActionKinds::PROTOCOL | ActionKinds::CHECKPOINT_METADATA;
        match self.scope {
            LoadScope::ActiveFiles => table | ActionKinds::ADD | ActionKinds::SIDECAR,
            LoadScope::TableOnly => table,
        }
    }

    /// Starts the read of the checkpoint file `path` (`size` bytes, where known), asking for
    /// the file or for its first range.
    fn start_read(&mut self, path: &str, size: Option<u64>, want: ActionKinds) -> Result<FileRead> {
        let ranged = match (self.checkpoint_reads, size) {
            (CheckpointReads::Ranged { tail }, Some(size))
                if !path.ends_with(".json") && !self.files.contains_key(path) =>
            {
                Some(ParquetRead::new(path, size, want, tail))
            }
            _ => None,
        };
        match ranged {
            Some(read) => self.advance_ranged(read),
            None => {
                self.get(path.to_string(), false);
                Ok(FileRead::Whole {
                    path: path.to_string(),
                    want,
                })
            }
        }
    }

    /// Pushes the ranges of `read`'s file that came in and polls it: asks for what it needs
    /// next, or takes its actions.
    fn advance_ranged(&mut self, mut read: ParquetRead) -> Result<FileRead> {
        for (range, data) in self.ranges.remove(read.path()).unwrap_or_default() {
            read.push_range(range, data)?;
        }
        match read.poll()? {
            Step::Need(ranges) => {
                let path = read.path();
                self.pending
                    .extend(ranges.into_iter().map(|range| LogRequest::GetRange {
                        path: path.to_string(),
                        range,
                    }));
                Ok(FileRead::Ranged(read))
            }
            Step::Ready(actions) => {
                self.files_read += 1;
                Ok(FileRead::Decoded(actions))
            }
        }
    }

    /// Advances every read as far as the answers allow.
    fn advance(&mut self, reads: Vec<FileRead>) -> Result<Progress> {
        let mut next = Vec::with_capacity(reads.len());
        for read in reads {
            next.push(match read {
                FileRead::Whole { path, want } => {
                    let data = self.remove_file(&path)?;
                    FileRead::Decoded(decode_whole(&path, data, want)?)
                }
                FileRead::Ranged(read) => self.advance_ranged(read)?,
                decoded @ FileRead::Decoded(_) => decoded,
            });
        }
        if next.iter().any(|r| !matches!(r, FileRead::Decoded(_))) {
            return Ok(Progress::Reading(next));
        }
        let actions = next.into_iter().flat_map(|r| match r {
            FileRead::Decoded(actions) => actions,
            _ => Vec::new(),
        });
        Ok(Progress::Done(actions.collect()))
    }

    /// [`State::FetchSegment`]: reads the checkpoint; asks for its sidecars, or replays.
    pub(super) fn on_segment(
        &mut self,
        segment: LogSegment,
        discovery: Discovery,
        reads: Vec<FileRead>,
    ) -> Result<Transition> {
        let actions = match self.advance(reads)? {
            Progress::Reading(reads) => {
                return Ok(Transition::Next(State::FetchSegment {
                    segment,
                    discovery,
                    reads,
                }))
            }
            Progress::Done(actions) => actions,
        };
        let with_files = self.scope == LoadScope::ActiveFiles;
        let mut checkpoint = Vec::new();
        let mut sidecars = Vec::new();
        for action in actions {
            match action {
                Action::Sidecar(s) if with_files => sidecars.push(s),
                Action::Sidecar(_) => {}
                Action::Add(_) if !with_files => {}
                other => checkpoint.push(other),
            }
        }
        if sidecars.is_empty() {
            return self.finish(segment, discovery, checkpoint);
        }
        // A sidecar named twice holds its files once.
        let mut named = HashSet::new();
        sidecars.retain(|s| named.insert(s.path.clone()));
        // Removes in a checkpoint are vacuum tombstones: they never hide its adds.
        let root = url::Url::parse(&self.location).ok();
        let reads = sidecars
            .iter()
            .map(|s| {
                let size = u64::try_from(s.size_in_bytes).ok().filter(|&n| n > 0);
                self.start_read(
                    &sidecar_path(root.as_ref(), &s.path)?,
                    size,
                    ActionKinds::ADD,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Transition::Next(State::FetchSidecars {
            segment,
            discovery,
            checkpoint,
            reads,
        }))
    }

    /// [`State::FetchSidecars`]: reads the sidecars' `add` actions and replays.
    pub(super) fn on_sidecars(
        &mut self,
        segment: LogSegment,
        discovery: Discovery,
        mut checkpoint: Vec<Action>,
        reads: Vec<FileRead>,
    ) -> Result<Transition> {
        match self.advance(reads)? {
            Progress::Reading(reads) => Ok(Transition::Next(State::FetchSidecars {
                segment,
                discovery,
                checkpoint,
                reads,
            })),
            Progress::Done(adds) => {
                checkpoint.extend(adds);
                self.finish(segment, discovery, checkpoint)
            }
        }
    }

    /// Replays the commits (newest first) over the checkpoint's actions.
    fn finish(
        &mut self,
        segment: LogSegment,
        discovery: Discovery,
        checkpoint: Vec<Action>,
    ) -> Result<Transition> {
        let mut replay = Replay::new();
        let with_files = self.scope == LoadScope::ActiveFiles;
        for commit in segment.commits.iter().rev() {
            let data = self.remove_file(&commit.path)?;
            replay.begin_commit();
            match self.decoded.remove(&commit.path) {
                Some(runs) => {
                    drop(data);
                    replay.reserve_commit(runs.iter().map(Vec::len).sum());
                    for run in runs {
                        run.into_iter().for_each(|a| replay.push_commit_action(a));
                    }
                }
                // A writer's commit holds at least its commitInfo; an empty file is one cut
                // short, or a server's answer for a file it does not have.
                None if data.iter().all(u8::is_ascii_whitespace) => {
                    return Err(DeltaError::invalid_log(
                        commit.path.as_str(),
                        "the commit file is empty (a commit holds at least one action)",
                    ))
                }
                None => json_actions_each(&commit.path, &data, with_files, |a| {
                    replay.push_commit_action(a)
                })?,
            }
            replay.end_commit(&commit.path)?;
        }
        // The version's own commit (the newest) was read: its listed time made to rise with
        // the versions before it, as time travel by timestamp takes it.
        let timestamp_ms = segment
            .commits
            .last()
            .and_then(|c| segment.version_file_time_ms.or(c.last_modified_ms));
        replay.push_checkpoint(checkpoint);
        let reconciled = replay.finish(segment.version)?;
        validate_reader_protocol(&reconciled.protocol)?;
        let info = reconciled.latest_commit_info.as_ref();
        // At a checkpoint's version no commit is read: its file's time, unless the table's
        // times are in-commit timestamps (inside the commit).
        let in_commit = reconciled
            .metadata
            .configuration
            .get("delta.enableInCommitTimestamps")
            .is_some_and(|v| v == "true");
        let listed = segment.version_file_time_ms.filter(|_| !in_commit);
        let timestamp_ms = info
            .and_then(|i| i.in_commit_timestamp)
            .or(timestamp_ms)
            .or(info.and_then(|i| i.timestamp))
            .or(listed);
        Ok(Transition::Ready(Box::new(LoadedLog {
            checkpoint_version: segment.checkpoint_version,
            reconciled,
            timestamp_ms,
            discovery,
            files_read: self.files_read,
            bytes_read: self.bytes_read,
            round_trips: self.round_trips,
            segment,
        })))
    }
}

/// Decodes a checkpoint file fetched whole: the actions of the kinds in `want` (of a JSON
/// file: every action, `add` and `remove` only when `want` has `add`).
fn decode_whole(path: &str, data: Bytes, want: ActionKinds) -> Result<Vec<Action>> {
    if path.ends_with(".json") {
        json_actions_scoped(path, &data, want.contains(ActionKinds::ADD))
    } else {
        parquet_actions(path, data, want)
    }
}
