//! Which CPUs a process may run on, and how long each CPU sat idle.
//!
//! A process restricted to some CPUs (its affinity, `taskset`, or its cpuset: a
//! container's `--cpuset-cpus`) can be runnable while other CPUs idle. The kernel
//! shows the effective set in `/proc/PID/status` (`Cpus_allowed_list`, the affinity
//! within the cpuset) and each CPU's idle time in `/proc/stat`.

/// The CPUs process `tgid` (its main thread) may run on, as the kernel lists them
/// (`0-3,8`).
pub fn allowed(tgid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{tgid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
}

/// The online CPUs (`/sys/devices/system/cpu/online`), as the kernel lists them.
pub fn online() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .map(|s| s.trim().to_string())
}

/// Each CPU's idle time so far, ns (`idle` plus `iowait` of `/proc/stat`: a CPU
/// waiting for I/O runs nothing and could run a thread).
pub fn idle_ns() -> Vec<(u32, u64)> {
    let Ok(text) = std::fs::read_to_string("/proc/stat") else {
        return Vec::new();
    };
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ns_per_tick = if hz > 0 {
        1_000_000_000 / hz as u64
    } else {
        10_000_000
    };
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("cpu")?;
            let (n, fields) = rest.split_once(' ')?;
            let cpu: u32 = n.parse().ok()?; // the "cpu " total line has no number
            let f: Vec<u64> = fields
                .split_whitespace()
                .map(|x| x.parse().unwrap_or(0))
                .collect();
            // user nice system idle iowait ...
            let ticks = f.get(3)? + f.get(4).copied().unwrap_or(0);
            Some((cpu, ticks * ns_per_tick))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::cgroups::cpu_list as parse_list;

    #[test]
    fn this_machine_lists_its_cpus_and_their_idle_time() {
        let online = parse_list(&online().expect("online CPUs")).unwrap();
        assert!(!online.is_empty());
        let mine = parse_list(&allowed(std::process::id()).expect("own status")).unwrap();
        assert!(
            mine.iter().all(|c| online.contains(c)),
            "{mine:?} {online:?}"
        );
        let idle = idle_ns();
        assert!(idle.iter().all(|(c, _)| online.contains(c)), "{idle:?}");
        assert_eq!(idle.len(), online.len());
    }
}
