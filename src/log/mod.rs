//! The Delta log: from listings and log file bytes to a reconciled [`Snapshot`], with no I/O.

pub mod actions;
mod checkpoint;

pub use actions::{
    Action, Add, CheckpointMetadata, CommitInfo, DeletionVectorDescriptor, Metadata,
    PartitionValues, Protocol, Remove, Sidecar,
};
