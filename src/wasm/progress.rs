//! Progress of one scan, from its own counters ([`DeltaScanMetrics`]): [`ScanProgress`] sends
//! `{ filesDone, filesTotal, bytesDone, bytesTotal }` to the scan's `onProgress` callback, and
//! [`Reporting`] is the future a read runs as, which reports after every poll that moved a
//! counter (each poll follows a request's answer, so events follow the bytes as they arrive).
//!
//! `filesDone` counts the data files read to their end (files are read a few at a time, so
//! they end in any order); `bytesDone` counts each file's bytes received, at most its size, and
//! all of its size once it is read to its end (a projection reads only some of a file);
//! `filesTotal` and `bytesTotal` are the count and size of the files the scan plans to read.
//! The last event, sent when the scan has read everything it needs, has `filesDone =
//! filesTotal` and `bytesDone = bytesTotal`, so a bar ends full even where a `limit` ended the
//! scan before some files were read; `scan.metrics` keeps what was read ([`files_read`],
//! [`bytes_read`]). A scan that fails or is aborted sends no last event.
//!
//! [`files_read`]: ScanProgress::files_read
//! [`bytes_read`]: ScanProgress::bytes_read

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::JsValue;

use crate::read::metrics::DeltaScanMetrics;

/// What one scan has read so far, and its `onProgress` callback.
#[derive(Debug)]
pub(crate) struct ScanProgress {
    metrics: Arc<DeltaScanMetrics>,
    files_total: u64,
    bytes_total: u64,
    /// `(filesDone, bytesDone)` of the last event sent.
    reported: Cell<Option<(u64, u64)>>,
    /// Set once the scan has read everything.
    completed: Cell<bool>,
    on_progress: Option<Function>,
}

impl ScanProgress {
    /// Progress of a scan with `metrics` that reads files of `sizes`, reporting to
    /// `on_progress`.
    pub(crate) fn new(
        metrics: Arc<DeltaScanMetrics>,
        sizes: impl Iterator<Item = u64>,
        on_progress: Option<Function>,
    ) -> Self {
        let (files_total, bytes_total) = sizes.fold((0, 0), |(n, b), size| (n + 1, b + size));
        ScanProgress {
            metrics,
            files_total,
            bytes_total,
            reported: Cell::new(None),
            completed: Cell::new(false),
            on_progress,
        }
    }

    /// Data files to read.
    pub(crate) fn files_total(&self) -> u64 {
        self.files_total
    }

    /// Size of the data files to read.
    pub(crate) fn bytes_total(&self) -> u64 {
        self.bytes_total
    }

    /// Data files read to their end (all of them once the scan has read everything).
    pub(crate) fn files_done(&self) -> u64 {
        if self.completed.get() {
            return self.files_total;
        }
        self.files_read()
    }

    /// Bytes of the data files done (all of them once the scan has read everything).
    pub(crate) fn bytes_done(&self) -> u64 {
        if self.completed.get() {
            return self.bytes_total;
        }
        self.bytes_read()
    }

    /// Data files read to their end so far, whether or not the scan has ended.
    pub(crate) fn files_read(&self) -> u64 {
        self.metrics.file_tasks_completed().min(self.files_total)
    }

    /// Bytes of the data files received so far (at most each file's size, all of it once
    /// read to its end), whether or not the scan has ended.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.metrics.file_bytes_done().min(self.bytes_total)
    }

    /// The scan has read everything: sends the last event.
    pub(crate) fn complete(&self) {
        if !self.completed.replace(true) {
            self.report();
        }
    }

    /// Calls `onProgress({ filesDone, filesTotal, bytesDone, bytesTotal })` if the counts
    /// changed since the last event (or there was none); what the callback throws is ignored
    /// (it must not break the read).
    pub(crate) fn report(&self) {
        let Some(callback) = &self.on_progress else {
            return;
        };
        let now = (self.files_done(), self.bytes_done());
        if self.reported.replace(Some(now)) == Some(now) {
            return;
        }
        let event = Object::new();
        for (key, value) in [
            ("filesDone", now.0),
            ("filesTotal", self.files_total),
            ("bytesDone", now.1),
            ("bytesTotal", self.bytes_total),
        ] {
            let _ = Reflect::set(
                &event,
                &JsValue::from_str(key),
                &JsValue::from(value as f64),
            );
        }
        let _ = callback.call1(&JsValue::UNDEFINED, &event);
    }
}

/// `inner`, reporting progress after each poll.
pub(crate) struct Reporting<'a, F> {
    inner: Pin<&'a mut F>,
    progress: &'a ScanProgress,
}

impl<'a, F> Reporting<'a, F> {
    pub(crate) fn new(inner: Pin<&'a mut F>, progress: &'a ScanProgress) -> Self {
        Reporting { inner, progress }
    }
}

impl<F: Future> Future for Reporting<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let polled = self.inner.as_mut().poll(cx);
        self.progress.report();
        polled
    }
}
