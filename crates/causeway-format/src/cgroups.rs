//! Control groups in a trace (format 1.6): which cgroup each recorded process was in,
//! and samples of what those cgroups limit (the CPU quota and its throttling).
//!
//! One table, one row type with a tag, so that later kinds of cgroup facts (memory
//! limits, pressure) are new tags in the same table rather than new block kinds. A
//! reader skips rows with tags it does not know.
//!
//! Paths are the cgroup's path within its hierarchy as `/proc/PID/cgroup` gives it
//! (`/system.slice/redis.service`): the v2 path, or on hosts that keep the CPU
//! controller on a v1 hierarchy, that hierarchy's path. What a path names (a
//! container, a pod, a systemd unit) is derived from it ([`owner`]).

use crate::ids::{StringId, Tgid, Tid, Timestamp};
use serde::{Deserialize, Serialize};

/// One row of the cgroup table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "row", rename_all = "snake_case")]
pub enum CgroupRow {
    /// Process `tgid` is in cgroup `path` (of its CPU controller) from `since` on.
    Member {
        /// The process.
        tgid: Tgid,
        /// From when (0: from before the recording).
        since: Timestamp,
        /// The cgroup's path.
        path: StringId,
    },
    /// The CPU quota of cgroup `path` and its throttling counters at `ts`.
    Cpu(CpuSample),
    /// Process `tgid` is in cgroup `path` of the memory controller from `since` on
    /// (written when that differs from its CPU controller's cgroup: v1 hierarchies
    /// are separate).
    MemoryMember {
        /// The process.
        tgid: Tgid,
        /// From when (0: from before the recording).
        since: Timestamp,
        /// The cgroup's path in the memory hierarchy.
        path: StringId,
    },
    /// The memory limit of cgroup `path` and its counters at `ts`.
    Memory(MemorySample),
    /// Process `tgid` may run only on CPUs `cpus` from `since` on: its affinity within
    /// its cpuset (`Cpus_allowed_list`, a list as the kernel prints it: `0-3,8`).
    /// Written when that is not every online CPU (1.8).
    Affinity {
        /// The process.
        tgid: Tgid,
        /// From when (0: from before the recording).
        since: Timestamp,
        /// The CPUs it may run on.
        cpus: StringId,
    },
    /// CPU `cpu`'s idle time so far, ns, at `ts` (`/proc/stat`): sampled while some
    /// recorded process may not run on every CPU, so that the analyses can tell how
    /// long the CPUs it may not use sat idle (1.8).
    Idle {
        /// When it was read, on the trace clock.
        ts: Timestamp,
        /// The CPU.
        cpu: u32,
        /// Idle time so far (idle and I/O wait), ns.
        idle_ns: u64,
    },
    /// Pressure stall information (PSI) of cgroup `path` at `ts`, or of the whole
    /// system when `path` is `/` (`/proc/pressure`): how long some or all of its tasks
    /// stalled on a resource so far (1.9).
    Pressure(PressureSample),
    /// Thread `tid` of process `tgid` spent `ns` in `count` page reclaims (direct, or
    /// its cgroup's at the memory limit) up to `ts`: cumulative, written every 100 ms
    /// when it grew (1.9).
    Reclaim {
        /// When it was read, on the trace clock.
        ts: Timestamp,
        /// The thread.
        tid: Tid,
        /// Its process.
        tgid: Tgid,
        /// Time in reclaim so far, ns (wall time from the reclaim's start to its end).
        ns: u64,
        /// Reclaims so far.
        count: u64,
    },
    /// A row of a tag this reader does not know (from a newer minor version).
    Unknown,
}

/// A resource whose stalls PSI counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PressureResource {
    /// Runnable tasks waiting for a CPU (or held back by a quota).
    Cpu,
    /// Tasks stalled on memory: reclaim, refaults, swap-ins.
    Memory,
    /// Tasks stalled on block I/O.
    Io,
}

impl PressureResource {
    /// Every resource, in file order.
    pub const ALL: [PressureResource; 3] = [
        PressureResource::Cpu,
        PressureResource::Memory,
        PressureResource::Io,
    ];

    /// Its name as the kernel's files use it (`cpu.pressure`, `/proc/pressure/cpu`).
    pub fn name(self) -> &'static str {
        match self {
            PressureResource::Cpu => "cpu",
            PressureResource::Memory => "memory",
            PressureResource::Io => "io",
        }
    }
}

/// One PSI reading: cumulative stall times of one resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PressureSample {
    /// When it was read, on the trace clock.
    pub ts: Timestamp,
    /// The cgroup's path (v2), or `/` for the whole system.
    pub path: StringId,
    /// Which resource.
    pub resource: PressureResource,
    /// Time some of its tasks stalled on it so far, µs.
    pub some_us: u64,
    /// Time all of its non-idle tasks stalled on it at once so far, µs.
    pub full_us: u64,
}

/// The CPU bandwidth limit of one cgroup at one time, with its cumulative counters
/// (`cpu.max` or `cpu.cfs_quota_us`/`cpu.cfs_period_us`, and `cpu.stat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSample {
    /// When it was read, on the trace clock.
    pub ts: Timestamp,
    /// The cgroup's path.
    pub path: StringId,
    /// CPU time allowed per period, µs; `None`: no quota.
    pub quota_us: Option<u64>,
    /// The period, µs.
    pub period_us: u64,
    /// Periods with runnable tasks so far (`nr_periods`).
    pub periods: u64,
    /// Periods in which the quota ran out (`nr_throttled`).
    pub throttled: u64,
    /// Time its run queues were held back, ns (summed over CPUs).
    pub throttled_ns: u64,
}

