//! Fault injection for tests: misbehaviours a real HTTP host shows now and then.
//!
//! Configured per server with [`Faults`]; the running server keeps a [`FaultState`] (a
//! shared counter) and asks it, per request, what to do. `OPTIONS` preflights are never
//! faulted (a browser treats a failed preflight as a network error, which is another test).

use std::sync::atomic::{AtomicU64, Ordering};

/// Misbehaviours to inject. The default injects none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Ignore `Range` headers: answer 200 with the whole body (as some servers and CDNs
    /// do), and advertise `Accept-Ranges: none`.
    pub ignore_range: bool,
    /// Answer the first `fail_first` faultable requests with `503 Service Unavailable`
    /// (with `Retry-After: 0`), then serve normally.
    pub fail_first: u64,
    /// Send a correct `Content-Length` but at most this many body bytes, then close the
    /// connection: a body cut short.
    pub truncate_body: Option<u64>,
    /// If set, only requests whose raw path contains this text are faulted (for example
    /// `".parquet"` to fault data files and leave the log alone).
    pub path_filter: Option<String>,
}

impl Faults {
    /// True if no fault is configured.
    pub fn is_none(&self) -> bool {
        !self.ignore_range && self.fail_first == 0 && self.truncate_body.is_none()
    }
}

/// What to do with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Decision {
    /// Answer 503 instead of serving.
    pub fail: bool,
    /// Treat the request as if it had no `Range` header.
    pub ignore_range: bool,
    /// Cut the body after this many bytes and close.
    pub truncate: Option<u64>,
}

/// The running state of a server's faults.
#[derive(Debug, Default)]
pub(crate) struct FaultState {
    faults: Faults,
    /// Faultable requests seen so far.
    seen: AtomicU64,
}

impl FaultState {
    pub(crate) fn new(faults: Faults) -> Self {
        FaultState {
            faults,
            seen: AtomicU64::new(0),
        }
    }

    /// Decides for one request. Counts it if it is faultable (not `OPTIONS`, and its path
    /// passes the filter).
    pub(crate) fn decide(&self, method: &str, raw_path: &str) -> Decision {
        if method == "OPTIONS" || self.faults.is_none() {
            return Decision::default();
        }
        if let Some(filter) = &self.faults.path_filter {
            if !raw_path.contains(filter.as_str()) {
                return Decision::default();
            }
        }
        let n = self.seen.fetch_add(1, Ordering::Relaxed);
        Decision {
            fail: n < self.faults.fail_first,
            ignore_range: self.faults.ignore_range,
            truncate: self.faults.truncate_body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_faults_by_default() {
        let s = FaultState::new(Faults::default());
        for _ in 0..3 {
            assert_eq!(s.decide("GET", "/a"), Decision::default());
        }
    }

    #[test]
    fn fail_first_counts_down() {
        let s = FaultState::new(Faults {
            fail_first: 2,
            ..Faults::default()
        });
        assert!(!s.decide("OPTIONS", "/a").fail);
        assert!(s.decide("GET", "/a").fail);
        assert!(s.decide("HEAD", "/a").fail);
        assert!(!s.decide("GET", "/a").fail);
    }

    #[test]
    fn path_filter_limits_faults() {
        let s = FaultState::new(Faults {
            fail_first: 1,
            ignore_range: true,
            truncate_body: Some(3),
            path_filter: Some(".parquet".into()),
        });
        assert_eq!(s.decide("GET", "/t/_delta_log/0.json"), Decision::default());
        let d = s.decide("GET", "/t/part-0.parquet");
        assert!(d.fail && d.ignore_range);
        assert_eq!(d.truncate, Some(3));
        assert!(!s.decide("GET", "/t/part-0.parquet").fail);
    }
}
