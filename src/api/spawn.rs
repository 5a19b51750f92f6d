//! The native front end's executor hook: each partition of a scan as its own task on the
//! caller's Tokio runtime, so one scan decodes on every core.
//!
//! The core spawns nothing (`read::scheduler` streams advance only while polled). Polling
//! every partition from the one task that polls the merged stream decodes on one core; here
//! each partition is moved onto a task of the runtime that is current when the scan starts,
//! and forwards its items into a bounded channel of `capacity` items
//! (`output_channel_capacity`), which the merged stream drains. A full channel stops its
//! partition, so memory stays bounded by the scan's limits.
//!
//! Dropping a [`SpawnedPartition`] aborts its task: the task's partition stream is dropped by
//! the runtime (promptly, at the task's next scheduling point), which drops its open files and
//! permit waits and so returns every permit.
//!
//! With no Tokio runtime current, [`spawn_partitions`] gives the partitions back and the
//! caller polls them itself, as on wasm32: the scan still works, on the caller's thread.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt};
use tokio::task::AbortHandle;

use crate::metrics::{DeltaScanMetrics, Gauge, GaugeGuard};

/// One partition running on its own task: a stream of what it yields, in its order.
#[derive(Debug)]
pub(crate) struct SpawnedPartition<T> {
    items: mpsc::Receiver<T>,
    task: AbortHandle,
}

impl<T> Drop for SpawnedPartition<T> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl<T> Stream for SpawnedPartition<T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.items.poll_next_unpin(cx)
    }
}

/// Moves each of `parts` onto its own task of the current Tokio runtime, each with a channel
/// of `capacity` items (at least 1). `Err(parts)` gives them back untouched when no runtime
/// is current.
pub(crate) fn spawn_partitions<S>(
    parts: Vec<S>,
    capacity: usize,
    metrics: &std::sync::Arc<DeltaScanMetrics>,
) -> Result<Vec<SpawnedPartition<S::Item>>, Vec<S>>
where
    S: Stream + Send + Unpin + 'static,
    S::Item: Send + 'static,
{
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return Err(parts);
    };
    Ok(parts
        .into_iter()
        .map(|mut part| {
            // `channel(n)` holds n items plus one per sender: n + 1 = capacity.
            let (mut tx, items) = mpsc::channel(capacity.max(1) - 1);
            // Counted from spawn until the task's future is dropped (ended or aborted).
            let guard = GaugeGuard::new(metrics, Gauge::PartitionTasksRunning);
            let task = runtime.spawn(async move {
                let _guard = guard;
                while let Some(item) = part.next().await {
                    if tx.send(item).await.is_err() {
                        break;
                    }
                }
            });
            SpawnedPartition {
                items,
                task: task.abort_handle(),
            }
        })
        .collect())
}
