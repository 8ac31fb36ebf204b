//! Predictions: a replay with the changes against the recording's own rate.

use crate::callcpu::CallCpu;
use crate::change::{Change, Factor, Target};
use crate::error::WhatIfError;
use crate::measure::{Counted, Cycles, MIN_CYCLES, cycles, replayed_speedup};
use crate::reccost::RecorderCost;
use crate::replay::{Plan, Rule, replay, waker_point};
use crate::select::Selection;
use causeway_bottleneck::{EdgeId, EdgeKind, Findings, VertexKind, WaitMap};
use causeway_format::{Tables, Waker};
use causeway_model::{Facts, Model, Segment, SegmentId, SegmentState, Trace};
use std::cell::Cell;

/// How many of a knot's or sink's heaviest edges get a prediction each.
const EDGES_PER_FINDING: usize = 3;

/// The predicted effect of a set of changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// The changes.
    pub changes: Vec<Change>,
    /// What was counted, and its recorded rate.
    pub counted: Counted,
    /// The counted wake-ups' predicted rate, per second.
    pub predicted_per_s: f64,
    /// Predicted over recorded rate, minus one (0.25: 25 % more).
    pub gain: f64,
    /// Waits the changes shortened.
    pub waits_changed: u64,
    /// How the replay treated the recorded waits.
    pub waits: WaitRules,
    /// Recorded time (waits or CPU) the changes took out, ns.
    pub removed_ns: u64,
    /// Of it, the removed calls' own CPU (estimated from samples; `callcpu`), ns.
    pub call_cpu_ns: u64,
    /// The on-CPU samples that estimate rests on.
    pub call_cpu_samples: u64,
    /// The recorder's measured work taken out of the recorded threads' runs, ns
    /// (`None`: the trace did not measure it, and it stays in the replay).
    pub recorder_ns: Option<u64>,
    /// CPUs the replayed work needs over the replayed window (recorded threads' time
    /// on CPU divided by the window).
    pub cpu_demand: f64,
    /// CPUs of the recorded machine.
    pub cpus: u32,
    /// True when the replay needed more CPUs than the machine has and the prediction
    /// was capped at what they can run.
    pub cpu_bound: bool,
}

/// How many of the recorded waits the replay treated each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitRules {
    /// Ended when the recorded thread that woke them reached the same point.
    pub followed: u64,
    /// Kept their recorded length (timers, devices, interrupts, unended waits).
    pub kept: u64,
    /// Ended no earlier than they did (woken from outside the recording).
    pub outside: u64,
    /// Shortened by a change.
    pub changed: u64,
    /// Idle polls, folded into the wait after them (no time of their own).
    pub idle_polls: u64,
}

/// What one replay did with the recorded waits, counted as it asks for their rules.
#[derive(Default)]
struct Tally {
    rules: Cell<WaitRules>,
    removed_ns: Cell<u64>,
    recorder_ns: Cell<u64>,
}

impl Tally {
    fn count(&self, which: impl Fn(&mut WaitRules) -> &mut u64) {
        let mut r = self.rules.get();
        *which(&mut r) += 1;
        self.rules.set(r);
    }
}

/// The predicted gains of removing and of halving one edge's waits.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeGain {
    /// The edge.
    pub edge: EdgeId,
    /// Its waits removed.
    pub removed: Prediction,
    /// Its waits halved.
    pub halved: Prediction,
}

/// Predictions over one trace and its bottleneck findings: the counted work and the
/// replay order are found once, each prediction is one replay.
pub struct Predictor<'a> {
    model: &'a Model,
    facts: &'a Facts,
    tables: &'a Tables,
    findings: &'a Findings,
    waits: &'a WaitMap,
    cycles: Cycles,
    plan: Plan,
    cpus: u32,
    /// The recorder's cost in the recorded threads' runs.
    rec: RecorderCost,
    /// The unchanged replay's speedup: 1 when every dependency could be followed in
    /// recorded order (ties in recorded time can leave it a hair off); predictions are
    /// taken relative to it.
    base_speedup: f64,
}

