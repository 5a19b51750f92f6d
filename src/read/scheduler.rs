//! Read scheduling for one partition of a scan: permits, prefetch, a bounded output buffer
//! and cancellation, with no runtime.
//!
//! [`PartitionStream`] is a plain `Stream`: it spawns nothing, and every file read it runs
//! advances only while the consumer polls it, so the same code runs on multi-threaded Tokio
//! and on wasm32's single-threaded executor. On each poll it
//!
//! 1. admits the next task in order when fewer than `1 + prefetch` files are open (with
//!    prefetch on, a file read whole may come in past that, up to the partition's
//!    concurrent reads): the task
//!    first takes a per-partition permit, then a scan-wide one ([`Semaphore`], fair, FIFO),
//!    and only then is its file stream created; a task that cannot get both waits without
//!    opening its file. With an [`AdmitCheck`], the check is asked just before a task that
//!    holds its permits is admitted: a task it turns down is skipped (its permits go back at
//!    once, nothing is read, the metrics count it);
//! 2. polls the current (oldest) file stream while the output buffer holds fewer than
//!    `batches_ahead_per_partition` batches;
//! 3. polls each prefetched file stream until it holds its first batch, which waits there
//!    until the stream's turn (task order is kept).
//!
//! A partition's tasks are its own, or (a merge in arrival order) its share of one
//! [`SharedTasks`] queue of the whole scan: then a partition takes the next task only when it
//! has room for it, so partitions that decode faster take more and all end together.
//!
//! A file stream holds its two permits until it ends or is dropped. Dropping the partition
//! drops its queued tasks, its open and prefetched streams, and any permit wait, which
//! releases every permit at once. An error ends the partition: what is already buffered is
//! returned, then the error, then the end; nothing else is read.
//!
//! The scan-wide semaphore is shared by the partitions of one scan: partition streams must be
//! polled concurrently (as a merged stream or by DataFusion), since a partition that is no
//! longer polled keeps the permits of its open files.
//!
//! [`OrderedMerge`] polls every partition of a scan and hands their batches out in the scan's
//! task order; each partition still reads ahead within its own limits. (A merge in arrival
//! order needs nothing of this file: every partition is drained as it yields.)
//!
//! The semaphore is this file's own (a mutex, a count and a FIFO of wakers) rather than a
//! crate's, so the read path needs no new dependency on either target.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use futures::Stream;

use super::decoder::FileDecoder;
use super::file::ReadContext;
use super::progress::{CreditingStore, FileCredit};
use crate::error::{DeltaError, Phase, Result};
use crate::io::{BoxFuture, BoxStream, RangeRead};
use crate::plan::FileTask;
use crate::read::metrics::{DeltaScanMetrics, Gauge, GaugeGuard};

/// The semaphore of file reads: tokio's, which needs no runtime (it runs on wasm32 too) and
/// is fair: waiters get permits in the order they asked, a dropped wait leaves the queue.
pub use tokio::sync::Semaphore;

/// A semaphore of `permits` permits (at most tokio's maximum, which is far beyond any file
/// count: a larger option is clamped, never a panic).
pub fn semaphore(permits: usize) -> Arc<Semaphore> {
    Arc::new(Semaphore::new(permits.min(Semaphore::MAX_PERMITS)))
}

/// One permit of a [`Semaphore`], given back on drop.
type Permit = tokio::sync::OwnedSemaphorePermit;

/// Waits for one permit of `semaphore`. The scan's semaphores are never closed; a closed one
/// would be a bug, reported as an internal error rather than a hang.
async fn acquire(semaphore: Arc<Semaphore>) -> Result<Permit> {
    semaphore
        .acquire_owned()
        .await
        .map_err(|_| DeltaError::Internal {
            reason: "a file read semaphore was closed".into(),
            phase: Phase::Read,
        })
}

/// The two permits an admitted file task holds, counted in the scan's
/// [`DeltaScanMetrics::file_reads_open`] while held.
#[derive(Debug)]
struct Permits {
    _partition: Permit,
    _scan: Permit,
    _open: GaugeGuard,
}

