//! Delta log actions, as the protocol names them: `add`, `remove`, `metaData`, `protocol`,
//! `commitInfo`, `sidecar`, `checkpointMetadata`.
//!
//! The same types come out of commit JSON (serde) and out of checkpoint Parquet (see
//! `checkpoint`). Actions a reader does not need (`txn`, `cdc`, `domainMetadata`) are ignored.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Deserializer, Serialize};

pub use super::add_stats::{AddStats, ParsedStats};
pub use super::partition_values::PartitionValues;

/// The `protocol` action: which reader and writer versions and features the table needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Protocol {
    /// Minimum reader protocol version.
    pub min_reader_version: i64,
    /// Minimum writer protocol version.
    pub min_writer_version: i64,
    /// Reader table features (reader version 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_features: Option<Vec<String>>,
    /// Writer table features (writer version 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_features: Option<Vec<String>>,
}

impl Protocol {
    /// Whether `feature` is listed in `readerFeatures`.
    pub fn has_reader_feature(&self, feature: &str) -> bool {
        self.reader_features
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == feature))
    }

    /// Whether `feature` is listed in `writerFeatures`.
    pub fn has_writer_feature(&self, feature: &str) -> bool {
        self.writer_features
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == feature))
    }
}

/// The data file format of `metaData`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Format {
    /// Always `parquet` for tables this reader reads.
    #[serde(default = "parquet_provider")]
    pub provider: String,
    /// Format options.
    #[serde(default, deserialize_with = "map_without_nulls")]
    pub options: HashMap<String, String>,
}

fn parquet_provider() -> String {
    "parquet".to_string()
}

/// The `metaData` action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Unique table id.
    pub id: String,
    /// Optional table name.
    #[serde(default)]
    pub name: Option<String>,
    /// Optional description.
    #[serde(default)]
    pub description: Option<String>,
    /// Data file format.
    #[serde(default)]
    pub format: Format,
    /// The table schema as Delta schema JSON. Empty when the action has none (some writers
    /// omit it in early commits; a snapshot whose newest `metaData` lacks it fails to load).
    #[serde(default)]
    pub schema_string: String,
    /// Partition columns (logical names), in order.
    #[serde(default)]
    pub partition_columns: Vec<String>,
    /// Table properties (`delta.*` and user properties).
    #[serde(default, deserialize_with = "map_without_nulls")]
    pub configuration: HashMap<String, String>,
    /// Creation time, ms since the epoch.
    #[serde(default)]
    pub created_time: Option<i64>,
}

/// Where a deletion vector is stored: `storageType` `u` (UUID-relative), `i` (inline) or `p`
/// (absolute path).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletionVectorDescriptor {
    /// `u`, `i` or `p`.
    pub storage_type: String,
    /// Encoded UUID (with optional prefix), inline Base85 data, or an absolute path.
    pub path_or_inline_dv: String,
    /// Byte offset of the vector in its file (not for inline vectors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i32>,
    /// Size of the serialized vector in bytes.
    pub size_in_bytes: i32,
    /// Number of rows the vector deletes.
    pub cardinality: i64,
}

impl DeletionVectorDescriptor {
    /// The id that, with the file path, identifies a logical file in reconciliation:
    /// `storageType + pathOrInlineDv`, plus `@offset` when there is an offset.
    pub fn unique_id(&self) -> String {
        match self.offset {
            Some(o) => format!("{}{}@{o}", self.storage_type, self.path_or_inline_dv),
            None => format!("{}{}", self.storage_type, self.path_or_inline_dv),
        }
    }
}

/// The `add` action: a data file that is part of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Add {
    /// Relative (percent-encoded) path or absolute URI of the file.
    pub path: String,
    /// Partition values, by physical partition column name.
    #[serde(default)]
    pub partition_values: PartitionValues,
    /// File size in bytes.
    pub size: i64,
    /// Modification time, ms since the epoch.
    #[serde(default)]
    pub modification_time: i64,
    /// Whether the commit changed data.
    #[serde(default)]
    pub data_change: bool,
    /// File statistics: the `stats` JSON (`numRecords`, `minValues`, `maxValues`,
    /// `nullCount`, `tightBounds`), or a checkpoint's typed `stats_parsed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<AddStats>,
    /// Free-form tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, Option<String>>>,
    /// Deletion vector of the file, if rows were deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_vector: Option<DeletionVectorDescriptor>,
    /// First row id of the file (row tracking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_row_id: Option<i64>,
    /// Commit version that added the rows (row tracking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_row_commit_version: Option<i64>,
}

