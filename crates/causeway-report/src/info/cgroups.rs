//! The recorded processes' cgroups for `info`: what each is (container, pod, unit),
//! which processes were in it, and its CPU quota and how much it held back.

use causeway_format::{CgroupRow, Tables};
use causeway_model::quota::Throttling;
use serde::Serialize;
use std::collections::BTreeMap;

/// One cgroup that held recorded processes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CgroupSummary {
    /// Its path (of the CPU controller's hierarchy).
    pub path: String,
    /// What the path names: `container 3f2a9c1b0d4e`, `pod …`, `unit redis.service`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The recorded processes in it.
    pub pids: Vec<u32>,
    /// Its CPU quota (or an ancestor's) if one held anything back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<QuotaSummary>,
    /// Its memory limit, if its processes ran into it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemorySummary>,
}

/// A memory limit the processes ran into during the recording.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemorySummary {
    /// The limit, bytes.
    pub limit_bytes: u64,
    /// The largest usage sampled, bytes.
    pub peak_usage_bytes: u64,
    /// Times the usage hit the limit.
    pub hits: u64,
    /// Major page faults.
    pub major_faults: u64,
    /// Evicted file pages read again.
    pub refaults: u64,
}

/// A CPU quota over the recording.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuotaSummary {
    /// The cgroup that sets it (the process's own or an ancestor).
    pub cgroup: String,
    /// CPU time allowed per period, µs.
    pub quota_us: u64,
    /// The period, µs.
    pub period_us: u64,
    /// Periods with runnable tasks during the recording.
    pub periods: u64,
    /// Periods in which the quota ran out.
    pub throttled: u64,
    /// Runnable time of the recorded threads held back, ns.
    pub held_ns: u64,
}

/// The cgroups of the trace's recorded processes, by path: every cgroup (of the CPU
/// or the memory controller) a recorded process was in during the recording.
pub fn summarize(quota: &Throttling, tables: &Tables) -> Vec<CgroupSummary> {
    let mut by_path: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for r in &tables.cgroups {
        if let CgroupRow::Member { tgid, path, .. } | CgroupRow::MemoryMember { tgid, path, .. } = r
        {
            let pids = by_path.entry(tables.string(*path).to_string()).or_default();
            if !pids.contains(&tgid.0) {
                pids.push(tgid.0);
            }
        }
    }
    let memory = causeway_model::memory_limits(tables);
    by_path
        .into_iter()
        .map(|(path, pids)| {
            let q = quota
                .groups
                .iter()
                // Its own quota or an ancestor's (not one its processes met elsewhere;
                // not a process's CPU affinity, which has no cgroup).
                .filter(|g| g.affinity.is_none())
                .filter(|g| path == g.path || path.starts_with(&format!("{}/", g.path)))
                .filter(|g| pids.iter().any(|p| g.members.iter().any(|m| m.0 == *p)))
                .max_by_key(|g| g.path.len())
                .map(|g| QuotaSummary {
                    cgroup: g.path.clone(),
                    quota_us: g.quota_us,
                    period_us: g.period_us,
                    periods: g.periods,
                    throttled: g.throttled,
                    held_ns: g.held_ns,
                });
            let memory = memory
                .iter()
                .find(|g| g.path == path)
                .map(|g| MemorySummary {
                    limit_bytes: g.limit,
                    peak_usage_bytes: g.peak_usage,
                    hits: g.hits,
                    major_faults: g.major_faults,
                    refaults: g.refaults,
                });
            CgroupSummary {
                owner: causeway_format::cgroups::owner(&path).map(|o| o.short()),
                path,
                pids,
                quota: q,
                memory,
            }
        })
        .collect()
}

/// A recorded process kept off idle CPUs by its affinity or cpuset.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AffinitySummary {
    /// The process.
    pub pid: u32,
    /// The CPUs it may run on, as the kernel lists them.
    pub cpus: String,
    /// CPUs online.
    pub online: u32,
    /// Runnable time of its threads held back while CPUs it may not use idled, ns.
    pub held_ns: u64,
}

/// The recorded processes whose affinity held their threads back.
pub fn affinity(quota: &Throttling) -> Vec<AffinitySummary> {
    quota
        .groups
        .iter()
        .filter_map(|g| {
            let a = g.affinity.as_ref()?;
            Some(AffinitySummary {
                pid: a.tgid.0,
                cpus: a.cpus.clone(),
                online: a.online,
                held_ns: g.held_ns,
            })
        })
        .collect()
}

