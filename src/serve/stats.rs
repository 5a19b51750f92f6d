//! What a server has answered, shared with the caller: counts and a request log.
//!
//! [`ServeStats`] is a cheap handle (an `Arc`); the server records each request before it
//! writes the response head, so a client that has read a response always finds its request
//! counted. Body bytes are counted as hyper takes them to write to the socket. Requests that
//! hyper refuses itself (a malformed head: 400, 431, 505) never reach the server's code and are
//! not counted.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Entries kept in the log; older ones are dropped past this (counters keep counting). At
/// most about 11 MB with the longest paths and ranges (100,000 held 150 MB that nothing read).
const MAX_ENTRIES: usize = 10_000;

/// The longest path or `Range` value an entry keeps, in bytes.
const MAX_RECORDED_BYTES: usize = 512;

/// The methods counted by name (RFC 9110 §9); any other is counted as `OTHER`.
const KNOWN_METHODS: [&str; 9] = [
    "GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "PATCH", "TRACE", "CONNECT",
];

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut_to(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
}

/// One answered request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// The request method as sent (`GET`, `HEAD`, `OPTIONS`, …).
    pub method: String,
    /// The path as sent (still percent-encoded), without query string.
    pub path: String,
    /// The `Range` header, if the request had one (whether or not it was honoured).
    pub range: Option<String>,
    /// The status answered; 0 when the connection was closed unanswered (the
    /// `reset_first` fault).
    pub status: u16,
}

#[derive(Debug, Default)]
struct Inner {
    requests: AtomicU64,
    bytes_sent: AtomicU64,
    connections_accepted: AtomicU64,
    connections_open: AtomicU64,
    connections_refused: AtomicU64,
    log: Mutex<Log>,
}

#[derive(Debug, Default)]
struct Log {
    by_method: BTreeMap<String, u64>,
    entries: Vec<RequestRecord>,
}

/// Request counts and log of one server; clones share the same numbers.
#[derive(Debug, Clone, Default)]
pub struct ServeStats {
    inner: Arc<Inner>,
}

impl ServeStats {
    /// Requests answered (including errors and preflights).
    pub fn requests(&self) -> u64 {
        self.inner.requests.load(Ordering::SeqCst)
    }

    /// Requests with this method (case-sensitive, e.g. `"GET"`).
    pub fn requests_by_method(&self, method: &str) -> u64 {
        self.log().by_method.get(method).copied().unwrap_or(0)
    }

    /// Counts per method.
    pub fn by_method(&self) -> BTreeMap<String, u64> {
        self.log().by_method.clone()
    }

    /// Body bytes sent (response heads not included).
    pub fn bytes_sent(&self) -> u64 {
        self.inner.bytes_sent.load(Ordering::SeqCst)
    }

    /// The request log, oldest first (the most recent 100 000 entries).
    pub fn entries(&self) -> Vec<RequestRecord> {
        self.log().entries.clone()
    }

    /// Requests whose path ends with `suffix` (e.g. `".parquet"`), any method.
    pub fn count_path_suffix(&self, suffix: &str) -> usize {
        self.log()
            .entries
            .iter()
            .filter(|e| e.path.ends_with(suffix))
            .count()
    }

    /// Forgets everything counted so far.
    pub fn reset(&self) {
        let mut log = self.log();
        self.inner.requests.store(0, Ordering::SeqCst);
        self.inner.bytes_sent.store(0, Ordering::SeqCst);
        log.by_method.clear();
        log.entries.clear();
    }

