//! The Delta log: from listings and log file bytes to a reconciled snapshot, with no I/O.
//!
//! [`SnapshotLoader`] is the state machine; the other modules are its pure parts: file names
//! ([`path`]), the `_last_checkpoint` hint, segment choice from a listing, probing on stores
//! that cannot list, checkpoint and commit decoding, reconciliation, protocol validation and
//! time travel by timestamp.
#![deny(clippy::disallowed_methods, clippy::disallowed_types)] // see clippy.toml

pub mod actions;
mod checkpoint;
mod data_file_path;
mod last_checkpoint;
mod loader;
mod partition_values;
pub mod path;
mod probe;
mod protocol;
mod replay;
mod segment;
mod timestamp;

pub use actions::{
    Action, Add, CheckpointMetadata, CommitInfo, DeletionVectorDescriptor, Metadata,
    PartitionValues, Protocol, Remove, Sidecar,
};
pub use data_file_path::data_file_path;
pub use last_checkpoint::LastCheckpointHint;
pub use loader::{
    decode_commit_actions, Discovery, LoadScope, LoadStep, LoadedLog, LogRequest, SnapshotLoader,
    VersionTarget,
};
pub use probe::FIRST_PROBE_BATCH;
pub use protocol::{validate_reader_protocol, SUPPORTED_READER_FEATURES};
pub use replay::Reconciled;
pub use segment::LogSegment;