/// The memory limit of one cgroup at one time, with its cumulative counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySample {
    /// When it was read, on the trace clock.
    pub ts: Timestamp,
    /// The cgroup's path (in the memory controller's hierarchy).
    pub path: StringId,
    /// The limit, bytes; `None`: no limit.
    pub limit: Option<u64>,
    /// Memory charged to it, bytes.
    pub usage: u64,
    /// Times its usage hit the limit so far.
    pub hits: u64,
    /// Major page faults of its processes so far.
    pub major_faults: u64,
    /// File pages read again after being evicted so far (working-set refaults).
    pub refaults: u64,
}

/// What a cgroup's path says it belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum Owner {
    /// A container, by its runtime's id (64 hex digits: docker, containerd, CRI-O and
    /// podman all name their cgroups by it).
    Container(String),
    /// A Kubernetes pod, by its uid (when no container id is in the path).
    Pod(String),
    /// A systemd unit (`redis-server.service`, `session-3.scope`).
    Unit(String),
}

impl Owner {
    /// A short label: `container 3f2a9c1b0d4e`, `pod 5d1e…`, `unit redis.service`.
    /// Container ids are cut to twelve digits, as container tools print them.
    pub fn short(&self) -> String {
        match self {
            Owner::Container(id) => format!("container {}", &id[..id.len().min(12)]),
            Owner::Pod(uid) => format!("pod {}", &uid[..uid.len().min(8)]),
            Owner::Unit(u) => format!("unit {u}"),
        }
    }
}

/// The owner a cgroup path names, innermost first: a container id, else a pod, else a
/// systemd unit. Session scopes of logins (`session-3.scope`) and user slices are
/// units too; the root (`/`) names nothing.
pub fn owner(path: &str) -> Option<Owner> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    for p in parts.iter().rev() {
        // docker-<id>.scope, cri-containerd-<id>.scope, crio-<id>.scope,
        // libpod-<id>.scope, or a bare <id> (cgroupfs drivers: /docker/<id>).
        let stem = p.strip_suffix(".scope").unwrap_or(p);
        let id = stem.rsplit('-').next().unwrap_or(stem);
        if id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Some(Owner::Container(id.to_string()));
        }
    }
    for p in parts.iter().rev() {
        // kubepods-burstable-pod<uid>.slice (systemd driver) or pod<uid> (cgroupfs).
        let stem = p.strip_suffix(".slice").unwrap_or(p);
        if let Some(i) = stem.rfind("pod") {
            let uid = stem[i + 3..].replace('_', "-");
            if uid.len() == 36 && uid.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
                return Some(Owner::Pod(uid));
            }
        }
    }
    parts
        .iter()
        .rev()
        .find(|p| p.ends_with(".service") || p.ends_with(".scope"))
        .map(|p| Owner::Unit(p.to_string()))
}

/// A cgroup's short label for reports: its owner if the path names one, else the
/// path itself (`/quota-demo`).
pub fn label(path: &str) -> String {
    owner(path).map_or_else(|| path.to_string(), |o| o.short())
}

/// The CPU numbers of a list as the kernel prints it (`0-3,8`); `None` if malformed.
pub fn cpu_list(list: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 65_536 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_as_the_kernel_prints_them() {
        assert_eq!(cpu_list("0-3,8"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(cpu_list("1"), Some(vec![1]));
        assert_eq!(cpu_list(""), Some(vec![]));
        assert_eq!(cpu_list("3-1"), None);
        assert_eq!(cpu_list("a"), None);
    }

    #[test]
    fn a_path_names_its_container_pod_or_unit() {
        let id = "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a";
        for path in [
            format!("/docker/{id}"),
            format!("/system.slice/docker-{id}.scope"),
            format!(
                "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f6a_7b8c_9d0e_1f2a3b4c5d6e.slice/cri-containerd-{id}.scope"
            ),
            format!("/machine.slice/libpod-{id}.scope/container"),
        ] {
            assert_eq!(owner(&path), Some(Owner::Container(id.into())), "{path}");
        }
        assert_eq!(
            owner("/kubepods/burstable/pod1b2c3d4e-5f6a-7b8c-9d0e-1f2a3b4c5d6e"),
            Some(Owner::Pod("1b2c3d4e-5f6a-7b8c-9d0e-1f2a3b4c5d6e".into()))
        );
        assert_eq!(
            owner("/system.slice/redis-server.service"),
            Some(Owner::Unit("redis-server.service".into()))
        );
        assert_eq!(owner("/"), None);
        assert_eq!(owner("/user.slice"), None);
    }

    #[test]
    fn short_labels() {
        let id = "3f2a9c1b0d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd";
        assert_eq!(
            owner(&format!("/docker/{id}")).map(|o| o.short()),
            Some("container 3f2a9c1b0d4e".into())
        );
        assert_eq!(label("/quota-demo"), "/quota-demo");
    }
}
