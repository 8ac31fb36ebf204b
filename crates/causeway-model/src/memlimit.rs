//! Memory limits: which cgroups held their processes at a memory limit during the
//! recording.
//!
//! A program whose working set is larger than its cgroup's memory limit spends its
//! time in page faults, reclaim and re-reads: the timeline shows disk waits, and only
//! the cgroup's counters (sampled by the recorder, format 1.7) say that the pages read
//! are ones the limit evicted. A group counts when it has a limit and, during the
//! recording, its usage hit the limit or evicted file pages were read again.

use causeway_format::{CgroupRow, MemorySample, Tables, Tgid};
use std::collections::BTreeMap;

/// One cgroup with a memory limit its processes ran into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryGroup {
    /// The cgroup's path (memory controller).
    pub path: String,
    /// The limit at the last sample, bytes.
    pub limit: u64,
    /// The largest usage sampled, bytes.
    pub peak_usage: u64,
    /// Times the usage hit the limit during the recording.
    pub hits: u64,
    /// Major page faults during the recording.
    pub major_faults: u64,
    /// Evicted file pages read again during the recording.
    pub refaults: u64,
    /// The recorded processes in it or below it.
    pub members: Vec<Tgid>,
    /// What the members did under the limit ([`with_pressure`]; zero before).
    pub pressure: MemoryPressure,
    /// Memory stalls the kernel counted over the recording (PSI), of the cgroup where
    /// it keeps them, else of the system; `None` without PSI samples.
    pub stall: Option<MemoryStall>,
}

/// Memory stalls over the recording, in thousandths of the time (PSI's `some` and
/// `full`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryStall {
    /// Some tasks stalled on memory, ‰ of the time.
    pub some_permille: u32,
    /// All non-idle tasks stalled at once, ‰ of the time.
    pub full_permille: u32,
    /// Whether these are the whole system's (the cgroup keeps none of its own: a v1
    /// memory controller).
    pub system: bool,
}

/// What a memory-limited cgroup's recorded processes did under the limit, from the
/// trace: how much they read from disks, and how much of their on-CPU time the
/// kernel spent reclaiming pages for them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryPressure {
    /// Bytes the members' threads read from block devices (requests issued by them).
    pub read_bytes: u64,
    /// On-CPU samples of the members' threads.
    pub samples: u64,
    /// Those taken in page reclaim (a reclaim function among the kernel frames).
    pub reclaim_samples: u64,
    /// Time the members' threads spent in page reclaim, ns, as the recorder timed it
    /// from the vmscan tracepoints (0 in traces before 1.9).
    pub reclaim_ns: u64,
    /// Reclaims so timed.
    pub reclaims: u64,
    /// The members' threads' running time, ns.
    pub running_ns: u64,
}

/// Page size the refault counters count in (x86-64's).
const PAGE: u64 = 4096;

impl MemoryGroup {
    /// The share of what the members read from the disks that were pages the limit
    /// had evicted (refaults), at most 1; `None` when they read nothing.
    pub fn refault_share(&self) -> Option<f64> {
        let read = self.pressure.read_bytes;
        (read > 0).then(|| ((self.refaults * PAGE) as f64 / read as f64).min(1.0))
    }

    /// The share of the members' running time spent in page reclaim: timed where
    /// the recording timed reclaim, else their on-CPU samples taken in it. (A timed
    /// reclaim is wall time and may include short sleeps inside it; capped at 1.)
    pub fn reclaim_share(&self) -> Option<f64> {
        let p = self.pressure;
        if p.reclaims > 0 && p.running_ns > 0 {
            return Some((p.reclaim_ns as f64 / p.running_ns as f64).min(1.0));
        }
        (p.samples > 0).then(|| p.reclaim_samples as f64 / p.samples as f64)
    }
}

/// Kernel functions of page reclaim: direct reclaim of an allocation and a cgroup's
/// reclaim at its limit (or above its high mark) run under these.
pub const RECLAIM_FRAMES: &[&str] = &[
    "try_to_free_mem_cgroup_pages",
    "try_to_free_pages",
    "__alloc_pages_direct_reclaim",
    "mem_cgroup_handle_over_high",
    "shrink_node",
    "shrink_lruvec",
];

/// Kernel functions that read a swapped-out page back in (a fault on anonymous memory
/// whose page is in swap).
pub const SWAP_IN_FRAMES: &[&str] = &[
    "do_swap_page",
    "swap_read_folio",
    "swap_readpage",
    "swapin_readahead",
    "swap_cluster_readahead",
];

/// Kernel functions of a user page fault: a wait under one is the fault's (a file
/// page read in, a page locked by another reader, memory charged).
pub const PAGE_FAULT_FRAMES: &[&str] = &[
    "exc_page_fault",
    "do_user_addr_fault",
    "handle_mm_fault",
    "filemap_fault",
    "do_read_fault",
];

