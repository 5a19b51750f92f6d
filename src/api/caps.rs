//! Reading the machine's limits for scan planning (native): parallelism, the soft limit of
//! open files, and available memory with cgroup (v2 and v1) limits respected. A limit that
//! cannot be read is left out, never an error. On wasm32 only the parallelism (1) is known.

use crate::plan::PartitionCaps;

/// The limits of this process now.
pub fn machine_caps() -> PartitionCaps {
    PartitionCaps {
        available_parallelism: std::thread::available_parallelism().ok().map(|n| n.get()),
        engine_target: None,
        fd_soft_limit: fd_soft_limit(),
        memory_bytes: available_memory(),
    }
}

#[cfg(target_os = "linux")]
fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The soft `Max open files` limit from `/proc/self/limits`.
#[cfg(target_os = "linux")]
fn fd_soft_limit() -> Option<u64> {
    parse_fd_soft_limit(&read("/proc/self/limits")?)
}

#[cfg(not(target_os = "linux"))]
fn fd_soft_limit() -> Option<u64> {
    None
}

fn parse_fd_soft_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The smaller of `MemAvailable` and what the cgroup limit leaves.
#[cfg(target_os = "linux")]
fn available_memory() -> Option<u64> {
    let system = read("/proc/meminfo").and_then(|m| parse_mem_available(&m));
    let cgroup = cgroup_headroom(
        read("/sys/fs/cgroup/memory.max"),
        read("/sys/fs/cgroup/memory.current"),
    )
    .or_else(|| {
        cgroup_headroom(
            read("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
            read("/sys/fs/cgroup/memory/memory.usage_in_bytes"),
        )
    });
    match (system, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(not(target_os = "linux"))]
fn available_memory() -> Option<u64> {
    None
}

fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Limit minus usage; `None` for "max" or an absurd v1 "no limit" value.
fn cgroup_headroom(limit: Option<String>, usage: Option<String>) -> Option<u64> {
    let limit: u64 = limit?.trim().parse().ok()?;
    if limit >= 1 << 60 {
        return None;
    }
    let usage: u64 = usage.and_then(|u| u.trim().parse().ok()).unwrap_or(0);
    Some(limit.saturating_sub(usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 1048576              files\n";
        assert_eq!(parse_fd_soft_limit(limits), Some(1024));
        assert_eq!(
            parse_fd_soft_limit("Max open files unlimited unlimited files"),
            None
        );
        assert_eq!(
            parse_mem_available("MemTotal: 10 kB\nMemAvailable:    2048 kB\n"),
            Some(2 << 20)
        );
        assert_eq!(cgroup_headroom(Some("max\n".into()), None), None);
        assert_eq!(
            cgroup_headroom(Some("1000".into()), Some("400".into())),
            Some(600)
        );
        assert_eq!(
            cgroup_headroom(Some("9223372036854771712".into()), None),
            None
        );
    }

    #[test]
    fn reads_this_machine_without_failing() {
        let caps = machine_caps();
        assert!(caps.available_parallelism.unwrap_or(1) >= 1);
        let target = crate::plan::target_partitions(None, &caps).unwrap_or(0);
        assert!(target >= 1);
    }
}
