//! Checkpoint and commit file decoding: from the bytes of one log file to [`Action`]s.
//!
//! [`ParquetRead`] reads a Parquet checkpoint by byte ranges (see `checkpoint_parquet`), and
//! [`parquet_actions`] decodes one held in memory: a classic single-file checkpoint, one
//! part of a multi-part checkpoint, the top-level Parquet file of a v2 checkpoint, or a v2
//! sidecar. It reads only the columns of the actions asked for ([`ActionKinds`]), and inside
//! `add`/`remove` only the fields a reader uses, then walks the Arrow arrays column-wise (one
//! downcast per column and batch, then plain indexing). A row is an action of a kind when that
//! kind's struct is not null in the row. When a checkpoint has `add.stats_parsed` but no
//! `add.stats` string, the statistics stay typed: a row of the struct column
//! ([`super::ParsedStats`]).
//!
//! [`json_actions`] decodes newline-delimited JSON actions: commits and v2 JSON checkpoints.
//!
//! Both are pure: no I/O, no clock, no async.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{RecordBatch, StructArray};
use bytes::Bytes;

use super::actions::{
    Action, ActionLine, Add, CheckpointMetadata, DeletionVectorDescriptor, Format, IntoActions,
    Metadata, PartitionValues, Protocol, Remove, Sidecar, TableActionLine,
};
use super::actions::{AddStats, ParsedStats};
use super::step::Step;
use crate::error::{DeltaError, Phase};
use crate::limits::{json_depth, MAX_LOG_LINE_BYTES};
use crate::Result;

#[path = "checkpoint_columns.rs"]
mod columns;
#[path = "checkpoint_parquet.rs"]
mod parquet_read;
#[path = "checkpoint_stats.rs"]
mod stats;

use columns::{BoolCol, ColResult, IntCol, StrCol, StrListCol, StrMapCol, StructCol};
use stats::StatsNode;

pub(crate) use parquet_read::ParquetRead;
pub use parquet_read::CHECKPOINT_TAIL;

/// A row of a checkpoint's `add.stats_parsed` struct written as the protocol's `add.stats`
/// JSON; `None` when the row is null.
pub(super) fn stats_json(column: &StructArray, row: usize) -> Option<String> {
    StatsNode::build(column).json(row, 128)
}

/// Which kinds of action to decode from a checkpoint: a small set of `add`, `remove`,
/// `metaData`, `protocol`, `sidecar` and `checkpointMetadata`. Combine with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ActionKinds(u8);

impl ActionKinds {
    /// `add` actions.
    pub(crate) const ADD: ActionKinds = ActionKinds(1);
    /// `remove` actions.
    pub(crate) const REMOVE: ActionKinds = ActionKinds(1 << 1);
    /// `metaData` actions.
    pub(crate) const METADATA: ActionKinds = ActionKinds(1 << 2);
    /// `protocol` actions.
    pub(crate) const PROTOCOL: ActionKinds = ActionKinds(1 << 3);
    /// `sidecar` actions (v2 checkpoints).
    pub(crate) const SIDECAR: ActionKinds = ActionKinds(1 << 4);
    /// `checkpointMetadata` actions (v2 checkpoints).
    pub(crate) const CHECKPOINT_METADATA: ActionKinds = ActionKinds(1 << 5);

