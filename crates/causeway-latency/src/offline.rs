//! DARC's root-cause path computed from a trace where every call is recorded (an
//! in-process libcauseway trace, or any producer of method markers): the same
//! decision as the live descent ([`crate::Tally`]), made exactly and for any function
//! and peak without re-running the program.
//!
//! Where the live mode has to approximate, this one does not: F0's calls are in the
//! peak by their recorded latency (no probe shifts them, so no ranking by quantile),
//! and every callee of every in-peak call is known, indirect calls included. Each
//! level still follows DARC: the function under study is reached from F0 through the
//! path's functions, each a direct callee of the one before (§3.2 call-path
//! filtering); its latency is its longest call inside that call of F0, each callee's
//! its longest call; a recursive call of a function is folded into the outermost one
//! (§3.5), its callees counted as the outer call's. Preemption and hard interrupts
//! (§3.6) come from the trace's scheduler and IRQ events when it has them
//! ([`crate::offcpu`]) and are taken out of the callee they fell in, as the live probe
//! does. Calls without a recorded exit (still running at the dump) have no latency and
//! are left out.

use crate::offcpu::{OffCpu, OffCpuIndex};
use crate::rootcause::{Candidate, Decision, Level, RootPath, Sample, Stop, Tally};
use crate::{Histogram, LatencyError, Peak, PeakOptions, Resolution, find_peaks};
use causeway_calls::tree::{self, Call, Tree};
use causeway_format::Tid;
use causeway_model::Trace;
use std::collections::BTreeMap;

/// Which peak of F0 to explain (from a trace, or live).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeakChoice {
    /// Peak N, numbered from the shortest latencies (1-based).
    Number(u32),
    /// The slowest peak: how many peaks a profile resolves can vary from run to run,
    /// while "the slowest" does not.
    Last,
}

impl std::str::FromStr for PeakChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<PeakChoice, String> {
        if s == "last" {
            return Ok(PeakChoice::Last);
        }
        match s.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(PeakChoice::Number(n)),
            _ => Err(format!(
                "`{s}` is not a peak: give its number (1 = shortest latencies) or `last`"
            )),
        }
    }
}

/// What to explain and how far to descend.
#[derive(Clone, Debug, PartialEq)]
pub struct OfflineOptions {
    /// F0's name as the trace records it.
    pub f0: String,
    /// The peak.
    pub peak: PeakChoice,
    /// Root causes are within this share (0 to 1) of the best maxcount.
    pub maxcount_pct: f64,
    /// Longest path below F0.
    pub max_depth: usize,
    /// Only these threads; empty for all.
    pub threads: Vec<Tid>,
}

/// One thread's calls with each call's children.
struct Calls<'t> {
    tid: Tid,
    tree: Tree,
    children: Vec<Vec<u32>>,
    names: &'t [String],
}

impl<'t> Calls<'t> {
    fn new(tid: Tid, tree: Tree, names: &'t [String]) -> Calls<'t> {
        let mut children = vec![Vec::new(); tree.calls.len()];
        for (i, c) in tree.calls.iter().enumerate() {
            if let Some(p) = c.parent {
                children[p.0 as usize].push(i as u32);
            }
        }
        Calls {
            tid,
            tree,
            children,
            names,
        }
    }

    fn call(&self, i: u32) -> &Call {
        &self.tree.calls[i as usize]
    }

    fn name(&self, i: u32) -> &'t str {
        let id = self.call(i).name.0 as usize;
        self.names.get(id).map_or("", String::as_str)
    }

    /// `i` and its recursive calls: the chain of callees with its own name (§3.5).
    fn folded(&self, i: u32) -> Vec<u32> {
        let name = self.name(i);
        let mut out = vec![i];
        let mut k = 0;
        while k < out.len() {
            let c = out[k];
            out.extend(
                self.children[c as usize]
                    .iter()
                    .filter(|&&ch| self.name(ch) == name),
            );
            k += 1;
        }
        out
    }