/// Takes the partition permit, then the scan-wide one, counted as an open read in `metrics`.
async fn acquire_both(
    partition: Arc<Semaphore>,
    scan: Arc<Semaphore>,
    metrics: Arc<DeltaScanMetrics>,
) -> Result<Permits> {
    let p = acquire(partition).await?;
    let s = acquire(scan).await?;
    Ok(Permits {
        _partition: p,
        _scan: s,
        _open: GaugeGuard::new(&metrics, Gauge::FileReadsOpen),
    })
}

/// Asked just before a file task is admitted, with the latest knowledge of the caller (such
/// as a dynamic filter): `false` skips the task. Any doubt must answer `true`.
pub type AdmitCheck = Arc<dyn Fn(&FileTask) -> bool + Send + Sync>;

/// What every partition of a scan shares.
#[derive(Clone)]
pub struct ScanShared {
    /// File reads of the whole scan.
    pub scan_permits: Arc<Semaphore>,
    /// The scan's metrics.
    pub metrics: Arc<DeltaScanMetrics>,
    /// Freezes the scan's I/O counts when the last partition lets go of it (held, never read).
    pub _end: Arc<ScanEnd>,
    /// Decides, just before admission, whether a task is still worth reading.
    pub admit_check: Option<AdmitCheck>,
}

impl std::fmt::Debug for ScanShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanShared")
            .field("scan_permits", &self.scan_permits)
            .field("admit_check", &self.admit_check.is_some())
            .finish_non_exhaustive()
    }
}

/// Dropped with the last partition of a scan: the scan's I/O counts freeze.
#[derive(Debug)]
pub struct ScanEnd(pub Arc<DeltaScanMetrics>);

impl Drop for ScanEnd {
    fn drop(&mut self) {
        self.0.end_io();
    }
}

/// Per-partition limits, validated by the caller (each at least 1 where it must be).
#[derive(Debug, Clone)]
pub struct PartitionLimits {
    /// File reads at once in this partition.
    pub max_concurrent_file_reads: usize,
    /// File streams opened ahead of the current one.
    pub prefetch_files: usize,
    /// Batches decoded ahead of the consumer.
    pub output_capacity: usize,
    /// Whole-file read threshold in bytes, if on.
    pub full_file_read_threshold: Option<u64>,
    /// What decodes the files.
    pub decoder: Arc<dyn FileDecoder>,
}

impl PartitionLimits {
    /// Whether `task` fetches its file whole in one request (ranged tasks never do).
    fn reads_whole(&self, task: &FileTask) -> bool {
        task.range.is_none()
            && self
                .full_file_read_threshold
                .is_some_and(|t| task.size <= t)
    }
}

/// An admitted file: its task's index in the scan, its stream, its permits, and (when
/// prefetched) its first item.
struct OpenFile {
    index: usize,
    stream: BoxStream<'static, Result<RecordBatch>>,
    /// Its bytes read, credited to the scan's metrics.
    credit: Arc<FileCredit>,
    peeked: Option<Result<RecordBatch>>,
    _permits: Permits,
}

/// An item of a partition tagged with the index (in the scan) of the task it comes from.
pub type Tagged = (usize, Result<RecordBatch>);

/// The file tasks of the partitions of one scan that share their work: each partition takes
/// the next task when it has room for one, so a partition whose files decode faster takes
/// more of them and every partition ends at about the same time. Tasks are taken in the
/// queue's order. For merges in arrival order only: a partition's tasks are not known ahead.
// Unused on wasm32, which reads one partition.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
#[derive(Debug, Clone, Default)]
pub struct SharedTasks(Arc<std::sync::Mutex<VecDeque<(usize, FileTask)>>>);

#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
impl SharedTasks {
    /// A queue of `tasks` (each with its index in the scan), taken front first.
    pub fn new(tasks: Vec<(usize, FileTask)>) -> Self {
        SharedTasks(Arc::new(std::sync::Mutex::new(tasks.into())))
    }

