//! [`DeltaTable`]: one immutable snapshot of a table, with its store.

use std::sync::Arc;

use arrow_schema::SchemaRef;

use crate::error::Result;
use crate::io::{IoCounters, MeteredStore, Store, TableLocation};
use crate::log::{Add, Discovery, LoadedLog, Metadata, Protocol};
use crate::schema::{parse_schema, ColumnMappingMode, StructType};

/// How the snapshot was loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadInfo {
    /// Listing or probing.
    pub discovery: Discovery,
    /// Version of the checkpoint used, if any.
    pub checkpoint_version: Option<u64>,
    /// Log files read.
    pub log_files_read: u64,
    /// Rounds of requests made.
    pub round_trips: u64,
}

/// One version of a Delta table: protocol, metadata, schema and active files. Load another
/// `DeltaTable` to see a newer version.
#[derive(Debug, Clone)]
pub struct DeltaTable {
    location: TableLocation,
    store: Store,
    counters: Arc<IoCounters>,
    version: u64,
    timestamp_ms: Option<i64>,
    protocol: Protocol,
    metadata: Metadata,
    schema: StructType,
    arrow_schema: SchemaRef,
    column_mapping: ColumnMappingMode,
    files: Arc<Vec<Add>>,
    load_info: LoadInfo,
}

impl DeltaTable {
    pub(crate) fn from_log(
        location: TableLocation,
        store: Store,
        counters: Arc<IoCounters>,
        log: LoadedLog,
    ) -> Result<Self> {
        let r = log.reconciled;
        let schema = parse_schema(&r.metadata.schema_string)?;
        let arrow_schema = Arc::new(schema.to_arrow()?);
        // Column mapping applies only where the protocol enables it: reader version 2, or 3
        // with the `columnMapping` feature.
        let protocol_allows_mapping = r.protocol.min_reader_version == 2
            || (r.protocol.min_reader_version >= 3
                && r.protocol.has_reader_feature("columnMapping"));
        let column_mapping = if protocol_allows_mapping {
            ColumnMappingMode::from_configuration(&r.metadata.configuration)?
        } else {
            ColumnMappingMode::None
        };
        for column in &r.metadata.partition_columns {
            if schema.field(column).is_none() {
                return Err(crate::DeltaError::invalid_schema(format!(
                    "partition column '{column}' is not in the table schema"
                )));
            }
        }
        Ok(DeltaTable {
            location,
            store,
            counters,
            version: r.version,
            timestamp_ms: log.timestamp_ms,
            protocol: r.protocol,
            metadata: r.metadata,
            schema,
            arrow_schema,
            column_mapping,
            files: Arc::new(r.files),
            load_info: LoadInfo {
                discovery: log.discovery,
                checkpoint_version: log.checkpoint_version,
                log_files_read: log.files_read,
                round_trips: log.round_trips,
            },
        })
    }

    /// The table version of this snapshot.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Commit time of this version (ms since the epoch), where known.
    pub fn timestamp_ms(&self) -> Option<i64> {
        self.timestamp_ms
    }

    /// The table location (normalised).
    pub fn location(&self) -> &TableLocation {
        &self.location
    }

    /// The logical schema as Arrow.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.arrow_schema)
    }

    /// The logical schema in Delta's own types.
    pub fn delta_schema(&self) -> &StructType {
        &self.schema
    }

    /// The protocol (reader and writer versions and features).
    pub fn protocol(&self) -> &Protocol {
        &self.protocol
    }

    /// The table metadata (id, name, configuration, ...).
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// Partition columns (logical names), in order.
    pub fn partition_columns(&self) -> &[String] {
        &self.metadata.partition_columns
    }

    /// The column mapping mode of the table.
    pub fn column_mapping_mode(&self) -> ColumnMappingMode {
        self.column_mapping
    }

    /// The active files of this version: path, size, partition values (keyed by physical
    /// column name), statistics and deletion vector.
    pub fn files(&self) -> &[Add] {
        &self.files
    }

    /// Total size of the active files in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size.max(0) as u64).sum()
    }

    /// How the snapshot was loaded.
    pub fn load_info(&self) -> LoadInfo {
        self.load_info
    }

    /// Counters of every request made through this table's store so far.
    pub fn io_counters(&self) -> Arc<IoCounters> {
        Arc::clone(&self.counters)
    }

    /// The store the table reads from.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The same snapshot read through `inner` instead (metered into the same counters): the
    /// same objects reached another way, e.g. a fetch store whose requests stop on one
    /// scan's `AbortSignal`.
    // On wasm32 stores are not `Send`: the `Arc` is shared on one thread only.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    pub fn with_store(&self, inner: Store) -> DeltaTable {
        let metered = MeteredStore::with_counters(inner, Arc::clone(&self.counters));
        DeltaTable {
            store: Arc::new(metered),
            ..self.clone()
        }
    }
}
