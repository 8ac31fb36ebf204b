//! How much of the counted work's time went to waiting for a CPU, and how much of that
//! behind other programs. The replay keeps every runnable delay at its recorded length
//! unless a change frees the CPU it waited for, so a prediction holds at the
//! recording's load: when the counted threads queued behind a build or another
//! service, the fixed program measured later, at another load, can differ by that much.

use causeway_format::{Cpu, Tgid};
use causeway_model::{Model, SegmentId, SegmentState};
use std::collections::{BTreeMap, BTreeSet};

/// The counted threads' CPU waits in the counted window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuWaits {
    /// Share of the counted threads' time in the window they were runnable.
    pub runnable_share: f64,
    /// Share of their time runnable while their CPU ran no thread of their own
    /// processes (another program, a kernel thread, or the CPU waking from idle).
    pub behind_others_share: f64,
}

/// The CPU waits of `threads` (model thread indices) within `window` (recorded ns).
pub(crate) fn cpu_waits(model: &Model, threads: &[u32], window: (u64, u64)) -> CpuWaits {
    let (lo, hi) = window;
    let clip = |a: u64, b: u64| b.min(hi).saturating_sub(a.max(lo));
    let tgids: BTreeSet<Tgid> = threads
        .iter()
        .filter_map(|&ti| model.thread_by_index(ti)?.tgid)
        .collect();
    // Per CPU: when threads of the counted processes ran on it, in time order.
    let mut own: BTreeMap<Cpu, Vec<(u64, u64)>> = BTreeMap::new();
    for t in model
        .threads()
        .filter(|t| t.tgid.is_some_and(|g| tgids.contains(&g)))
    {
        for s in t.segments_overlapping(
            causeway_format::Timestamp(lo),
            causeway_format::Timestamp(hi),
        ) {
            if let SegmentState::Running { cpu } = s.state {
                own.entry(cpu).or_default().push((s.start.0, s.end.0));
            }
        }
    }
    for v in own.values_mut() {
        v.sort_unstable();
    }
    let (mut total, mut runnable, mut behind) = (0u64, 0u64, 0u64);
    for &ti in threads {
        let Some(t) = model.thread_by_index(ti) else {
            continue;
        };
        for (si, s) in (0u32..).zip(&t.segments) {
            let d = clip(s.start.0, s.end.0);
            if d == 0 {
                continue;
            }
            total += d;
            if !s.state.is_runnable() {
                continue;
            }
            runnable += d;
            let next = SegmentId {
                thread: ti,
                index: si + 1,
            };
            let cpu = match (model.segment(next).map(|n| n.state), s.state) {
                (Some(SegmentState::Running { cpu }), _) => cpu,
                (_, SegmentState::Runnable { cpu: Some(cpu), .. }) => cpu,
                _ => continue,
            };
            let (a, b) = (s.start.0.max(lo), s.end.0.min(hi));
            let mine = own.get(&cpu).map_or(0, |v| overlap(v, a, b));
            behind += (b - a).saturating_sub(mine);
        }
    }
    let share = |x: u64| {
        if total == 0 {
            0.0
        } else {
            x as f64 / total as f64
        }
    };
    CpuWaits {
        runnable_share: share(runnable),
        behind_others_share: share(behind),
    }
}

/// Time of `[a, b)` covered by `spans` (sorted, not overlapping).
fn overlap(spans: &[(u64, u64)], a: u64, b: u64) -> u64 {
    let first = spans.partition_point(|&(_, e)| e <= a);
    spans[first..]
        .iter()
        .take_while(|&&(s, _)| s < b)
        .map(|&(s, e)| e.min(b).saturating_sub(s.max(a)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_counts_only_the_covered_part() {
        let spans = [(0, 10), (20, 30), (40, 50)];
        assert_eq!(overlap(&spans, 5, 45), 5 + 10 + 5);
        assert_eq!(overlap(&spans, 10, 20), 0);
        assert_eq!(overlap(&spans, 60, 70), 0);
    }
}
