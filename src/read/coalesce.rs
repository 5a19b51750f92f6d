//! Merging the byte ranges a decoder asks for into fewer requests, and cutting the answers
//! back to the ranges asked for.
//!
//! How far apart two ranges may be and still share a request depends on what a request
//! costs and what the ranges are. The decoder's own requests (a row selection's pages, a
//! row group's chunks) join only ranges under [`NEAR_GAP`] apart, so the first rows of
//! a file fetch little more than their pages. Reads ahead of the decoder fetch the whole
//! chunks of several row groups, and join ranges as far apart as the store says a request
//! is worth ([`RangeRead::read_ahead_gap`]: over HTTP in the browser, what the link moves
//! in one round trip, up to 1 MiB): a browser scan of two of seven columns made two
//! requests per row group, 167 in all.
//!
//! [`RangeRead::read_ahead_gap`]: crate::io::RangeRead::read_ahead_gap
//! [`NEAR_GAP`]: crate::io::NEAR_GAP

use std::ops::Range;

use bytes::Bytes;

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

    #[test]
    fn chunks_read_ahead_remotely_join_across_a_column_chunk() {
        // Two of seven columns, two row groups: 0.43 MB between the two columns' chunks,
        // 0.42 MB to the next row group's.
        let ranges = vec![4..297_844, 727_007..1_073_853, 1_493_669..1_791_523];
        assert_eq!(coalesce(&ranges, crate::io::NEAR_GAP).len(), 3);
        assert_eq!(
            coalesce(&ranges, crate::io::FAR_GAP),
            vec![(4..1_791_523, vec![0, 1, 2])]
        );
        // Further apart than a mebibyte: two requests still.
        assert_eq!(
            coalesce(&[0..10, 2_000_000..2_000_010], crate::io::FAR_GAP).len(),
            2
        );
    }
}
