//! Splitting files into byte ranges for more partitions than there are files (pure).
//!
//! The files, in scan order, are laid end to end and cut into consecutive groups of
//! `ceil(total bytes / target)` bytes; a file crossing a cut is split into byte ranges, one per
//! group it touches. The ranges of one file tile it (`0..size`), so each row is owned by
//! exactly one of them (see `read::ranges`). Files of size 0 are kept whole in the
//! group they fall into. Never more groups than `target`, never an empty group.
//!
//! [`groups_for_few_files`] decides when a scan's own partitions should read ranges: whole
//! files are the cheaper unit (one footer read each), so only when there are too few of them,
//! or one too large, to keep every partition busy.

use std::ops::Range;

/// The fewest bytes of a scan's files each group gets when [`groups_for_few_files`] cuts
/// them: a cut costs the ranges of the file one more footer read each, and a row group is
/// read by the one range that owns it, so smaller shares gain little.
#[cfg(not(target_arch = "wasm32"))] // the native front end's decision
pub const MIN_BYTES_PER_GROUP: u64 = 4 * 1024 * 1024;

/// The most bytes of a file that one task of a spread scan reads by default (see
/// [`cap_range`] and `DeltaScanExecutionOptions::max_task_bytes`). A task
/// holds about the compressed bytes of the row group it decodes, so a file of one row group
/// of a gigabyte would take a gigabyte per partition; cut into ranges of at most this, a row
/// group with a page index is shared by rows (see `read::ranges`) and each task holds its
/// share. Files of smaller row groups only cost one footer read per range more.
pub const MAX_TASK_BYTES: u64 = 64 * 1024 * 1024;

/// The most pieces [`cap_range`] cuts one range into: a bound on the tasks a huge `max`-byte
/// cut of a (possibly lying) file size can make.
const MAX_PIECES: u64 = 1 << 16;

/// `range` (bytes of a file) as consecutive pieces of at most `max` bytes (at least 1), as
/// even as can be: `range` itself when it is within `max`. Never more than 65,536 pieces
/// (larger ones then).
pub fn cap_range(range: Range<u64>, max: u64) -> Vec<Range<u64>> {
    let len = range.end.saturating_sub(range.start);
    let max = max.max(1);
    if len <= max {
        return vec![range];
    }
    let pieces = len.div_ceil(max).min(MAX_PIECES);
    let at = |k: u64| {
        let offset = u128::from(len) * u128::from(k) / u128::from(pieces);
        range
            .start
            .saturating_add(u64::try_from(offset).unwrap_or(len))
    };
    (0..pieces).map(|k| at(k)..at(k + 1)).collect()
}

/// Into how many groups of byte ranges ([`split_byte_ranges`]) whole files of `sizes` are
/// better read by `target` partitions, or `None` to read them whole.
///
/// Partitions that share a queue of whole files, largest first, end when the busiest one
/// does: it holds at most the even share (total / `target`) plus one file. The files are cut
/// only when that busiest share would be over 5/4 of the even share (fewer files than
/// partitions leaves some idle; one file of three on two cores ends a file after the other;
/// one file much larger than the rest holds its partition alone), into `target` groups of
/// equal bytes, fewer if that would make a group smaller than [`MIN_BYTES_PER_GROUP`], and
/// not at all if that leaves fewer than 2.
#[cfg(not(target_arch = "wasm32"))]
pub fn groups_for_few_files(sizes: &[u64], target: usize) -> Option<usize> {
    if target < 2 || sizes.is_empty() {
        return None;
    }
    let total: u64 = sizes.iter().fold(0u64, |a, &s| a.saturating_add(s));
    let even = total / target as u64;
    let largest = sizes.iter().copied().max().unwrap_or(0);
    // The busiest share is at most even + largest: no need to work it out when that is
    // within the bound.
    let within = |busiest: u64| busiest.saturating_mul(4) <= even.saturating_mul(5);
    if within(even.saturating_add(largest)) || within(busiest_share(sizes, target)) {
        return None;
    }
    let by_bytes = usize::try_from(total / MIN_BYTES_PER_GROUP).unwrap_or(usize::MAX);
    let groups = target.min(by_bytes);
    (groups >= 2).then_some(groups)
}

