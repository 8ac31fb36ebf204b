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
                path,
            };
            (g.hits > 0 || g.refaults > 0).then_some(g)
        })
        .collect();
    out.sort_by(|a, b| b.refaults.cmp(&a.refaults).then(a.path.cmp(&b.path)));
    out
}
