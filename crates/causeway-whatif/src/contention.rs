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
    /// Share of their time runnable while their CPU ran a thread of another process
    /// (another program or a kernel thread; not the CPU waking from idle).
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
    // Per CPU: when threads of other processes ran on it, in time order.
    let mut others: BTreeMap<Cpu, Vec<(u64, u64)>> = BTreeMap::new();
    let other =
        |t: &&causeway_model::Thread| t.tid.0 != 0 && !t.tgid.is_some_and(|g| tgids.contains(&g));
    for t in model.threads().filter(other) {
        for s in t.segments_overlapping(
            causeway_format::Timestamp(lo),
            causeway_format::Timestamp(hi),
        ) {
            if let SegmentState::Running { cpu } = s.state {
                others.entry(cpu).or_default().push((s.start.0, s.end.0));
            }
        }
    }
    for v in others.values_mut() {
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
            // Two threads' fragments can overlap on one CPU (a thread of a process
            // the recording did not follow is seen only where it meets a followed one).
            behind += others.get(&cpu).map_or(0, |v| overlap(v, a, b)).min(b - a);
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

/// Time of `[a, b)` covered by `spans` (sorted by start).
fn overlap(spans: &[(u64, u64)], a: u64, b: u64) -> u64 {
    // Sorted by start, the ends need not be: look back as far as a run may last.
    let first = spans.partition_point(|&(s, _)| s < a.saturating_sub(MAX_SPAN));
    spans[first..]
        .iter()
        .take_while(|&&(s, _)| s < b)
        .map(|&(s, e)| e.min(b).saturating_sub(s.max(a)))
        .sum()
}

/// Longest run of another process's thread looked back for (a fragment of an
/// unfollowed thread can read as a long run; it is clipped to the delay anyway).
const MAX_SPAN: u64 = 1_000_000_000;

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