    /// Whether every kind in `other` is in `self`.
    pub(crate) const fn contains(self, other: ActionKinds) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for ActionKinds {
    type Output = ActionKinds;

    fn bitor(self, rhs: ActionKinds) -> ActionKinds {
        ActionKinds(self.0 | rhs.0)
    }
}

/// Rows per decoded batch: large enough to amortise per-batch work, small enough to keep the
/// decoded strings of one batch modest.
const BATCH_ROWS: usize = 8192;

/// Decodes the actions of the kinds in `want` from a checkpoint Parquet file held in memory.
///
/// `path` names the file in errors. Actions come out in row order. Columns an older
/// checkpoint lacks (`deletionVector`, `baseRowId`, `readerFeatures`, ...) read as absent;
/// `add.tags` and `partitionValues_parsed` are not read. Fails with
/// [`DeltaError::Parquet`] when the file cannot be decoded and [`DeltaError::InvalidLog`] when
/// a required field (`add.path`, `add.size`, `metaData.id`, ...) is missing from an action.
pub(crate) fn parquet_actions(path: &str, data: Bytes, want: ActionKinds) -> Result<Vec<Action>> {
    let size = data.len() as u64;
    let mut read = ParquetRead::new(path, size, want, size);
    read.push_range(0..size, data)?;
    match read.poll()? {
        Step::Ready(actions) => Ok(actions),
        // Every range inside the file is in hand; `ParquetRead` refuses the others.
        Step::Need(ranges) => Err(DeltaError::Parquet {
            path: path.to_string(),
            phase: Phase::Load,
            source: parquet::errors::ParquetError::General(format!(
                "the decoder asked for {ranges:?} of a file held whole"
            )),
        }),
    }
}

/// Decodes newline-delimited JSON actions (a commit file or a v2 JSON checkpoint). Blank lines
/// are skipped; unknown actions are ignored. A malformed line fails with
/// [`DeltaError::InvalidLog`] naming its (1-based) line number.
pub(crate) fn json_actions(path: &str, data: &[u8]) -> Result<Vec<Action>> {
    json_actions_scoped(path, data, true)
}

/// Bytes of the shortest line that holds an `add` or `remove` (path, size, time, data
/// change): what the first reservation of a file's actions assumes per action at most.
const MIN_ACTION_LINE_BYTES: usize = 64;

/// [`json_actions`], with `add` and `remove` only `with_files` (without, their objects are
/// checked to be JSON and skipped, not decoded: a lazy load keeps only protocol, metadata
/// and commit info).
pub(crate) fn json_actions_scoped(
    path: &str,
    data: &[u8],
    with_files: bool,
) -> Result<Vec<Action>> {
    // About one action per line: counting them first spares the growth of a vector of
    // 240-byte actions (half the time of a large commit went to moving them). The count is
    // capped by what the bytes can hold: a file of blank or `{}` lines must not reserve
    // 240 bytes for each of its 1- to 3-byte lines.
    let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    let mut out = Vec::with_capacity(lines.min(data.len() / MIN_ACTION_LINE_BYTES + 1));
    json_actions_each(path, data, with_files, |a| out.push(a))?;
    Ok(out)
}

/// Hands each action of a newline-delimited JSON file to `each` as it is decoded, in file
/// order (a long commit is never held as a vector of actions); `add` and `remove` are
/// skipped unless `with_files`. Errors as [`json_actions`].
pub(crate) fn json_actions_each(
    path: &str,
    data: &[u8],
    with_files: bool,
    each: impl FnMut(Action),
) -> Result<()> {
    if with_files {
        json_lines_each::<ActionLine>(path, data, each)
    } else {
        json_lines_each::<TableActionLine>(path, data, each)
    }
}

/// Why a log file that starts with gzip's magic number is refused.
pub(crate) const GZIPPED: &str =
    "it is gzip-compressed (stored so, or sent with Content-Encoding: gzip)";

fn json_lines_each<L: serde::de::DeserializeOwned + IntoActions>(
    path: &str,
    data: &[u8],
    mut each: impl FnMut(Action),
) -> Result<()> {
    let mut line_actions = Vec::new();
    for (n, line) in data.split(|&b| b == b'\n').enumerate() {
        if line.len() > MAX_LOG_LINE_BYTES {
            return Err(DeltaError::limit_exceeded(
                "log line length (bytes)",
                line.len() as u64,
                MAX_LOG_LINE_BYTES as u64,
                Some(path),
                Phase::Load,
            ));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed: L = serde_json::from_slice(line).map_err(|e| {
            if n == 0 && line.starts_with(&[0x1f, 0x8b]) {
                return DeltaError::invalid_log(path, GZIPPED);
            }
            json_depth::too_deep(line, "JSON nesting depth of a log line", Some(path))
                .unwrap_or_else(|| DeltaError::invalid_log(path, format!("line {}: {e}", n + 1)))
        })?;
        parsed.into_actions(&mut line_actions);
        line_actions.drain(..).for_each(&mut each);
    }
    Ok(())
}

/// Fields of `add` a reader uses (other than `stats_parsed`, which is read only when the
/// `stats` string is absent).
const ADD_FIELDS: [&str; 9] = [
    "path",
    "partitionValues",
    "size",
    "modificationTime",
    "dataChange",
    "stats",
    "deletionVector",
    "baseRowId",
    "defaultRowCommitVersion",
];
/// Fields of `remove` a reader uses.
const REMOVE_FIELDS: [&str; 4] = ["path", "deletionTimestamp", "dataChange", "deletionVector"];
/// Fields of `deletionVector` (not `maxRowIndex`).
const DV_FIELDS: [&str; 5] = [
    "storageType",
    "pathOrInlineDv",
    "offset",
    "sizeInBytes",
    "cardinality",
];
/// Fields of `sidecar` (not `tags`).
const SIDECAR_FIELDS: [&str; 3] = ["path", "sizeInBytes", "modificationTime"];

/// Refuses a checkpoint whose column for a wanted action kind is not a group (a struct):
/// none of its fields would be read, and the actions would silently be missing (an `add`
/// column of strings read as a table without files).
fn check_action_columns(
    path: &str,
    schema: &parquet::schema::types::SchemaDescriptor,
    want: ActionKinds,
) -> Result<()> {
    const KINDS: [(&str, ActionKinds); 6] = [
        ("add", ActionKinds::ADD),
        ("remove", ActionKinds::REMOVE),
        ("metaData", ActionKinds::METADATA),
        ("protocol", ActionKinds::PROTOCOL),
        ("sidecar", ActionKinds::SIDECAR),
        ("checkpointMetadata", ActionKinds::CHECKPOINT_METADATA),
    ];
    for field in schema.root_schema().get_fields() {
        let wanted = KINDS
            .iter()
            .any(|(name, kind)| field.name() == *name && want.contains(*kind));
        if wanted && !field.is_group() {
            return Err(DeltaError::invalid_log(
                path,
                format!(
                    "the checkpoint's '{}' column is a {:?} value, not the struct of the action",
                    field.name(),
                    field.get_physical_type()
                ),
            ));
        }
    }
    Ok(())
}

/// Indices of the Parquet leaf columns to read for `want`.
fn wanted_leaves(
    schema: &parquet::schema::types::SchemaDescriptor,
    want: ActionKinds,
) -> Vec<usize> {
    let is = |parts: &[String], i: usize, name: &str| parts.get(i).is_some_and(|p| p == name);
    let add_has_stats = schema.columns().iter().any(|c| {
        c.path().parts().len() == 2
            && is(c.path().parts(), 0, "add")
            && is(c.path().parts(), 1, "stats")
    });
    let field_in = |parts: &[String], fields: &[&str]| {
        let Some(field) = parts.get(1) else {
            return false;
        };
        if field == "deletionVector" {
            return parts
                .get(2)
                .is_some_and(|f| DV_FIELDS.contains(&f.as_str()));
        }
        fields.contains(&field.as_str())
    };
    let mut leaves = Vec::new();
    for (i, column) in schema.columns().iter().enumerate() {
        let parts = column.path().parts();
        let Some(top) = parts.first() else { continue };
        let keep = match top.as_str() {
            "add" if want.contains(ActionKinds::ADD) => {
                field_in(parts, &ADD_FIELDS) || (!add_has_stats && is(parts, 1, "stats_parsed"))
            }
            "remove" if want.contains(ActionKinds::REMOVE) => field_in(parts, &REMOVE_FIELDS),
            "metaData" if want.contains(ActionKinds::METADATA) => true,
            "protocol" if want.contains(ActionKinds::PROTOCOL) => true,
            "sidecar" if want.contains(ActionKinds::SIDECAR) => field_in(parts, &SIDECAR_FIELDS),
            "checkpointMetadata" if want.contains(ActionKinds::CHECKPOINT_METADATA) => {
                is(parts, 1, "version")
            }
            _ => false,
        };
        if keep {
            leaves.push(i);
        }
    }
    leaves
}

/// A decoding failure inside a batch: the row (within the batch) when it is about one row, and
/// what is wrong.
type RowError = (Option<usize>, String);

/// The top-level struct column `name` of `batch`, if `want` asks for `kind` and it exists.
fn action_col<'a>(
    batch: &'a RecordBatch,
    want: ActionKinds,
    kind: ActionKinds,
    name: &str,
) -> std::result::Result<Option<StructCol<'a>>, RowError> {
    if !want.contains(kind) {
        return Ok(None);
    }
    StructCol::new(batch.column_by_name(name).map(|c| c.as_ref()), name).map_err(|e| (None, e))
}

