//! The Change Data Feed, pure: which files of one commit carry its changed rows, and as what
//! (PROTOCOL.md, "Add CDC File" and "Change Data Files"); and the rules a range of commits
//! must keep to be read as a change feed ([`ChangeFeedRules`]).
//!
//! A commit that has `cdc` actions recorded its changes in those files, whose rows carry
//! their own `_change_type` (`insert`, `delete`, `update_preimage`, `update_postimage`); its
//! `add` and `remove` actions are then ignored. A commit without any derives its changes
//! from the `add` and `remove` actions that change data (`dataChange`): an `add`'s rows are
//! inserted, a `remove`'s deleted, each less the rows its deletion vector had deleted
//! already. An `add` and a `remove` of the same path in one commit are one file whose
//! deletion vector changed: the rows the new vector deletes and the old did not are deleted,
//! those the old deleted and the new does not are inserted (restored).
//!
//! Every commit of the range must leave the feed enabled (`delta.enableChangeDataFeed`) and
//! the schema as the range's end has it, and its protocol readable. A commit's time
//! (`_commit_timestamp`) is its in-commit timestamp when the table writes them, else the
//! time the caller gives for its file (see [`ChangeFeedRules::commit_timestamp`]).

use serde::Deserialize;

use super::actions::{CommitInfo, DeletionVectorDescriptor, Metadata, Protocol};
use super::partition_values::PartitionValues;
use super::path::commit_path;
use super::protocol::validate_reader_protocol;
use crate::error::{DeltaError, Result};
use crate::schema::{parse_schema, StructType};

/// The column of a change's kind: `insert`, `delete`, `update_preimage`, `update_postimage`.
pub const CHANGE_TYPE_COLUMN: &str = "_change_type";
/// The column of the version of the commit that made a change.
pub const COMMIT_VERSION_COLUMN: &str = "_commit_version";
/// The column of the time of the commit that made a change.
pub const COMMIT_TIMESTAMP_COLUMN: &str = "_commit_timestamp";
/// The table property that turns the change data feed on.
pub const ENABLE_CHANGE_DATA_FEED: &str = "delta.enableChangeDataFeed";
/// The table property that makes writers record in-commit timestamps.
pub const ENABLE_IN_COMMIT_TIMESTAMPS: &str = "delta.enableInCommitTimestamps";

/// The `_change_type` of rows derived from `add` and `remove` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeType {
    /// `insert`
    Insert,
    /// `delete`
    Delete,
}

impl ChangeType {
    /// As `_change_type` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Insert => "insert",
            ChangeType::Delete => "delete",
        }
    }
}

/// Which rows of a file are changes, and of what type.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChangedRows {
    /// A change data (`cdc`) file: every row, with the `_change_type` the file holds.
    ChangeData,
    /// An `add` (inserted) or a `remove` (deleted): the rows its deletion vector, if any,
    /// had not deleted.
    Whole {
        /// `insert` for an `add`, `delete` for a `remove`.
        change: ChangeType,
        /// The action's deletion vector.
        deletion_vector: Option<DeletionVectorDescriptor>,
    },
    /// A file removed and added again in one commit with another deletion vector: the rows
    /// whose deletion the commit changed, in one direction.
    DeletionVectorChanged {
        /// `delete`: rows `after` deletes and `before` did not; `insert`: rows `before`
        /// deleted and `after` does not.
        change: ChangeType,
        /// The `remove`'s deletion vector (none: no row was deleted).
        before: Option<DeletionVectorDescriptor>,
        /// The `add`'s deletion vector (none: no row is deleted).
        after: Option<DeletionVectorDescriptor>,
    },
}

/// One file of a commit's changes.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeFile {
    /// The path as the log gives it (percent-encoded, or an absolute URI).
    pub path: String,
    /// The file's size in bytes, when the action gives it (a `remove` may not).
    pub size: Option<u64>,
    /// The file's partition values (physical names); `None` when a `remove` gives none.
    pub partition_values: Option<PartitionValues>,
    /// Which of its rows are changes.
    pub rows: ChangedRows,
}

/// What one commit changed, with what the feed's rules need of it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitChanges {
    /// The commit's version.
    pub version: u64,
    /// Its files of changed rows, in the commit's order.
    pub files: Vec<ChangeFile>,
    /// Its `protocol` action, if any.
    pub protocol: Option<Protocol>,
    /// Its `metaData` action, if any.
    pub metadata: Option<Metadata>,
    /// Its `commitInfo.inCommitTimestamp`, ms since the epoch.
    pub in_commit_timestamp: Option<i64>,
    /// Its `commitInfo.timestamp`, ms since the epoch.
    pub info_timestamp: Option<i64>,
    /// The latest time its file actions give (`remove.deletionTimestamp`,
    /// `add.modificationTime`), ms since the epoch: a commit's time when nothing else says it.
    pub action_time: Option<i64>,
}

