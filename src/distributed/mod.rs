//! Delta scans in distributed DataFusion engines (feature `distributed`, native only).
//!
//! A plan that reads a Delta table holds [`DeltaScanExec`](crate::datafusion::DeltaScanExec)
//! nodes; to run it on other processes each node is serialised to its wire form
//! ([`encode_scan`], versioned, deterministic, without credentials) and rebuilt there
//! ([`decode_scan`]) against the process's own stores, without replaying the log. The
//! DataFusion codec [`DeltaPhysicalCodec`] does this inside `datafusion-proto` plans, and
//! [`ballista_physical_codec`] composes it with Ballista's for a Ballista cluster. For
//! engines that ship logical plans (Ballista's `SessionContext::remote`), [`DeltaLogicalCodec`]
//! carries a table provider as its snapshot (root and version), loaded again where the plan
//! is planned. [`workers`] runs the same codec on datafusion-distributed: a worker, and a
//! coordinator whose planner cuts each Delta scan into one plan per task.

pub mod ballista;
mod codec;
mod provider_codec;
mod stores;
mod tally;
mod values;
mod wire;
mod worker_tally;
pub mod workers;

pub use codec::{
    ballista_physical_codec, ballista_physical_codec_with, delta_scans, DeltaPhysicalCodec,
};
pub use provider_codec::{
    DeltaLogicalCodec, PinnedDeltaTableProvider, TABLE_WIRE_FORMAT, TABLE_WIRE_VERSION,
};
pub use stores::{store_from_runtime, StorageOptions};
pub use tally::{scan_totals, ReportingEngine, TaskReport, TaskReporter};
pub use wire::{decode_scan, encode_scan, StoreForRoot, SCAN_WIRE_FORMAT, SCAN_WIRE_VERSION};