/// Appends the actions of one batch to `out`, row by row.
fn decode_batch(
    batch: &RecordBatch,
    want: ActionKinds,
    out: &mut Vec<Action>,
) -> std::result::Result<(), RowError> {
    let whole = |e: String| (None, e);
    let protocol = action_col(batch, want, ActionKinds::PROTOCOL, "protocol")?
        .map(ProtocolCols::new)
        .transpose()
        .map_err(whole)?;
    let metadata = action_col(batch, want, ActionKinds::METADATA, "metaData")?
        .map(MetadataCols::new)
        .transpose()
        .map_err(whole)?;
    let add = action_col(batch, want, ActionKinds::ADD, "add")?
        .map(AddCols::new)
        .transpose()
        .map_err(whole)?;
    let remove = action_col(batch, want, ActionKinds::REMOVE, "remove")?
        .map(RemoveCols::new)
        .transpose()
        .map_err(whole)?;
    let sidecar = action_col(batch, want, ActionKinds::SIDECAR, "sidecar")?
        .map(SidecarCols::new)
        .transpose()
        .map_err(whole)?;
    let checkpoint_metadata = action_col(
        batch,
        want,
        ActionKinds::CHECKPOINT_METADATA,
        "checkpointMetadata",
    )?
    .map(CheckpointMetadataCols::new)
    .transpose()
    .map_err(whole)?;
    for i in 0..batch.num_rows() {
        let at = |e: String| (Some(i), e);
        if let Some(c) = protocol.as_ref().filter(|c| c.s.valid(i)) {
            out.push(Action::Protocol(c.get(i).map_err(at)?));
        }
        if let Some(c) = metadata.as_ref().filter(|c| c.s.valid(i)) {
            out.push(Action::Metadata(c.get(i).map_err(at)?));
        }
        if let Some(c) = add.as_ref().filter(|c| c.s.valid(i)) {
            out.push(Action::Add(c.get(i).map_err(at)?));
        }
        if let Some(c) = remove.as_ref().filter(|c| c.s.valid(i)) {
            out.push(Action::Remove(c.get(i).map_err(at)?));
        }
        if let Some(c) = sidecar.as_ref().filter(|c| c.s.valid(i)) {
            out.push(Action::Sidecar(c.get(i).map_err(at)?));
        }
        if let Some(c) = checkpoint_metadata.as_ref().filter(|c| c.s.valid(i)) {
            out.push(Action::CheckpointMetadata(c.get(i).map_err(at)?));
        }
    }
    Ok(())
}

