//! A process's control groups (`/proc/PID/cgroup`) and what they limit: the CPU
//! quota and its throttling (`cpu.max` / `cpu.cfs_quota_us`, `cpu.stat`). What a
//! path names is `causeway_format::cgroups::owner`.
//!
//! Hosts mix cgroup versions: v2 (`0::/path`) and v1 hierarchies named by their
//! controllers (`4:memory:/path`, `1:cpu,cpuacct:/path`). Both are read; a
//! controller's cgroup is its v1 hierarchy's path where it has one, else the v2 path.

use std::path::{Path, PathBuf};

/// One line of `/proc/PID/cgroup`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Membership {
    /// The controllers of a v1 hierarchy (`["cpu", "cpuacct"]`, `["name=systemd"]`);
    /// empty for the v2 hierarchy.
    pub controllers: Vec<String>,
    /// The cgroup's path within its hierarchy (`/system.slice/redis.service`).
    pub path: String,
}

/// Parse the text of `/proc/PID/cgroup`; malformed lines are skipped.
pub fn parse(text: &str) -> Vec<Membership> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_id, ctl, path) = (f.next()?, f.next()?, f.next()?);
            let controllers = if ctl.is_empty() {
                Vec::new()
            } else {
                ctl.split(',').map(str::to_string).collect()
            };
            Some(Membership {
                controllers,
                path: path.to_string(),
            })
        })
        .collect()
}

/// The cgroups of process `pid`.
pub fn read(pid: u32) -> std::io::Result<Vec<Membership>> {
    Ok(parse(&std::fs::read_to_string(format!(
        "/proc/{pid}/cgroup"
    ))?))
}

/// The path of the cgroup that holds `controller` for these memberships: its v1
/// hierarchy's, else the v2 one.
pub fn path_of<'a>(m: &'a [Membership], controller: &str) -> Option<&'a str> {
    m.iter()
        .find(|x| x.controllers.iter().any(|c| c == controller))
        .or_else(|| m.iter().find(|x| x.controllers.is_empty()))
        .map(|x| x.path.as_str())
}

/// A cgroup's CPU quota, and how often it throttled its processes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuQuota {
    /// CPU time allowed per period, µs; `None`: no quota.
    pub quota_us: Option<u64>,
    /// The period, µs.
    pub period_us: u64,
    /// Periods that had runnable processes (`nr_periods`).
    pub periods: u64,
    /// Periods in which the quota ran out (`nr_throttled`).
    pub throttled: u64,
    /// Time its processes were held back, ns (`throttled_time` in v1,
    /// `throttled_usec` × 1000 in v2).
    pub throttled_ns: u64,
}

/// The CPU quota of the cgroup at `dir` (a directory of a v1 cpu hierarchy or of the
/// v2 hierarchy), or why not.
pub fn cpu_quota(dir: &Path) -> std::io::Result<CpuQuota> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name));
    let mut q = CpuQuota::default();
    if let Ok(max) = read("cpu.max") {
        let mut f = max.split_whitespace();
        q.quota_us = f.next().and_then(|v| v.parse().ok());
        q.period_us = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
    } else {
        let quota: i64 = read("cpu.cfs_quota_us")?.trim().parse().unwrap_or(-1);
        q.quota_us = u64::try_from(quota).ok();
        q.period_us = read("cpu.cfs_period_us")?.trim().parse().unwrap_or(0);
    }
    for line in read("cpu.stat")?.lines() {
        let mut f = line.split_whitespace();
        let (Some(k), Some(Ok(v))) = (f.next(), f.next().map(str::parse::<u64>)) else {
            continue;
        };
        match k {
            "nr_periods" => q.periods = v,
            "nr_throttled" => q.throttled = v,
            "throttled_time" => q.throttled_ns = v,
            "throttled_usec" => q.throttled_ns = v.saturating_mul(1000),
            _ => {}
        }
    }
    Ok(q)
}

/// A cgroup's memory limit and how often its processes ran into it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryLimit {
    /// The limit, bytes; `None`: no limit (v1 shows "no limit" as a huge number).
    pub limit: Option<u64>,
    /// Memory charged to it now, bytes.
    pub usage: u64,
    /// Times its usage hit the limit (v1 `memory.failcnt`, v2 `memory.events` max).
    pub hits: u64,
    /// Major page faults of its processes (`pgmajfault`).
    pub major_faults: u64,
    /// File pages read again after the limit evicted them (`workingset_refault_file`,
    /// or `workingset_refault` on older kernels).
    pub refaults: u64,
}

