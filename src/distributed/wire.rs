//! The wire form of a planned scan: [`encode_scan`] and [`decode_scan`].
//!
//! One JSON document (`format`, `version`, then the scan), deterministic: the same plan gives
//! the same bytes (fields in a fixed order, maps sorted, values in [`super::values`]'s exact
//! text). It holds what an executor needs to read the scan's tasks without replaying the log:
//!
//! - the table: root URL, snapshot version and commit time, protocol, and the metadata the
//!   schema, partition columns and column mapping come from;
//! - the request (projection, the predicate's columns, output types), the predicate in the
//!   reader's own form, the limit, batch size and execution options;
//! - every file task (path, size, byte range, typed partition values, deletion vector
//!   descriptor, row limit) and the partitions as lists of task indexes;
//! - the DataFusion node's facts: whether it outputs no columns (row counts only), its
//!   statistics (`datafusion-proto`'s message, in hexadecimal) and how it may repartition.
//!
//! Never credentials or signed URLs: the root is the table's URL, and the executor reaches it
//! through its own stores (see [`super::stores`]). Filters DataFusion pushed into the node at
//! run time (dynamic filters of joins and TopK) are left out: they only skip file tasks, and
//! DataFusion applies them itself, so a decoded plan returns the same rows.
//!
//! A document of another `format` or `version`, a field this version does not know, or a
//! value that does not fit its type is refused with a clear error.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::common::Statistics;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::ExecutionPlan;
use serde::{Deserialize, Serialize};

use super::values::{hex, hex_bytes, ExprWire, ScalarWire};
use crate::api::{DeltaScan, ScanParts, SnapshotFacts};
use crate::datafusion::{DeltaScanExec, IntraFileRepartitioning};
use crate::error::DeltaError;
use crate::io::{Store, TableLocation};
use crate::log::{DeletionVectorDescriptor, Format, Metadata, Protocol};
use crate::plan::{FileSelection, FileTask, ScanRequest};
use crate::predicate::TypedPartitionValues;
use crate::schema::OutputTypes;
use crate::{DeltaScanExecutionOptions, DeltaTable, ParquetReaderBackend};

/// The `format` of a scan's wire form.
pub const SCAN_WIRE_FORMAT: &str = "delta-arrow-reader/scan";