/// The value of a required field, or an error naming it.
fn required<T>(value: Option<T>, what: &str) -> ColResult<T> {
    value.ok_or_else(|| format!("{what} is null"))
}

/// An `i32` field (deletion vector offsets and sizes).
fn to_i32(value: i64, what: &str) -> ColResult<i32> {
    i32::try_from(value).map_err(|_| format!("{what} is out of range: {value}"))
}

/// Columns of a `deletionVector` struct.
struct DvCols<'a> {
    s: StructCol<'a>,
    storage_type: StrCol<'a>,
    path_or_inline_dv: StrCol<'a>,
    offset: IntCol<'a>,
    size_in_bytes: IntCol<'a>,
    cardinality: IntCol<'a>,
}

impl<'a> DvCols<'a> {
    fn new(parent: StructCol<'a>, what: &str) -> ColResult<Option<Self>> {
        let Some(s) = StructCol::new(parent.child("deletionVector"), what)? else {
            return Ok(None);
        };
        Ok(Some(DvCols {
            s,
            storage_type: StrCol::new(s.child("storageType"), what)?,
            path_or_inline_dv: StrCol::new(s.child("pathOrInlineDv"), what)?,
            offset: IntCol::new(s.child("offset"), what)?,
            size_in_bytes: IntCol::new(s.child("sizeInBytes"), what)?,
            cardinality: IntCol::new(s.child("cardinality"), what)?,
        }))
    }

