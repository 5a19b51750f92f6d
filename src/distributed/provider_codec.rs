//! [`DeltaLogicalCodec`]: Delta tables in logical plans that travel, for Ballista's logical
//! path (`SessionContext::remote`, then `ctx.sql`: the client sends the logical plan and the
//! scheduler plans it).
//!
//! A [`DeltaTableProvider`] travels as the table's root URL, its snapshot version and the
//! scan options (JSON, `format` `delta-arrow-reader/table`, versioned, no credentials). It
//! decodes to a [`PinnedDeltaTableProvider`], which loads exactly that version the first
//! time it is scanned, through the stores of the decoding process's runtime (see
//! [`super::stores`]), and then plans as the provider does. Every other node goes to the
//! inner codec (Ballista's by default).

use std::sync::Arc;

use arrow_schema::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::TableReference;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{
    AggregateUDF, Expr as DfExpr, Extension, LogicalPlan, ScalarUDF, TableProviderFilterPushDown,
    WindowUDF,
};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use serde::{Deserialize, Serialize};

use super::stores::{store_from_runtime, StorageOptions};
use super::wire::{
    delta, parse_versioned, repartitioning_name, repartitioning_of, to_u64, to_usize,
    ExecutionWire, OutputTypesWire,
};
use crate::datafusion::{classify_filter, DeltaTableProvider, ScanOptions};
use crate::io::TableLocation;
use crate::DeltaTableBuilder;

/// The `format` of a table provider's wire form.
pub const TABLE_WIRE_FORMAT: &str = "delta-arrow-reader/table";

/// The version of the table provider's wire form this build writes and reads.
pub const TABLE_WIRE_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TableProviderWire {
    format: String,
    version: u32,
    root: String,
    snapshot_version: u64,
    execution: ExecutionWire,
    execution_target_partitions: Option<u64>,
    target_partitions: Option<u64>,
    intra_file_repartitioning: String,
    output_types: OutputTypesWire,
}

fn invalid(reason: impl Into<String>) -> DataFusionError {
    DataFusionError::Plan(format!("cannot decode a Delta table: {}", reason.into()))
}

/// Delta table providers travel as their snapshot; everything else goes to `inner`.
pub struct DeltaLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
    /// This process's storage options, for tables no registered store reaches.
    storage_options: StorageOptions,
}

impl std::fmt::Debug for DeltaLogicalCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeltaLogicalCodec")
            .field("inner", &self.inner)
            .field("storage_options", &self.storage_options.len())
            .finish()
    }
}

impl DeltaLogicalCodec {
    /// Hands every node but Delta tables to `inner`.
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        DeltaLogicalCodec {
            inner,
            storage_options: StorageOptions::default(),
        }
    }

    /// Decoded tables are loaded, where no store is registered in the runtime, with this
    /// process's `options` (never encoded).
    pub fn with_storage_options(mut self, options: StorageOptions) -> Self {
        self.storage_options = options;
        self
    }
}

impl Default for DeltaLogicalCodec {
    /// With Ballista's logical codec for the other nodes.
    fn default() -> Self {
        Self::new(Arc::new(
            ballista_core::serde::BallistaLogicalExtensionCodec::default(),
        ))
    }
}

/// Whether `buf` is a Delta table's wire form (its JSON opens with our `format`).
fn is_ours(buf: &[u8]) -> bool {
    let prefix = format!("{{\"format\":\"{TABLE_WIRE_FORMAT}\"");
    buf.starts_with(prefix.as_bytes())
}

fn encode_provider(p: &DeltaTableProvider) -> Result<Vec<u8>> {
    let t = p.table();
    encode_table(t.location(), t.version(), p.options(), p.output_types())
}

/// The wire form of the snapshot `version` of the table at `location`, scanned with
/// `options` and `output_types`.
fn encode_table(
    location: &TableLocation,
    version: u64,
    options: &ScanOptions,
    output_types: crate::OutputTypes,
) -> Result<Vec<u8>> {
    let wire = TableProviderWire {
        format: TABLE_WIRE_FORMAT.into(),
        version: TABLE_WIRE_VERSION,
        root: location.url().to_string(),
        snapshot_version: version,
        execution: ExecutionWire::from_options(&options.execution_options)?,
        execution_target_partitions: options.execution_options.target_partitions.map(to_u64),
        target_partitions: options.target_partitions.map(to_u64),
        intra_file_repartitioning: repartitioning_name(options.intra_file_repartitioning)?,
        output_types: OutputTypesWire::from_types(output_types)?,
    };
    serde_json::to_vec(&wire).map_err(|e| DataFusionError::External(Box::new(e)))
}