/// An `add`, `remove` or `cdc` action, with only the fields the feed reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileAction {
    path: String,
    #[serde(default)]
    partition_values: Option<PartitionValues>,
    #[serde(default)]
    size: Option<i64>,
    #[serde(default)]
    data_change: Option<bool>,
    #[serde(default)]
    deletion_vector: Option<DeletionVectorDescriptor>,
    /// An `add`'s `modificationTime`.
    #[serde(default)]
    modification_time: Option<i64>,
    /// A `remove`'s `deletionTimestamp`.
    #[serde(default)]
    deletion_timestamp: Option<i64>,
}

/// One line of a commit file, as the feed reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChangeLine {
    add: Option<FileAction>,
    remove: Option<FileAction>,
    cdc: Option<FileAction>,
    meta_data: Option<Metadata>,
    protocol: Option<Protocol>,
    commit_info: Option<CommitInfo>,
}

/// The changes of the commit file of `version`, whose bytes are `commit`.
pub fn commit_changes(version: u64, commit: &[u8]) -> Result<CommitChanges> {
    let path = commit_path(version);
    let invalid = |line: usize, reason: String| DeltaError::InvalidLog {
        path: path.clone(),
        reason: format!("line {line}: {reason}"),
    };
    let mut out = CommitChanges {
        version,
        files: Vec::new(),
        protocol: None,
        metadata: None,
        in_commit_timestamp: None,
        info_timestamp: None,
        action_time: None,
    };
    let mut adds = Vec::new();
    let mut removes = Vec::new();
    let mut cdcs = Vec::new();
    for (i, line) in commit.split(|&b| b == b'\n').enumerate() {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let parsed: ChangeLine =
            serde_json::from_slice(line).map_err(|e| invalid(i + 1, e.to_string()))?;
        if let Some(p) = parsed.protocol {
            out.protocol = Some(p);
        }
        if let Some(m) = parsed.meta_data {
            out.metadata = Some(m);
        }
        if let Some(info) = parsed.commit_info {
            out.in_commit_timestamp = out.in_commit_timestamp.or(info.in_commit_timestamp);
            out.info_timestamp = out.info_timestamp.or(info.timestamp);
        }
        for (action, kind, list) in [
            (parsed.add, "add", &mut adds),
            (parsed.remove, "remove", &mut removes),
        ] {
            if let Some(a) = action {
                let time = a.deletion_timestamp.or(a.modification_time);
                out.action_time = out.action_time.max(time);
                match a.data_change {
                    Some(true) => list.push(checked(a, i + 1, &invalid)?),
                    Some(false) => {}
                    None => {
                        return Err(invalid(i + 1, format!("the {kind} has no dataChange")));
                    }
                }
            }
        }
        if let Some(c) = parsed.cdc {
            cdcs.push(checked(c, i + 1, &invalid)?);
        }
    }
    out.files = if cdcs.is_empty() {
        from_adds_and_removes(adds, removes)
    } else {
        cdcs.into_iter()
            .map(|c| file(c, ChangedRows::ChangeData))
            .collect()
    };
    Ok(out)
}

/// `action` with its size checked (not negative).
fn checked(
    action: FileAction,
    line: usize,
    invalid: &impl Fn(usize, String) -> DeltaError,
) -> Result<FileAction> {
    if let Some(size) = action.size.filter(|&s| s < 0) {
        return Err(invalid(line, format!("a file's size is negative: {size}")));
    }
    Ok(action)
}

fn file(action: FileAction, rows: ChangedRows) -> ChangeFile {
    ChangeFile {
        path: action.path,
        size: action.size.and_then(|s| u64::try_from(s).ok()),
        partition_values: action.partition_values,
        rows,
    }
}

