//! [`DeltaTable`]: one immutable snapshot of a table, with its store.
//!
//! Scan metadata (the active `add` actions with their statistics) is held one of two ways,
//! chosen at load: eagerly, replayed once and kept for the table's lifetime (no refresh: load
//! again for a newer snapshot), or lazily, where the table keeps only the list of log files
//! (the segment) and every scan build replays them again before applying its predicate.

use std::sync::Arc;

use arrow_schema::SchemaRef;

use super::load::replay_segment;
use crate::error::Result;
use crate::io::{IoCounters, MeteredStore, Store, TableLocation};
use crate::log::{Add, Discovery, LoadedLog, LogSegment, Metadata, Protocol};
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
    /// Bytes of the log read: whole files and the ranges of Parquet checkpoints.
    pub log_bytes_read: u64,
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
    scan_metadata: ScanMetadata,
    load_info: LoadInfo,
    /// Log requests in flight at once when a lazy table replays its log.
    pub(super) log_concurrency: usize,
}

/// What identifies a snapshot besides its files: version, commit time, protocol, metadata.
#[derive(Debug, Clone)]
pub(crate) struct SnapshotFacts {
    pub(crate) version: u64,
    pub(crate) timestamp_ms: Option<i64>,
    pub(crate) protocol: Protocol,
    pub(crate) metadata: Metadata,
}

/// Where a table's active files come from.
#[derive(Debug, Clone)]
enum ScanMetadata {
    /// Replayed once at load, kept (query-unfiltered, with statistics).
    Eager(Arc<Vec<Add>>),
    /// Replayed from these log files at each scan build.
    Lazy {
        segment: Arc<LogSegment>,
        discovery: Discovery,
    },
}

/// The active files of a snapshot and the log files read to get them (0 when they were held).
#[derive(Debug, Clone)]
pub(crate) struct ActiveFiles {
    pub(crate) files: Arc<Vec<Add>>,
    pub(crate) log_files_read: u64,
}

impl DeltaTable {
    pub(crate) fn from_log(
        location: TableLocation,
        store: Store,
        counters: Arc<IoCounters>,
        log: LoadedLog,
        eager: bool,
        log_concurrency: usize,
    ) -> Result<Self> {
        let r = log.reconciled;
        let scan_metadata = if eager {
            ScanMetadata::Eager(Arc::new(r.files))
        } else {
            ScanMetadata::Lazy {
                segment: Arc::new(log.segment),
                discovery: log.discovery,
            }
        };
        let load_info = LoadInfo {
            discovery: log.discovery,
            checkpoint_version: log.checkpoint_version,
            log_files_read: log.files_read,
            log_bytes_read: log.bytes_read,
            round_trips: log.round_trips,
        };
        let snapshot = SnapshotFacts {
            version: r.version,
            timestamp_ms: log.timestamp_ms,
            protocol: r.protocol,
            metadata: r.metadata,
        };
        Self::assemble(
            location,
            store,
            counters,
            snapshot,
            scan_metadata,
            load_info,
        )
        .map(|t| t.with_log_concurrency(log_concurrency))
    }

