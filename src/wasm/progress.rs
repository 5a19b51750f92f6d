//! Progress and per-scan metrics: [`TrackingStore`] sits under the table's metered store and
//! tells every running scan of that table ([`ScanProgress`]) about each request.
//!
//! A scan counts the requests and bytes made while it runs (two scans of one table running
//! at once each count both), and the data files it has started: the files of a scan are
//! read one after another, so a file counts as done once the next one starts or the scan
//! ends. Progress events go to the scan's `onProgress` callback as
//! `{ filesDone, filesTotal, bytesDone, bytesTotal }`, where `bytesTotal` is the size of the
//! files to read: a projection reads only some of their bytes, so the last event, sent when
//! the scan ends, reports every file and byte done.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::ops::Range;
use std::rc::{Rc, Weak};

use bytes::Bytes;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::JsValue;

use crate::error::Result;
use crate::io::{BoxFuture, ListEntry, RangeRead, Store};

/// The running scans of one table.
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    scans: RefCell<Vec<Weak<ScanProgress>>>,
}

impl Tracker {
    /// Starts crediting requests to `scan` (until it finishes or is dropped).
    pub(crate) fn register(&self, scan: &Rc<ScanProgress>) {
        let mut scans = self.scans.borrow_mut();
        scans.retain(|s| s.upgrade().is_some_and(|s| !s.finished.get()));
        scans.push(Rc::downgrade(scan));
    }

    /// Calls `f` on each running scan. The list is copied first: `f` may call JS, which may
    /// start another scan.
    fn each(&self, f: impl Fn(&ScanProgress)) {
        let live: Vec<Rc<ScanProgress>> = self
            .scans
            .borrow()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for scan in live.iter().filter(|s| !s.finished.get()) {
            f(scan);
        }
    }
}

/// What one scan has read so far.
#[derive(Debug)]
pub(crate) struct ScanProgress {
    /// Paths of the data files to read (as the scan passes them to the store).
    paths: HashSet<String>,
    files_total: u64,
    bytes_total: u64,
    started: RefCell<HashSet<String>>,
    requests: Cell<u64>,
    bytes: Cell<u64>,
    finished: Cell<bool>,
    on_progress: Option<Function>,
}

impl ScanProgress {
    /// Progress of a scan that reads `files` (path, size), reporting to `on_progress`.
    pub(crate) fn new(files: Vec<(String, u64)>, on_progress: Option<Function>) -> Self {
        let files_total = files.len() as u64;
        let bytes_total = files.iter().map(|(_, size)| size).sum();
        ScanProgress {
            paths: files.into_iter().map(|(path, _)| path).collect(),
            files_total,
            bytes_total,
            started: RefCell::new(HashSet::new()),
            requests: Cell::new(0),
            bytes: Cell::new(0),
            finished: Cell::new(false),
            on_progress,
        }
    }

    /// Requests made while the scan ran.
    pub(crate) fn requests(&self) -> u64 {
        self.requests.get()
    }

    /// Bytes received while the scan ran.
    pub(crate) fn bytes_received(&self) -> u64 {
        self.bytes.get()
    }

    /// Data files to read.
    pub(crate) fn files_total(&self) -> u64 {
        self.files_total
    }

    /// Size of the data files to read.
    pub(crate) fn bytes_total(&self) -> u64 {
        self.bytes_total
    }

    /// Data files read completely (all of them once the scan has ended).
    pub(crate) fn files_done(&self) -> u64 {
        if self.finished.get() {
            return self.files_total;
        }
        (self.started.borrow().len() as u64).saturating_sub(1)
    }

    /// Bytes done for progress: received bytes, at most the total; the total at the end.
    fn bytes_done(&self) -> u64 {
        if self.finished.get() {
            return self.bytes_total;
        }
        self.bytes.get().min(self.bytes_total)
    }

    /// Ends the scan (done, failed or aborted); `report` sends a last event.
    pub(crate) fn finish(&self, report: bool) {
        if self.finished.replace(true) {
            return;
        }
        if report {
            self.report();
        }
    }

    fn on_request(&self, path: &str) {
        self.requests.set(self.requests.get() + 1);
        if self.paths.contains(path) {
            let first = self.started.borrow_mut().insert(path.to_string());
            if first {
                self.report();
            }
        }
    }

    fn on_received(&self, bytes: u64) {
        self.bytes.set(self.bytes.get() + bytes);
        if bytes > 0 {
            self.report();
        }
    }

    /// Calls `onProgress({ filesDone, filesTotal, bytesDone, bytesTotal })`; what the
    /// callback throws is ignored (it must not break the read).
    pub(crate) fn report(&self) {
        let Some(callback) = &self.on_progress else {
            return;
        };
        let event = Object::new();
        for (key, value) in [
            ("filesDone", self.files_done()),
            ("filesTotal", self.files_total),
            ("bytesDone", self.bytes_done()),
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

/// Forwards to `inner` and tells the table's running scans about every request.
#[derive(Debug)]
pub(crate) struct TrackingStore {
    inner: Store,
    tracker: Rc<Tracker>,
}

impl TrackingStore {
    pub(crate) fn new(inner: Store, tracker: Rc<Tracker>) -> Self {
        TrackingStore { inner, tracker }
    }

    fn tracked<'a>(
        &'a self,
        path: &str,
        fut: BoxFuture<'a, Result<Bytes>>,
    ) -> BoxFuture<'a, Result<Bytes>> {
        self.tracker.each(|s| s.on_request(path));
        Box::pin(async move {
            let result = fut.await;
            if let Ok(bytes) = &result {
                let n = bytes.len() as u64;
                self.tracker.each(|s| s.on_received(n));
            }
            result
        })
    }
}

impl RangeRead for TrackingStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        self.tracked(path, self.inner.get_range(path, range))
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        self.tracked(path, self.inner.get(path))
    }

    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        self.inner.size(path)
    }

    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<ListEntry>>>> {
        self.inner.list(prefix, start_after)
    }
}