    /// The queue, even after a partition panicked while holding it (every operation on it
    /// leaves it whole).
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(usize, FileTask)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The tasks a partition has yet to admit: its own, in order, or its share of a queue.
#[derive(Debug)]
enum Pending {
    Own(VecDeque<(usize, FileTask)>),
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Shared(SharedTasks),
}

impl Pending {
    /// Whether the next task is there, and (when `whole` says so) read whole.
    fn next_is(&self, whole: impl Fn(&FileTask) -> bool) -> Option<bool> {
        match self {
            Pending::Own(tasks) => tasks.front().map(|(_, t)| whole(t)),
            Pending::Shared(queue) => queue.lock().front().map(|(_, t)| whole(t)),
        }
    }

    fn next_index(&self) -> Option<usize> {
        match self {
            Pending::Own(tasks) => tasks.front().map(|(i, _)| *i),
            Pending::Shared(queue) => queue.lock().front().map(|(i, _)| *i),
        }
    }

    fn take(&mut self) -> Option<(usize, FileTask)> {
        match self {
            Pending::Own(tasks) => tasks.pop_front(),
            Pending::Shared(queue) => queue.lock().pop_front(),
        }
    }

    fn is_empty(&self) -> bool {
        self.next_index().is_none()
    }

    fn len(&self) -> usize {
        match self {
            Pending::Own(tasks) => tasks.len(),
            Pending::Shared(queue) => queue.lock().len(),
        }
    }
}

/// The batches of one partition's file tasks, in task order, each tagged with its task's
/// index in the scan. See the module doc.
pub struct PartitionStream {
    ctx: ReadContext,
    limits: PartitionLimits,
    pending: Pending,
    admitting: Option<BoxFuture<'static, Result<Permits>>>,
    files: VecDeque<OpenFile>,
    buffer: VecDeque<Tagged>,
    partition_permits: Arc<Semaphore>,
    shared: Option<ScanShared>,
    metrics: Arc<DeltaScanMetrics>,
    started: bool,
}

impl std::fmt::Debug for PartitionStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionStream")
            .field("pending", &self.pending.len())
            .field("open_files", &self.files.len())
            .field("buffered", &self.buffer.len())
            .field("ended", &self.shared.is_none())
            .finish_non_exhaustive()
    }
}

impl PartitionStream {
    /// A partition reading `tasks` (each with its index in the scan) in order.
    pub fn new(
        ctx: ReadContext,
        tasks: Vec<(usize, FileTask)>,
        limits: PartitionLimits,
        shared: ScanShared,
    ) -> Self {
        Self::with_pending(ctx, Pending::Own(tasks.into()), limits, shared)
    }

    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    /// A partition taking its tasks from `queue`, which other partitions of the scan take
    /// from too (see [`SharedTasks`]). Its items keep their tasks' indices in the scan.
    pub fn sharing(
        ctx: ReadContext,
        queue: SharedTasks,
        limits: PartitionLimits,
        shared: ScanShared,
    ) -> Self {
        Self::with_pending(ctx, Pending::Shared(queue), limits, shared)
    }

    fn with_pending(
        ctx: ReadContext,
        pending: Pending,
        limits: PartitionLimits,
        shared: ScanShared,
    ) -> Self {
        let limits = PartitionLimits {
            max_concurrent_file_reads: limits.max_concurrent_file_reads.max(1),
            output_capacity: limits.output_capacity.max(1),
            ..limits
        };
        PartitionStream {
            ctx,
            partition_permits: semaphore(limits.max_concurrent_file_reads),
            limits,
            pending,
            admitting: None,
            files: VecDeque::new(),
            buffer: VecDeque::new(),
            metrics: Arc::clone(&shared.metrics),
            shared: Some(shared),
            started: false,
        }
    }