fn decode_provider(buf: &[u8], schema: SchemaRef) -> Result<PinnedDeltaTableProvider> {
    let wire: TableProviderWire =
        parse_versioned(buf, "table", TABLE_WIRE_FORMAT, TABLE_WIRE_VERSION)?;
    let location = TableLocation::parse(&wire.root).map_err(delta)?;
    let execution_target = wire
        .execution_target_partitions
        .map(|n| to_usize(n, "a partition target"))
        .transpose()?;
    let options = ScanOptions {
        execution_options: wire.execution.to_options(execution_target)?,
        target_partitions: wire
            .target_partitions
            .map(|n| to_usize(n, "a partition target"))
            .transpose()?,
        intra_file_repartitioning: repartitioning_of(&wire.intra_file_repartitioning)?,
        output_types: Some(wire.output_types.to_types()?),
    };
    options.validate().map_err(delta)?;
    Ok(PinnedDeltaTableProvider {
        location,
        version: wire.snapshot_version,
        options,
        schema,
        storage_options: StorageOptions::default(),
        loaded: tokio::sync::OnceCell::new(),
    })
}

impl LogicalExtensionCodec for DeltaLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        if is_ours(buf) {
            let provider = decode_provider(buf, schema)?;
            Ok(Arc::new(PinnedDeltaTableProvider {
                storage_options: Arc::clone(&self.storage_options),
                ..provider
            }))
        } else {
            self.inner
                .try_decode_table_provider(buf, table_ref, schema, ctx)
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let any: &dyn std::any::Any = node.as_ref();
        if let Some(p) = any.downcast_ref::<DeltaTableProvider>() {
            buf.extend(encode_provider(p)?);
            return Ok(());
        }
        if let Some(p) = any.downcast_ref::<PinnedDeltaTableProvider>() {
            buf.extend(p.encode()?);
            return Ok(());
        }
        self.inner.try_encode_table_provider(table_ref, node, buf)
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.inner.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}

/// A Delta table pinned to one snapshot version, loaded when first scanned (see the module
/// documentation).
pub struct PinnedDeltaTableProvider {
    location: TableLocation,
    version: u64,
    options: ScanOptions,
    schema: SchemaRef,
    storage_options: StorageOptions,
    loaded: tokio::sync::OnceCell<DeltaTableProvider>,
}

impl std::fmt::Debug for PinnedDeltaTableProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedDeltaTableProvider")
            .field("location", &self.location)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl PinnedDeltaTableProvider {
    /// The table's root.
    pub fn location(&self) -> &TableLocation {
        &self.location
    }

    /// The snapshot version it reads.
    pub fn version(&self) -> u64 {
        self.version
    }

    fn encode(&self) -> Result<Vec<u8>> {
        // Decoded options always name their output types.
        let types = self
            .options
            .output_types
            .unwrap_or(crate::OutputTypes::VIEWS);
        encode_table(&self.location, self.version, &self.options, types)
    }

    async fn provider(&self, state: &dyn Session) -> Result<&DeltaTableProvider> {
        self.loaded
            .get_or_try_init(|| async {
                let store =
                    store_from_runtime(state.runtime_env(), &self.location, &self.storage_options)?;
                let table = DeltaTableBuilder::new(self.location.to_string())
                    .with_store(store)
                    .with_version(self.version)
                    .load_table_with_eager_scan_metadata()
                    .await
                    .map_err(delta)?;
                let provider =
                    DeltaTableProvider::try_new(table, self.options.clone()).map_err(delta)?;
                if provider.schema().fields() != self.schema.fields() {
                    return Err(invalid(format!(
                        "version {} of {} does not have the schema the plan was made with",
                        self.version, self.location
                    )));
                }
                Ok(provider)
            })
            .await
    }
}

#[async_trait]
impl TableProvider for PinnedDeltaTableProvider {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&DfExpr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| classify_filter(f, &self.schema))
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[DfExpr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let provider = self.provider(state).await?;
        provider.scan(state, projection, filters, limit).await
    }
}
