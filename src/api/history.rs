//! [`DeltaTable::history`]: the table's commits, newest first, as `DESCRIBE HISTORY` shows
//! them (see `log::history`). Commit files are read a bounded number at a time, in version
//! order; the history ends where the log's cleanup removed older commits.

use futures::StreamExt;

use super::DeltaTable;
use crate::error::{DeltaError, Result};
use crate::log::path::commit_path;
use crate::log::{history_entry, HistoryEntry};

impl DeltaTable {
    /// The commits of the table up to its loaded version, newest first: at most `limit`
    /// of them (all without one). Each is read from its commit file; commits older than the
    /// oldest one the log still holds (removed by log cleanup after a checkpoint) are not in
    /// the history.
    pub async fn history(&self, limit: Option<usize>) -> Result<Vec<HistoryEntry>> {
        let newest = self.version();
        // A version read from the log may be u64::MAX: the count saturates.
        let count = limit
            .map_or(u64::MAX, |n| n as u64)
            .min(newest.saturating_add(1));
        let store = self.store().clone();
        let mut reads = futures::stream::iter((0..count).map(|back| newest - back))
            .map(|version| {
                let store = store.clone();
                async move { (version, store.get(&commit_path(version)).await) }
            })
            .buffered(self.log_concurrency.max(1));
        let mut entries = Vec::new();
        while let Some((version, read)) = reads.next().await {
            match read {
                Ok(bytes) => entries.push(history_entry(version, &bytes)?),
                // Cleaned up: nothing older is left either.
                Err(DeltaError::NotFound { .. }) => break,
                Err(e) => return Err(e),
            }
        }
        Ok(entries)
    }
}