    fn get(this: &Option<Self>, i: usize) -> ColResult<Option<DeletionVectorDescriptor>> {
        let Some(c) = this.as_ref().filter(|c| c.s.valid(i)) else {
            return Ok(None);
        };
        Ok(Some(DeletionVectorDescriptor {
            storage_type: required(c.storage_type.get(i)?, "deletionVector.storageType")?
                .to_owned(),
            path_or_inline_dv: required(
                c.path_or_inline_dv.get(i)?,
                "deletionVector.pathOrInlineDv",
            )?
            .to_owned(),
            offset: c
                .offset
                .get(i)?
                .map(|o| to_i32(o, "deletionVector.offset"))
                .transpose()?,
            size_in_bytes: to_i32(
                required(c.size_in_bytes.get(i)?, "deletionVector.sizeInBytes")?,
                "deletionVector.sizeInBytes",
            )?,
            cardinality: required(c.cardinality.get(i)?, "deletionVector.cardinality")?,
        }))
    }
}

/// Columns of the `add` struct.
struct AddCols<'a> {
    s: StructCol<'a>,
    path: StrCol<'a>,
    partition_values: StrMapCol<'a>,
    size: IntCol<'a>,
    modification_time: IntCol<'a>,
    data_change: BoolCol<'a>,
    stats: StrCol<'a>,
    /// The `stats_parsed` struct column, shared by the statistics of every row.
    stats_parsed: Option<Arc<StructArray>>,
    deletion_vector: Option<DvCols<'a>>,
    base_row_id: IntCol<'a>,
    default_row_commit_version: IntCol<'a>,
}

impl<'a> AddCols<'a> {
    fn new(s: StructCol<'a>) -> ColResult<Self> {
        Ok(AddCols {
            s,
            path: StrCol::new(s.child("path"), "add.path")?,
            partition_values: StrMapCol::new(s.child("partitionValues"), "add.partitionValues")?,
            size: IntCol::new(s.child("size"), "add.size")?,
            modification_time: IntCol::new(s.child("modificationTime"), "add.modificationTime")?,
            data_change: BoolCol::new(s.child("dataChange"), "add.dataChange")?,
            stats: StrCol::new(s.child("stats"), "add.stats")?,
            stats_parsed: s
                .child("stats_parsed")
                .and_then(|a| a.as_any().downcast_ref::<StructArray>())
                .map(|a| Arc::new(a.clone())),
            deletion_vector: DvCols::new(s, "add.deletionVector")?,
            base_row_id: IntCol::new(s.child("baseRowId"), "add.baseRowId")?,
            default_row_commit_version: IntCol::new(
                s.child("defaultRowCommitVersion"),
                "add.defaultRowCommitVersion",
            )?,
        })
    }