    /// The same partition holding at most `batches` decoded batches itself (at least 1): on a
    /// task of its own it hands them to a channel that holds the read-ahead, so decoding
    /// several batches before the first goes out would only hold them longer.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub fn with_output_capacity(mut self, batches: usize) -> Self {
        self.limits.output_capacity = batches.max(1);
        self
    }

    /// Drops every queued task, open stream and permit wait.
    fn shut_down(&mut self) {
        // A shared queue is left to the other partitions.
        self.pending = Pending::Own(VecDeque::new());
        self.admitting = None;
        self.files.clear();
        self.shared = None;
    }

    fn fail(&mut self, index: usize, error: crate::DeltaError) {
        self.shut_down();
        self.buffer.push_back((index, Err(error)));
    }

    /// The file stream of an admitted task.
    // On wasm32 stores are not `Send`: the `Arc` is shared on one thread only.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    fn open(
        &self,
        task: FileTask,
        credit: &Arc<FileCredit>,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        let mut ctx = self.ctx.clone();
        ctx.store = Arc::new(CreditingStore::new(ctx.store, Arc::clone(credit)));
        // A small file is read whole; a larger remote one keeps the tail its footer read
        // fetched, which holds its last pages too (see `kept_tail`).
        let whole = self.limits.reads_whole(&task);
        if whole || !ctx.store.reads_local_files() {
            ctx.store = Arc::new(super::kept_tail::KeptBytesStore::new(
                Arc::clone(&ctx.store),
                task.path.clone(),
                task.size,
                whole,
            ));
        }
        self.limits
            .decoder
            .read(ctx, task, Some(Arc::clone(&self.metrics)))
    }

    /// Whether another file may be admitted: fewer than `1 + prefetch` are open, or (with
    /// prefetch on) the next is small enough to be read whole and fewer than the partition's
    /// concurrent reads are open. A small file holds one request's bytes at most, so a table
    /// of many small files keeps every read slot busy (in a browser each request costs a
    /// round trip) while large files stay at the prefetch depth, which bounds the bytes held.
    /// From a queue shared with other partitions, small files past the prefetch depth are
    /// taken only while the queue holds more than this partition has open: a partition that
    /// took a short queue's every file would decode them all on its one thread.
    fn has_room(&self) -> bool {
        let open = self.files.len();
        let prefetch = self.limits.prefetch_files;
        match self.pending.next_is(|task| self.limits.reads_whole(task)) {
            None => false,
            Some(_) if open < prefetch.saturating_add(1) => true,
            Some(whole) => {
                whole
                    && prefetch > 0
                    && open < self.limits.max_concurrent_file_reads
                    && match &self.pending {
                        Pending::Own(_) => true,
                        Pending::Shared(_) => open < self.pending.len(),
                    }
            }
        }
    }

    /// Admits tasks while there is room; `true` when one was admitted.
    fn admit(&mut self, cx: &mut Context<'_>) -> bool {
        let mut admitted = false;
        if self.admitting.is_some() && self.pending.is_empty() {
            // Another partition took the shared queue's last task while this one waited for
            // permits: the wait (and any permit it was given) goes, or it would hold them and
            // keep this partition from ending.
            self.admitting = None;
        }
        while self.has_room() {
            let Some(shared) = &self.shared else { break };
            let fut = self.admitting.get_or_insert_with(|| {
                Box::pin(acquire_both(
                    Arc::clone(&self.partition_permits),
                    Arc::clone(&shared.scan_permits),
                    Arc::clone(&self.metrics),
                ))
            });
            let Poll::Ready(permits) = fut.as_mut().poll(cx) else {
                break;
            };
            self.admitting = None;
            let permits = match permits {
                Ok(permits) => permits,
                Err(e) => {
                    // Ends the partition like a failed read: the error, then nothing.
                    let index = self.pending.next_index().unwrap_or(0);
                    self.fail(index, e);
                    return true;
                }
            };
            let Some((index, task)) = self.pending.take() else {
                break;
            };
            if shared
                .admit_check
                .as_ref()
                .is_some_and(|check| !check(&task))
            {
                // Turned down: the permits go back now and the next task may come in.
                drop(permits);
                self.metrics.file_task_skipped();
                admitted = true;
                continue;
            }
            self.metrics.file_task_started();
            // A byte-range task is credited its range's length, so a file read in ranges
            // counts its size once over all of them.
            let credit = FileCredit::new(task.bytes(), Arc::clone(&self.metrics));
            let stream = self.open(task, &credit);
            self.files.push_back(OpenFile {
                index,
                stream,
                credit,
                peeked: None,
                _permits: permits,
            });
            admitted = true;
        }
        admitted
    }

    /// Polls the current file into the buffer; `true` when a file ended.
    fn drive_current(&mut self, cx: &mut Context<'_>) -> bool {
        while self.buffer.len() < self.limits.output_capacity {
            let Some(current) = self.files.front_mut() else {
                return false;
            };
            let index = current.index;
            if let Some(item) = current.peeked.take() {
                match item {
                    Ok(batch) => self.buffer.push_back((index, Ok(batch))),
                    Err(e) => {
                        self.fail(index, e);
                        return false;
                    }
                }
                continue;
            }
            match current.stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(batch))) => self.buffer.push_back((index, Ok(batch))),
                Poll::Ready(Some(Err(e))) => {
                    self.fail(index, e);
                    return false;
                }
                Poll::Ready(None) => {
                    if let Some(file) = self.files.pop_front() {
                        file.credit.complete();
                    }
                    self.metrics.file_task_completed();
                    return true;
                }
                Poll::Pending => return false,
            }
        }
        false
    }

    /// Polls each prefetched file until it holds its first item; `true` when one ended.
    fn drive_prefetched(&mut self, cx: &mut Context<'_>) -> bool {
        let mut i = 1;
        let mut ended = false;
        while i < self.files.len() {
            let file = &mut self.files[i];
            if file.peeked.is_some() {
                i += 1;
                continue;
            }
            match file.stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(Err(e))) => {
                    // An error ends the partition now, after what is buffered.
                    let index = file.index;
                    self.fail(index, e);
                    return false;
                }
                Poll::Ready(Some(Ok(batch))) => {
                    file.peeked = Some(Ok(batch));
                    i += 1;
                }
                Poll::Ready(None) => {
                    // No rows: nothing to keep in order.
                    if let Some(file) = self.files.remove(i) {
                        file.credit.complete();
                    }
                    self.metrics.file_task_completed();
                    ended = true;
                }
                Poll::Pending => i += 1,
            }
        }
        ended
    }
}

