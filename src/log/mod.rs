//! The Delta log: from listings and log file bytes to a reconciled snapshot, with no I/O.
//!
//! [`SnapshotLoader`] is the state machine; the other modules are its pure parts: file names
//! (`path`), the `_last_checkpoint` hint, segment choice from a listing, probing on stores
//! that cannot list, checkpoint and commit decoding, reconciliation, protocol validation and
//! time travel by timestamp. Every machine here (the loader, the commit probe, the timestamp
//! search, the checkpoint reader) answers `poll()` with one [`Step`] type.
#![deny(clippy::disallowed_methods, clippy::disallowed_types)] // see clippy.toml

mod actions;
mod add_stats;
mod changes;
mod checkpoint;
mod data_file_path;
mod history;
mod last_checkpoint;
mod loader;
mod partition_values;
pub(crate) mod path;
mod probe;
mod protocol;
mod replay;
mod segment;
mod step;
mod timestamp;

pub use actions::{
    Add, AddStats, CommitInfo, DeletionVectorDescriptor, Format, Metadata, ParsedStats,
    PartitionValues, Protocol, Remove,
};
pub use changes::{
    change_data_feed_enabled, commit_changes, ChangeFeedRules, ChangeFile, ChangeType, ChangedRows,
    CommitChanges, CHANGE_TYPE_COLUMN, COMMIT_TIMESTAMP_COLUMN, COMMIT_VERSION_COLUMN,
    ENABLE_CHANGE_DATA_FEED, ENABLE_IN_COMMIT_TIMESTAMPS,
};
pub use history::{history_entry, HistoryEntry};
pub(crate) use protocol::validate_reader_protocol;
pub use protocol::SUPPORTED_READER_FEATURES;

// The sans-io loader, for programs that bring their own I/O: poll it for requests, push the
// answers, get the replayed snapshot (the async driver behind DeltaTableBuilder does just that).
pub use actions::{Action, CheckpointMetadata, Sidecar};
pub use checkpoint::CHECKPOINT_TAIL;
pub use loader::{
    decode_commit_actions, CheckpointReads, Discovery, LoadScope, LoadStep, LoadedLog, LogRequest,
    SnapshotLoader, VersionTarget, SPECULATIVE_COMMITS,
};
pub use path::{LogFileKind, LogPath, V2Format};
pub use replay::Reconciled;
#[cfg(all(feature = "serve", not(target_arch = "wasm32")))]
pub(crate) use segment::segment_from_listing;
pub use segment::LogSegment;
pub use step::Step;

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use checkpoint::{parquet_actions, ActionKinds};
pub(crate) use data_file_path::{data_file_path, sidecar_path};
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use last_checkpoint::LastCheckpointHint;