/// The changed files of a commit without `cdc` actions: removes, then adds, each in the
/// commit's order; an `add` of a path a `remove` also names is the pair's two directions.
fn from_adds_and_removes(adds: Vec<FileAction>, removes: Vec<FileAction>) -> Vec<ChangeFile> {
    let added: std::collections::HashSet<&str> = adds.iter().map(|a| a.path.as_str()).collect();
    let mut before = std::collections::HashMap::new();
    let mut files = Vec::with_capacity(adds.len() + removes.len());
    for r in removes {
        if added.contains(r.path.as_str()) {
            before.insert(r.path.clone(), r.deletion_vector);
            continue;
        }
        let deletion_vector = r.deletion_vector.clone();
        files.push(file(
            r,
            ChangedRows::Whole {
                change: ChangeType::Delete,
                deletion_vector,
            },
        ));
    }
    for a in adds {
        let after = a.deletion_vector.clone();
        match before.get(&a.path) {
            Some(before) => {
                for change in [ChangeType::Delete, ChangeType::Insert] {
                    let rows = ChangedRows::DeletionVectorChanged {
                        change,
                        before: before.clone(),
                        after: after.clone(),
                    };
                    files.push(ChangeFile {
                        path: a.path.clone(),
                        size: a.size.and_then(|s| u64::try_from(s).ok()),
                        partition_values: a.partition_values.clone(),
                        rows,
                    });
                }
            }
            None => files.push(file(
                a,
                ChangedRows::Whole {
                    change: ChangeType::Insert,
                    deletion_vector: after,
                },
            )),
        }
    }
    files
}

/// Whether `metadata` turns the change data feed on.
pub fn change_data_feed_enabled(metadata: &Metadata) -> bool {
    property_true(metadata, ENABLE_CHANGE_DATA_FEED)
}

fn property_true(metadata: &Metadata, key: &str) -> bool {
    metadata
        .configuration
        .get(key)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The rules a range of commits keeps to be read as a change feed, checked commit by
/// commit in version order; they hold the protocol and metadata in force.
#[derive(Debug, Clone)]
pub struct ChangeFeedRules {
    /// The schema every commit of the range must keep: the range end's.
    schema: StructType,
    /// The protocol in force.
    protocol: Protocol,
    /// The metadata in force.
    metadata: Metadata,
}

impl ChangeFeedRules {
    /// The rules of a range that starts at `start`, whose snapshot has `protocol` and
    /// `metadata`, and ends where the schema is `end_schema`: the feed must be enabled at the
    /// start, and the start's schema be the end's.
    pub fn new(
        start: u64,
        protocol: &Protocol,
        metadata: &Metadata,
        end_schema: &StructType,
    ) -> Result<Self> {
        validate_reader_protocol(protocol)?;
        let rules = ChangeFeedRules {
            schema: end_schema.clone(),
            protocol: protocol.clone(),
            metadata: metadata.clone(),
        };
        rules.check_metadata(start, metadata)?;
        Ok(rules)
    }

    fn check_metadata(&self, version: u64, metadata: &Metadata) -> Result<()> {
        if !change_data_feed_enabled(metadata) {
            return Err(DeltaError::ChangeDataFeedUnavailable {
                version,
                reason: format!("the change data feed is not enabled ({ENABLE_CHANGE_DATA_FEED})"),
            });
        }
        if parse_schema(&metadata.schema_string)? != self.schema {
            return Err(DeltaError::ChangeDataFeedUnavailable {
                version,
                reason: "the table's schema there differs from the schema at the end of the \
                         range; read the changes before and after the schema change apart"
                    .into(),
            });
        }
        Ok(())
    }

    /// Checks `commit` (the next of the range) and takes its protocol and metadata into force.
    pub fn apply(&mut self, commit: &CommitChanges) -> Result<()> {
        if let Some(p) = &commit.protocol {
            validate_reader_protocol(p)?;
            self.protocol = p.clone();
        }
        if let Some(m) = &commit.metadata {
            self.check_metadata(commit.version, m)?;
            self.metadata = m.clone();
        }
        Ok(())
    }

    /// The time of `commit` (applied already), ms since the epoch: its in-commit timestamp
    /// when the table records them (the protocol has the writer feature `inCommitTimestamp`
    /// and the metadata turns it on), else `file_time_ms` (the commit file's time),
    /// else its `commitInfo.timestamp`, else the latest time its file actions give.
    pub fn commit_timestamp(
        &self,
        commit: &CommitChanges,
        file_time_ms: Option<i64>,
    ) -> Result<i64> {
        if self.protocol.has_writer_feature("inCommitTimestamp")
            && property_true(&self.metadata, ENABLE_IN_COMMIT_TIMESTAMPS)
        {
            return commit.in_commit_timestamp.ok_or_else(|| {
                DeltaError::invalid_log(
                    commit_path(commit.version),
                    "in-commit timestamps are enabled, but the commit has no \
                     commitInfo.inCommitTimestamp",
                )
            });
        }
        file_time_ms
            .or(commit.info_timestamp)
            .or(commit.action_time)
            .ok_or_else(|| {
                DeltaError::invalid_log(
                    commit_path(commit.version),
                    "the commit's time is unknown: the store gives no modification time, and \
                     the commit has no commitInfo.timestamp and no time in its actions",
                )
            })
    }
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