impl Stream for PartitionStream {
    type Item = Tagged;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if !this.started {
            this.started = true;
            this.metrics.partition_started();
        }
        while this.shared.is_some() {
            let admitted = this.admit(cx);
            let current_ended = this.drive_current(cx);
            let prefetched_ended = this.shared.is_some() && this.drive_prefetched(cx);
            if !(admitted || current_ended || prefetched_ended) {
                break;
            }
        }
        if let Some(item) = this.buffer.pop_front() {
            return Poll::Ready(Some(item));
        }
        if this.shared.is_some()
            && this.pending.is_empty()
            && this.files.is_empty()
            && this.admitting.is_none()
        {
            this.shared = None;
            this.metrics.partition_completed();
        }
        if this.shared.is_none() {
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}

/// The partitions of a scan merged back into the scan's task order.
///
/// Every partition is polled (so all of them read ahead, each within its own limits), and
/// their items are handed out in the order of the tasks they come from: the items of task
/// `g` come from the partition that owns it; once that partition shows an item of a later
/// task, or ends, task `g` is done. Errors are handed out as soon as they are seen.
///
/// A partition waiting for its turn keeps the permits of its open files, so the scan-wide
/// limit must leave one permit for the partition whose turn it is: see [`merge_safe_partitions`].
pub struct OrderedMerge {
    parts: Vec<MergePart>,
    /// Task index → partition.
    owner: Vec<usize>,
    next: usize,
}

struct MergePart {
    stream: Option<BoxStream<'static, Tagged>>,
    peek: Option<Tagged>,
}

impl MergePart {
    fn fill(&mut self, cx: &mut Context<'_>) {
        if self.peek.is_some() {
            return;
        }
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        match stream.as_mut().poll_next(cx) {
            Poll::Ready(Some(item)) => self.peek = Some(item),
            Poll::Ready(None) => self.stream = None,
            Poll::Pending => {}
        }
    }
}

impl OrderedMerge {
    /// Merges `parts` (partition streams, or what each partition yields when it runs
    /// elsewhere); `owner[i]` is the partition reading task `i`.
    pub fn new(parts: Vec<BoxStream<'static, Tagged>>, owner: Vec<usize>) -> Self {
        OrderedMerge {
            parts: parts
                .into_iter()
                .map(|p| MergePart {
                    stream: Some(p),
                    peek: None,
                })
                .collect(),
            owner,
            next: 0,
        }
    }
}

/// The most partitions a merged, ordered read can run with `scan_wide` permits when each
/// partition holds at most `per_partition` (its per-partition limit, or `1 + prefetch` when
/// smaller): the partitions not in turn hold at most `scan_wide - 1`, leaving one for the
/// partition in turn.
pub fn merge_safe_partitions(scan_wide: usize, per_partition: usize) -> usize {
    scan_wide.max(1).saturating_sub(1) / per_partition.max(1) + 1
}

impl Stream for OrderedMerge {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            let Some(&head) = this.owner.get(this.next) else {
                return Poll::Ready(None);
            };
            // The partition in turn first, then the others read ahead.
            if let Some(part) = this.parts.get_mut(head) {
                part.fill(cx);
            }
            for (i, part) in this.parts.iter_mut().enumerate() {
                if i != head {
                    part.fill(cx);
                }
            }
            for part in &mut this.parts {
                if matches!(part.peek, Some((_, Err(_)))) {
                    if let Some((_, item)) = part.peek.take() {
                        return Poll::Ready(Some(item));
                    }
                }
            }
            let Some(part) = this.parts.get_mut(head) else {
                return Poll::Ready(None);
            };
            match &part.peek {
                Some((task, _)) if *task <= this.next => {
                    if let Some((_, item)) = part.peek.take() {
                        return Poll::Ready(Some(item));
                    }
                }
                // The partition has moved on past task `next`, or has ended.
                Some(_) => this.next += 1,
                None if part.stream.is_none() => this.next += 1,
                None => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;

    use futures::task::noop_waker;

    #[test]
    fn semaphore_is_fair_and_cancellable() {
        let sem = semaphore(1);
        let waker = noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut a = Box::pin(acquire(Arc::clone(&sem)));
        let Poll::Ready(Ok(held)) = a.as_mut().poll(&mut cx) else {
            panic!("first acquire waits")
        };
        let mut b = Box::pin(acquire(Arc::clone(&sem)));
        let mut c = Box::pin(acquire(Arc::clone(&sem)));
        assert!(b.as_mut().poll(&mut cx).is_pending());
        assert!(c.as_mut().poll(&mut cx).is_pending());
        drop(held);
        // c is behind b: it must not overtake.
        assert!(c.as_mut().poll(&mut cx).is_pending());
        // Dropping b hands the permit on to c.
        drop(b);
        assert!(matches!(c.as_mut().poll(&mut cx), Poll::Ready(Ok(_))));
        assert_eq!(sem.available_permits(), 1);
        // A closed semaphore is an internal error, not a wait for ever.
        sem.close();
        let mut d = Box::pin(acquire(Arc::clone(&sem)));
        let Poll::Ready(Err(e)) = d.as_mut().poll(&mut cx) else {
            panic!("a closed semaphore still waits")
        };
        assert_eq!(e.code(), "internal");
    }
}
