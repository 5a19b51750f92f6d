//! Byte access to a table: the [`RangeRead`] trait and its implementations.
//!
//! Everything above this layer sees a table as one `Arc<dyn RangeRead>` rooted at the table
//! location, addressed by paths relative to that root (`_delta_log/00000000000000000000.json`,
//! `part-0000.parquet`). Implementations:
//!
//! - [`MemoryStore`]: bytes in memory, for tests and fixtures (every target);
//! - [`ObjectStoreRange`]: local paths, `file://`, `http(s)://` and `s3://` through
//!   `object_store` (native);
//! - `FetchStore`: `http(s)://` through the browser's or Node's `fetch` (wasm32);
//! - `JsSourceStore`: any JavaScript byte source (a Node.js folder, a browser directory
//!   handle, a picked folder, the caller's own; wasm32);
//! - [`MeteredStore`]: wraps any store and counts requests and bytes.
//!
//! The read layer wraps the table's store per file task (permits and whole-file reads, see
//! `read::scheduler`); every implementation keeps the contract documented on [`RangeRead`],
//! which `tests/shared/range_read_contract.rs` checks for each of them.

#[cfg(not(target_arch = "wasm32"))]
mod client_options;
#[cfg(not(target_arch = "wasm32"))]
mod closing_server;
#[cfg(all(feature = "cloud", not(target_arch = "wasm32")))]
mod cloud;
#[cfg(target_arch = "wasm32")]
mod fetch;
#[cfg(target_arch = "wasm32")]
mod fetch_body;
#[cfg(target_arch = "wasm32")]
mod fetch_wait;
#[cfg(not(target_arch = "wasm32"))]
mod http_checks;
#[cfg(target_arch = "wasm32")]
mod js_source;
#[cfg(target_arch = "wasm32")]
mod js_text;
mod link_estimate;
#[cfg(not(target_arch = "wasm32"))]
mod local_read;
mod location;
mod memory;
mod metered;
#[cfg(not(target_arch = "wasm32"))]
mod object_store;
mod platform;
#[cfg(test)]
pub(crate) mod unusual;
#[cfg(not(target_arch = "wasm32"))]
mod version_pin;

use std::fmt::Debug;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::Result;

#[cfg(target_arch = "wasm32")]
pub use fetch::{FetchOptions, FetchStore, UrlSigner};
#[cfg(target_arch = "wasm32")]
pub use js_source::JsSourceStore;
pub use location::TableLocation;
pub use memory::MemoryStore;
pub use metered::{IoCounters, IoSnapshot, MeteredStore};
#[cfg(not(target_arch = "wasm32"))]
pub use object_store::ObjectStoreRange;
pub use platform::{BoxFuture, BoxStream, BoxedStream, MaybeSend, MaybeSync};

/// One object found by [`RangeRead::list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    /// Path relative to the table root, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Last modification time, milliseconds since the Unix epoch, where the store knows it.
    pub last_modified_ms: Option<i64>,
}

/// Read access to the objects under one table root.
///
/// # The contract
///
/// Every implementation gives the same answers to the same questions; the conformance suite
/// (`tests/shared/range_read_contract.rs`, run natively against every store and in headless
/// Chromium against the fetch store) checks each clause.
///
/// - **Names.** Paths are relative to the root, `/`-separated, and name objects byte for
///   byte: nothing is percent-decoded or encoded on the way. Spark writes partition folders
///   such as `ts=2020-01-01 08%3A09%3A10`, and that is the name `get` takes and `list` gives.
/// - **Missing objects.** An object that does not exist is
///   [`DeltaError::NotFound`](crate::DeltaError::NotFound) for every call that reads it,
///   a zero-length range included (a store may spend a request to find out: a HEAD, or a
///   one-byte read). `size` may answer `Ok(None)` instead. Every other failure is
///   [`DeltaError::Io`](crate::DeltaError::Io).
/// - **Ranges.** `get_range(path, a..b)` answers exactly `b - a` bytes, or an error, never
///   fewer bytes: `a > b`, or `b` past the end of the object, is an `Io` error (not
///   transient: asking again gives the same answer). `a == b` is an empty answer when
///   `a` is at most the object's length. A reversed range is refused before anything is
///   asked, whether or not the object exists.
/// - **Listing.** `list(prefix, start_after)` is `Ok(None)` from a store that cannot list
///   (a static HTTPS host). Otherwise it is every object, at any depth, whose path starts
///   with `prefix` as a string (`dir` finds `dir/a` and `dirt.txt`; `dir/su` finds
///   `dir/sub/b`) and, when `start_after` is given, sorts after it byte-wise, in any order;
///   `start_after` need not name an object. The log loader lists `_delta_log/` after
///   `_delta_log/00000000000000000010` to find checkpoint 10 and the commits after it
///   (`src/log/loader.rs`), so both must be plain string comparisons. Folders are not
///   objects and are never listed. Listed paths are ones `get` finds.
pub trait RangeRead: Debug + MaybeSend + MaybeSync {
    /// Bytes `range` of the object at `path`. The answer must have exactly `range`'s length;
    /// a shorter answer is an error, never data.
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>>;

