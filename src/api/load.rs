//! The async driver of [`SnapshotLoader`]: answers its requests from a [`RangeRead`].
//!
//! Listings, whole files (commits, JSON checkpoints) and byte ranges (of Parquet checkpoints:
//! footers, then column chunks) are answered with `list`, `get` and `get_range`. Every
//! request of one step goes out at once (at most the load's request concurrency in
//! flight, [`DEFAULT_LOG_CONCURRENCY`] unless set), and the step's answers are pushed before
//! the loader is polled again, so a load takes as many round trips as the loader has steps.
//!
//! Log files are small and a load is bound by latency, not bandwidth: a log of `n` commits
//! and no checkpoint needs about `n / concurrency` request times to fetch (10,000 commits at
//! 50 ms each: about 1 s at the default). The bound keeps the sockets (or, for local files,
//! the blocking threads) of one load finite.
//!
//! Natively, large commit files are decoded on every core as they arrive (see
//! `decode_commits`) and handed to the loader decoded; on wasm32 the loader decodes them.

use futures::stream::{self, StreamExt};

use crate::error::{DeltaError, Result};
use crate::io::{ListEntry, RangeRead};
use crate::log::path::LogPath;
use crate::log::{
    Discovery, LoadScope, LoadedLog, LogRequest, LogSegment, SnapshotLoader, Step, VersionTarget,
};

/// Log requests in flight at once when a load does not say otherwise.
pub const DEFAULT_LOG_CONCURRENCY: usize = 512;

enum Answer {
    Listing(Option<Vec<LogPath>>),
    File(String, Option<bytes::Bytes>),
    /// An optional file whose read failed other than as missing.
    Failed(String, DeltaError),
    Range(String, std::ops::Range<u64>, bytes::Bytes),
}

/// The log files of a store's listing, as the loader takes them.
pub(crate) fn log_files(entries: &[ListEntry]) -> Vec<LogPath> {
    entries
        .iter()
        .filter_map(|e| LogPath::listed(&e.path, e.size, e.last_modified_ms))
        .collect()
}

async fn answer(store: &dyn RangeRead, request: LogRequest) -> Result<Answer> {
    match request {
        LogRequest::List {
            prefix,
            start_after,
        } => store
            .list(&prefix, start_after.as_deref())
            .await
            .map(|entries| Answer::Listing(entries.as_deref().map(log_files))),
        LogRequest::Get { path, optional } => match store.get(&path).await {
            Ok(bytes) => Ok(Answer::File(path, Some(bytes))),
            Err(DeltaError::NotFound { .. }) if optional => Ok(Answer::File(path, None)),
            // The loader decides whether it needed the file (see `push_failure`).
            Err(e) if optional && !matches!(e, DeltaError::Aborted { .. }) => {
                Ok(Answer::Failed(path, e))
            }
            Err(e) => Err(e),
        },
        LogRequest::GetRange { path, range } => {
            let bytes = store.get_range(&path, range.clone()).await?;
            Ok(Answer::Range(path, range, bytes))
        }
    }
}

/// Loads the log of the table in `store` at `target`, keeping what `scope` says, with at
/// most `concurrency` requests in flight (0 is taken as 1) and at most `max_commits` commits
/// replayed. A store that cannot list (`RangeRead::can_list`) is probed from the first round
/// on; local files are listed whole (see `SnapshotLoader::listing_whole_log`).
pub async fn load_log(
    store: &dyn RangeRead,
    location: &str,
    target: VersionTarget,
    scope: LoadScope,
    concurrency: usize,
    max_commits: u64,
) -> Result<LoadedLog> {
    let mut loader = SnapshotLoader::new(location, target)
        .with_scope(scope)
        .with_max_commits(max_commits);
    if !store.can_list() {
        loader = loader.without_listing();
    } else if store.reads_local_files() {
        loader = loader.listing_whole_log();
    }
    drive(store, loader, concurrency).await
}

/// Replays a segment found by an earlier load again (no discovery): the active files.
pub async fn replay_segment(
    store: &dyn RangeRead,
    location: &str,
    segment: LogSegment,
    discovery: Discovery,
    concurrency: usize,
) -> Result<LoadedLog> {
    drive(
        store,
        SnapshotLoader::for_segment(location, segment, discovery),
        concurrency,
    )
    .await
}

/// Answers the loader's requests until it is done.
async fn drive(
    store: &dyn RangeRead,
    mut loader: SnapshotLoader,
    concurrency: usize,
) -> Result<LoadedLog> {
    loop {
        let requests = match loader.poll()? {
            Step::Ready(loaded) => return Ok(*loaded),
            Step::Need(requests) => requests,
        };
        let mut answers = stream::iter(requests.into_iter().map(|r| answer(store, r)))
            .buffer_unordered(concurrency.max(1));
        #[cfg(not(target_arch = "wasm32"))]
        let mut decoding = futures::stream::FuturesUnordered::new();
        while let Some(a) = answers.next().await {
            match a? {
                Answer::Listing(entries) => loader.push_listing(entries)?,
                Answer::Range(path, range, data) => loader.push_range(&path, range, data)?,
                #[cfg(not(target_arch = "wasm32"))]
                Answer::File(path, Some(data)) => {
                    match super::decode_commits::start(&path, data, loader.scope()) {
                        Ok(decoded) => decoding.push(decoded),
                        Err(data) => loader.push_file(&path, Some(data))?,
                    }
                }
                Answer::File(path, data) => loader.push_file(&path, data)?,
                Answer::Failed(path, e) => loader.push_failure(&path, e)?,
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        while let Some(decoded) = decoding.next().await {
            super::decode_commits::push(&mut loader, decoded)?;
        }
    }
}