/// Above this a v1 limit means "none" (the kernel shows the largest page-aligned
/// value).
const NO_LIMIT: u64 = 1 << 60;

/// The memory limit of the cgroup at `dir` (a directory of a v1 memory hierarchy or of
/// the v2 hierarchy), or why not. Counters are the cgroup's own and its descendants'
/// where the file gives both (v1 `total_*`).
pub fn memory_limit(dir: &Path) -> std::io::Result<MemoryLimit> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name));
    let num = |t: &str| t.trim().parse::<u64>().ok();
    let mut m = MemoryLimit::default();
    let v2 = dir.join("memory.max").exists();
    if v2 {
        m.limit = num(&read("memory.max")?);
        m.usage = num(&read("memory.current")?).unwrap_or(0);
        for line in read("memory.events").unwrap_or_default().lines() {
            if let Some(v) = line.strip_prefix("max ") {
                m.hits = num(v).unwrap_or(0);
            }
        }
    } else {
        m.limit = num(&read("memory.limit_in_bytes")?).filter(|&l| l < NO_LIMIT);
        m.usage = num(&read("memory.usage_in_bytes")?).unwrap_or(0);
        m.hits = num(&read("memory.failcnt")?).unwrap_or(0);
    }
    let stat = read("memory.stat").unwrap_or_default();
    let field = |names: &[&str]| {
        names.iter().find_map(|n| {
            stat.lines()
                .find_map(|l| l.strip_prefix(n)?.strip_prefix(' ').and_then(num))
        })
    };
    m.major_faults = field(&["total_pgmajfault", "pgmajfault"]).unwrap_or(0);
    m.refaults = field(&[
        "total_workingset_refault_file",
        "workingset_refault_file",
        "total_workingset_refault",
        "workingset_refault",
    ])
    .unwrap_or(0);
    Ok(m)
}

/// The directory of `path` in the hierarchy holding `controller`: the v1 mount
/// `/sys/fs/cgroup/<controller>` where it exists, else the v2 root (`/sys/fs/cgroup`,
/// or `/sys/fs/cgroup/unified` on hybrid hosts).
pub fn dir_of(controller: &str, path: &str, v1: bool) -> PathBuf {
    let rel = path.trim_start_matches('/');
    if v1 {
        return Path::new("/sys/fs/cgroup").join(controller).join(rel);
    }
    let hybrid = Path::new("/sys/fs/cgroup/unified/cgroup.controllers");
    let root = if hybrid.exists() {
        "/sys/fs/cgroup/unified"
    } else {
        "/sys/fs/cgroup"
    };
    Path::new(root).join(rel)
}

/// Cumulative stall times of one PSI file (`/proc/pressure/memory`,
/// `<cgroup>/memory.pressure`), µs: some tasks stalled, all of them stalled (0 where
/// the file has no `full` line, as `cpu` had before Linux 5.13).
pub fn pressure(file: &Path) -> std::io::Result<(u64, u64)> {
    Ok(parse_pressure(&std::fs::read_to_string(file)?))
}

/// The `total=` of the `some` and `full` lines of a PSI file's text.
pub fn parse_pressure(text: &str) -> (u64, u64) {
    let total = |kind: &str| {
        text.lines()
            .find(|l| l.starts_with(kind))
            .and_then(|l| l.split_whitespace().find_map(|f| f.strip_prefix("total=")))
            .and_then(|t| t.parse().ok())
            .unwrap_or(0)
    };
    (total("some "), total("full "))
}

/// Why a cgroup named by the user cannot be recorded.
#[derive(Debug, thiserror::Error)]
pub enum CgroupPathError {
    /// No hierarchy holds a cgroup at that path.
    #[error(
        "no cgroup `{0}`: not a directory of /sys/fs/cgroup nor a cgroup path in any mounted hierarchy (see /proc/PID/cgroup for a process's)"
    )]
    NotFound(String),
    /// The path names a v1 controller's hierarchy that is not mounted.
    #[error(
        "no cgroup `{path}`: the {controller} controller is not mounted at /sys/fs/cgroup/{controller} on this host (mounted there: {mounted}); name the cgroup by its path in a mounted hierarchy, or as /proc/PID/cgroup shows it"
    )]
    NotMounted {
        /// What the user named.
        path: String,
        /// The controller its path names.
        controller: String,
        /// The hierarchies that are mounted under /sys/fs/cgroup.
        mounted: String,
    },
    /// The path exists but is not a cgroup (no `cgroup.procs`).
    #[error("`{0}` is not a cgroup directory (it has no cgroup.procs)")]
    NotCgroup(String),
}