/// The version of the wire form this build writes and reads.
pub const SCAN_WIRE_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ScanWire {
    format: String,
    version: u32,
    table: TableWire,
    projection: Option<Vec<String>>,
    predicate_columns: Vec<String>,
    output_types: OutputTypesWire,
    predicate: Option<ExprWire>,
    limit: Option<u64>,
    batch_size: u64,
    execution: ExecutionWire,
    target_partitions: u64,
    selection: SelectionWire,
    tasks: Vec<TaskWire>,
    partitions: Vec<Vec<u64>>,
    counts_only: bool,
    repartitioning: String,
    statistics: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TableWire {
    root: String,
    version: u64,
    timestamp_ms: Option<i64>,
    protocol: ProtocolWire,
    metadata: MetadataWire,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProtocolWire {
    min_reader_version: i64,
    min_writer_version: i64,
    reader_features: Option<Vec<String>>,
    writer_features: Option<Vec<String>>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MetadataWire {
    id: String,
    name: Option<String>,
    description: Option<String>,
    schema_string: String,
    partition_columns: Vec<String>,
    configuration: BTreeMap<String, String>,
    created_time: Option<i64>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct OutputTypesWire {
    strings: String,
    binaries: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ExecutionWire {
    max_concurrent_file_reads: Option<u64>,
    max_concurrent_file_reads_per_partition: u64,
    /// `null`: by the store (a number from older senders is still read).
    #[serde(default)]
    prefetch_files_per_partition: Option<u64>,
    batches_ahead_per_partition: u64,
    parquet_full_file_read_threshold_bytes: Option<u64>,
    /// Absent from senders before read-ahead: off.
    #[serde(default)]
    parquet_read_ahead_bytes: u64,
    parquet_reader_backend: String,
    max_page_bytes: u64,
    /// Absent from senders before it was an option: the default.
    #[serde(default = "default_max_task_bytes")]
    max_task_bytes: u64,
}

fn default_max_task_bytes() -> u64 {
    crate::api::DEFAULT_MAX_TASK_BYTES
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SelectionWire {
    files_total: u64,
    files_selected: u64,
    skipped_by_partition: u64,
    skipped_by_stats: u64,
    skipped_by_filter: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TaskWire {
    path: String,
    size: u64,
    range: Option<[u64; 2]>,
    partition_values: Vec<(String, ScalarWire)>,
    deletion_vector: Option<DeletionVectorDescriptor>,
    #[serde(default)]
    num_records: Option<u64>,
    limit: Option<u64>,
}

pub(crate) fn invalid(reason: impl Into<String>) -> DataFusionError {
    DataFusionError::Plan(format!("cannot decode a Delta scan: {}", reason.into()))
}

pub(crate) fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

pub(crate) fn to_usize(n: u64, what: &str) -> Result<usize> {
    usize::try_from(n).map_err(|_| invalid(format!("{what} {n} does not fit this machine")))
}

/// Pairs of (enum value, wire name), for the enums that travel by name.
const BACKENDS: [(ParquetReaderBackend, &str); 2] = [
    (ParquetReaderBackend::Direct, "direct"),
    (ParquetReaderBackend::DeltaKernel, "deltaKernel"),
];
const REPARTITIONING: [(IntraFileRepartitioning, &str); 2] = [
    (IntraFileRepartitioning::WhenBelowTarget, "whenBelowTarget"),
    (IntraFileRepartitioning::Always, "always"),
];

fn name_of<T: PartialEq + Copy>(table: &[(T, &'static str)], value: T) -> Result<String> {
    table
        .iter()
        .find(|(v, _)| *v == value)
        .map(|(_, n)| (*n).to_string())
        .ok_or_else(|| DataFusionError::NotImplemented("a scan option without a wire name".into()))
}

fn value_of<T: Copy>(table: &[(T, &'static str)], name: &str, what: &str) -> Result<T> {
    table
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(v, _)| *v)
        .ok_or_else(|| invalid(format!("'{name}' is not a known {what}")))
}

impl OutputTypesWire {
    /// The Arrow type names (`Utf8View`, `LargeBinary`, ...), as the schema module writes
    /// and parses them.
    pub(crate) fn from_types(t: OutputTypes) -> Result<Self> {
        Ok(OutputTypesWire {
            strings: t.strings.to_string(),
            binaries: t.binaries.to_string(),
        })
    }

    pub(crate) fn to_types(&self) -> Result<OutputTypes> {
        Ok(OutputTypes {
            strings: self.strings.parse().map_err(delta)?,
            binaries: self.binaries.parse().map_err(delta)?,
        })
    }
}

impl ExecutionWire {
    /// All of `o` but its partition target (which travels on its own).
    pub(crate) fn from_options(o: &DeltaScanExecutionOptions) -> Result<Self> {
        Ok(ExecutionWire {
            max_concurrent_file_reads: o.max_concurrent_file_reads.map(to_u64),
            max_concurrent_file_reads_per_partition: to_u64(
                o.max_concurrent_file_reads_per_partition,
            ),
            prefetch_files_per_partition: o.prefetch_files_per_partition.map(to_u64),
            batches_ahead_per_partition: to_u64(o.batches_ahead_per_partition),
            parquet_full_file_read_threshold_bytes: o.parquet_full_file_read_threshold_bytes,
            parquet_read_ahead_bytes: o.parquet_read_ahead_bytes,
            parquet_reader_backend: name_of(&BACKENDS, o.parquet_reader_backend)?,
            max_page_bytes: o.max_page_bytes,
            max_task_bytes: o.max_task_bytes,
        })
    }

    pub(crate) fn to_options(
        &self,
        target_partitions: Option<usize>,
    ) -> Result<DeltaScanExecutionOptions> {
        Ok(DeltaScanExecutionOptions {
            target_partitions,
            max_concurrent_file_reads: self
                .max_concurrent_file_reads
                .map(|n| to_usize(n, "a read limit"))
                .transpose()?,
            max_concurrent_file_reads_per_partition: to_usize(
                self.max_concurrent_file_reads_per_partition,
                "a read limit",
            )?,
            prefetch_files_per_partition: self
                .prefetch_files_per_partition
                .map(|n| to_usize(n, "a prefetch"))
                .transpose()?,
            batches_ahead_per_partition: to_usize(
                self.batches_ahead_per_partition,
                "a buffer size",
            )?,
            parquet_full_file_read_threshold_bytes: self.parquet_full_file_read_threshold_bytes,
            parquet_read_ahead_bytes: self.parquet_read_ahead_bytes,
            parquet_reader_backend: value_of(&BACKENDS, &self.parquet_reader_backend, "backend")?,
            max_page_bytes: self.max_page_bytes,
            max_task_bytes: self.max_task_bytes,
        })
    }
}

/// The name of an intra-file repartitioning on the wire.
pub(crate) fn repartitioning_name(r: IntraFileRepartitioning) -> Result<String> {
    name_of(&REPARTITIONING, r)
}

/// The intra-file repartitioning a wire name stands for.
pub(crate) fn repartitioning_of(name: &str) -> Result<IntraFileRepartitioning> {
    value_of(&REPARTITIONING, name, "repartitioning")
}

fn unhex(text: &str) -> Result<Vec<u8>> {
    hex_bytes(text).map_err(|_| invalid("the statistics are not hexadecimal"))
}

/// The wire form of `exec` (see the module documentation).
pub fn encode_scan(exec: &DeltaScanExec) -> Result<Vec<u8>> {
    let scan = exec.scan();
    let parts = scan.to_parts();
    let table = scan.table();
    let protocol = table.protocol();
    let metadata = table.metadata();
    let o = &parts.execution;
    let tasks = parts
        .tasks
        .iter()
        .map(|t| TaskWire {
            path: t.path.clone(),
            size: t.size,
            range: t.range.as_ref().map(|r| [r.start, r.end]),
            partition_values: t
                .partition_values
                .iter()
                .map(|(k, v)| (k.to_string(), ScalarWire::from_scalar(v)))
                .collect(),
            deletion_vector: t.deletion_vector.clone(),
            num_records: t.num_records,
            limit: t.limit.map(to_u64),
        })
        .collect();
    let statistics = datafusion_proto_common::Statistics::from(exec.plan_statistics());
    let wire = ScanWire {
        format: SCAN_WIRE_FORMAT.into(),
        version: SCAN_WIRE_VERSION,
        table: TableWire {
            root: table.location().url().to_string(),
            version: table.version(),
            timestamp_ms: table.timestamp_ms(),
            protocol: ProtocolWire {
                min_reader_version: protocol.min_reader_version,
                min_writer_version: protocol.min_writer_version,
                reader_features: protocol.reader_features.clone(),
                writer_features: protocol.writer_features.clone(),
            },
            metadata: MetadataWire {
                id: metadata.id.clone(),
                name: metadata.name.clone(),
                description: metadata.description.clone(),
                schema_string: metadata.schema_string.clone(),
                partition_columns: metadata.partition_columns.clone(),
                configuration: metadata.configuration.clone().into_iter().collect(),
                created_time: metadata.created_time,
            },
        },
        projection: parts.request.projection.clone(),
        predicate_columns: parts.request.predicate_columns.clone(),
        output_types: OutputTypesWire::from_types(parts.request.output_types)?,
        predicate: parts.predicate.as_ref().map(ExprWire::from_expr),
        limit: parts.limit.map(to_u64),
        batch_size: to_u64(parts.batch_size),
        execution: ExecutionWire::from_options(o)?,
        target_partitions: to_u64(parts.target),
        selection: SelectionWire {
            files_total: to_u64(parts.selection.files_total),
            files_selected: to_u64(parts.selection.files_selected),
            skipped_by_partition: to_u64(parts.selection.skipped_by_partition),
            skipped_by_stats: to_u64(parts.selection.skipped_by_stats),
            skipped_by_filter: to_u64(parts.selection.skipped_by_filter),
        },
        tasks,
        partitions: parts
            .partitions
            .iter()
            .map(|p| p.iter().copied().map(to_u64).collect())
            .collect(),
        counts_only: exec.schema().fields().is_empty(),
        repartitioning: name_of(&REPARTITIONING, exec.repartitioning())?,
        statistics: hex(&prost::Message::encode_to_vec(&statistics)),
    };
    serde_json::to_vec(&wire).map_err(|e| DataFusionError::External(Box::new(e)))
}

/// What a decoded scan reads through: the table root's store, resolved by the executor.
pub type StoreForRoot<'a> = &'a dyn Fn(&TableLocation) -> Result<Store>;

/// The scan `bytes` describe (written by [`encode_scan`]), reading through the store
/// `store_for` gives for the table root.
pub fn decode_scan(bytes: &[u8], store_for: StoreForRoot<'_>) -> Result<DeltaScanExec> {
    let wire = parse_wire(bytes)?;
    let location = TableLocation::parse(&wire.table.root).map_err(delta)?;
    let store = store_for(&location)?;
    let t = wire.table;
    let snapshot = SnapshotFacts {
        version: t.version,
        timestamp_ms: t.timestamp_ms,
        protocol: Protocol {
            min_reader_version: t.protocol.min_reader_version,
            min_writer_version: t.protocol.min_writer_version,
            reader_features: t.protocol.reader_features,
            writer_features: t.protocol.writer_features,
        },
        metadata: Metadata {
            id: t.metadata.id,
            name: t.metadata.name,
            description: t.metadata.description,
            format: Format {
                provider: "parquet".into(),
                options: Default::default(),
            },
            schema_string: t.metadata.schema_string,
            partition_columns: t.metadata.partition_columns,
            configuration: t.metadata.configuration.into_iter().collect(),
            created_time: t.metadata.created_time,
        },
    };
    let table = DeltaTable::from_facts(location, store, snapshot).map_err(delta)?;
    let target = to_usize(wire.target_partitions, "a partition target")?;
    let execution = wire.execution.to_options(Some(target))?;
    let tasks = wire
        .tasks
        .into_iter()
        .map(|t| {
            let values = t
                .partition_values
                .iter()
                .map(|(k, v)| v.to_scalar().map(|s| (k.clone(), s)))
                .collect::<crate::Result<Vec<_>>>()
                .map_err(delta)?;
            let range = match t.range {
                Some([start, end]) if start <= end && end <= t.size => Some(start..end),
                Some([start, end]) => {
                    return Err(invalid(format!(
                        "the byte range {start}..{end} of {} is not within its {} bytes",
                        t.path, t.size
                    )))
                }
                None => None,
            };
            Ok(FileTask {
                path: t.path,
                size: t.size,
                partition_values: TypedPartitionValues::from_entries(values),
                deletion_vector: t.deletion_vector,
                deletion_vector_change: None,
                num_records: t.num_records,
                limit: t.limit.map(|n| to_usize(n, "a limit")).transpose()?,
                range,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let s = wire.selection;
    let parts = ScanParts {
        request: ScanRequest {
            projection: wire.projection,
            predicate_columns: wire.predicate_columns,
            output_types: wire.output_types.to_types()?,
        },
        predicate: wire
            .predicate
            .as_ref()
            .map(ExprWire::to_expr)
            .transpose()
            .map_err(delta)?,
        tasks,
        partitions: wire
            .partitions
            .iter()
            .map(|p| p.iter().map(|&i| to_usize(i, "a task index")).collect())
            .collect::<Result<_>>()?,
        target,
        selection: FileSelection {
            files_total: to_usize(s.files_total, "a file count")?,
            files_selected: to_usize(s.files_selected, "a file count")?,
            skipped_by_partition: to_usize(s.skipped_by_partition, "a file count")?,
            skipped_by_stats: to_usize(s.skipped_by_stats, "a file count")?,
            skipped_by_filter: to_usize(s.skipped_by_filter, "a file count")?,
        },
        limit: wire.limit.map(|n| to_usize(n, "a limit")).transpose()?,
        batch_size: to_usize(wire.batch_size, "a batch size")?,
        execution,
    };
    let scan = DeltaScan::from_parts(table, parts).map_err(delta)?;
    let schema = if wire.counts_only {
        Arc::new(arrow_schema::Schema::empty())
    } else {
        scan.schema()
    };
    let proto: datafusion_proto_common::Statistics =
        prost::Message::decode(unhex(&wire.statistics)?.as_slice())
            .map_err(|e| invalid(format!("the statistics do not decode: {e}")))?;
    let statistics = Statistics::try_from(&proto)
        .map_err(|e| invalid(format!("the statistics do not decode: {e}")))?;
    if statistics.column_statistics.len() != schema.fields().len() {
        return Err(invalid(format!(
            "the statistics have {} columns, the scan outputs {}",
            statistics.column_statistics.len(),
            schema.fields().len()
        )));
    }
    let repartitioning = value_of(&REPARTITIONING, &wire.repartitioning, "repartitioning")?;
    Ok(DeltaScanExec::new(scan, schema, statistics, repartitioning))
}

fn parse_wire(bytes: &[u8]) -> Result<ScanWire> {
    parse_versioned(bytes, "scan", SCAN_WIRE_FORMAT, SCAN_WIRE_VERSION)
}

/// A wire form of `what` (`scan`, `table`): its `format` and `version` checked first, so a
/// document of another kind or version is named as such, then the whole document.
pub(crate) fn parse_versioned<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    what: &str,
    format: &str,
    version: u32,
) -> Result<T> {
    #[derive(Deserialize)]
    struct Header {
        format: Option<String>,
        version: Option<u32>,
    }
    let invalid =
        |reason: String| DataFusionError::Plan(format!("cannot decode a Delta {what}: {reason}"));
    let header: Header = serde_json::from_slice(bytes)
        .map_err(|e| invalid(format!("the bytes are not a {what}'s wire form ({e})")))?;
    if header.format.as_deref() != Some(format) {
        return Err(invalid(format!(
            "the format is {:?}, not \"{format}\"",
            header.format.unwrap_or_default()
        )));
    }
    if header.version != Some(version) {
        return Err(invalid(format!(
            "the {what} was encoded with wire version {}; this reader reads version \
             {version} (run the same reader version on every process)",
            header
                .version
                .map_or_else(|| "(none)".to_string(), |v| v.to_string())
        )));
    }
    serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))
}

pub(crate) fn delta(e: DeltaError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
