//! What a store has seen of its link (used by the fetch store on wasm32; pure, so tested
//! natively): the quickest request and the best
//! rate, and from them how many bytes one round trip is worth ([`LinkEstimate::gap`]).
//!
//! A read ahead of the decoder may fetch the gap between two column chunks rather than make
//! a second request. Whether that pays depends on the link: on a fast one a request's round
//! trip (and its place in the browser's six connections per host) costs more than
//! megabytes of gap, on a slow one a few hundred kilobytes already take longer than the
//! round trip. The bandwidth-delay product of what was measured says which: the shortest
//! request's time (the round trip) times the best rate seen, each request's rate taken over
//! its time beyond that round trip. Until a request of some size came in, the gap stays
//! small.

use std::cell::Cell;

use super::{FAR_GAP, NEAR_GAP};

/// Measurements of one store's requests.
#[derive(Debug, Default)]
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(super) struct LinkEstimate {
    /// The shortest request seen, in milliseconds (0: none yet).
    quickest_ms: Cell<f64>,
    /// The best rate seen, in bytes per millisecond.
    best_rate: Cell<f64>,
}

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
impl LinkEstimate {
    /// A request that brought `bytes` in `ms` milliseconds.
    pub(super) fn note(&self, bytes: usize, ms: f64) {
        if !(ms.is_finite() && ms > 0.0) {
            return;
        }
        let quickest = self.quickest_ms.get();
        if quickest == 0.0 || ms < quickest {
            self.quickest_ms.set(ms);
        }
        // The time beyond the quickest request is the transfer (and queueing): the rate
        // of that, though never more than 8 times the plain rate (one odd request must not
        // make every gap worth fetching).
        let transfer = (ms - self.quickest_ms.get()).max(ms / 8.0);
        let rate = bytes as f64 / transfer;
        if rate > self.best_rate.get() {
            self.best_rate.set(rate);
        }
    }

    /// The bytes one round trip is worth, between [`NEAR_GAP`] and [`FAR_GAP`].
    pub(super) fn gap(&self) -> u64 {
        let product = self.quickest_ms.get() * self.best_rate.get();
        if !product.is_finite() {
            return NEAR_GAP;
        }
        // Within [NEAR_GAP, FAR_GAP], so the cast neither truncates nor wraps.
        product.clamp(NEAR_GAP as f64, FAR_GAP as f64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_with_what_the_link_showed() {
        let link = LinkEstimate::default();
        assert_eq!(link.gap(), NEAR_GAP);
        // Small log reads: mostly latency.
        link.note(2_000, 55.0);
        assert_eq!(link.gap(), NEAR_GAP);
        // A 256 KiB footer in 80 ms: 25 ms beyond the round trip, about 570 KB a round trip.
        link.note(262_144, 80.0);
        assert!((500_000..650_000).contains(&link.gap()), "{}", link.gap());
        // 300 KB in 60 ms: a round trip is worth more than a mebibyte.
        link.note(300_000, 60.0);
        assert_eq!(link.gap(), FAR_GAP);
        // Nonsense times change nothing.
        link.note(1, 0.0);
        link.note(1, f64::NAN);
        assert_eq!(link.gap(), FAR_GAP);
    }

    #[test]
    fn a_slow_link_keeps_gaps_small() {
        // 6 MB/s with 50 ms round trips: 300 KB in 100 ms, 16 MiB in 2.8 s.
        let link = LinkEstimate::default();
        link.note(500, 50.0);
        link.note(300_000, 100.0);
        link.note(16 << 20, 2_850.0);
        assert!(link.gap() < 420_000, "{}", link.gap());
        // A tiny request as quick as the round trip is not taken for a fast link.
        link.note(2_000, 50.0);
        assert!(link.gap() < 420_000, "{}", link.gap());
    }
}