/// The directory of the cgroup the user named: a directory under `/sys/fs/cgroup`
/// as it is, or a cgroup path as `/proc/PID/cgroup` shows it (`/system.slice/x.service`),
/// looked up in the v2 hierarchy first, then in each v1 hierarchy.
pub fn resolve(name: &str) -> Result<PathBuf, CgroupPathError> {
    let as_is = Path::new(name);
    if name.starts_with("/sys/fs/cgroup") {
        if !as_is.is_dir() {
            let controllers = std::fs::read_to_string("/proc/cgroups").unwrap_or_default();
            return Err(unmounted(name, &controllers, Path::new("/sys/fs/cgroup"))
                .unwrap_or_else(|| CgroupPathError::NotFound(name.into())));
        }
        if !as_is.join("cgroup.procs").exists() {
            return Err(CgroupPathError::NotCgroup(name.into()));
        }
        return Ok(as_is.to_path_buf());
    }
    let rel = name.trim_start_matches('/');
    let mut roots = vec![dir_of("", "", false)];
    // v1 hierarchies are directories of /sys/fs/cgroup; on a v2-only host those are
    // child cgroups of the one root, not roots.
    let v2_only = Path::new("/sys/fs/cgroup/cgroup.procs").exists();
    if !v2_only && let Ok(rd) = std::fs::read_dir("/sys/fs/cgroup") {
        let mut v1: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("cgroup.procs").exists() && !p.ends_with("unified"))
            .collect();
        v1.sort();
        roots.extend(v1);
    }
    roots
        .into_iter()
        .map(|r| r.join(rel))
        .find(|d| d.join("cgroup.procs").exists())
        .ok_or_else(|| CgroupPathError::NotFound(name.into()))
}

/// When `name` (under `root`, `/sys/fs/cgroup`) is in the hierarchy of a controller
/// the kernel has (`controllers`: the text of `/proc/cgroups`) but that is not
/// mounted there, the error that says so.
fn unmounted(name: &str, controllers: &str, root: &Path) -> Option<CgroupPathError> {
    let rel = name.strip_prefix("/sys/fs/cgroup/")?;
    let ctl = rel.split('/').next().filter(|c| !c.is_empty())?;
    if root.join(ctl).exists() {
        return None;
    }
    let known = controllers
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .any(|c| c == ctl);
    let mut mounted: Vec<String> = std::fs::read_dir(root)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    mounted.sort();
    known.then(|| CgroupPathError::NotMounted {
        path: name.into(),
        controller: ctl.into(),
        mounted: if mounted.is_empty() {
            "nothing".into()
        } else {
            mounted.join(", ")
        },
    })
}

