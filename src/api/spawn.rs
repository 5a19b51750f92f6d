//! The native front end's executor hook: each partition of a scan as its own task on the
//! caller's Tokio runtime, so one scan decodes on every core.
//!
//! The core spawns nothing (`read::scheduler` streams advance only while polled). Polling
//! every partition from the one task that polls the merged stream decodes on one core; here
//! each partition is moved onto a task of the runtime that is current when the scan starts,
//! and forwards its items into a bounded channel of `capacity` items
//! (`batches_ahead_per_partition`), which the merged stream drains. A full channel stops its
//! partition, so memory stays bounded by the scan's limits.
//!
//! Dropping a [`SpawnedPartition`] aborts its task: the task's partition stream is dropped by
//! the runtime (promptly, at the task's next scheduling point), which drops its open files and
//! permit waits and so returns every permit.
//!
//! A panic inside a partition's task (a bug, or a dependency's on input it should have
//! refused) is caught and forwarded as the partition's last item, built by the caller's
//! `panicked`: a merged stream that simply saw the channel close would end early, as if the
//! partition's rows did not exist.
//!
//! With no Tokio runtime current, [`spawn_partitions`] gives the partitions back and the
//! caller polls them itself, as on wasm32: the scan still works, on the caller's thread.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::channel::mpsc;
use futures::{FutureExt, SinkExt, Stream, StreamExt};
use tokio::task::AbortHandle;

use crate::read::metrics::{DeltaScanMetrics, Gauge, GaugeGuard};

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
/// of `capacity` items (at least 1). A partition that panics ends with the item `panicked`
/// makes of the panic's message. `Err(parts)` gives them back untouched when no runtime is
/// current.
pub(crate) fn spawn_partitions<S>(
    parts: Vec<S>,
    capacity: usize,
    metrics: &std::sync::Arc<DeltaScanMetrics>,
    panicked: fn(String) -> S::Item,
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
                loop {
                    match AssertUnwindSafe(part.next()).catch_unwind().await {
                        Ok(Some(item)) => {
                            if tx.send(item).await.is_err() {
                                break;
                            }
                        }
                        Ok(None) => break,
                        // The stream is not polled again after a panic.
                        Err(panic) => {
                            let _ = tx.send(panicked(panic_message(panic.as_ref()))).await;
                            break;
                        }
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

/// The message of a caught panic (its `&str` or `String` payload).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}
