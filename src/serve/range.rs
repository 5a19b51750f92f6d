//! The `Range` request header (RFC 9110 §14), single byte ranges only.
//!
//! `bytes=a-b`, `bytes=a-` and the suffix form `bytes=-n` select one range; a range that
//! starts past the end is unsatisfiable (416). A header that is not a single well-formed
//! byte range (another unit, several ranges, `a > b`, garbage) is ignored, as RFC 9110
//! allows: the whole body is sent with 200. That is also what many real servers do, so
//! clients must cope with it anyway.

/// What to send for a request, given its `Range` header and the file's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RangeOutcome {
    /// No (usable) range: send the whole body with 200.
    Full,
    /// Send bytes `start..=end` with 206 and `Content-Range`.
    Partial { start: u64, end: u64 },
    /// 416 with `Content-Range: bytes */len`.
    Unsatisfiable,
}

/// Decides how to answer `header` (the `Range` value, if any) for a body of `len` bytes.
pub(crate) fn resolve(header: Option<&str>, len: u64) -> RangeOutcome {
    let Some(header) = header else {
        return RangeOutcome::Full;
    };
    let Some(spec) = parse(header) else {
        return RangeOutcome::Full;
    };
    match spec {
        Spec::FromTo(start, end) => {
            if start >= len {
                RangeOutcome::Unsatisfiable
            } else {
                RangeOutcome::Partial {
                    start,
                    end: end.min(len - 1),
                }
            }
        }
        Spec::From(start) => {
            if start >= len {
                RangeOutcome::Unsatisfiable
            } else {
                RangeOutcome::Partial {
                    start,
                    end: len - 1,
                }
            }
        }
        Spec::Suffix(n) => {
            if n == 0 || len == 0 {
                RangeOutcome::Unsatisfiable
            } else {
                RangeOutcome::Partial {
                    start: len.saturating_sub(n),
                    end: len - 1,
                }
            }
        }
    }
}

/// One syntactically valid byte-range-spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    FromTo(u64, u64),
    From(u64),
    Suffix(u64),
}

/// Parses `bytes=…` holding exactly one range; `None` for anything else.
fn parse(header: &str) -> Option<Spec> {
    let (unit, set) = header.trim().split_once('=')?;
    if !unit.trim().eq_ignore_ascii_case("bytes") {
        return None;
    }
    let set = set.trim();
    if set.contains(',') {
        return None;
    }
    let (first, last) = set.split_once('-')?;
    let (first, last) = (first.trim(), last.trim());
    match (first.is_empty(), last.is_empty()) {
        (true, true) => None,
        (true, false) => Some(Spec::Suffix(number(last)?)),
        (false, true) => Some(Spec::From(number(first)?)),
        (false, false) => {
            let (a, b) = (number(first)?, number(last)?);
            (a <= b).then_some(Spec::FromTo(a, b))
        }
    }
}

/// A non-empty run of ASCII digits that fits in `u64`.
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::RangeOutcome::*;
    use super::*;

    fn r(h: &str, len: u64) -> RangeOutcome {
        resolve(Some(h), len)
    }

    #[test]
    fn no_header_is_full() {
        assert_eq!(resolve(None, 10), Full);
    }

    #[test]
    fn closed_ranges() {
        assert_eq!(r("bytes=0-0", 10), Partial { start: 0, end: 0 });
        assert_eq!(r("bytes=2-5", 10), Partial { start: 2, end: 5 });
        assert_eq!(r("bytes=2-100", 10), Partial { start: 2, end: 9 });
        assert_eq!(r("bytes=9-9", 10), Partial { start: 9, end: 9 });
        assert_eq!(r("BYTES = 1 - 2", 10), Partial { start: 1, end: 2 });
    }

    #[test]
    fn open_ranges() {
        assert_eq!(r("bytes=3-", 10), Partial { start: 3, end: 9 });
        assert_eq!(r("bytes=0-", 10), Partial { start: 0, end: 9 });
    }

    #[test]
    fn suffix_ranges() {
        assert_eq!(r("bytes=-4", 10), Partial { start: 6, end: 9 });
        assert_eq!(r("bytes=-10", 10), Partial { start: 0, end: 9 });
        assert_eq!(r("bytes=-1000", 10), Partial { start: 0, end: 9 });
        assert_eq!(r("bytes=-0", 10), Unsatisfiable);
        assert_eq!(r("bytes=-5", 0), Unsatisfiable);
    }

    #[test]
    fn unsatisfiable() {
        assert_eq!(r("bytes=10-20", 10), Unsatisfiable);
        assert_eq!(r("bytes=10-", 10), Unsatisfiable);
        assert_eq!(r("bytes=0-", 0), Unsatisfiable);
        assert_eq!(r("bytes=0-0", 0), Unsatisfiable);
    }

    #[test]
    fn ignored_headers() {
        for h in [
            "bytes=5-3",
            "bytes=0-1,4-5",
            "items=0-1",
            "bytes=",
            "bytes=-",
            "bytes=a-b",
            "bytes=+1-2",
            "bytes=99999999999999999999999-",
            "0-1",
            "",
        ] {
            assert_eq!(r(h, 10), Full, "{h:?}");
        }
    }

    #[test]
    fn huge_end_is_clamped() {
        assert_eq!(
            r(&format!("bytes=0-{}", u64::MAX), 10),
            Partial { start: 0, end: 9 }
        );
    }
}
