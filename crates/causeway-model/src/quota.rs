//! CPU quotas: which runnable time was the cgroup's quota, not a busy CPU.
//!
//! A thread whose cgroup (or an ancestor's) CPU quota ran out stays runnable while
//! CPUs idle, until the next period refills the quota. On the timeline that looks like
//! any other runnable stretch; the recorder samples each recorded cgroup's counters
//! (format 1.7, [`causeway_format::CgroupRow`]), and the kernel's throttled time in
//! each stretch between two samples says how much of its threads' runnable time there
//! was the quota's.
//!
//! Rule: between consecutive samples of a cgroup with a quota, the growth of its
//! throttled time is spread over the runnable time of the threads of the processes in
//! it (or in a cgroup below it) in that stretch, in proportion to each segment's
//! share, and never more than that runnable time. Reason: throttled time is counted
//! per CPU run queue while the group is held back, and a held-back run queue holds
//! exactly its runnable threads; proportion is used because the samples (every
//! 100 ms) do not say which of the runnable stretches inside one stretch the throttle
//! covered. Limits: the placement within a sample stretch is a share, not a time;
//! runnable time for a busy CPU in the same stretch is counted as the quota's up to
//! the throttled time.

use crate::{Model, SegmentState};
use causeway_format::{CgroupRow, CpuSample, Tables, Tgid};
use std::collections::{BTreeMap, HashMap};

/// One cgroup with a CPU quota, over the recording.
#[derive(Clone, Debug, PartialEq)]
pub struct QuotaGroup {
    /// The cgroup's path.
    pub path: String,
    /// The quota per period at the last sample, µs.
    pub quota_us: u64,
    /// The period, µs.
    pub period_us: u64,
    /// Periods with runnable tasks during the recording.
    pub periods: u64,
    /// Periods in which the quota ran out during the recording.
    pub throttled: u64,
    /// Throttled time during the recording (summed over CPUs), ns.
    pub throttled_ns: u64,
    /// Runnable time of its threads counted as the quota's, ns.
    pub held_ns: u64,
    /// The recorded processes in it or below it.
    pub members: Vec<Tgid>,
    /// Set for a process kept off idle CPUs by its affinity or cpuset, not a quota
    /// (the quota fields are then zero; `path` is empty).
    pub affinity: Option<Affinity>,
}

/// A process that may run only on some CPUs while others idled.
#[derive(Clone, Debug, PartialEq)]
pub struct Affinity {
    /// The process.
    pub tgid: Tgid,
    /// The CPUs it may run on, as the kernel lists them.
    pub cpus: String,
    /// How many CPUs were online (sampled).
    pub online: u32,
    /// Idle time of the CPUs it may not use, during the recording, ns (summed).
    pub idle_outside_ns: u64,
}

/// Runnable time held back by quotas.
#[derive(Clone, Debug, Default)]
pub struct Throttling {
    /// The cgroups with a quota that throttled during the recording.
    pub groups: Vec<QuotaGroup>,
    /// Per model thread index: (segment index, ns held, group index), in segment order.
    held: HashMap<u32, Vec<(u32, u64, u32)>>,
}

