//! [`DeltaTable::changes`]: the table's Change Data Feed, the rows each commit of a range of
//! versions inserted, deleted or updated, with the commit's version and time
//! (`_change_type`, `_commit_version`, `_commit_timestamp` after the table's columns).
//!
//! The snapshot is the range's end; the start is a version at or before it. Building
//! ([`TableChangesBuilder::build`]) reads the start's protocol and metadata and every commit
//! of the range (a bounded number at a time, in version order) and checks the range by the
//! feed's rules (`log::changes`) before any row is read: a range the feed cannot describe
//! fails whole rather than returning part of its changes. The files are then read in commit
//! order (natively on every core, handed out in that order; see `read::scheduler`'s
//! `OrderedMerge`), each commit's rows before the next one's.
//!
//! A commit's time is its in-commit timestamp when the table records them, else its commit
//! file's modification time as the store lists it, as delta_kernel gives it, else (stores
//! that cannot list) its `commitInfo.timestamp`, else (a commit without one) the latest
//! time its `remove` and `add` actions give.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use futures::StreamExt;

use super::batch_stream::DeltaBatchStream;
use super::load::{load_log, log_files};
use super::DeltaTable;
use crate::error::{DeltaError, Result};
use crate::io::{BoxStream, BoxedStream};
use crate::log::path::commit_path;
use crate::log::{commit_changes, ChangeFeedRules, LoadScope, LogFileKind, VersionTarget};
use crate::plan::{
    change_feed_schema, plan_change_columns, plan_change_task, ChangeColumns, FileTask, TableFacts,
};
use crate::read::metrics::DeltaScanMetrics;
use crate::read::scheduler::{OrderedMerge, Tagged};
use crate::read::{ReadContext, ReadSpec};
use crate::schema::OutputTypes;

/// Batches of each file a partition of a change feed read holds ahead of its turn.
const BATCHES_AHEAD: usize = 4;

/// Where a change feed starts.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// At this version.
    Version(u64),
    /// At the first version committed at or after this instant (ms since the epoch).
    Timestamp(i64),
}

/// Configures a change data feed read of a table (see [`DeltaTable::changes`]).
#[derive(Debug, Clone)]
pub struct TableChangesBuilder {
    table: DeltaTable,
    start: Start,
    projection: Option<Vec<String>>,
    limit: Option<usize>,
    batch_size: usize,
    output_types: OutputTypes,
}

impl DeltaTable {
    /// Starts configuring a read of the changes the commits from `start_version` to this
    /// snapshot's version (both included) made: the table's change data feed, which the
    /// table must have enabled (`delta.enableChangeDataFeed`) over the whole range.
    pub fn changes(&self, start_version: u64) -> TableChangesBuilder {
        self.changes_from(Start::Version(start_version))
    }

    /// Like [`changes`](Self::changes), from the first version committed at or after
    /// `timestamp` (a commit's time as time travel takes it: see
    /// [`DeltaTableBuilder::with_timestamp`](crate::DeltaTableBuilder::with_timestamp)).
    /// A time after this snapshot's commit gives no changes (the range is empty:
    /// [`TableChanges::start_version`] is one past the end); a time before the table's first
    /// commit starts at version 0.
    pub fn changes_since(&self, timestamp: chrono::DateTime<chrono::Utc>) -> TableChangesBuilder {
        self.changes_from(Start::Timestamp(timestamp.timestamp_millis()))
    }

    fn changes_from(&self, start: Start) -> TableChangesBuilder {
        TableChangesBuilder {
            table: self.clone(),
            start,
            projection: None,
            limit: None,
            batch_size: super::DEFAULT_BATCH_SIZE,
            output_types: OutputTypes::scan_default(),
        }
    }
}

impl TableChangesBuilder {
    /// Output only these columns (the table's and `_change_type`, `_commit_version`,
    /// `_commit_timestamp`), in this order.
    pub fn with_projection<S: Into<String>>(
        mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.projection = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Stop after `n` rows (the first in commit order); the files after are not read.
    pub fn with_limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Rows per output batch (at most).
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n;
        self
    }

    /// The Arrow types strings and binaries come out as (see [`OutputTypes`]).
    pub fn with_output_types(mut self, types: OutputTypes) -> Self {
        self.output_types = types;
        self
    }