    /// The whole object at `path`.
    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>>;

    /// The size of the object at `path`, where the store can tell without reading it.
    /// `Ok(None)` means the store cannot tell cheaply.
    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        let _ = path;
        Box::pin(async { Ok(None) })
    }

    /// Whether [`list`](Self::list) can answer at all: `false` promises that it always
    /// answers `Ok(None)` (a static HTTPS host), so the log loader probes for commits from
    /// its first request on instead of asking for a listing first. The default, `true`, is
    /// always correct; it only costs such a store one round trip per load.
    fn can_list(&self) -> bool {
        true
    }

    /// Whether reads are answered on the calling thread from local files (a copy out of the
    /// page cache), so there is no wait to overlap: scans then open no files ahead of the one
    /// they decode (see
    /// [`prefetch_files_per_partition`](crate::api::DeltaScanExecutionOptions::prefetch_files_per_partition)).
    /// The default, `false`, is always correct.
    fn reads_local_files(&self) -> bool {
        false
    }

    /// How far apart two byte ranges of one object may lie for a read ahead of the decoder
    /// to fetch both in one request, the gap between them included: where a request costs
    /// more than fetching the gap. The default, [`NEAR_GAP`], suits any store; a remote one
    /// may answer more (the bytes its link moves in one round trip).
    fn read_ahead_gap(&self) -> u64 {
        NEAR_GAP
    }

    /// The log files this store found missing so far: answered `404` (or not there), and
    /// answered `403 Forbidden` and taken as missing (see `forbidden_is_missing`). A front
    /// end can warn when a host answers both ways: then a `403` may hide a file that exists
    /// (a newer version read as absent). Stores that cannot tell answer `(0, 0)`.
    fn missing_log_answers(&self) -> (u64, u64) {
        (0, 0)
    }

    /// Every object whose path starts with `prefix` (a string prefix, not a folder) and,
    /// when `start_after` is given, sorts after it, in any order. `Ok(None)` means this store
    /// cannot list (a static HTTPS host), and callers must discover objects another way.
    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<ListEntry>>>> {
        let _ = (prefix, start_after);
        Box::pin(async { Ok(None) })
    }
}

/// Inside an `impl RangeRead` block of a store that wraps another (in field `$inner`, a
/// [`Store`]): `size`, `can_list`, `reads_local_files`, `read_ahead_gap`,
/// `missing_log_answers` and `list` answered as the wrapped store answers them. A wrapper that changes only how bytes are
/// read cannot then forget one (the defaults would be wrong for it, not an error).
macro_rules! forward_to_inner {
    ($inner:ident) => {
        fn size(
            &self,
            path: &str,
        ) -> $crate::io::BoxFuture<'_, $crate::error::Result<Option<u64>>> {
            self.$inner.size(path)
        }

        fn can_list(&self) -> bool {
            self.$inner.can_list()
        }

        fn reads_local_files(&self) -> bool {
            self.$inner.reads_local_files()
        }

        fn read_ahead_gap(&self) -> u64 {
            self.$inner.read_ahead_gap()
        }

        fn missing_log_answers(&self) -> (u64, u64) {
            self.$inner.missing_log_answers()
        }

        fn list(
            &self,
            prefix: &str,
            start_after: Option<&str>,
        ) -> $crate::io::BoxFuture<'_, $crate::error::Result<Option<Vec<$crate::io::ListEntry>>>> {
            self.$inner.list(prefix, start_after)
        }
    };
}
pub(crate) use forward_to_inner;

impl<T: RangeRead + ?Sized> RangeRead for Arc<T> {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        (**self).get_range(path, range)
    }
    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        (**self).get(path)
    }
    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        (**self).size(path)
    }
    fn can_list(&self) -> bool {
        (**self).can_list()
    }
    fn reads_local_files(&self) -> bool {
        (**self).reads_local_files()
    }
    fn read_ahead_gap(&self) -> u64 {
        (**self).read_ahead_gap()
    }
    fn missing_log_answers(&self) -> (u64, u64) {
        (**self).missing_log_answers()
    }
    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<ListEntry>>>> {
        (**self).list(prefix, start_after)
    }
}

/// Ranges of one object closer than this are always worth one request: the default
/// [`RangeRead::read_ahead_gap`], and the gap every read joins across.
pub const NEAR_GAP: u64 = 64 * 1024;

/// The widest [`RangeRead::read_ahead_gap`] a remote store answers: `object_store` joins
/// ranges this far apart.
pub const FAR_GAP: u64 = 1024 * 1024;

/// A shared store, as the rest of the crate uses it.
pub type Store = Arc<dyn RangeRead>;