impl Throttling {
    /// The throttled runnable time of the trace's recorded cgroups.
    pub fn of(model: &Model, tables: &Tables) -> Throttling {
        // Every cgroup a process was in during the recording counts (a process may
        // move in and out).
        let mut member_of: BTreeMap<Tgid, Vec<String>> = BTreeMap::new();
        let mut samples: BTreeMap<String, Vec<CpuSample>> = BTreeMap::new();
        for r in &tables.cgroups {
            match r {
                CgroupRow::Member { tgid, path, .. } => {
                    member_of
                        .entry(*tgid)
                        .or_default()
                        .push(tables.string(*path).to_string());
                }
                CgroupRow::Cpu(s) => samples
                    .entry(tables.string(s.path).to_string())
                    .or_default()
                    .push(*s),
                _ => {}
            }
        }
        let mut out = Throttling::default();
        for (path, mut ss) in samples {
            ss.sort_by_key(|s| s.ts);
            let (Some(first), Some(last)) = (ss.first(), ss.last()) else {
                continue;
            };
            let Some(quota_us) = last.quota_us.or(first.quota_us) else {
                continue;
            };
            // A cgroup made during the recording: its counters started at zero one
            // period per counted period before its first sample (periods are
            // counted only while it has runnable tasks, so this is the latest
            // possible start); that stretch's throttling belongs to it too.
            let start = model.span().map_or(0, |s| s.start.0);
            let born = first
                .ts
                .0
                .checked_sub(
                    first
                        .periods
                        .saturating_mul(first.period_us)
                        .saturating_mul(1000),
                )
                .filter(|&b| b > start);
            if let Some(b) = born
                && first.throttled_ns > 0
            {
                ss.insert(
                    0,
                    CpuSample {
                        ts: causeway_format::Timestamp(b),
                        periods: 0,
                        throttled: 0,
                        throttled_ns: 0,
                        ..*first
                    },
                );
            }
            let (first, last) = (&ss[0], &ss[ss.len() - 1]);
            if last.throttled_ns <= first.throttled_ns {
                continue;
            }
            let members: Vec<Tgid> = member_of
                .iter()
                .filter(|(_, ps)| ps.iter().any(|p| within(p, &path)))
                .map(|(&g, _)| g)
                .collect();
            let gi = out.groups.len() as u32;
            let held = spread(model, &members, &ss, gi, &mut out.held);
            out.groups.push(QuotaGroup {
                quota_us,
                period_us: last.period_us,
                periods: last.periods.saturating_sub(first.periods),
                throttled: last.throttled.saturating_sub(first.throttled),
                throttled_ns: last.throttled_ns - first.throttled_ns,
                held_ns: held,
                members,
                path,
                affinity: None,
            });
        }
        affinities(model, tables, &mut out);
        for v in out.held.values_mut() {
            // A thread in nested throttled groups: the innermost (longest path) is
            // where the waits point; the time counts once.
            v.sort_by_key(|&(seg, _, _)| seg);
            v.dedup_by_key(|&mut (seg, _, _)| seg);
        }
        out
    }

    /// The runnable time of segment `seg` of model thread `thread` held back by a quota,
    /// with the group's index in [`Throttling::groups`].
    pub fn held(&self, thread: u32, seg: u32) -> Option<(u64, u32)> {
        let v = self.held.get(&thread)?;
        let i = v.binary_search_by_key(&seg, |&(s, _, _)| s).ok()?;
        Some((v[i].1, v[i].2))
    }

    /// Total held-back time of model thread `thread`, ns.
    pub fn thread_total(&self, thread: u32) -> u64 {
        self.held
            .get(&thread)
            .map_or(0, |v| v.iter().map(|x| x.1).sum())
    }