/// Fill in each group's [`MemoryPressure`] from the model (block requests by thread)
/// and the on-CPU samples.
pub fn with_pressure(
    groups: &mut [MemoryGroup],
    model: &crate::Model,
    facts: &crate::facts::Facts,
    tables: &Tables,
) {
    if groups.is_empty() {
        return;
    }
    let member = |g: &MemoryGroup, t: Option<Tgid>| t.is_some_and(|t| g.members.contains(&t));
    let in_reclaim = |id: causeway_format::StackId| {
        tables.stack(id).is_some_and(|s| {
            s.frames.iter().any(|&f| {
                tables
                    .frame_functions(f)
                    .iter()
                    .any(|n| RECLAIM_FRAMES.contains(&n.as_str()))
            })
        })
    };
    for g in groups.iter_mut() {
        let mut p = MemoryPressure::default();
        for r in model.block_requests() {
            let reader = model
                .thread_index_at(r.issue_tid, r.issue)
                .and_then(|i| model.threads().as_slice().get(i as usize))
                .and_then(|t| t.tgid);
            if r.op.kind == causeway_format::BlockOpKind::Read && member(g, reader) {
                p.read_bytes += u64::from(r.bytes);
            }
        }
        // Each thread's last (largest) reclaim total.
        let mut timed: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        for r in &tables.cgroups {
            if let CgroupRow::Reclaim {
                tid,
                tgid,
                ns,
                count,
                ..
            } = r
                && g.members.contains(tgid)
            {
                let e = timed.entry(tid.0).or_default();
                *e = (*e).max((*count, *ns));
            }
        }
        p.reclaims = timed.values().map(|v| v.0).sum();
        p.reclaim_ns = timed.values().map(|v| v.1).sum();
        for t in model.threads().filter(|t| member(g, t.tgid)) {
            p.running_ns += t.totals.running.0;
            for s in facts.samples(t.tid) {
                p.samples += 1;
                p.reclaim_samples += u64::from(s.kernel.is_some_and(in_reclaim));
            }
        }
        g.pressure = p;
    }
}

/// The memory-limited cgroups of a trace, most refaults first.
pub fn memory_limits(tables: &Tables) -> Vec<MemoryGroup> {
    // A process's memory cgroups: its memory memberships where any were written (v1
    // hierarchies that differ), else its CPU controller's (one path on v2). Every
    // cgroup it was in during the recording counts (a process may move in and out).
    let mut cpu_of: BTreeMap<Tgid, Vec<String>> = BTreeMap::new();
    let mut mem_of: BTreeMap<Tgid, Vec<String>> = BTreeMap::new();
    let mut samples: BTreeMap<String, Vec<MemorySample>> = BTreeMap::new();
    for r in &tables.cgroups {
        match r {
            CgroupRow::Member { tgid, path, .. } => {
                cpu_of
                    .entry(*tgid)
                    .or_default()
                    .push(tables.string(*path).to_string());
            }
            CgroupRow::MemoryMember { tgid, path, .. } => {
                mem_of
                    .entry(*tgid)
                    .or_default()
                    .push(tables.string(*path).to_string());
            }
            CgroupRow::Memory(s) => samples
                .entry(tables.string(s.path).to_string())
                .or_default()
                .push(*s),
            _ => {}
        }
    }
    for (g, p) in cpu_of {
        mem_of.entry(g).or_insert(p);
    }
    let shares = crate::pressure::pressure_shares(tables);
    let stall_of = |path: &str| {
        crate::pressure::pressure_of(&shares, path, causeway_format::PressureResource::Memory).map(
            |p| MemoryStall {
                some_permille: (p.some * 1e3).round() as u32,
                full_permille: (p.full * 1e3).round() as u32,
                system: p.path == "/" && path != "/",
            },
        )
    };
    let mut out: Vec<MemoryGroup> = samples
        .into_iter()
        .filter_map(|(path, mut ss)| {
            ss.sort_by_key(|s| s.ts);
            let (first, last) = (ss.first()?, ss.last()?);
            let limit = last.limit.or(first.limit)?;
            let g = MemoryGroup {
                limit,
                peak_usage: ss.iter().map(|s| s.usage).max().unwrap_or(0),
                hits: last.hits.saturating_sub(first.hits),
                major_faults: last.major_faults.saturating_sub(first.major_faults),
                refaults: last.refaults.saturating_sub(first.refaults),
                members: mem_of
                    .iter()
                    .filter(|(_, ps)| ps.iter().any(|p| crate::quota::within(p, &path)))
                    .map(|(&g, _)| g)
                    .collect(),
                stall: stall_of(&path),
                path,
                pressure: MemoryPressure::default(),
            };
            (g.hits > 0 || g.refaults > 0).then_some(g)
        })
        .collect();
    out.sort_by(|a, b| b.refaults.cmp(&a.refaults).then(a.path.cmp(&b.path)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(refaults: u64, p: MemoryPressure) -> MemoryGroup {
        MemoryGroup {
            path: "/g".into(),
            limit: 64 << 20,
            peak_usage: 64 << 20,
            hits: 10,
            major_faults: 0,
            refaults,
            members: vec![Tgid(7)],
            pressure: p,
            stall: None,
        }
    }

    #[test]
    fn shares_of_refaults_and_reclaim() {
        let p = MemoryPressure {
            read_bytes: 8 * PAGE,
            samples: 40,
            reclaim_samples: 10,
            ..MemoryPressure::default()
        };
        assert_eq!(group(6, p).refault_share(), Some(0.75));
        assert_eq!(group(100, p).refault_share(), Some(1.0), "at most all");
        assert_eq!(group(6, p).reclaim_share(), Some(0.25));
        // Reclaim timed by the recorder wins over the samples.
        let timed = MemoryPressure {
            reclaim_ns: 30,
            reclaims: 3,
            running_ns: 200,
            ..p
        };
        assert_eq!(group(6, timed).reclaim_share(), Some(0.15));
        // Nothing read or sampled: no share, not a zero one.
        let none = group(6, MemoryPressure::default());
        assert_eq!((none.refault_share(), none.reclaim_share()), (None, None));
    }
}
