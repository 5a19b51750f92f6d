//! The native front end's executor hook: each partition of a scan as its own task on the
//! caller's Tokio runtime, so one scan decodes on every core.
//!
//! The core spawns nothing (`read::scheduler` streams advance only while polled). Polling
//! every partition from the one task that polls the merged stream decodes on one core; here
//! each partition is moved onto a task of the runtime that is current when the scan starts,
//! and forwards its items into a bounded channel, which the merged stream drains. A full
//! channel stops its partition, so memory stays bounded by the scan's limits.
//!
//! Items cross the channel in groups: the task sends its partition's first item alone, at
//! once (time to the first batch), then what its partition has ready, up to `capacity` items
//! (`batches_ahead_per_partition`), in one message, at once when the partition has nothing
//! more ready, and gathers the next group while the channel holds the last. The thread that
//! polls the merged stream is woken once per group instead of once per batch. On the
//! benchmark's full scan (2 cores, one binary, medians of 7): groups of up to 2, 2,900
//! context switches and 0.910 s; groups of up to 4, 2,000 and 0.851 s (the arrow-rs limit:
//! 0.775 s). One batch per message had cost 5,100 context switches.
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
    groups: mpsc::Receiver<Vec<T>>,
    /// The rest of the group received last, handed out before the next is awaited.
    current: std::vec::IntoIter<T>,
    task: AbortHandle,
}

// Nothing in it is pinned: the receiver is `Unpin`, and the group's items are only moved out.
impl<T> Unpin for SpawnedPartition<T> {}

impl<T> Drop for SpawnedPartition<T> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl<T> Stream for SpawnedPartition<T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        loop {
            if let Some(item) = self.current.next() {
                return Poll::Ready(Some(item));
            }
            match self.groups.poll_next_unpin(cx) {
                Poll::Ready(Some(group)) => self.current = group.into_iter(),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// Whether [`spawn_partitions`] would run partitions side by side: a Tokio runtime with
/// worker threads is current (a current-thread runtime, or none, polls them on one thread).
pub(crate) fn partitions_run_in_parallel() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() != tokio::runtime::RuntimeFlavor::CurrentThread)
}

/// Moves each of `parts` onto its own task of the current Tokio runtime. Its items are
/// handed over in groups of up to `capacity` (at least 1): one group waits in the channel
/// while the task gathers the next. A partition that panics ends with the item `panicked`
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
    let group_max = capacity.max(1);
    Ok(parts
        .into_iter()
        .map(|part| {
            // `channel(0)` holds one group (one per sender).
            let (tx, groups) = mpsc::channel(0);
            // Counted from spawn until the task's future is dropped (ended or aborted).
            let guard = GaugeGuard::new(metrics, Gauge::PartitionTasksRunning);
            let task = runtime.spawn(async move {
                let _guard = guard;
                forward_in_groups(part, tx, group_max, panicked).await;
            });
            SpawnedPartition {
                groups,
                current: Vec::new().into_iter(),
                task: task.abort_handle(),
            }
        })
        .collect())
}

/// Polls `part` to its end, sending its items to `tx` in groups of at most `group_max`: the
/// first item alone, at once (the consumer's first batch does not wait for a whole group to
/// decode); then a group goes when full, when `part` has nothing ready, and at the end.
async fn forward_in_groups<S: Stream + Unpin>(
    mut part: S,
    mut tx: mpsc::Sender<Vec<S::Item>>,
    group_max: usize,
    panicked: fn(String) -> S::Item,
) {
    let mut group = Vec::with_capacity(group_max);
    let mut first = true;
    loop {
        let polled = if group.is_empty() {
            AssertUnwindSafe(part.next()).catch_unwind().await
        } else {
            // Only what is ready now joins the group (a pending poll leaves its waker with
            // the partition; the next await polls it again with the task's own).
            match AssertUnwindSafe(part.next()).catch_unwind().now_or_never() {
                Some(polled) => polled,
                None => {
                    if tx.send(std::mem::take(&mut group)).await.is_err() {
                        return;
                    }
                    continue;
                }
            }
        };
        match polled {
            Ok(Some(item)) => {
                group.push(item);
                let full = first || group.len() >= group_max;
                first = false;
                if full && tx.send(std::mem::take(&mut group)).await.is_err() {
                    return;
                }
            }
            Ok(None) => break,
            // The stream is not polled again after a panic.
            Err(panic) => {
                group.push(panicked(panic_message(panic.as_ref())));
                break;
            }
        }
    }
    if !group.is_empty() {
        let _ = tx.send(group).await;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The groups `forward_in_groups` sends for `part`.
    async fn forwarded<S: Stream<Item = u32> + Unpin>(
        part: S,
        group_max: usize,
        panicked: fn(String) -> u32,
    ) -> Vec<Vec<u32>> {
        let (tx, rx) = mpsc::channel(0);
        let send = forward_in_groups(part, tx, group_max, panicked);
        let (_, groups) = futures::join!(send, rx.collect::<Vec<_>>());
        groups
    }

    /// The groups `forward_in_groups` sends for a partition of `n` items always ready.
    async fn groups_of(n: u32, group_max: usize) -> Vec<Vec<u32>> {
        forwarded(futures::stream::iter(0..n), group_max, |_| u32::MAX).await
    }

    #[tokio::test]
    async fn the_first_item_goes_alone_then_full_groups() {
        let groups = groups_of(10, 4).await;
        assert_eq!(
            groups,
            vec![vec![0], vec![1, 2, 3, 4], vec![5, 6, 7, 8], vec![9]]
        );
        assert_eq!(groups_of(1, 4).await, vec![vec![0]]);
        assert_eq!(groups_of(0, 4).await, Vec::<Vec<u32>>::new());
        assert_eq!(groups_of(3, 1).await, vec![vec![0], vec![1], vec![2]]);
    }

    #[tokio::test]
    async fn a_panicking_partition_ends_with_its_message() {
        let part = futures::stream::iter(0..3u32).map(|i| {
            assert!(i < 2, "item {i}");
            i
        });
        let groups = forwarded(part, 4, |m| if m.contains("item 2") { 99 } else { 98 }).await;
        let items: Vec<u32> = groups.into_iter().flatten().collect();
        assert_eq!(items, vec![0, 1, 99]);
    }
}