impl Add {
    /// The rows a reader sees in this file: `numRecords` (which the protocol requires to be
    /// accurate for a file with a deletion vector) less the vector's `cardinality`. `None`
    /// without `numRecords`, or with a negative cardinality (a corrupt log).
    pub fn live_records(&self) -> Option<u64> {
        self.less_deleted(self.stats.as_ref()?.num_records()?)
    }

    /// `records` (this file's `numRecords`, for a caller that parsed its statistics already)
    /// less the rows its deletion vector deletes; `None` with a negative cardinality.
    pub fn less_deleted(&self, records: u64) -> Option<u64> {
        let deleted = match &self.deletion_vector {
            Some(dv) => u64::try_from(dv.cardinality).ok()?,
            None => 0,
        };
        Some(records.saturating_sub(deleted))
    }
}

/// The `remove` action: a file that is no longer part of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remove {
    /// Path of the removed file, as in its `add`.
    pub path: String,
    /// When it was removed, ms since the epoch.
    #[serde(default)]
    pub deletion_timestamp: Option<i64>,
    /// Whether the commit changed data.
    #[serde(default)]
    pub data_change: bool,
    /// Deletion vector of the removed logical file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_vector: Option<DeletionVectorDescriptor>,
}

/// The `commitInfo` action; only the fields a reader uses.
///
/// The protocol leaves `commitInfo` free-form: it is decoded leniently, a field of another
/// type than expected (or a `commitInfo` that is not an object) reads as absent rather than
/// making the commit, and so the table, unreadable.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitInfo {
    /// Wall-clock time of the commit, ms since the epoch.
    #[serde(default)]
    pub timestamp: Option<i64>,
    /// In-commit timestamp, ms since the epoch (when `inCommitTimestamp` is enabled).
    #[serde(default)]
    pub in_commit_timestamp: Option<i64>,
    /// Operation name (`WRITE`, `MERGE`, ...).
    #[serde(default)]
    pub operation: Option<String>,
}

impl<'de> Deserialize<'de> for CommitInfo {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        let field = |name: &str| value.get(name);
        Ok(CommitInfo {
            timestamp: field("timestamp").and_then(serde_json::Value::as_i64),
            in_commit_timestamp: field("inCommitTimestamp").and_then(serde_json::Value::as_i64),
            operation: field("operation")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
        })
    }
}

/// The `sidecar` action of a v2 checkpoint: a file of `add`/`remove` actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sidecar {
    /// Path relative to `_delta_log/_sidecars/`, or absolute.
    pub path: String,
    /// Size of the sidecar file in bytes.
    pub size_in_bytes: i64,
    /// Modification time, ms since the epoch.
    #[serde(default)]
    pub modification_time: i64,
}

/// The `checkpointMetadata` action of a v2 checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointMetadata {
    /// Version the checkpoint describes.
    pub version: i64,
}

/// One action of the log.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Action {
    /// `add`
    Add(Add),
    /// `remove`
    Remove(Remove),
    /// `metaData`
    Metadata(Metadata),
    /// `protocol`
    Protocol(Protocol),
    /// `commitInfo`
    CommitInfo(CommitInfo),
    /// `sidecar`
    Sidecar(Sidecar),
    /// `checkpointMetadata`
    CheckpointMetadata(CheckpointMetadata),
}

/// One line of a commit file: at most one of the fields is set; unknown actions leave all
/// of them empty.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ActionLine {
    pub add: Option<Add>,
    pub remove: Option<Remove>,
    pub meta_data: Option<Metadata>,
    pub protocol: Option<Protocol>,
    pub commit_info: Option<CommitInfo>,
    pub sidecar: Option<Sidecar>,
    pub checkpoint_metadata: Option<CheckpointMetadata>,
}

