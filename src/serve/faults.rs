//! Fault injection for tests: misbehaviours a real HTTP host shows now and then.
//!
//! Configured per server with [`Faults`]; the running server keeps a [`FaultState`] (a
//! shared counter) and asks it, per request, what to do. `OPTIONS` preflights are never
//! faulted (a browser treats a failed preflight as a network error, which is another test).
//!
//! Failures and resets come in bursts: the first `fail_first` (or `reset_first`) faultable
//! requests, and, with `repeat_every`, the first ones of every further `repeat_every`
//! requests. The other faults apply to every faultable request.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Misbehaviours to inject. The default injects none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Ignore `Range` headers: answer 200 with the whole body (as some servers and CDNs
    /// do), and advertise `Accept-Ranges: none`.
    pub ignore_range: bool,
    /// Answer the first `fail_first` faultable requests (of each burst) with
    /// [`fail_status`](Self::fail_status) and `Retry-After: 0`, then serve normally.
    pub fail_first: u64,
    /// The status of a failed request: `503 Service Unavailable` when `None`; `429`, `500`,
    /// `502`, … as asked.
    pub fail_status: Option<u16>,
    /// Close the connection of the first `reset_first` faultable requests (of each burst)
    /// without answering: what a client sees when a server or proxy resets.
    pub reset_first: u64,
    /// Start the failures and resets again every this many faultable requests (bursts);
    /// `None`: only the first ones.
    pub repeat_every: Option<u64>,
    /// Send a correct `Content-Length` but at most this many body bytes, then close the
    /// connection: a body cut short.
    pub truncate_body: Option<u64>,
    /// Cut only the first this many faultable requests (of each burst) with
    /// [`truncate_body`](Self::truncate_body); `None`: every one.
    pub truncate_first: Option<u64>,
    /// Send bodies slowly: at most this many bytes at a time, with a pause before each
    /// piece after the first.
    pub slow_body: Option<SlowBody>,
    /// Answer a range request with the range one byte further on (its `Content-Range` says
    /// so): a server that sends other bytes than were asked for.
    pub shift_range: bool,
    /// If set, only requests whose raw path contains this text are faulted (for example
    /// `".parquet"` to fault data files and leave the log alone).
    pub path_filter: Option<String>,
    /// Answer a request for a file that does not exist with this file instead (a URL path,
    /// e.g. `/index.html`), `200`: a web server with a single-page-app fallback, which
    /// answers every path. Applies to every missing path, whatever `path_filter` says.
    pub missing_file_fallback: Option<String>,
}

/// How slowly a [`Faults::slow_body`] body goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowBody {
    /// Bytes per piece (at least 1).
    pub chunk: usize,
    /// Pause before each piece after the first.
    pub pause: Duration,
}

impl Faults {
    /// True if no fault is configured.
    pub fn is_none(&self) -> bool {
        *self
            == Faults {
                path_filter: self.path_filter.clone(),
                fail_status: self.fail_status,
                repeat_every: self.repeat_every,
                truncate_first: self.truncate_first,
                ..Faults::default()
            }
    }
}

/// What to do with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Decision {
    /// Answer with this failure status instead of serving.
    pub fail: Option<u16>,
    /// Close the connection without answering.
    pub reset: bool,
    /// Treat the request as if it had no `Range` header.
    pub ignore_range: bool,
    /// Cut the body after this many bytes and close.
    pub truncate: Option<u64>,
    /// Send the body slowly.
    pub slow: Option<SlowBody>,
    /// Serve the range one byte further on.
    pub shift_range: bool,
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
        let f = &self.faults;
        if method == "OPTIONS" || f.is_none() {
            return Decision::default();
        }
        if let Some(filter) = &f.path_filter {
            if !raw_path.contains(filter.as_str()) {
                return Decision::default();
            }
        }
        let seen = self.seen.fetch_add(1, Ordering::Relaxed);
        let n = match f.repeat_every {
            Some(every) if every > 0 => seen % every,
            _ => seen,
        };
        let reset = n < f.reset_first;
        Decision {
            fail: (!reset && n < f.fail_first).then(|| f.fail_status.unwrap_or(503)),
            reset,
            ignore_range: f.ignore_range,
            truncate: f
                .truncate_body
                .filter(|_| f.truncate_first.is_none_or(|first| n < first)),
            slow: f.slow_body,
            shift_range: f.shift_range,
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
        let quiet = Faults {
            fail_status: Some(429),
            repeat_every: Some(3),
            path_filter: Some("x".into()),
            ..Faults::default()
        };
        assert!(quiet.is_none());
    }

    #[test]
    fn fail_first_counts_down() {
        let s = FaultState::new(Faults {
            fail_first: 2,
            ..Faults::default()
        });
        assert_eq!(s.decide("OPTIONS", "/a").fail, None);
        assert_eq!(s.decide("GET", "/a").fail, Some(503));
        assert_eq!(s.decide("HEAD", "/a").fail, Some(503));
        assert_eq!(s.decide("GET", "/a").fail, None);
    }

    #[test]
    fn bursts_repeat_with_their_status_and_resets_come_first() {
        let s = FaultState::new(Faults {
            reset_first: 1,
            fail_first: 2,
            fail_status: Some(429),
            repeat_every: Some(4),
            ..Faults::default()
        });
        let got: Vec<(bool, Option<u16>)> = (0..8)
            .map(|_| {
                let d = s.decide("GET", "/a");
                (d.reset, d.fail)
            })
            .collect();
        let burst = [
            (true, None),
            (false, Some(429)),
            (false, None),
            (false, None),
        ];
        assert_eq!(got, [burst, burst].concat());
    }

    #[test]
    fn path_filter_limits_faults() {
        let slow = SlowBody {
            chunk: 7,
            pause: Duration::from_millis(1),
        };
        let s = FaultState::new(Faults {
            fail_first: 1,
            ignore_range: true,
            truncate_body: Some(3),
            slow_body: Some(slow),
            shift_range: true,
            path_filter: Some(".parquet".into()),
            ..Faults::default()
        });
        assert_eq!(s.decide("GET", "/t/_delta_log/0.json"), Decision::default());
        let d = s.decide("GET", "/t/part-0.parquet");
        assert!(d.fail.is_some() && d.ignore_range && d.shift_range);
        assert_eq!((d.truncate, d.slow), (Some(3), Some(slow)));
        assert_eq!(s.decide("GET", "/t/part-0.parquet").fail, None);
    }
}