/// One resource's stalls over the recording (PSI), of a cgroup or the system.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PressureSummary {
    /// The cgroup's path (v2), or `/` for the whole system.
    pub path: String,
    /// `cpu`, `memory` or `io`.
    pub resource: &'static str,
    /// Share of the time some tasks stalled on it, 0 to 1.
    pub some: f64,
    /// Share of the time all non-idle tasks stalled on it at once, 0 to 1.
    pub full: f64,
}

/// The recording's PSI shares.
pub fn pressure(tables: &Tables) -> Vec<PressureSummary> {
    causeway_model::pressure::pressure_shares(tables)
        .into_iter()
        .map(|p| PressureSummary {
            path: p.path,
            resource: p.resource.name(),
            some: p.some,
            full: p.full,
        })
        .collect()
}

/// One line per cgroup (or the system) whose tasks stalled at least 1 % of the time
/// on some resource: `system: cpu some 12.3 %; memory some 38.0 %, full 20.1 %`.
fn pressure_lines(pressure: &[PressureSummary]) -> Vec<String> {
    let mut paths: Vec<&str> = pressure
        .iter()
        .filter(|p| p.some >= 0.01)
        .map(|p| p.path.as_str())
        .collect();
    paths.dedup();
    paths
        .into_iter()
        .map(|path| {
            let parts: Vec<String> = pressure
                .iter()
                .filter(|p| p.path == path)
                .map(|p| {
                    let full = if p.full > 0.0 {
                        format!(", full {:.1} %", p.full * 100.0)
                    } else {
                        String::new()
                    };
                    format!("{} some {:.1} %{full}", p.resource, p.some * 100.0)
                })
                .collect();
            let who = if path == "/" { "system" } else { path };
            format!("{who} stalled (PSI): {}", parts.join("; "))
        })
        .collect()
}

/// One line per cgroup, then one per process kept off idle CPUs, then the stalls,
/// for the text report, each with its tag (`cgroup:`, `affinity:`, `pressure:`).
pub(crate) fn lines(
    cgroups: &[CgroupSummary],
    affinity: &[AffinitySummary],
    pressure: &[PressureSummary],
) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = cgroup_lines(cgroups)
        .into_iter()
        .map(|l| ("cgroup:", l))
        .collect();
    out.extend(
        pressure_lines(pressure)
            .into_iter()
            .map(|l| ("pressure:", l)),
    );
    out.extend(affinity.iter().map(|a| {
        (
            "affinity:",
            format!(
                "process {} may run on CPUs {} of {}: {:.3}s runnable held back while the others idled",
                a.pid,
                a.cpus,
                a.online,
                a.held_ns as f64 / 1e9
            ),
        )
    }));
    out
}

/// One line per cgroup.
fn cgroup_lines(cgroups: &[CgroupSummary]) -> Vec<String> {
    cgroups
        .iter()
        .map(|c| {
            let owner = c.owner.as_ref().map(|o| format!(" [{o}]")).unwrap_or_default();
            let pids: Vec<String> = c.pids.iter().map(u32::to_string).collect();
            let quota = c.quota.as_ref().map_or_else(String::new, |q| {
                format!(
                    "; CPU quota {:.1} ms / {:.1} ms{}: throttled {} of {} periods, {:.3}s runnable held back",
                    q.quota_us as f64 / 1e3,
                    q.period_us as f64 / 1e3,
                    if q.cgroup == c.path {
                        String::new()
                    } else {
                        format!(" (set on {})", q.cgroup)
                    },
                    q.throttled,
                    q.periods,
                    q.held_ns as f64 / 1e9
                )
            });
            let memory = c.memory.as_ref().map_or_else(String::new, |m| {
                format!(
                    "; memory limit {:.0} MiB: reached {} times, {} evicted file pages read again, {} major faults",
                    m.limit_bytes as f64 / (1u64 << 20) as f64,
                    m.hits,
                    m.refaults,
                    m.major_faults
                )
            });
            format!(
                "{}{owner}: processes {}{quota}{memory}",
                c.path,
                pids.join(", ")
            )
        })
        .collect()
}