    /// True when no quota held anything back.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

/// Processes restricted to some CPUs (format 1.8 rows): the runnable time of their
/// threads in each stretch between two idle samples counts as held back by the
/// affinity up to the idle time, in that stretch, of the CPUs they may not use (the
/// same proportional spread as a quota's throttled time). Reason: a runnable thread
/// with an idle CPU it may not use waits on its placement, not on a busy machine;
/// the idle time bounds it, since a thread can use an idle CPU only while it idles.
/// Runnable time a quota already holds back is the quota's (quota groups come first).
fn affinities(model: &Model, tables: &Tables, out: &mut Throttling) {
    let mut masks: BTreeMap<Tgid, String> = BTreeMap::new();
    let mut idle: BTreeMap<u32, Vec<(u64, u64)>> = BTreeMap::new();
    for r in &tables.cgroups {
        match r {
            // The last one stands for the recording (a process rarely changes it).
            CgroupRow::Affinity { tgid, cpus, .. } => {
                masks.insert(*tgid, tables.string(*cpus).to_string());
            }
            CgroupRow::Idle { ts, cpu, idle_ns } => {
                idle.entry(*cpu).or_default().push((ts.0, *idle_ns));
            }
            _ => {}
        }
    }
    if masks.is_empty() || idle.is_empty() {
        return;
    }
    for v in idle.values_mut() {
        v.sort_unstable();
    }
    let online = idle.len() as u32;
    for (tgid, cpus) in masks {
        let Some(allowed) = causeway_format::cgroups::cpu_list(&cpus) else {
            continue;
        };
        // Cumulative idle time of the CPUs it may not use, at each sample time (every
        // CPU is read at the same ticks).
        let mut outside: BTreeMap<u64, u64> = BTreeMap::new();
        for (cpu, v) in &idle {
            if allowed.contains(cpu) {
                continue;
            }
            for &(ts, ns) in v {
                *outside.entry(ts).or_default() += ns;
            }
        }
        let ss: Vec<CpuSample> = outside
            .iter()
            .map(|(&ts, &ns)| CpuSample {
                ts: causeway_format::Timestamp(ts),
                path: causeway_format::StringId(0),
                quota_us: None,
                period_us: 0,
                periods: 0,
                throttled: 0,
                throttled_ns: ns,
            })
            .collect();
        let (Some(first), Some(last)) = (ss.first(), ss.last()) else {
            continue;
        };
        let idle_outside_ns = last.throttled_ns.saturating_sub(first.throttled_ns);
        let gi = out.groups.len() as u32;
        let held = spread(model, &[tgid], &ss, gi, &mut out.held);
        if held == 0 {
            continue;
        }
        out.groups.push(QuotaGroup {
            path: String::new(),
            quota_us: 0,
            period_us: 0,
            periods: 0,
            throttled: 0,
            throttled_ns: 0,
            held_ns: held,
            members: vec![tgid],
            affinity: Some(Affinity {
                tgid,
                cpus,
                online,
                idle_outside_ns,
            }),
        });
    }
}

/// True when cgroup `p` is `group` or below it.
pub(crate) fn within(p: &str, group: &str) -> bool {
    p == group
        || (p.starts_with(group) && (group.ends_with('/') || p[group.len()..].starts_with('/')))
}

/// Spread each sample stretch's throttled time over the members' runnable segments in
/// it; returns the total placed.
fn spread(
    model: &Model,
    members: &[Tgid],
    ss: &[CpuSample],
    gi: u32,
    held: &mut HashMap<u32, Vec<(u32, u64, u32)>>,
) -> u64 {
    // Runnable segments of member threads: (thread, seg, start, end).
    let mut segs: Vec<(u32, u32, u64, u64)> = Vec::new();
    for (ti, th) in (0u32..).zip(model.threads()) {
        if !th.tgid.is_some_and(|g| members.contains(&g)) {
            continue;
        }
        for (si, s) in (0u32..).zip(&th.segments) {
            if matches!(s.state, SegmentState::Runnable { .. }) && s.end > s.start {
                segs.push((ti, si, s.start.0, s.end.0));
            }
        }
    }
    segs.sort_by_key(|s| s.2);
    let mut per_seg: BTreeMap<(u32, u32), f64> = BTreeMap::new();
    for w in ss.windows(2) {
        let (a, b) = (w[0].ts.0, w[1].ts.0);
        let grew = w[1].throttled_ns.saturating_sub(w[0].throttled_ns);
        if grew == 0 || b <= a {
            continue;
        }
        let overlaps: Vec<(usize, u64)> = segs
            .iter()
            .enumerate()
            .take_while(|(_, s)| s.2 < b)
            .filter_map(|(i, s)| {
                let o = s.3.min(b).saturating_sub(s.2.max(a));
                (o > 0).then_some((i, o))
            })
            .collect();
        let total: u64 = overlaps.iter().map(|x| x.1).sum();
        if total == 0 {
            continue;
        }
        let f = (grew as f64 / total as f64).min(1.0);
        for (i, o) in overlaps {
            *per_seg.entry((segs[i].0, segs[i].1)).or_default() += o as f64 * f;
        }
    }
    let mut placed = 0;
    for ((t, s), ns) in per_seg {
        let ns = ns.round() as u64;
        if ns > 0 {
            held.entry(t).or_default().push((s, ns, gi));
            placed += ns;
        }
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::within;

    #[test]
    fn a_cgroup_is_within_itself_and_its_ancestors_only() {
        assert!(within("/a/b", "/a"));
        assert!(within("/a", "/a"));
        assert!(!within("/ab", "/a"));
        assert!(within("/a", "/"));
    }
}
