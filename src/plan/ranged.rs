//! Splitting files into byte ranges for more partitions than there are files (pure).
//!
//! The files, in scan order, are laid end to end and cut into consecutive groups of
//! `ceil(total bytes / target)` bytes; a file crossing a cut is split into byte ranges, one per
//! group it touches. The ranges of one file tile it (`0..size`), so each row group is owned
//! by exactly one of them (see `read::owns_row_group`). Files of size 0 are kept whole in the
//! group they fall into. Never more groups than `target`, never an empty group.

use std::ops::Range;

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