/// The processes in the cgroup at `dir` and in every cgroup below it, sorted. A cgroup
/// removed meanwhile gives none.
pub fn procs(dir: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(text) = std::fs::read_to_string(d.join("cgroup.procs")) {
            out.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
        }
        if let Ok(rd) = std::fs::read_dir(&d) {
            stack.extend(rd.flatten().filter(|e| e.path().is_dir()).map(|e| e.path()));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_controller_that_is_not_mounted_is_named() {
        let root = std::env::temp_dir().join(format!("cw-cgroot-{}", std::process::id()));
        std::fs::create_dir_all(root.join("cpu")).unwrap();
        std::fs::create_dir_all(root.join("memory")).unwrap();
        let known = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t1\t1\nmemory\t4\t1\t1\nhugetlb\t0\t1\t1\n";
        let e = unmounted("/sys/fs/cgroup/hugetlb/app", known, &root).unwrap();
        let text = e.to_string();
        assert!(
            text.contains("the hugetlb controller is not mounted"),
            "{text}"
        );
        assert!(text.contains("(mounted there: cpu, memory)"), "{text}");
        // A mounted controller, or a name that is no controller: not this error.
        assert!(unmounted("/sys/fs/cgroup/cpu/app", known, &root).is_none());
        assert!(unmounted("/sys/fs/cgroup/nosuch/app", known, &root).is_none());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn pressure_totals_are_read_from_some_and_full() {
        let t = "some avg10=1.00 avg60=0.50 avg300=0.10 total=287860\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=274478\n";
        assert_eq!(parse_pressure(t), (287_860, 274_478));
        assert_eq!(parse_pressure("some avg10=0.00 total=12\n"), (12, 0));
        assert_eq!(parse_pressure("garbage"), (0, 0));
    }

    use super::*;

    const MIXED: &str = "\
12:cpu,cpuacct:/docker/3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a
4:memory:/system.slice/redis-server.service
1:name=systemd:/system.slice/redis-server.service
0::/system.slice/redis-server.service
not a line
";

    #[test]
    fn both_versions_are_read_and_a_controller_finds_its_hierarchy() {
        let m = parse(MIXED);
        assert_eq!(m.len(), 4, "the malformed line is skipped");
        assert_eq!(m[0].controllers, vec!["cpu", "cpuacct"]);
        assert!(path_of(&m, "cpu").unwrap().starts_with("/docker/"));
        assert_eq!(
            path_of(&m, "memory"),
            Some("/system.slice/redis-server.service")
        );
        // No v1 hierarchy for io: the v2 path.
        assert_eq!(
            path_of(&m, "io"),
            Some("/system.slice/redis-server.service")
        );
    }

    #[test]
    fn quotas_of_both_versions_are_read() {
        let dir = std::env::temp_dir().join(format!("cw-cgroup-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let put = |n: &str, t: &str| std::fs::write(dir.join(n), t).unwrap();
        put("cpu.cfs_quota_us", "20000\n");
        put("cpu.cfs_period_us", "100000\n");
        put(
            "cpu.stat",
            "nr_periods 148\nnr_throttled 147\nthrottled_time 2401000000\n",
        );
        let q = cpu_quota(&dir).unwrap();
        assert_eq!(
            q,
            CpuQuota {
                quota_us: Some(20000),
                period_us: 100000,
                periods: 148,
                throttled: 147,
                throttled_ns: 2_401_000_000
            }
        );
        put("cpu.cfs_quota_us", "-1\n");
        assert_eq!(cpu_quota(&dir).unwrap().quota_us, None);
        // v2: cpu.max wins.
        put("cpu.max", "max 100000\n");
        put(
            "cpu.stat",
            "usage_usec 5\nnr_periods 3\nnr_throttled 1\nthrottled_usec 7\n",
        );
        let q = cpu_quota(&dir).unwrap();
        assert_eq!(
            (q.quota_us, q.period_us, q.throttled_ns),
            (None, 100000, 7000)
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(cpu_quota(&dir).is_err(), "a cgroup that is not there");
    }

    #[test]
    fn memory_limits_of_both_versions_are_read() {
        let dir = std::env::temp_dir().join(format!("cw-memcg-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let put = |n: &str, t: &str| std::fs::write(dir.join(n), t).unwrap();
        put("memory.limit_in_bytes", "67108864\n");
        put("memory.usage_in_bytes", "67100000\n");
        put("memory.failcnt", "5900\n");
        put(
            "memory.stat",
            "pgmajfault 3\nworkingset_refault_file 10\ntotal_pgmajfault 7\ntotal_workingset_refault_file 4100\n",
        );
        let m = memory_limit(&dir).unwrap();
        assert_eq!(
            m,
            MemoryLimit {
                limit: Some(64 << 20),
                usage: 67_100_000,
                hits: 5900,
                major_faults: 7,
                refaults: 4100
            }
        );
        put("memory.limit_in_bytes", "9223372036854771712\n");
        assert_eq!(memory_limit(&dir).unwrap().limit, None);
        // v2: memory.max and memory.events.
        put("memory.max", "max\n");
        put("memory.current", "100\n");
        put("memory.events", "low 0\nhigh 0\nmax 12\noom 0\n");
        put("memory.stat", "pgmajfault 2\nworkingset_refault_file 9\n");
        let m = memory_limit(&dir).unwrap();
        assert_eq!((m.limit, m.usage, m.hits, m.refaults), (None, 100, 12, 9));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(memory_limit(&dir).is_err());
    }

    #[test]
    fn a_named_cgroup_is_found_or_refused_with_its_name() {
        let e = resolve("/no-such-cgroup-for-causeway").unwrap_err();
        assert!(
            e.to_string().contains("/no-such-cgroup-for-causeway"),
            "{e}"
        );
        let e = resolve("/sys/fs/cgroup/no-such-cgroup-for-causeway").unwrap_err();
        assert!(matches!(e, CgroupPathError::NotFound(_)), "{e}");
        // The root of some hierarchy exists on any Linux host with cgroups mounted; it
        // holds this process (directly or below).
        if let Ok(root) = resolve("/") {
            assert!(procs(&root).contains(&std::process::id()));
        }
    }
}