/// Refuses a reversed range (`start > end`), before any request: a caller's mistake, the
/// same answer whether or not the object exists.
pub(crate) fn check_range_order(path: &str, range: &Range<u64>) -> Result<()> {
    if range.start > range.end {
        return Err(crate::DeltaError::Io {
            path: path.to_string(),
            message: format!(
                "invalid range {}..{}: it ends before it starts",
                range.start, range.end
            ),
            phase: phase_for(path),
            transient: false,
        });
    }
    Ok(())
}

/// The error for bytes `range` of an object of `len` bytes (when known) that ends before
/// `range` does.
pub(crate) fn past_end(path: &str, range: &Range<u64>, len: Option<u64>) -> crate::DeltaError {
    let size = len.map(|n| format!(" of {n} bytes")).unwrap_or_default();
    crate::DeltaError::Io {
        path: path.to_string(),
        message: format!(
            "bytes {}..{} lie beyond the end of the object{size}: it is shorter than the \
             Delta log says (truncated or replaced)",
            range.start, range.end
        ),
        phase: phase_for(path),
        transient: false,
    }
}

/// Checks that a ranged answer has the length asked for.
pub(crate) fn check_range_len(path: &str, range: &Range<u64>, got: &Bytes) -> Result<()> {
    let want = range.end.saturating_sub(range.start);
    if got.len() as u64 != want {
        let message = if (got.len() as u64) < want {
            format!(
                "short read: asked for bytes {}..{} ({want} bytes), got {} bytes",
                range.start,
                range.end,
                got.len()
            )
        } else {
            format!(
                "asked for bytes {}..{} ({want} bytes), got {} bytes: the answer is not the \
                 range asked for",
                range.start,
                range.end,
                got.len()
            )
        };
        return Err(crate::DeltaError::Io {
            path: path.to_string(),
            message,
            phase: phase_for(path),
            transient: false,
        });
    }
    Ok(())
}

/// Whether `text` begins, after white space, with `<`: markup (an HTML page), never JSON.
pub(crate) fn starts_as_markup(text: &[u8]) -> bool {
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<')
}

/// The log files a store found missing, `404` (or `410`) and `403` taken as missing, for
/// [`RangeRead::missing_log_answers`]; shared by a store's clones.
#[derive(Debug, Default)]
pub(crate) struct MissingLogAnswers([std::sync::atomic::AtomicU64; 2]);

impl MissingLogAnswers {
    /// Counts `path` found missing, `forbidden` when its answer was `403`; only log files
    /// count.
    pub(crate) fn note(&self, path: &str, forbidden: bool) {
        if path.starts_with("_delta_log/") {
            self.0[usize::from(forbidden)].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// `(not found, forbidden)` so far.
    pub(crate) fn counts(&self) -> (u64, u64) {
        let [not_found, forbidden] = &self.0;
        use std::sync::atomic::Ordering::Relaxed;
        (not_found.load(Relaxed), forbidden.load(Relaxed))
    }
}

/// Whether a `403` for `path` means the file does not exist: S3 answers so for a missing key
/// to a reader without the `ListBucket` permission (a public bucket read over HTTPS), and a
/// table that must be probed asks for `_last_checkpoint` and for commits past the last one.
/// So `_last_checkpoint` and commits after version 0 count as missing when forbidden; commit
/// 0 does not (every request of a reader without access is forbidden, and its first commit
/// is where that shows as `403` rather than as a table of no versions).
pub(crate) fn forbidden_is_missing(path: &str) -> bool {
    let Some(name) = path.strip_prefix("_delta_log/") else {
        return false;
    };
    if name == "_last_checkpoint" {
        return true;
    }
    name.strip_suffix(".json")
        .filter(|digits| digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .is_some_and(|digits| digits.bytes().any(|b| b != b'0'))
}

/// The phase a store error belongs to, judged by its path: log files are read while loading,
/// everything else while reading data.
pub(crate) fn phase_for(path: &str) -> crate::error::Phase {
    if path.starts_with("_delta_log/") || path.contains("/_delta_log/") {
        crate::error::Phase::Load
    } else {
        crate::error::Phase::Read
    }
}

#[cfg(test)]
mod forbidden_tests {
    use super::forbidden_is_missing;

    #[test]
    fn only_last_checkpoint_and_commits_after_the_first_count_as_missing_when_forbidden() {
        assert!(forbidden_is_missing("_delta_log/_last_checkpoint"));
        assert!(forbidden_is_missing("_delta_log/00000000000000000012.json"));
        for kept in [
            "_delta_log/00000000000000000000.json",
            "_delta_log/00000000000000000010.checkpoint.parquet",
            "_delta_log/0000000000000000001.json",
            "_delta_log/0000000000000000001x.json",
            "part-00000.parquet",
            "deletion_vector_1.bin",
            "x/_delta_log/00000000000000000012.json",
        ] {
            assert!(!forbidden_is_missing(kept), "{kept}");
        }
    }
}