    /// Reads and checks the range's commits and plans the read of their changed files.
    pub async fn build(self) -> Result<TableChanges> {
        if self.batch_size == 0 {
            return Err(DeltaError::InvalidArgument {
                reason: "the batch size must be at least 1".into(),
            });
        }
        let table = &self.table;
        let end = table.version();
        let start = match self.start {
            Start::Version(v) => v,
            Start::Timestamp(ms) => first_version_since(table, ms).await?,
        };
        if start > end && matches!(self.start, Start::Version(_)) {
            return Err(DeltaError::InvalidArgument {
                reason: format!(
                    "the changes start at version {start}, after the snapshot's version {end} \
                     (the range's end)"
                ),
            });
        }
        let mode = table.column_mapping_mode();
        let schema = change_feed_schema(table.delta_schema(), mode)?;
        let facts = TableFacts {
            root: table.location().url(),
            schema: &schema,
            partition_columns: table.partition_columns(),
            mode,
        };
        let columns = plan_change_columns(facts, self.projection.clone(), self.output_types)?;
        let metrics = Arc::new(DeltaScanMetrics::new(table.io_counters()));
        metrics.start_io();
        if start > end {
            // Nothing was committed since the time asked for.
            return Ok(TableChanges {
                table: self.table.clone(),
                start,
                columns,
                files: Vec::new(),
                limit: self.limit,
                batch_size: self.batch_size,
                output_types: self.output_types,
                metrics,
            });
        }
        let mut rules = start_rules(table, start).await?;
        let times = commit_file_times(table, start).await?;
        let store = table.store().clone();
        let mut commits = futures::stream::iter(start..=end)
            .map(|version| {
                let store = store.clone();
                async move { (version, store.get(&commit_path(version)).await) }
            })
            .buffered(table.log_concurrency.max(1));
        let mut files = Vec::new();
        while let Some((version, read)) = commits.next().await {
            let bytes = read.map_err(|e| match e {
                DeltaError::NotFound { .. } => DeltaError::VersionNotFound {
                    requested: version,
                    reason: "its commit file is gone (log cleanup removes commits older than \
                             the log retention once a checkpoint follows them)"
                        .into(),
                },
                e => e,
            })?;
            let commit = commit_changes(version, &bytes)?;
            rules.apply(&commit)?;
            if commit.files.is_empty() {
                continue;
            }
            let timestamp_ms = rules.commit_timestamp(&commit, times.get(&version).copied())?;
            for file in &commit.files {
                let size = match file.size {
                    Some(size) => size,
                    None => file_size(table, &file.path).await?,
                };
                let (task, change_data) =
                    plan_change_task(facts, file, size, version, timestamp_ms)?;
                files.push(TableChangeFile {
                    version,
                    timestamp_ms,
                    change_data,
                    task,
                });
            }
        }
        Ok(TableChanges {
            table: self.table.clone(),
            start,
            columns,
            files,
            limit: self.limit,
            batch_size: self.batch_size,
            output_types: self.output_types,
            metrics,
        })
    }
}

/// The protocol and metadata of `table`'s snapshot at `target` (its active files not kept).
async fn table_only(table: &DeltaTable, target: VersionTarget) -> Result<crate::log::LoadedLog> {
    load_log(
        table.store().as_ref(),
        &table.location().to_string(),
        target,
        LoadScope::TableOnly,
        table.log_concurrency,
        u64::MAX,
    )
    .await
}

/// The first version committed at or after `ms` (ms since the epoch), as time travel finds
/// commits by time; one past `table`'s version when none up to it was.
async fn first_version_since(table: &DeltaTable, ms: i64) -> Result<u64> {
    let end = table.version();
    match table_only(table, VersionTarget::Timestamp(ms)).await {
        // The newest version committed at or before `ms`: the start itself when committed
        // at `ms` exactly, else the version after it.
        Ok(log) => {
            let at = log.reconciled.version;
            let start = if log.timestamp_ms == Some(ms) {
                at
            } else {
                at.saturating_add(1)
            };
            Ok(start.min(end.saturating_add(1)))
        }
        // Before the first commit.
        Err(DeltaError::TimestampNotFound { .. }) => Ok(0),
        Err(e) => Err(e),
    }
}

/// The rules of the range from the snapshot at `start`: its protocol and metadata.
async fn start_rules(table: &DeltaTable, start: u64) -> Result<ChangeFeedRules> {
    let end_schema = table.delta_schema();
    if start == table.version() {
        return ChangeFeedRules::new(start, table.protocol(), table.metadata(), end_schema);
    }
    let loaded = table_only(table, VersionTarget::Version(start)).await?;
    let r = &loaded.reconciled;
    ChangeFeedRules::new(start, &r.protocol, &r.metadata, end_schema)
}

/// The modification times of the commit files from `start` on, by version, as the store
/// lists them (none from a store that cannot list).
async fn commit_file_times(table: &DeltaTable, start: u64) -> Result<HashMap<u64, i64>> {
    // Sorts before `N.json` of version `start`, after every file of earlier versions.
    let after = format!("_delta_log/{start:020}");
    let listed = table.store().list("_delta_log/", Some(&after)).await?;
    Ok(log_files(listed.as_deref().unwrap_or_default())
        .into_iter()
        .filter(|p| p.kind == LogFileKind::Commit)
        .filter_map(|p| Some((p.version, p.last_modified_ms?)))
        .collect())
}

/// The size of a data file a `remove` names without giving it.
async fn file_size(table: &DeltaTable, path: &str) -> Result<u64> {
    let resolved =
        crate::log::data_file_path(table.location().url(), path, crate::error::Phase::Plan)?;
    table
        .store()
        .size(&resolved)
        .await?
        .ok_or_else(|| DeltaError::NotFound {
            path: crate::error::redact(&resolved),
            phase: crate::error::Phase::Plan,
        })
}