/// One line of a commit file with only the table's actions decoded: `add` and `remove`
/// objects are skipped.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TableActionLine {
    pub meta_data: Option<Metadata>,
    pub protocol: Option<Protocol>,
    pub commit_info: Option<CommitInfo>,
    pub sidecar: Option<Sidecar>,
    pub checkpoint_metadata: Option<CheckpointMetadata>,
}

/// A decoded line that yields actions.
pub(crate) trait IntoActions {
    /// Appends the actions of the line to `out`, in a fixed order.
    fn into_actions(self, out: &mut Vec<Action>);
}

impl IntoActions for TableActionLine {
    fn into_actions(self, out: &mut Vec<Action>) {
        ActionLine {
            meta_data: self.meta_data,
            protocol: self.protocol,
            commit_info: self.commit_info,
            sidecar: self.sidecar,
            checkpoint_metadata: self.checkpoint_metadata,
            ..ActionLine::default()
        }
        .into_actions(out)
    }
}

impl IntoActions for ActionLine {
    fn into_actions(self, out: &mut Vec<Action>) {
        if let Some(a) = self.protocol {
            out.push(Action::Protocol(a));
        }
        if let Some(a) = self.meta_data {
            out.push(Action::Metadata(a));
        }
        if let Some(a) = self.commit_info {
            out.push(Action::CommitInfo(a));
        }
        if let Some(a) = self.add {
            out.push(Action::Add(a));
        }
        if let Some(a) = self.remove {
            out.push(Action::Remove(a));
        }
        if let Some(a) = self.sidecar {
            out.push(Action::Sidecar(a));
        }
        if let Some(a) = self.checkpoint_metadata {
            out.push(Action::CheckpointMetadata(a));
        }
    }
}

/// Deserializes a JSON object of strings, dropping `null` values (some writers write them).
fn map_without_nulls<'de, D>(d: D) -> Result<HashMap<String, String>, D::Error>
where
    D: Deserializer<'de>,
{
    let raw: Option<HashMap<String, Option<String>>> = Option::deserialize(d)?;
    Ok(raw
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_add_with_dv_and_null_partition() {
        let line = r#"{"add":{"path":"a%20b.parquet","partitionValues":{"p":null,"q":"1"},"size":10,"modificationTime":5,"dataChange":true,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":4,"sizeInBytes":40,"cardinality":6}}}"#;
        let parsed: ActionLine = serde_json::from_str(line).unwrap_or_default();
        let add = parsed.add.unwrap_or_else(|| panic!("no add"));
        assert_eq!(add.partition_values.get("p"), Some(&None));
        let dv = add.deletion_vector.unwrap_or_else(|| panic!("no dv"));
        assert_eq!(dv.unique_id(), "uab^-aqEH.-t@S}K{vb[*k^@4");
    }

    #[test]
    fn commit_info_is_free_form() {
        let info = |line: &str| {
            serde_json::from_str::<ActionLine>(line)
                .map(|l| l.commit_info)
                .map_err(|e| e.to_string())
        };
        let typed = r#"{"commitInfo":{"timestamp":5,"inCommitTimestamp":7,"operation":"WRITE","operationMetrics":{"n":"1"}}}"#;
        let want = CommitInfo {
            timestamp: Some(5),
            in_commit_timestamp: Some(7),
            operation: Some("WRITE".into()),
        };
        assert_eq!(info(typed), Ok(Some(want)));
        // Other types, or not an object at all: the fields read as absent.
        for odd in [
            r#"{"commitInfo":{"timestamp":"yesterday","inCommitTimestamp":1.5,"operation":{"x":1}}}"#,
            r#"{"commitInfo":{"timestamp":null,"operation":7,"isBlindAppend":"maybe"}}"#,
            r#"{"commitInfo":"a string"}"#,
            r#"{"commitInfo":[1,2,3]}"#,
            r#"{"commitInfo":{}}"#,
        ] {
            assert_eq!(info(odd), Ok(Some(CommitInfo::default())), "{odd}");
        }
    }

    #[test]
    fn metadata_configuration_drops_nulls() {
        let line = r#"{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{"a":"1","b":null}}}"#;
        let parsed: ActionLine = serde_json::from_str(line).unwrap_or_default();
        let m = parsed.meta_data.unwrap_or_else(|| panic!("no metadata"));
        assert_eq!(m.configuration.len(), 1);
    }
}