impl<'a> Predictor<'a> {
    /// A predictor for `trace`, with the findings and wait map of
    /// [`causeway_bottleneck::analyze_with_waits`] on it.
    pub fn new(
        trace: &'a Trace,
        findings: &'a Findings,
        waits: &'a WaitMap,
    ) -> Result<Predictor<'a>, WhatIfError> {
        let model = trace.model();
        let cycles = cycles(model, findings, waits)
            .ok_or(WhatIfError::NothingToCount { min: MIN_CYCLES })?;
        // The machine's CPUs as the header says; a trace without that (imported, or
        // built in code) by the CPUs its events name.
        let cpus = match trace.header().cpu_count {
            0 => (model.cpus().len() as u32).max(1),
            n => n,
        };
        let mut p = Predictor {
            model,
            facts: trace.facts(),
            tables: trace.tables(),
            findings,
            waits,
            cycles,
            plan: Plan::new(model),
            cpus,
            rec: RecorderCost::new(model, trace.stats()),
            base_speedup: 1.0,
        };
        let none = p.select(&[])?;
        let tally = Tally::default();
        let calls = CallCpu::default();
        let base = replay(
            model,
            &p.plan,
            &|id| p.rule(id, &none, &calls, &tally),
            &|_, o| o,
        );
        p.base_speedup = replayed_speedup(&p.cycles, &base)
            .map(|(s, _)| s)
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(1.0);
        Ok(p)
    }

    /// What is counted.
    pub fn counted(&self) -> &Counted {
        &self.cycles.counted
    }

    /// Predict the effect of `changes` applied together.
    pub fn predict(&self, changes: &[Change]) -> Result<Prediction, WhatIfError> {
        for c in changes {
            self.check(c)?;
        }
        let sel = self.select(changes)?;
        let counted = self.cycles.counted.clone();
        let tally = Tally::default();
        let calls = CallCpu::of(self.model, self.facts, &sel);
        let rule = |id: SegmentId| self.rule(id, &sel, &calls, &tally);
        let scale = |seg: SegmentId, offset: u64| self.scale(seg, offset, &sel, &calls);
        let replayed = replay(self.model, &self.plan, &rule, &scale);
        let (speedup, window_ns) = replayed_speedup(&self.cycles, &replayed)
            .ok_or(WhatIfError::NothingToCount { min: MIN_CYCLES })?;
        // Every change shortens time and every replayed time is `max` and `+` of the
        // others, so no event of the replay comes later than unchanged: a speedup under
        // 1 is the estimator's (the counted threads' first wake-ups moving earlier than
        // their last, held by something that kept its time), reported as no gain.
        let rate = counted.recorded_per_s * (speedup / self.base_speedup).max(1.0);
        let cpu_ns = self.cpu_in_window(&sel, &calls);
        let cpu_demand = if window_ns == 0 {
            f64::INFINITY
        } else {
            cpu_ns as f64 / window_ns as f64
        };
        let cpu_bound = cpu_demand > f64::from(self.cpus);
        // The replay's rate at most what the CPUs can run: the same work in the time
        // the CPUs need for it.
        let predicted = if cpu_bound {
            rate * f64::from(self.cpus) / cpu_demand
        } else {
            rate
        };
        let (rules, removed_ns) = (tally.rules.get(), tally.removed_ns.get());
        Ok(Prediction {
            changes: changes.to_vec(),
            gain: predicted / counted.recorded_per_s - 1.0,
            predicted_per_s: predicted,
            counted,
            waits_changed: rules.changed,
            waits: rules,
            removed_ns,
            call_cpu_ns: calls.total_ns,
            call_cpu_samples: calls.samples,
            recorder_ns: self.rec.known().then(|| tally.recorder_ns.get()),
            cpu_demand,
            cpus: self.cpus,
            cpu_bound,
        })
    }

    /// For each knot's and sink's heaviest wait edges, the gain of removing and of
    /// halving their waits, heaviest finding first.
    pub fn finding_gains(&self) -> Vec<EdgeGain> {
        let f = self.findings;
        let mut edges: Vec<EdgeId> = Vec::new();
        let lists = f
            .knots
            .iter()
            .map(|k| &k.edges)
            .chain(f.sinks.iter().map(|s| &s.edges));
        for list in lists {
            let waits = list
                .iter()
                .filter(|e| f.edges.get(e.0).is_some_and(|x| x.kind == EdgeKind::Wait))
                .take(EDGES_PER_FINDING);
            for &e in waits {
                if !edges.contains(&e) {
                    edges.push(e);
                }
            }
        }
        edges
            .into_iter()
            .filter_map(|e| {
                let edge = f.edges.get(e.0)?;
                let target = Target::edge(edge.from, edge.to);
                let change = |factor| Change {
                    target: target.clone(),
                    factor,
                };
                Some(EdgeGain {
                    edge: e,
                    removed: self.predict(&[change(Factor::REMOVE)]).ok()?,
                    halved: self.predict(&[change(Factor::HALVE)]).ok()?,
                })
            })
            .collect()
    }

    fn check(&self, c: &Change) -> Result<(), WhatIfError> {
        let n = self.findings.vertices.len();
        let vertex = |id: usize| {
            if id < n {
                Ok(())
            } else {
                Err(WhatIfError::NoSuch { what: "vertex", id })
            }
        };
        match c.target {
            Target::Edge { from, to } => {
                vertex(from)?;
                vertex(to)
            }
            Target::WaitsOn { to } => vertex(to),
            Target::Site { .. } => Ok(()),
            Target::Cpu { vertex: v } => vertex(v),
        }
    }

    fn select(&self, changes: &[Change]) -> Result<Selection<'a>, WhatIfError> {
        Selection::new(self.model, self.tables, self.waits, changes)
    }

    /// How long a segment lasts in the replay (see the crate's documentation).
    /// (The replay asks once per segment, so the tally counts each segment once.)
    fn rule(&self, id: SegmentId, sel: &Selection<'_>, calls: &CallCpu, tally: &Tally) -> Rule {
        let Some(seg) = self.model.segment(id) else {
            return Rule::Fixed(0);
        };
        let d = seg.end.0.saturating_sub(seg.start.0);
        if let Some(f) = sel.factor_of(id) {
            let kept = f.shrink(d);
            tally.removed_ns.set(tally.removed_ns.get() + (d - kept));
            if seg.state.is_blocked() {
                tally.count(|r| &mut r.changed);
            }
            return Rule::Fixed(kept);
        }
        // The wake-up latency after a removed wait goes with it: with no wait there is
        // no wake-up to wait a CPU for. (A shortened wait still ends in a wake-up and
        // keeps its latency.) Kept, it held an fsync-per-round loop to twice ~10 us per
        // round on a virtual machine, a third of what the fix gave back.
        if let SegmentState::Runnable {
            preempted: false, ..
        } = seg.state
            && let Some(prev) = id
                .index
                .checked_sub(1)
                .map(|index| SegmentId { index, ..id })
            && self
                .model
                .segment(prev)
                .is_some_and(|p| p.state.is_blocked())
            && sel.factor_of(prev).is_some_and(Factor::removes)
        {
            tally.removed_ns.set(tally.removed_ns.get() + d);
            return Rule::Fixed(0);
        }
        if seg.state.is_runnable() {
            // A runnable delay held back by a CPU quota is a wait on the quota: a
            // change that selects it counts as a changed wait.
            let taken = sel.quota_taken(id, seg);
            if taken > 0 {
                tally.removed_ns.set(tally.removed_ns.get() + taken);
                tally.count(|r| &mut r.changed);
            }
            return Rule::Fixed(sel.runnable_len(id, seg));
        }
        if seg.state.is_running() {
            // The CPU of removed calls around this run goes with them (`callcpu`).
            let taken = calls.taken(self.model, sel, id, seg);
            tally.removed_ns.set(tally.removed_ns.get() + taken);
            // And the recorder's own work in it (`reccost`), from every replay.
            let rec = self.rec.in_run(self.model, id, seg).min(d - taken);
            tally.recorder_ns.set(tally.recorder_ns.get() + rec);
            return Rule::Fixed(d - taken - rec);
        }
        if !seg.state.is_blocked() {
            return Rule::Fixed(d);
        }
        // A poll that timed out and after which the thread woke nobody was part of
        // the wait after it (the thread polled again for the same thing, or for work):
        // that next wait carries the dependency, so the idle poll takes no time of its
        // own. Kept, its timeouts would tie a waiter to its recorded pace.
        if self.waits.is_idle_poll(id.thread as usize, seg.start) {
            tally.count(|r| &mut r.idle_polls);
            return Rule::Fixed(0);
        }
        let r = self.wait_rule(id, seg);
        tally.count(|t| match r {
            Rule::Point { .. } => &mut t.followed,
            Rule::Fixed(_) => &mut t.kept,
            Rule::Until(_) => &mut t.outside,
        });
        r
    }

    /// The rule of a wait no change reaches.
    fn wait_rule(&self, id: SegmentId, seg: &Segment) -> Rule {
        let d = seg.end.0.saturating_sub(seg.start.0);
        let SegmentState::Blocked { waker, .. } = seg.state else {
            return Rule::Fixed(d);
        };
        let to = self
            .waits
            .wait_at(id.thread as usize, seg.start)
            .map(|w| w.to);
        // A brief stopper (a runtime's safepoint) runs on its own clock: a faster
        // program meets its pauses at other points of its work, not later, so a wait
        // on one keeps its length instead of following the stopper's timeline.
        if to.is_some_and(|v| self.findings.pauses.iter().any(|p| p.vertex == v)) {
            return Rule::Fixed(d);
        }
        // Only a recorded thread's timeline is followed. A thread of a process the
        // recording did not follow (a kernel I/O thread of a per-process recording)
        // exists in the model only as the fragments that touch recorded threads, its
        // gaps read as long runs, so its "point" is its recorded time again: one such
        // wake-up late in the window held the whole replay to the recording.
        if let Some((seg, offset)) = waker_point(self.model, id)
            && self.recorded(seg.thread)
        {
            return Rule::Point { seg, offset };
        }
        let kind = to
            .and_then(|v| self.findings.vertices.get(v.0))
            .map(|v| &v.kind);
        let waker = waker.map(|w| w.waker);
        let by_thread = match waker {
            Some(Waker::Thread { tid }) => self.model.thread(tid),
            _ => None,
        };
        // A kernel I/O thread (a completion worker, a journal's commit) served the
        // waiter: its pace is the device's, kept like a device wait, not the outside
        // world's. Pinned, one such wait held the whole replay back.
        if by_thread.is_some_and(|t| causeway_model::facts::is_completion_thread(&t.comm)) {
            return Rule::Fixed(d);
        }
        match (kind, waker) {
            (Some(VertexKind::OtherProcesses), _) => Rule::Until(seg.end.0),
            // Timers, devices and interrupts: their own lengths.
            (Some(_), _) => Rule::Fixed(d),
            // The recording or the thread ended during the wait.
            (None, None) => Rule::Fixed(d),
            (None, Some(Waker::Irq { .. } | Waker::Softirq { .. })) => Rule::Fixed(d),
            // A wake-up the trace cannot place (a goroutine a Go runtime made ready
            // without saying who): no evidence of the outside world, so its length is
            // kept; held to their ends, 1,273 such waits of a NATS recording held its
            // prediction at the recorded pace.
            (None, Some(Waker::Unknown)) => Rule::Fixed(d),
            // A recorded thread (or goroutine) whose point could not be followed (it
            // was not running at the wake-up in the view the replay uses): not the
            // outside world, so its length is kept. Held to its recorded end, one such wait of a beanstalkd recording
            // held the prediction at 1.45x where the fix measured 4.08x (4.15x kept).
            (None, Some(Waker::Thread { tid }))
                if self.model.goroutine(tid).is_some()
                    || by_thread
                        .and_then(|t| t.tgid)
                        .is_some_and(|g| self.facts.recorded().is_none_or(|s| s.contains(&g))) =>
            {
                Rule::Fixed(d)
            }
            (None, Some(_)) => Rule::Until(seg.end.0),
        }
    }

    /// True when model thread `ti` belongs to a process the recording followed (every
    /// process of a system-wide recording): its timeline is whole. A Go program's own
    /// threads count though the goroutine view gives them no vertex.
    fn recorded(&self, ti: u32) -> bool {
        let Some(t) = self.model.thread_by_index(ti) else {
            return false;
        };
        match (self.facts.recorded(), t.tgid) {
            (None, _) => true,
            (Some(set), Some(tgid)) => set.contains(&tgid),
            (Some(_), None) => false,
        }
    }

    /// A point's recorded offset into a segment, in the replay.
    fn scale(&self, seg: SegmentId, offset: u64, sel: &Selection<'_>, calls: &CallCpu) -> u64 {
        let Some(s) = self.model.segment(seg).filter(|s| s.state.is_running()) else {
            return offset;
        };
        if let Some(f) = sel.factor_of(seg) {
            return f.shrink(offset);
        }
        // A run that removed calls shortened: its points move in proportion.
        let d = s.duration().0;
        let taken = self.run_taken(sel, calls, seg, s);
        match taken {
            0 => offset,
            taken => (offset as u128 * u128::from(d - taken) / u128::from(d.max(1))) as u64,
        }
    }

    /// What a replay takes out of running segment `id` (`seg`) that no change
    /// selected: the removed calls' CPU around it and the recorder's work in it.
    fn run_taken(&self, sel: &Selection<'_>, calls: &CallCpu, id: SegmentId, seg: &Segment) -> u64 {
        let d = seg.duration().0;
        let calls = calls.taken(self.model, sel, id, seg);
        (calls + self.rec.in_run(self.model, id, seg)).min(d)
    }

    /// Time on CPU of the recorded threads in the counted window, after the changes.
    fn cpu_in_window(&self, sel: &Selection<'_>, calls: &CallCpu) -> u64 {
        let (lo, hi) = self.cycles.counted.window;
        let mut ns = 0;
        for (ti, t) in (0u32..).zip(self.model.threads()) {
            if self
                .waits
                .threads
                .get(ti as usize)
                .is_none_or(|w| w.vertex.is_none())
            {
                continue;
            }
            let first = t.segments.partition_point(|s| s.end.0 < lo);
            for (si, s) in (first as u32..).zip(&t.segments[first..]) {
                if s.end.0 > hi {
                    break;
                }
                if !s.state.is_running() {
                    continue;
                }
                let d = s.end.0.saturating_sub(s.start.0);
                let id = SegmentId {
                    thread: ti,
                    index: si,
                };
                ns += sel
                    .factor_of(id)
                    .map_or_else(|| d - self.run_taken(sel, calls, id, s), |f| f.shrink(d));
            }
        }
        ns
    }
}