/// One file of a change feed read.
#[derive(Debug, Clone)]
pub struct TableChangeFile {
    /// The version of the commit whose change it holds.
    pub version: u64,
    /// The commit's time, ms since the epoch.
    pub timestamp_ms: i64,
    /// Whether it is a change data (`cdc`) file (else an `add` or `remove` of the commit).
    pub change_data: bool,
    /// Its read.
    pub task: FileTask,
}

/// A planned change data feed read: the changed files of a range of commits.
#[derive(Debug, Clone)]
pub struct TableChanges {
    table: DeltaTable,
    start: u64,
    columns: ChangeColumns,
    files: Vec<TableChangeFile>,
    limit: Option<usize>,
    batch_size: usize,
    output_types: OutputTypes,
    metrics: Arc<DeltaScanMetrics>,
}

impl TableChanges {
    /// The output schema: the table's columns (or the projection), `_change_type`,
    /// `_commit_version`, `_commit_timestamp`.
    pub fn schema(&self) -> SchemaRef {
        self.columns.output_schema()
    }

    /// The first version of the range (one past [`end_version`](Self::end_version) when a
    /// start by time found no commit since).
    pub fn start_version(&self) -> u64 {
        self.start
    }

    /// The last version of the range (the snapshot's).
    pub fn end_version(&self) -> u64 {
        self.table.version()
    }

    /// The files the read reads, in commit order.
    pub fn files(&self) -> &[TableChangeFile] {
        &self.files
    }

    /// Starts reading: the changed rows, commit by commit in version order.
    pub fn into_stream(self) -> DeltaBatchStream {
        let schema = self.schema();
        let table = &self.table;
        let context = |columns: &crate::plan::ScanColumns| ReadContext {
            store: Arc::clone(table.store()),
            location: table.location().clone(),
            spec: Arc::new(ReadSpec {
                columns: columns.clone(),
                mode: table.column_mapping_mode(),
                batch_size: self.batch_size,
                predicate: None,
                pushdown: false,
                output_types: self.output_types,
                max_page_bytes: crate::limits::DEFAULT_MAX_PAGE_BYTES,
                read_ahead_bytes: 0,
            }),
            row_groups_pruned: Arc::clone(&self.metrics.row_groups_pruned),
        };
        let derived = context(&self.columns.derived);
        let change_data = context(&self.columns.change_data);
        let count = partition_count(self.files.len());
        let mut parts: Vec<Vec<(usize, ReadContext, FileTask)>> = vec![Vec::new(); count];
        let mut owner = Vec::with_capacity(self.files.len());
        for (i, f) in self.files.into_iter().enumerate() {
            let ctx = if f.change_data {
                change_data.clone()
            } else {
                derived.clone()
            };
            let p = i % count;
            owner.push(p);
            if let Some(part) = parts.get_mut(p) {
                part.push((i, ctx, f.task));
            }
        }
        let parts = parts.into_iter().map(read_in_turn).collect();
        let parts = run_partitions(parts, &self.metrics);
        let inner = OrderedMerge::new(parts, owner).boxed_local_or_send();
        let limit = self
            .limit
            .map(|n| Arc::new(std::sync::atomic::AtomicUsize::new(n)));
        DeltaBatchStream::new(schema, inner, limit, self.metrics)
    }
}

/// The files of one partition read one after the other, each batch tagged with its file.
fn read_in_turn(files: Vec<(usize, ReadContext, FileTask)>) -> BoxStream<'static, Tagged> {
    futures::stream::iter(files)
        .flat_map(|(i, ctx, task)| {
            crate::read::read_file_with_metrics(ctx, task, None).map(move |r| (i, r))
        })
        .boxed_local_or_send()
}

/// Partitions for `files` files: one per core natively (at most one per file), one on wasm32.
fn partition_count(files: usize) -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    #[cfg(target_arch = "wasm32")]
    let cores = 1;
    cores.min(files).max(1)
}

/// Natively, each partition on its own task of the current Tokio runtime (see `api::spawn`);
/// else as they are.
fn run_partitions(
    parts: Vec<BoxStream<'static, Tagged>>,
    metrics: &Arc<DeltaScanMetrics>,
) -> Vec<BoxStream<'static, Tagged>> {
    #[cfg(not(target_arch = "wasm32"))]
    if parts.len() > 1 {
        let panicked = |message: String| -> Tagged {
            let reason = format!("a partition of the change feed read panicked: {message}");
            let phase = crate::error::Phase::Read;
            (usize::MAX, Err(DeltaError::Internal { reason, phase }))
        };
        return match super::spawn::spawn_partitions(parts, BATCHES_AHEAD, metrics, panicked) {
            Ok(spawned) => spawned
                .into_iter()
                .map(BoxedStream::boxed_local_or_send)
                .collect(),
            Err(parts) => parts,
        };
    }
    #[cfg(target_arch = "wasm32")]
    let _ = metrics;
    parts
}
