//! The loader's last states: the segment's checkpoint and commit files fetched, a v2
//! checkpoint's sidecars fetched, and the replay into a [`LoadedLog`].

use std::collections::HashSet;

use bytes::Bytes;

use super::{Context, Discovery, LoadScope, LoadedLog, State, Transition};
use crate::error::Result;
use crate::log::actions::Action;
use crate::log::checkpoint::{
    json_actions_each, json_actions_scoped, parquet_actions, ActionKinds,
};
use crate::log::path::{sidecar_path, LogPath};
use crate::log::protocol::validate_reader_protocol;
use crate::log::replay::Replay;
use crate::log::segment::LogSegment;

impl Context {
    /// Asks for every file of `segment`, then replays it.
    pub(super) fn fetch_segment(&mut self, segment: LogSegment, discovery: Discovery) -> State {
        let paths: Vec<String> = segment.files().map(|f| f.path.clone()).collect();
        for p in paths {
            self.get(p, false);
        }
        State::FetchSegment { segment, discovery }
    }

    /// [`State::FetchSegment`]: decodes the checkpoint; asks for its sidecars, or replays.
    pub(super) fn on_segment(
        &mut self,
        segment: LogSegment,
        discovery: Discovery,
    ) -> Result<Transition> {
        let mut checkpoint = Vec::new();
        let mut sidecars = Vec::new();
        let with_files = self.scope == LoadScope::ActiveFiles;
        for file in &segment.checkpoint {
            let data = self.remove_file(&file.path)?;
            for action in decode_checkpoint(file, data, with_files)? {
                match action {
                    Action::Sidecar(s) if with_files => sidecars.push(sidecar_path(&s.path)),
                    Action::Sidecar(_) => {}
                    Action::Add(_) if !with_files => {}
                    other => checkpoint.push(other),
                }
            }
        }
        if sidecars.is_empty() {
            return self.finish(segment, discovery, checkpoint);
        }
        // A sidecar named twice holds its files once.
        let mut named = HashSet::new();
        sidecars.retain(|s| named.insert(s.clone()));
        for s in &sidecars {
            self.get(s.clone(), false);
        }
        Ok(Transition::Next(State::FetchSidecars {
            segment,
            discovery,
            checkpoint,
            sidecars,
        }))
    }

    /// [`State::FetchSidecars`]: decodes the sidecars' `add` actions and replays.
    pub(super) fn on_sidecars(
        &mut self,
        segment: LogSegment,
        discovery: Discovery,
        mut checkpoint: Vec<Action>,
        sidecars: Vec<String>,
    ) -> Result<Transition> {
        // Removes in a checkpoint are vacuum tombstones: they never hide its adds.
        let kinds = ActionKinds::ADD;
        for path in &sidecars {
            let data = self.remove_file(path)?;
            checkpoint.extend(parquet_actions(path, data, kinds)?);
        }
        self.finish(segment, discovery, checkpoint)
    }

    /// Replays the commits (newest first) over the checkpoint's actions.
    fn finish(
        &mut self,
        segment: LogSegment,
        discovery: Discovery,
        checkpoint: Vec<Action>,
    ) -> Result<Transition> {
        let mut replay = Replay::new();
        let mut timestamp_ms = None;
        let with_files = self.scope == LoadScope::ActiveFiles;
        for (i, commit) in segment.commits.iter().rev().enumerate() {
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
        Ok(Transition::Ready(Box::new(LoadedLog {
            checkpoint_version: segment.checkpoint_version,
            reconciled,
            timestamp_ms,
            discovery,
            files_read: self.files_read,
            round_trips: self.round_trips,
            segment,
        })))
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