    /// The calls of `path`'s last function reached from F0's call `root` through the
    /// path's functions, each a direct callee of the one before.
    fn reach(&self, root: u32, path: &[String]) -> Vec<u32> {
        let mut at = vec![root];
        for f in &path[1..] {
            at = at
                .iter()
                .flat_map(|&c| self.folded(c))
                .flat_map(|c| self.children[c as usize].iter().copied())
                .filter(|&ch| self.name(ch) == f)
                .collect();
        }
        at
    }
}

/// A call of F0: its thread (index), its call, its latency.
type Root = (usize, u32, u64);

/// F0's outermost recorded calls with their latencies.
fn roots(threads: &[Calls<'_>], f0: &str) -> Vec<Root> {
    let mut out = Vec::new();
    for (t, c) in threads.iter().enumerate() {
        for i in 0..c.tree.calls.len() as u32 {
            let call = c.call(i);
            if call.open || c.name(i) != f0 {
                continue;
            }
            let mut up = call.parent;
            let mut nested = false;
            while let Some(p) = up {
                nested |= c.name(p.0) == f0;
                up = c.call(p.0).parent;
            }
            if !nested {
                out.push((t, i, call.total_ns()));
            }
        }
    }
    out
}

/// One in-peak call of F0 measured at one level: the function's latency, each callee's
/// longest call by name, and what it lost off the CPU.
struct Measured {
    function_ns: u64,
    callees: BTreeMap<String, u64>,
    sample: Sample,
}

fn measure(c: &Calls<'_>, root: u32, path: &[String], off: &OffCpuIndex<'_>) -> Option<Measured> {
    let at = c.reach(root, path);
    if at.is_empty() {
        return None;
    }
    let own = path.last().map_or("", String::as_str);
    let mut m = Measured {
        function_ns: 0,
        callees: BTreeMap::new(),
        sample: Sample::default(),
    };
    let mut lost = OffCpu::default();
    // The call of the function that lost the most names the preemptor and the IRQ.
    let mut worst: Option<OffCpu> = None;
    for &f in &at {
        let call = c.call(f);
        m.function_ns = m.function_ns.max(call.total_ns());
        let o = off.during(c.tid, call.start, call.end);
        lost.preempted_ns += o.preempted_ns;
        lost.irq_ns += o.irq_ns;
        let lost_here = o.preempted_ns + o.irq_ns;
        if worst
            .as_ref()
            .is_none_or(|w| lost_here > w.preempted_ns + w.irq_ns)
        {
            worst = Some(o);
        }
        for d in c.folded(f) {
            for &ch in &c.children[d as usize] {
                let name = c.name(ch);
                if name == own {
                    continue;
                }
                let k = c.call(ch);
                let o = off.during(c.tid, k.start, k.end);
                let ns = k.total_ns().saturating_sub(o.preempted_ns + o.irq_ns);
                let e = m.callees.entry(name.to_string()).or_insert(0);
                *e = (*e).max(ns);
            }
        }
    }
    let worst = worst.unwrap_or_default();
    m.sample = Sample {
        function_ns: m.function_ns,
        callees_ns: Vec::new(),
        preempted_ns: lost.preempted_ns,
        irq_ns: lost.irq_ns,
        preemptor: worst.preemptor.filter(|_| lost.preempted_ns > 0),
        irq: worst.irq.filter(|_| lost.irq_ns > 0),
    };
    Some(m)
}

/// One level: the in-peak calls measured, their tally and the level's record.
fn level(
    threads: &[Calls<'_>],
    in_peak: &[Root],
    path: &[String],
    off: &OffCpuIndex<'_>,
    maxcount_pct: f64,
) -> (Level, Tally) {
    let measured: Vec<Measured> = in_peak
        .iter()
        .filter_map(|&(t, i, _)| measure(&threads[t], i, path, off))
        .collect();
    // Callees in name order: a stable order for the same trace.
    let names: Vec<String> = measured
        .iter()
        .flat_map(|m| m.callees.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut tally = Tally::new(names.len());
    for m in measured {
        let mut s = m.sample;
        s.callees_ns = names
            .iter()
            .map(|n| m.callees.get(n).copied().unwrap_or(0))
            .collect();
        tally.add(&s);
    }
    let decision = tally.decide(maxcount_pct);
    let level = Level {
        function: path.last().cloned().unwrap_or_default(),
        samples: tally.samples,
        own_maxcount: tally.own,
        callees: names
            .iter()
            .zip(&tally.callees)
            .map(|(n, &maxcount)| Candidate {
                function: n.clone(),
                binary: String::new(),
                maxcount,
                // Calls through pointers are recorded like any other.
                indirect: false,
            })
            .collect(),
        unresolved_calls: 0,
        indirect_sites: 0,
        preemption: Some(tally.preemption()),
        interrupts: Some(tally.interrupt_time()),
        decision,
    };
    (level, tally)
}

/// F0's profile, its peaks and the chosen one.
fn choose(
    roots: &[Root],
    opts: &OfflineOptions,
) -> Result<(Histogram, Vec<Peak>, Peak), LatencyError> {
    let mut hist = Histogram::new(Resolution::LOG2);
    for r in roots {
        hist.record(r.2);
    }
    let peaks = find_peaks(&hist, &PeakOptions::default());
    let n = match opts.peak {
        PeakChoice::Number(n) => n,
        PeakChoice::Last => peaks.len() as u32,
    };
    let Some(peak) = peaks.iter().find(|p| p.number == n).copied() else {
        return Err(LatencyError::NoSuchPeak {
            function: opts.f0.clone(),
            peak: n,
            peaks: peaks.len(),
        });
    };
    Ok((hist, peaks, peak))
}

/// The root-cause path of one peak of `opts.f0` from the calls recorded in `trace`.
pub fn rootpath(trace: &Trace, opts: &OfflineOptions) -> Result<RootPath, LatencyError> {
    let names = &trace.tables().strings;
    let threads: Vec<Calls<'_>> = tree::build(trace.facts().markers(), None)
        .into_iter()
        .filter(|(tid, _)| opts.threads.is_empty() || opts.threads.contains(tid))
        .map(|(tid, t)| Calls::new(tid, t, names))
        .collect();
    let roots = roots(&threads, &opts.f0);
    if roots.is_empty() {
        return Err(LatencyError::NoCalls(opts.f0.clone()));
    }
    let (hist, peaks, peak) = choose(&roots, opts)?;
    let in_peak: Vec<Root> = roots
        .into_iter()
        .filter(|r| peak.contains_ns(r.2))
        .collect();
    let off = OffCpuIndex::new(trace);
    let mut path = vec![opts.f0.clone()];
    let mut levels = Vec::new();
    let (stop, culprit) = loop {
        let (level, tally) = level(&threads, &in_peak, &path, &off, opts.maxcount_pct);
        let leaf = level.callees.is_empty();
        if path.len() > opts.max_depth {
            break (if leaf { Stop::Leaf } else { Stop::MaxDepth }, None);
        }
        let d = level.decision.clone();
        levels.push(level);
        match d {
            Decision::Own if leaf => break (Stop::Leaf, None),
            Decision::Own => break (Stop::OwnCause, None),
            Decision::Undecided => break (Stop::NoSamples, None),
            Decision::Preempted => break (Stop::Preempted, tally.preemptors.top()),
            Decision::Interrupts => break (Stop::Irq, tally.irqs.top()),
            Decision::Callees { causes } => match causes.first() {
                Some(&i) => path.push(levels[levels.len() - 1].callees[i].function.clone()),
                None => break (Stop::NoSamples, None),
            },
        }
    };
    Ok(RootPath {
        f0: opts.f0.clone(),
        f0_hist: hist,
        peaks,
        peak,
        levels,
        path,
        stop,
        culprit,
        from_trace: true,
    })
}

#[cfg(test)]
#[path = "offline_tests.rs"]
mod tests;
