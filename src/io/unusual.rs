//! A test store whose answers to every capability question differ from the trait's
//! defaults, to check that a store wrapping another forwards each of them.

use std::ops::Range;

use bytes::Bytes;

use super::{BoxFuture, ListEntry, MemoryStore, RangeRead, Store};
use crate::error::Result;

/// Answers as no default does: cannot list, reads local files, a 7-byte read-ahead gap,
/// and sizes from its objects. Reads go to the objects it holds.
#[derive(Debug)]
pub(crate) struct UnusualStore(pub(crate) MemoryStore);

impl RangeRead for UnusualStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        self.0.get_range(path, range)
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        self.0.get(path)
    }

    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        self.0.size(path)
    }

    fn can_list(&self) -> bool {
        false
    }

    fn reads_local_files(&self) -> bool {
        true
    }

    fn read_ahead_gap(&self) -> u64 {
        7
    }

    fn missing_log_answers(&self) -> (u64, u64) {
        (1, 2)
    }

    fn list(
        &self,
        _prefix: &str,
        _start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<ListEntry>>>> {
        Box::pin(async { Ok(None) })
    }
}

/// Checks that `wrapper`, wrapping an [`UnusualStore`], gives its answers.
pub(crate) fn assert_forwards_capabilities(wrapper: &Store) {
    assert!(!wrapper.can_list(), "can_list is not forwarded");
    assert!(
        wrapper.reads_local_files(),
        "reads_local_files is not forwarded"
    );
    assert_eq!(
        wrapper.read_ahead_gap(),
        7,
        "read_ahead_gap is not forwarded"
    );
    assert_eq!(
        wrapper.missing_log_answers(),
        (1, 2),
        "missing_log_answers is not forwarded"
    );
}