    pub(crate) fn record(&self, mut record: RequestRecord) {
        // What a client sends is bounded here, so that no stream of requests grows the log
        // past its entries: a method HTTP does not define counts as `OTHER`, and a path or
        // `Range` value is kept to its first `MAX_RECORDED_BYTES`.
        if !KNOWN_METHODS.contains(&record.method.as_str()) {
            record.method = "OTHER".to_string();
        }
        cut_to(&mut record.path, MAX_RECORDED_BYTES);
        if let Some(range) = &mut record.range {
            cut_to(range, MAX_RECORDED_BYTES);
        }
        let mut log = self.log();
        self.inner.requests.fetch_add(1, Ordering::SeqCst);
        *log.by_method.entry(record.method.clone()).or_insert(0) += 1;
        if log.entries.len() >= MAX_ENTRIES {
            let drop = MAX_ENTRIES / 10;
            log.entries.drain(..drop);
        }
        log.entries.push(record);
    }

    /// Connections accepted so far.
    pub fn connections_accepted(&self) -> u64 {
        self.inner.connections_accepted.load(Ordering::SeqCst)
    }

    /// Connections open now (a gauge: back to 0 once every client has gone).
    pub fn connections_open(&self) -> u64 {
        self.inner.connections_open.load(Ordering::SeqCst)
    }

    /// Connections closed at once because their client already had as many open as a
    /// client may.
    pub fn connections_refused(&self) -> u64 {
        self.inner.connections_refused.load(Ordering::SeqCst)
    }

    /// Counts a connection open until the guard is dropped.
    pub(crate) fn connection(&self) -> OpenConnection {
        self.inner
            .connections_accepted
            .fetch_add(1, Ordering::SeqCst);
        self.inner.connections_open.fetch_add(1, Ordering::SeqCst);
        OpenConnection(self.clone())
    }

    pub(crate) fn connection_refused(&self) {
        self.inner
            .connections_refused
            .fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn add_bytes(&self, n: u64) {
        self.inner.bytes_sent.fetch_add(n, Ordering::SeqCst);
    }

    /// The log, even if a thread panicked while holding it (the data stays usable).
    fn log(&self) -> MutexGuard<'_, Log> {
        self.inner
            .log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One open connection in [`ServeStats::connections_open`]; counted out when dropped.
#[derive(Debug)]
pub(crate) struct OpenConnection(ServeStats);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.inner.connections_open.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(method: &str, path: &str) -> RequestRecord {
        RequestRecord {
            method: method.into(),
            path: path.into(),
            range: None,
            status: 200,
        }
    }

    #[test]
    fn counts_and_log() {
        let stats = ServeStats::default();
        let shared = stats.clone();
        stats.record(rec("GET", "/a.parquet"));
        stats.record(rec("HEAD", "/a.parquet"));
        stats.record(rec("GET", "/b.json"));
        stats.add_bytes(10);
        assert_eq!(shared.requests(), 3);
        assert_eq!(shared.requests_by_method("GET"), 2);
        assert_eq!(shared.requests_by_method("OPTIONS"), 0);
        assert_eq!(shared.bytes_sent(), 10);
        assert_eq!(shared.count_path_suffix(".parquet"), 2);
        assert_eq!(shared.entries()[2], rec("GET", "/b.json"));
        shared.reset();
        assert_eq!(stats.requests(), 0);
        assert!(stats.entries().is_empty());
        assert!(stats.by_method().is_empty());
    }

    /// A client cannot grow the record beyond its bounds: unknown methods share one count,
    /// long paths and ranges are cut (at a character boundary).
    #[test]
    fn what_clients_send_is_bounded() {
        let stats = ServeStats::default();
        for i in 0..1000 {
            stats.record(rec(&format!("M{i}"), "/x"));
        }
        assert_eq!(stats.by_method().len(), 1);
        assert_eq!(stats.requests_by_method("OTHER"), 1000);
        let long = format!("/{}", "é".repeat(10_000));
        let mut r = rec("GET", &long);
        r.range = Some("bytes=".repeat(1000));
        stats.record(r);
        let last = stats.entries().pop().unwrap();
        assert!(last.path.len() <= MAX_RECORDED_BYTES && last.path.len() > 500);
        assert!(long.starts_with(&last.path));
        assert!(last.range.is_some_and(|r| r.len() == MAX_RECORDED_BYTES));
    }
}
