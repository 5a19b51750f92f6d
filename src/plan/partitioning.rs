//! How many partitions a scan runs as, and which files each partition reads. Pure: the
//! machine's limits come in as [`PartitionCaps`], read by the front end.
//!
//! - The target is the explicit `with_target_partitions(n)` when given (n = 0 is an error; an
//!   explicit target wins over every cap); otherwise the available parallelism, capped by
//!   the target of the query engine the scan runs in (if any), by the soft file-descriptor limit at
//!   [`FDS_PER_PARTITION`] descriptors per partition, and by available memory at
//!   [`MEMORY_PER_PARTITION`] per partition; at least 1. A cap that could not be read is
//!   simply absent.
//! - Whole-file grouping: when every file's size is known and the total is above 0, files go
//!   largest first into the currently lightest group; otherwise they are split by count as
//!   evenly as possible, keeping their order. Never more groups than the target or the number
//!   of files, never an empty group; no files, no groups. Within a group, files keep the
//!   scan's order.

use crate::error::{DeltaError, Result};

/// File descriptors one partition may hold open.
pub const FDS_PER_PARTITION: u64 = 16;

/// Memory one partition may use.
pub const MEMORY_PER_PARTITION: u64 = 256 * 1024 * 1024;

/// Limits of the machine, where they could be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartitionCaps {
    /// Threads the process may run at once.
    pub available_parallelism: Option<usize>,
    /// The partitions the query engine running the scan asks for (DataFusion's
    /// `target_partitions`, say); `None` outside an engine.
    pub engine_target: Option<usize>,
    /// Soft limit of open file descriptors.
    pub fd_soft_limit: Option<u64>,
    /// Memory available to the process (cgroup limit or free memory), in bytes.
    pub memory_bytes: Option<u64>,
}

/// The number of partitions to plan for.
pub fn target_partitions(explicit: Option<usize>, caps: &PartitionCaps) -> Result<usize> {
    match explicit {
        Some(0) => Err(DeltaError::InvalidArgument {
            reason: "the target number of partitions must be at least 1".into(),
        }),
        Some(n) => Ok(n),
        None => {
            let mut n = caps.available_parallelism.unwrap_or(1);
            if let Some(df) = caps.engine_target {
                n = n.min(df);
            }
            if let Some(fds) = caps.fd_soft_limit {
                n = n.min(usize::try_from(fds / FDS_PER_PARTITION).unwrap_or(usize::MAX));
            }
            if let Some(mem) = caps.memory_bytes {
                n = n.min(usize::try_from(mem / MEMORY_PER_PARTITION).unwrap_or(usize::MAX));
            }
            Ok(n.max(1))
        }
    }
}

/// Groups files (by index into `sizes`) into at most `target` non-empty groups.
pub fn group_whole_files(sizes: &[Option<u64>], target: usize) -> Vec<Vec<usize>> {
    let count = sizes.len();
    let groups = target.min(count);
    if groups == 0 {
        return Vec::new();
    }
    let known: Option<Vec<u64>> = sizes.iter().copied().collect();
    match known {
        Some(known) if known.iter().any(|&s| s > 0) => by_size(&known, groups),
        _ => by_count(count, groups),
    }
}

/// Largest first into the lightest group (ties: fewer files, then lower group index).
fn by_size(sizes: &[u64], groups: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    // Stable: equal sizes keep their scan order.
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]));
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); groups];
    let mut weight = vec![0u64; groups];
    for i in order {
        let lightest = (0..groups)
            .min_by_key(|&g| (weight[g], out[g].len(), g))
            .unwrap_or(0);
        weight[lightest] = weight[lightest].saturating_add(sizes[i]);
        out[lightest].push(i);
    }
    for g in &mut out {
        g.sort_unstable();
    }
    out
}

/// Contiguous runs whose lengths differ by at most one, in order.
fn by_count(count: usize, groups: usize) -> Vec<Vec<usize>> {
    let base = count / groups;
    let extra = count % groups;
    let mut out = Vec::with_capacity(groups);
    let mut next = 0;
    for g in 0..groups {
        let len = base + usize::from(g < extra);
        out.push((next..next + len).collect());
        next += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_target_wins_and_zero_is_an_error() {
        let tight = PartitionCaps {
            available_parallelism: Some(2),
            engine_target: Some(1),
            fd_soft_limit: Some(16),
            memory_bytes: Some(1),
        };
        assert_eq!(target_partitions(Some(7), &tight).ok(), Some(7));
        assert_eq!(
            target_partitions(Some(0), &tight).err().map(|e| e.code()),
            Some("invalid_argument")
        );
    }

    #[test]
    fn caps_lower_the_parallelism_and_never_below_one() {
        let caps = |p, df, fd, mem| PartitionCaps {
            available_parallelism: p,
            engine_target: df,
            fd_soft_limit: fd,
            memory_bytes: mem,
        };
        assert_eq!(
            target_partitions(None, &caps(Some(16), None, None, None)).ok(),
            Some(16)
        );
        assert_eq!(
            target_partitions(None, &caps(Some(16), Some(4), None, None)).ok(),
            Some(4)
        );
        // 160 descriptors / 16 per partition = 10.
        assert_eq!(
            target_partitions(None, &caps(Some(16), None, Some(160), None)).ok(),
            Some(10)
        );
        // 1 GiB / 256 MiB = 4.
        assert_eq!(
            target_partitions(None, &caps(Some(16), None, None, Some(1 << 30))).ok(),
            Some(4)
        );
        assert_eq!(
            target_partitions(None, &caps(Some(16), None, Some(3), Some(5))).ok(),
            Some(1)
        );
        assert_eq!(
            target_partitions(None, &caps(None, None, None, None)).ok(),
            Some(1)
        );
    }

    #[test]
    fn largest_first_into_the_lightest_group() {
        let sizes = [Some(10), Some(70), Some(20), Some(30), Some(40)];
        let g = group_whole_files(&sizes, 2);
        // 70 → g0; 40 → g1; 30 → g1 (40 < 70); 20 → g1 (70 vs 70: fewer files wins → g0)...
        let weights: Vec<u64> = g
            .iter()
            .map(|grp| grp.iter().map(|&i| sizes[i].unwrap_or(0)).sum())
            .collect();
        assert_eq!(weights.iter().sum::<u64>(), 170);
        assert!(weights.iter().all(|&w| w == 80 || w == 90), "{weights:?}");
        for grp in &g {
            assert!(
                grp.windows(2).all(|w| w[0] < w[1]),
                "order kept within a group"
            );
        }
    }

    #[test]
    fn never_more_groups_than_files_or_target_and_never_empty() {
        for count in 0..12usize {
            for target in 1..8usize {
                let sizes: Vec<Option<u64>> = (0..count).map(|i| Some(i as u64 % 3)).collect();
                let g = group_whole_files(&sizes, target);
                assert_eq!(g.len(), count.min(target));
                assert!(g.iter().all(|grp| !grp.is_empty()));
                let mut all: Vec<usize> = g.concat();
                all.sort_unstable();
                assert_eq!(all, (0..count).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn unknown_or_zero_sizes_split_by_count_in_order() {
        let g = group_whole_files(&[Some(5), None, Some(1), Some(2), Some(3)], 2);
        assert_eq!(g, vec![vec![0, 1, 2], vec![3, 4]]);
        let g = group_whole_files(&[Some(0); 5], 3);
        assert_eq!(g, vec![vec![0, 1], vec![2, 3], vec![4]]);
        assert!(group_whole_files(&[], 4).is_empty());
    }
}