    /// A snapshot known from its facts alone, without its log (which is not read): for a scan
    /// planned elsewhere, whose file tasks come with it. It holds no active files; the
    /// protocol is checked as a load checks it.
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    // On wasm32 stores are not `Send`: the `Arc` is shared on one thread only.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    pub(crate) fn from_facts(
        location: TableLocation,
        store: Store,
        snapshot: SnapshotFacts,
    ) -> Result<Self> {
        crate::log::validate_reader_protocol(&snapshot.protocol)?;
        let load_info = LoadInfo {
            discovery: Discovery::Listing,
            checkpoint_version: None,
            log_files_read: 0,
            log_bytes_read: 0,
            round_trips: 0,
        };
        let counters = Arc::new(IoCounters::default());
        let store: Store = Arc::new(MeteredStore::with_counters(store, Arc::clone(&counters)));
        let files = ScanMetadata::Eager(Arc::new(Vec::new()));
        Self::assemble(location, store, counters, snapshot, files, load_info)
    }

    fn with_log_concurrency(mut self, n: usize) -> Self {
        self.log_concurrency = n;
        self
    }

    fn assemble(
        location: TableLocation,
        store: Store,
        counters: Arc<IoCounters>,
        snapshot: SnapshotFacts,
        scan_metadata: ScanMetadata,
        load_info: LoadInfo,
    ) -> Result<Self> {
        let SnapshotFacts {
            version,
            timestamp_ms,
            protocol,
            metadata,
        } = snapshot;
        let schema = parse_schema(&metadata.schema_string)?;
        let arrow_schema = Arc::new(schema.to_arrow()?);
        // Column mapping applies only where the protocol enables it: reader version 2, or 3
        // with the `columnMapping` feature.
        let protocol_allows_mapping = protocol.min_reader_version == 2
            || (protocol.min_reader_version >= 3 && protocol.has_reader_feature("columnMapping"));
        let column_mapping = if protocol_allows_mapping {
            ColumnMappingMode::from_configuration(&metadata.configuration)?
        } else {
            ColumnMappingMode::None
        };
        crate::schema::validate_column_mapping(&schema, column_mapping)?;
        for column in &metadata.partition_columns {
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
            version,
            timestamp_ms,
            protocol,
            metadata,
            schema,
            arrow_schema,
            column_mapping,
            scan_metadata,
            load_info,
            log_concurrency: super::DEFAULT_LOG_CONCURRENCY,
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

    /// Each partition column's logical name, with the name the log's `partitionValues` key
    /// it by: its physical name under column mapping, else the same name.
    pub fn partition_column_names(&self) -> Vec<(&str, &str)> {
        let mode = self.column_mapping_mode();
        self.partition_columns()
            .iter()
            .map(|logical| {
                let physical = self
                    .schema
                    .physical_partition_name(mode, logical)
                    .unwrap_or(logical);
                (logical.as_str(), physical)
            })
            .collect()
    }

    /// The column mapping mode of the table.
    pub fn column_mapping_mode(&self) -> ColumnMappingMode {
        self.column_mapping
    }

    /// Whether the active files were replayed at load and are held
    /// ([`DeltaTableBuilder::load_table_with_eager_scan_metadata`](super::DeltaTableBuilder::load_table_with_eager_scan_metadata)).
    pub fn has_eager_scan_metadata(&self) -> bool {
        matches!(self.scan_metadata, ScanMetadata::Eager(_))
    }

    /// The active files held since an eager load: path, size, partition values (keyed by
    /// physical column name), statistics and deletion vector. `None` for a lazily loaded
    /// table: use [`DeltaTable::active_files`].
    pub fn eager_files(&self) -> Option<&[Add]> {
        match &self.scan_metadata {
            ScanMetadata::Eager(files) => Some(files),
            ScanMetadata::Lazy { .. } => None,
        }
    }

    /// Total size of the active files in bytes, when they are held (eager load).
    pub fn eager_size_bytes(&self) -> Option<u64> {
        self.eager_files().map(|files| {
            files
                .iter()
                .map(|f| f.size.max(0) as u64)
                .fold(0, u64::saturating_add)
        })
    }

    /// The active files of this version: those held (eager), or replayed from the log now
    /// (lazy; the same files every time).
    pub async fn active_files(&self) -> Result<Arc<Vec<Add>>> {
        Ok(self.scan_files().await?.files)
    }

    /// What the active files' statistics say about each column (min, max, null count) and the
    /// row count, from the log alone: no data file is read. A lazily loaded table replays
    /// its log for the files first, as [`DeltaTable::active_files`] does.
    pub async fn column_profile(&self) -> Result<crate::TableProfile> {
        let files = self.active_files().await?;
        crate::plan::table_profile(
            self.delta_schema(),
            self.column_mapping_mode(),
            self.partition_columns(),
            &files,
        )
    }

    /// The active files and how many log files were read for them.
    pub(crate) async fn scan_files(&self) -> Result<ActiveFiles> {
        match &self.scan_metadata {
            ScanMetadata::Eager(files) => Ok(ActiveFiles {
                files: Arc::clone(files),
                log_files_read: 0,
            }),
            ScanMetadata::Lazy { segment, discovery } => {
                let location = self.location.to_string();
                let segment = LogSegment::clone(segment);
                let log = replay_segment(
                    self.store.as_ref(),
                    &location,
                    segment,
                    *discovery,
                    self.log_concurrency,
                )
                .await?;
                if log.reconciled.version != self.version {
                    return Err(crate::DeltaError::Internal {
                        reason: format!(
                            "replaying version {} gave version {}",
                            self.version, log.reconciled.version
                        ),
                        phase: crate::Phase::Load,
                    });
                }
                Ok(ActiveFiles {
                    files: Arc::new(log.reconciled.files),
                    log_files_read: log.files_read,
                })
            }
        }
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
