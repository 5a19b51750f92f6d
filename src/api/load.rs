//! The async driver of [`SnapshotLoader`]: answers its requests from a [`RangeRead`].
//!
//! Every request of one step goes out at once (at most [`MAX_CONCURRENT_REQUESTS`] in
//! flight), and the step's answers are pushed before the loader is polled again, so a load
//! takes as many round trips as the loader has steps.

use futures::stream::{self, StreamExt};

use crate::error::{DeltaError, Result};
use crate::io::RangeRead;
use crate::log::{LoadStep, LoadedLog, LogRequest, SnapshotLoader, VersionTarget};

/// Requests of one step in flight at once.
pub const MAX_CONCURRENT_REQUESTS: usize = 16;

enum Answer {
    Listing(Option<Vec<crate::io::ListEntry>>),
    File(String, Option<bytes::Bytes>),
}

async fn answer(store: &dyn RangeRead, request: LogRequest) -> Result<Answer> {
    match request {
        LogRequest::List {
            prefix,
            start_after,
        } => store
            .list(&prefix, start_after.as_deref())
            .await
            .map(Answer::Listing),
        LogRequest::Get { path, optional } => match store.get(&path).await {
            Ok(bytes) => Ok(Answer::File(path, Some(bytes))),
            Err(DeltaError::NotFound { .. }) if optional => Ok(Answer::File(path, None)),
            Err(e) => Err(e),
        },
    }
}

/// Loads the log of the table in `store` at `target`.
pub async fn load_log(
    store: &dyn RangeRead,
    location: &str,
    target: VersionTarget,
) -> Result<LoadedLog> {
    let mut loader = SnapshotLoader::new(location, target);
    loop {
        let requests = match loader.poll()? {
            LoadStep::Ready(loaded) => return Ok(*loaded),
            LoadStep::Need(requests) => requests,
        };
        let mut answers = stream::iter(requests.into_iter().map(|r| answer(store, r)))
            .buffer_unordered(MAX_CONCURRENT_REQUESTS);
        while let Some(a) = answers.next().await {
            match a? {
                Answer::Listing(entries) => loader.push_listing(entries)?,
                Answer::File(path, data) => loader.push_file(&path, data)?,
            }
        }
    }
}