    fn get(&self, i: usize) -> ColResult<Add> {
        let mut partition_values = PartitionValues::new();
        self.partition_values.visit(i, |k, v| {
            partition_values.insert(k.to_owned(), v.map(str::to_owned));
        })?;
        let stats = match self.stats.get(i)? {
            Some(s) => Some(AddStats::Json(s.to_owned())),
            None => self
                .stats_parsed
                .as_ref()
                .and_then(|column| ParsedStats::new(Arc::clone(column), i))
                .map(AddStats::Parsed),
        };
        Ok(Add {
            path: required(self.path.get(i)?, "add.path")?.to_owned(),
            partition_values,
            size: required(self.size.get(i)?, "add.size")?,
            modification_time: self.modification_time.get(i)?.unwrap_or(0),
            data_change: self.data_change.get(i).unwrap_or(false),
            stats,
            tags: None,
            deletion_vector: DvCols::get(&self.deletion_vector, i)?,
            base_row_id: self.base_row_id.get(i)?,
            default_row_commit_version: self.default_row_commit_version.get(i)?,
        })
    }
}

/// Columns of the `remove` struct.
struct RemoveCols<'a> {
    s: StructCol<'a>,
    path: StrCol<'a>,
    deletion_timestamp: IntCol<'a>,
    data_change: BoolCol<'a>,
    deletion_vector: Option<DvCols<'a>>,
}

impl<'a> RemoveCols<'a> {
    fn new(s: StructCol<'a>) -> ColResult<Self> {
        Ok(RemoveCols {
            s,
            path: StrCol::new(s.child("path"), "remove.path")?,
            deletion_timestamp: IntCol::new(
                s.child("deletionTimestamp"),
                "remove.deletionTimestamp",
            )?,
            data_change: BoolCol::new(s.child("dataChange"), "remove.dataChange")?,
            deletion_vector: DvCols::new(s, "remove.deletionVector")?,
        })
    }

    fn get(&self, i: usize) -> ColResult<Remove> {
        Ok(Remove {
            path: required(self.path.get(i)?, "remove.path")?.to_owned(),
            deletion_timestamp: self.deletion_timestamp.get(i)?,
            data_change: self.data_change.get(i).unwrap_or(false),
            deletion_vector: DvCols::get(&self.deletion_vector, i)?,
        })
    }
}

/// Columns of the `metaData` struct.
struct MetadataCols<'a> {
    s: StructCol<'a>,
    id: StrCol<'a>,
    name: StrCol<'a>,
    description: StrCol<'a>,
    format: Option<StructCol<'a>>,
    provider: StrCol<'a>,
    options: StrMapCol<'a>,
    schema_string: StrCol<'a>,
    partition_columns: StrListCol<'a>,
    configuration: StrMapCol<'a>,
    created_time: IntCol<'a>,
}

impl<'a> MetadataCols<'a> {
    fn new(s: StructCol<'a>) -> ColResult<Self> {
        let format = StructCol::new(s.child("format"), "metaData.format")?;
        let format_child = |name| format.and_then(|f| f.child(name));
        Ok(MetadataCols {
            s,
            id: StrCol::new(s.child("id"), "metaData.id")?,
            name: StrCol::new(s.child("name"), "metaData.name")?,
            description: StrCol::new(s.child("description"), "metaData.description")?,
            format,
            provider: StrCol::new(format_child("provider"), "metaData.format.provider")?,
            options: StrMapCol::new(format_child("options"), "metaData.format.options")?,
            schema_string: StrCol::new(s.child("schemaString"), "metaData.schemaString")?,
            partition_columns: StrListCol::new(
                s.child("partitionColumns"),
                "metaData.partitionColumns",
            )?,
            configuration: StrMapCol::new(s.child("configuration"), "metaData.configuration")?,
            created_time: IntCol::new(s.child("createdTime"), "metaData.createdTime")?,
        })
    }

