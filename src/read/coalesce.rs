//! Merging the byte ranges a decoder asks for into fewer requests, and cutting the answers
//! back to the ranges asked for.

use std::ops::Range;

use bytes::Bytes;

/// Ranges closer than this are fetched in one request.
pub const COALESCE_GAP: u64 = 64 * 1024;

/// Merged requests, each with the indexes of the asked ranges it covers.
pub fn coalesce(ranges: &[Range<u64>], gap: u64) -> Vec<(Range<u64>, Vec<usize>)> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| (ranges[i].start, ranges[i].end));
    let mut merged: Vec<(Range<u64>, Vec<usize>)> = Vec::new();
    for i in order {
        let r = &ranges[i];
        match merged.last_mut() {
            Some((m, members)) if r.start <= m.end.saturating_add(gap) => {
                m.end = m.end.max(r.end);
                members.push(i);
            }
            _ => merged.push((r.clone(), vec![i])),
        }
    }
    merged
}

/// Slices `data` (the bytes of `fetched`) to `wanted`, which lies inside it.
pub fn slice(fetched: &Range<u64>, data: &Bytes, wanted: &Range<u64>) -> Option<Bytes> {
    let start = usize::try_from(wanted.start.checked_sub(fetched.start)?).ok()?;
    let end = usize::try_from(wanted.end.checked_sub(fetched.start)?).ok()?;
    (end <= data.len() && start <= end).then(|| data.slice(start..end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_close_ranges_only() {
        let ranges = vec![100..200, 0..50, 60..80, 10_000..10_100];
        let m = coalesce(&ranges, 15);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0], (0..80, vec![1, 2]));
        assert_eq!(m[1], (100..200, vec![0]));
        let data = Bytes::from((0u8..80).collect::<Vec<_>>());
        assert_eq!(
            slice(&(0..80), &data, &(60..62)),
            Some(Bytes::from(vec![60u8, 61]))
        );
        assert_eq!(slice(&(0..80), &data, &(70..90)), None);
    }
}