/// The bytes of the busiest of `target` partitions taking whole files of `sizes`, largest
/// first, each into the least loaded.
#[cfg(not(target_arch = "wasm32"))]
fn busiest_share(sizes: &[u64], target: usize) -> u64 {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    let mut order = sizes.to_vec();
    order.sort_unstable_by(|a, b| b.cmp(a));
    let mut loads: BinaryHeap<Reverse<u64>> = (0..target.min(sizes.len().max(1)))
        .map(|_| Reverse(0))
        .collect();
    // Fewer files than partitions: the idle partitions carry 0, and each file is alone.
    for size in order {
        if let Some(Reverse(least)) = loads.pop() {
            loads.push(Reverse(least.saturating_add(size)));
        }
    }
    loads.into_iter().map(|Reverse(l)| l).max().unwrap_or(0)
}

/// Groups of `(file index, byte range)` for files of `sizes` bytes, at most `target` groups of
/// about `ceil(total / target)` bytes each. Nothing for no files; a total of 0 bytes gives
/// one group of whole files.
pub fn split_byte_ranges(sizes: &[u64], target: usize) -> Vec<Vec<(usize, Range<u64>)>> {
    if sizes.is_empty() {
        return Vec::new();
    }
    let total: u64 = sizes.iter().fold(0u64, |a, &s| a.saturating_add(s));
    let target = target.max(1) as u64;
    let per_group = total.div_ceil(target).max(1);
    let mut groups: Vec<Vec<(usize, Range<u64>)>> = vec![Vec::new()];
    // Bytes in the current (last) group.
    let mut filled = 0u64;
    for (file, &size) in sizes.iter().enumerate() {
        let mut start = 0u64;
        if size == 0 {
            if let Some(g) = groups.last_mut() {
                g.push((file, 0..0));
            }
            continue;
        }
        while start < size {
            if filled >= per_group && (groups.len() as u64) < target {
                groups.push(Vec::new());
                filled = 0;
            }
            let room = if (groups.len() as u64) < target {
                per_group - filled
            } else {
                u64::MAX
            };
            let end = size.min(start.saturating_add(room));
            if let Some(g) = groups.last_mut() {
                g.push((file, start..end));
            }
            filled += end - start;
            start = end;
        }
    }
    groups.retain(|g| !g.is_empty());
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_range_is_tiled_by_even_pieces_within_the_cap() {
        assert_eq!(cap_range(10..20, 10), vec![10..20]);
        assert_eq!(cap_range(0..0, 10), vec![0..0]);
        assert_eq!(
            cap_range(0..10, 0),
            (0..10).map(|i| i..i + 1).collect::<Vec<_>>()
        );
        for (range, max) in [
            (0..100u64, 7u64),
            (5..1000, 64),
            (3..u64::MAX, u64::MAX / 3),
        ] {
            let pieces = cap_range(range.clone(), max);
            assert_eq!(pieces.first().map(|p| p.start), Some(range.start));
            assert_eq!(pieces.last().map(|p| p.end), Some(range.end));
            assert!(pieces.windows(2).all(|w| w[0].end == w[1].start));
            assert!(pieces
                .iter()
                .all(|p| p.end > p.start && p.end - p.start <= max));
            let len = range.end - range.start;
            assert_eq!(pieces.len() as u64, len.div_ceil(max), "{range:?} {max}");
        }
    }

    #[test]
    fn ranges_tile_each_file_and_groups_are_balanced() {
        for sizes in [
            vec![100u64],
            vec![100, 1, 50],
            vec![7, 0, 13, 1000, 3],
            vec![1; 9],
        ] {
            for target in 1..10usize {
                let groups = split_byte_ranges(&sizes, target);
                assert!(!groups.is_empty() && groups.len() <= target);
                assert!(groups.iter().all(|g| !g.is_empty()));
                let total: u64 = sizes.iter().sum();
                let per = total.div_ceil(target as u64);
                for g in &groups {
                    let bytes: u64 = g.iter().map(|(_, r)| r.end - r.start).sum();
                    assert!(bytes <= per.max(1), "{sizes:?} {target}: {groups:?}");
                }
                // The ranges of each file, in order, tile 0..size.
                for (file, &size) in sizes.iter().enumerate() {
                    let mut next = 0;
                    for (_, r) in groups.iter().flatten().filter(|(f, _)| *f == file) {
                        assert_eq!(r.start, next, "{sizes:?} {target}: {groups:?}");
                        next = r.end;
                    }
                    assert_eq!(next, size);
                }
            }
        }
    }

    #[test]
    fn files_are_cut_only_when_whole_ones_leave_partitions_unbalanced() {
        const M: u64 = MIN_BYTES_PER_GROUP;
        // One big file: as many groups as partitions, or as its bytes allow.
        assert_eq!(groups_for_few_files(&[100 * M], 2), Some(2));
        assert_eq!(groups_for_few_files(&[100 * M], 8), Some(8));
        assert_eq!(groups_for_few_files(&[3 * M], 8), Some(3));
        // Too small to be worth a second footer read, or one partition.
        assert_eq!(groups_for_few_files(&[M + M / 2], 8), None);
        assert_eq!(groups_for_few_files(&[100 * M], 1), None);
        // Three files on two partitions: one would end a file after the other.
        assert_eq!(groups_for_few_files(&[10 * M; 3], 2), Some(2));
        // Two equal files on two partitions, or four: balanced whole.
        assert_eq!(groups_for_few_files(&[10 * M; 2], 2), None);
        assert_eq!(groups_for_few_files(&[10 * M, 11 * M], 2), None);
        assert_eq!(groups_for_few_files(&[10 * M; 4], 2), None);
        assert_eq!(groups_for_few_files(&[10 * M; 56], 2), None);
        // Five files on four partitions: the fifth ends alone.
        assert_eq!(groups_for_few_files(&[10 * M; 5], 4), Some(4));
        // One file far larger than many small ones holds its partition alone.
        let mut skewed = vec![M / 4; 100];
        skewed.push(200 * M);
        assert_eq!(groups_for_few_files(&skewed, 2), Some(2));
        assert_eq!(groups_for_few_files(&[], 2), None);
        // Sizes that would overflow a sum are still an answer, not a panic.
        let _ = groups_for_few_files(&[u64::MAX, u64::MAX], 4);
        assert_eq!(groups_for_few_files(&[u64::MAX / 2], 4), Some(4));
    }

    #[test]
    fn the_busiest_share_is_that_of_largest_first_into_the_least_loaded() {
        assert_eq!(busiest_share(&[5, 5, 5], 2), 10);
        assert_eq!(busiest_share(&[7, 3, 3, 3], 2), 9);
        assert_eq!(busiest_share(&[9], 4), 9);
        assert_eq!(busiest_share(&[4, 4, 4, 4], 4), 4);
    }

    #[test]
    fn one_file_splits_into_target_ranges() {
        let g = split_byte_ranges(&[1000], 4);
        assert_eq!(
            g,
            vec![
                vec![(0, 0..250)],
                vec![(0, 250..500)],
                vec![(0, 500..750)],
                vec![(0, 750..1000)]
            ]
        );
        assert!(split_byte_ranges(&[], 4).is_empty());
        assert_eq!(
            split_byte_ranges(&[0, 0], 3),
            vec![vec![(0, 0..0), (1, 0..0)]]
        );
    }
}