    fn get(&self, i: usize) -> ColResult<Metadata> {
        let mut format = Format::default();
        if self.format.is_some_and(|f| f.valid(i)) {
            if let Some(p) = self.provider.get(i)? {
                p.clone_into(&mut format.provider);
            }
            self.options.visit(i, |k, v| {
                if let Some(v) = v {
                    format.options.insert(k.to_owned(), v.to_owned());
                }
            })?;
        }
        if format.provider.is_empty() {
            "parquet".clone_into(&mut format.provider);
        }
        let mut configuration = HashMap::new();
        self.configuration.visit(i, |k, v| {
            if let Some(v) = v {
                configuration.insert(k.to_owned(), v.to_owned());
            }
        })?;
        Ok(Metadata {
            id: required(self.id.get(i)?, "metaData.id")?.to_owned(),
            name: self.name.get(i)?.map(str::to_owned),
            description: self.description.get(i)?.map(str::to_owned),
            format,
            // Empty when missing, as in commit JSON: replay refuses a snapshot whose newest
            // metaData has no schema.
            schema_string: self.schema_string.get(i)?.unwrap_or_default().to_owned(),
            partition_columns: self.partition_columns.get(i)?.unwrap_or_default(),
            configuration,
            created_time: self.created_time.get(i)?,
        })
    }
}

/// Columns of the `protocol` struct.
struct ProtocolCols<'a> {
    s: StructCol<'a>,
    min_reader_version: IntCol<'a>,
    min_writer_version: IntCol<'a>,
    reader_features: StrListCol<'a>,
    writer_features: StrListCol<'a>,
}

impl<'a> ProtocolCols<'a> {
    fn new(s: StructCol<'a>) -> ColResult<Self> {
        Ok(ProtocolCols {
            s,
            min_reader_version: IntCol::new(
                s.child("minReaderVersion"),
                "protocol.minReaderVersion",
            )?,
            min_writer_version: IntCol::new(
                s.child("minWriterVersion"),
                "protocol.minWriterVersion",
            )?,
            reader_features: StrListCol::new(s.child("readerFeatures"), "protocol.readerFeatures")?,
            writer_features: StrListCol::new(s.child("writerFeatures"), "protocol.writerFeatures")?,
        })
    }

    fn get(&self, i: usize) -> ColResult<Protocol> {
        Ok(Protocol {
            min_reader_version: required(
                self.min_reader_version.get(i)?,
                "protocol.minReaderVersion",
            )?,
            min_writer_version: required(
                self.min_writer_version.get(i)?,
                "protocol.minWriterVersion",
            )?,
            reader_features: self.reader_features.get(i)?,
            writer_features: self.writer_features.get(i)?,
        })
    }
}

/// Columns of the `sidecar` struct.
struct SidecarCols<'a> {
    s: StructCol<'a>,
    path: StrCol<'a>,
    size_in_bytes: IntCol<'a>,
    modification_time: IntCol<'a>,
}

impl<'a> SidecarCols<'a> {
    fn new(s: StructCol<'a>) -> ColResult<Self> {
        Ok(SidecarCols {
            s,
            path: StrCol::new(s.child("path"), "sidecar.path")?,
            size_in_bytes: IntCol::new(s.child("sizeInBytes"), "sidecar.sizeInBytes")?,
            modification_time: IntCol::new(
                s.child("modificationTime"),
                "sidecar.modificationTime",
            )?,
        })
    }

    fn get(&self, i: usize) -> ColResult<Sidecar> {
        Ok(Sidecar {
            path: required(self.path.get(i)?, "sidecar.path")?.to_owned(),
            size_in_bytes: required(self.size_in_bytes.get(i)?, "sidecar.sizeInBytes")?,
            modification_time: self.modification_time.get(i)?.unwrap_or(0),
        })
    }
}

/// Columns of the `checkpointMetadata` struct.
struct CheckpointMetadataCols<'a> {
    s: StructCol<'a>,
    version: IntCol<'a>,
}

impl<'a> CheckpointMetadataCols<'a> {
    fn new(s: StructCol<'a>) -> ColResult<Self> {
        Ok(CheckpointMetadataCols {
            s,
            version: IntCol::new(s.child("version"), "checkpointMetadata.version")?,
        })
    }

    fn get(&self, i: usize) -> ColResult<CheckpointMetadata> {
        Ok(CheckpointMetadata {
            version: required(self.version.get(i)?, "checkpointMetadata.version")?,
        })
    }
}

#[cfg(test)]
#[path = "checkpoint_tests.rs"]
mod tests;
