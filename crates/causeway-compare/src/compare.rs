//! The comparison itself.

use crate::callsite::call_site;
use crate::histogram::{Log2Histogram, emd};
use causeway_model::Trace;
use causeway_stacks::Extras;
use std::collections::BTreeMap;

/// One run: its trace and the system calls gathered from its events.
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    /// Model and facts.
    pub trace: &'a Trace,
    /// System calls (with their call-site stacks).
    pub extras: &'a Extras,
}

/// Figures of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSummary {
    /// Length of the recording.
    pub duration_ns: u64,
    /// System calls seen entering.
    pub syscalls: u64,
    /// Durations of every blocked segment that ended with a wake-up.
    pub waits: Log2Histogram,
    /// Total of those waits.
    pub waited_ns: u64,
}

/// A syscall at a call site.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SiteKey {
    /// Syscall number.
    pub nr: u32,
    /// Call site (function name).
    pub site: String,
}

/// One call site of a syscall in both runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SiteDiff {
    /// Call site.
    pub site: String,
    /// Calls in the normal run.
    pub normal_calls: u64,
    /// Calls in the slow run.
    pub slow_calls: u64,
    /// Time inside those calls, normal run.
    pub normal_ns: u64,
    /// Time inside those calls, slow run.
    pub slow_ns: u64,
}

/// One syscall in both runs, with its call sites.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SyscallDiff {
    /// Syscall number.
    pub nr: u32,
    /// Call sites, by time added in the slow run first.
    pub sites: Vec<SiteDiff>,
    /// Histograms of the call durations, normal then slow.
    pub durations: (Log2Histogram, Log2Histogram),
}

impl SyscallDiff {
    /// Calls in (normal, slow).
    pub fn calls(&self) -> (u64, u64) {
        self.sites
            .iter()
            .fold((0, 0), |(a, b), s| (a + s.normal_calls, b + s.slow_calls))
    }

    /// Time in calls in (normal, slow).
    pub fn time_ns(&self) -> (u64, u64) {
        self.sites
            .iter()
            .fold((0, 0), |(a, b), s| (a + s.normal_ns, b + s.slow_ns))
    }
}

/// Everything the comparison finds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// The normal run.
    pub normal: RunSummary,
    /// The slow run.
    pub slow: RunSummary,
    /// Every syscall of either run, by time added in the slow run (per second of
    /// recording) first.
    pub syscalls: Vec<SyscallDiff>,
    /// Syscall and call site pairs seen only in the slow run, most calls first.
    pub only_in_slow: Vec<SiteKey>,
    /// Pairs seen only in the normal run, most calls first.
    pub only_in_normal: Vec<SiteKey>,
    /// Earth mover's distance between the wait-time histograms, in log2 buckets.
    pub wait_emd: f64,
}

/// Compare a normal run with a slow one.
pub fn compare(normal: Run<'_>, slow: Run<'_>) -> Comparison {
    let mut sites: BTreeMap<SiteKey, SiteDiff> = BTreeMap::new();
    let mut durations: BTreeMap<u32, (Log2Histogram, Log2Histogram)> = BTreeMap::new();
    for (run, is_slow) in [(normal, false), (slow, true)] {
        let tables = run.trace.tables();
        for c in &run.extras.syscalls {
            let key = SiteKey {
                nr: c.nr,
                site: call_site(tables, c.stack.and_then(|s| s.user)),
            };
            let ns = c.end.map_or(0, |e| e.saturating_since(c.start).0);
            let d = sites.entry(key.clone()).or_insert_with(|| SiteDiff {
                site: key.site.clone(),
                ..SiteDiff::default()
            });
            let h = durations.entry(c.nr).or_default();
            if is_slow {
                d.slow_calls += 1;
                d.slow_ns += ns;
                h.1.add(ns);
            } else {
                d.normal_calls += 1;
                d.normal_ns += ns;
                h.0.add(ns);
            }
        }
    }
    let mut by_nr: BTreeMap<u32, SyscallDiff> = BTreeMap::new();
    for (k, d) in &sites {
        by_nr.entry(k.nr).or_default().sites.push(d.clone());
    }
    let (n_s, s_s) = (seconds(normal.trace), seconds(slow.trace));
    let added = |n_ns: u64, s_ns: u64| s_ns as f64 / s_s - n_ns as f64 / n_s;
    let mut syscalls: Vec<SyscallDiff> = by_nr
        .into_iter()
        .map(|(nr, mut d)| {
            d.nr = nr;
            d.sites.sort_by(|a, b| {
                added(b.normal_ns, b.slow_ns).total_cmp(&added(a.normal_ns, a.slow_ns))
            });
            d.durations = durations.remove(&nr).unwrap_or_default();
            d
        })
        .collect();
    syscalls.sort_by(|a, b| {
        let (an, asl) = a.time_ns();
        let (bn, bsl) = b.time_ns();
        added(bn, bsl)
            .total_cmp(&added(an, asl))
            .then(a.nr.cmp(&b.nr))
    });
    let only = |slow_side: bool| {
        let mut v: Vec<(&SiteKey, u64)> = sites
            .iter()
            .filter(|(_, d)| (d.normal_calls == 0) == slow_side && (d.slow_calls == 0) != slow_side)
            .map(|(k, d)| (k, d.normal_calls + d.slow_calls))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v.into_iter().map(|(k, _)| k.clone()).collect::<Vec<_>>()
    };
    let normal_summary = summary(normal);
    let slow_summary = summary(slow);
    Comparison {
        wait_emd: emd(&normal_summary.waits, &slow_summary.waits),
        normal: normal_summary,
        slow: slow_summary,
        syscalls,
        only_in_slow: only(true),
        only_in_normal: only(false),
    }
}

/// Recording length in seconds (at least a nanosecond, so rates are defined).
fn seconds(t: &Trace) -> f64 {
    t.model().span().map_or(1, |s| s.duration().0.max(1)) as f64 / 1e9
}

fn summary(run: Run<'_>) -> RunSummary {
    let mut s = RunSummary {
        duration_ns: run.trace.model().span().map_or(0, |s| s.duration().0),
        syscalls: run.extras.syscalls.len() as u64,
        ..RunSummary::default()
    };
    for t in run.trace.model().threads() {
        for seg in t.segments.iter().filter(|s| s.wake().is_some()) {
            s.waits.add(seg.duration().0);
            s.waited_ns += seg.duration().0;
        }
    }
    s
}
