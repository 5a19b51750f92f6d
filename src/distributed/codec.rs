//! [`DeltaPhysicalCodec`]: DataFusion's extension codec for [`DeltaScanExec`], and
//! [`ballista_physical_codec`], the codec a Ballista scheduler, its executors and its clients
//! install to run plans that read Delta tables.
//!
//! The codec encodes exactly one node, [`DeltaScanExec`], as its wire form (see
//! [`super::wire`]) and refuses every other node without writing a byte, so it composes:
//! in a [`ComposedPhysicalExtensionCodec`] the next codec gets the nodes it refuses. Decoding
//! resolves the table's store from the decoding process's own runtime (see
//! [`super::stores`]) and gives the scan its partition tokens
//! ([`DeltaScanExec::with_partition_tokens`]): Ballista's scheduler hands each task a slice
//! of a stage's partitions by slicing the stage's leaves, and the token table is a leaf it
//! knows how to slice, so every scan partition is read by exactly one task.

use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{
    ComposedPhysicalExtensionCodec, PhysicalExtensionCodec, PhysicalProtoConverterExtension,
};

use super::stores::{store_from_runtime, StorageOptions};
use super::wire::{decode_scan, encode_scan};
use crate::datafusion::DeltaScanExec;

/// Encodes and decodes [`DeltaScanExec`] nodes, and nothing else.
#[derive(Default, Clone)]
pub struct DeltaPhysicalCodec {
    /// This process's storage options, for tables no registered store reaches.
    storage_options: StorageOptions,
}

impl std::fmt::Debug for DeltaPhysicalCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Option values may be secrets: only their names are shown.
        let mut names: Vec<&String> = self.storage_options.keys().collect();
        names.sort();
        f.debug_struct("DeltaPhysicalCodec")
            .field("storage_options", &names)
            .finish()
    }
}

impl DeltaPhysicalCodec {
    /// A codec whose decoded scans reach tables, where no store is registered in the
    /// runtime, with `options` (see [`store_from_runtime`](super::store_from_runtime)). The options stay in this process:
    /// nothing encoded carries them.
    pub fn with_storage_options(options: StorageOptions) -> Self {
        DeltaPhysicalCodec {
            storage_options: options,
        }
    }
}

impl PhysicalExtensionCodec for DeltaPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let runtime = ctx.runtime_env();
        let options = &self.storage_options;
        let exec = decode_scan(buf, &|location| {
            store_from_runtime(&runtime, location, options)
        })?;
        // The scan always travels with its partition tokens (see `DeltaScanExec`), so an
        // engine that slices a stage's leaves for each task slices them too.
        let tokens = match inputs {
            [] => exec.partition_token_table()?,
            [tokens] => Arc::clone(tokens),
            more => {
                return Err(DataFusionError::Plan(format!(
                    "a DeltaScanExec has at most one input (its partition tokens); the plan \
                     gives it {}",
                    more.len()
                )))
            }
        };
        Ok(Arc::new(exec.with_partition_tokens(tokens)?))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(exec) = node.downcast_ref::<DeltaScanExec>() else {
            return Err(DataFusionError::NotImplemented(format!(
                "DeltaPhysicalCodec encodes DeltaScanExec only, not {}",
                node.name()
            )));
        };
        buf.extend(encode_scan(exec)?);
        Ok(())
    }
}

/// The physical codec of a Ballista cluster that reads Delta tables: [`DeltaPhysicalCodec`]
/// first, Ballista's own codec (its shuffle nodes, then DataFusion's) for every other node.
/// Install the same codec in the scheduler, every executor and the client.
pub fn ballista_physical_codec() -> Arc<dyn PhysicalExtensionCodec> {
    ballista_physical_codec_with(StorageOptions::default())
}

/// [`ballista_physical_codec`] with this process's storage options (see
/// [`DeltaPhysicalCodec::with_storage_options`]).
pub fn ballista_physical_codec_with(options: StorageOptions) -> Arc<dyn PhysicalExtensionCodec> {
    Arc::new(ComposedPhysicalExtensionCodec::new(vec![
        Arc::new(DeltaPhysicalCodec::with_storage_options(options)),
        Arc::new(ballista_core::serde::BallistaPhysicalExtensionCodec::default()),
    ]))
}

/// The Delta scans of `plan`, depth first.
pub fn delta_scans(plan: &Arc<dyn ExecutionPlan>) -> Vec<Arc<dyn ExecutionPlan>> {
    let mut out = Vec::new();
    if plan.downcast_ref::<DeltaScanExec>().is_some() {
        out.push(Arc::clone(plan));
    }
    for child in plan.children() {
        out.extend(delta_scans(child));
    }
    out
}
