//! DARC's root-cause decision (§3): for calls of F0 whose latency falls in the chosen
//! peak, which of a function's callees — or the function itself — contributes most.
//!
//! One [`Sample`] per such call of F0: the latency of the function under study (the
//! deepest function of the root-cause path so far; F0 itself at the start) and the
//! maximum latency of each of its callees during that call. The function's own share is
//! its latency minus its callees' (DARC's approximation: a callee called in a loop is
//! charged only its longest call, the rest stays with the caller, so a loop is found in
//! the caller and a slow single call in the callee). Every contributor whose latency
//! falls in the same log2 bin as the largest one gets a point (`maxcount`); after
//! enough samples, the contributors within `maxcount_pct` of the best count are the
//! root causes. If the function itself is the best, the path ends there.
//!
//! Preemption and hard interrupts inside the function (DARC §3.6) are two more
//! contributors, pseudo-callees: the time the thread was switched out while runnable,
//! and the time in IRQ handlers on its CPU. Their time is not in any callee's (the probe
//! takes it out), so the function's own time is what is left after all of them. If one
//! of them is the best, the path ends there ("preempted by ...", "interrupt N").
//!
//! Pure: the samples come from a live probe or from a trace of every call.

use crate::preempt::{Culprit, Culprits, Pseudo, RANKED};
use serde::{Deserialize, Serialize};

/// What one in-peak call of F0 measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Latency of the function under study during that call (its longest call).
    pub function_ns: u64,
    /// Longest latency of each callee during that call (0: not called), without the
    /// time it was preempted or interrupted.
    pub callees_ns: Vec<u64>,
    /// Time preempted inside the function during that call.
    pub preempted_ns: u64,
    /// Time in hard IRQ handlers inside the function during that call.
    pub irq_ns: u64,
    /// The thread that preempted it longest in that call: (tid, command name).
    pub preemptor: Option<(u32, String)>,
    /// The IRQ that took longest in that call: (number, handler name).
    pub irq: Option<(u32, String)>,
}

/// `maxcount`s gathered so far.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Samples seen.
    pub samples: u64,
    /// Times the function's own time was a largest contributor.
    pub own: u64,
    /// Times each callee was, by callee index.
    pub callees: Vec<u64>,
    /// Times preemption was.
    #[serde(default)]
    pub preempted: u64,
    /// Times hard interrupts were.
    #[serde(default)]
    pub interrupts: u64,
    /// Preempted time per preempting thread, over all samples.
    #[serde(default)]
    pub preemptors: Culprits,
    /// Interrupt time per IRQ number, over all samples.
    #[serde(default)]
    pub irqs: Culprits,
    /// Total preempted and interrupted time over all samples.
    #[serde(default)]
    pub pseudo_ns: (u64, u64),
}

/// The decision after enough samples.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// The function itself makes the peak: the path ends here.
    Own,
    /// These callees (indices, best first) make it: descend into them.
    Callees {
        /// Callee indices within `maxcount_pct` of the best count.
        causes: Vec<usize>,
    },
    /// The time the thread was preempted inside the function makes it.
    Preempted,
    /// The time in hard IRQ handlers inside the function makes it.
    Interrupts,
    /// No sample yet.
    Undecided,
}

fn bin(ns: u64) -> u32 {
    63 - ns.max(1).leading_zeros()
}

impl Tally {
    /// An empty tally for `callees` callees.
    pub fn new(callees: usize) -> Tally {
        Tally {
            samples: 0,
            own: 0,
            callees: vec![0; callees],
            preempted: 0,
            interrupts: 0,
            preemptors: Culprits::default(),
            irqs: Culprits::default(),
            pseudo_ns: (0, 0),
        }
    }

    /// Count one sample.
    pub fn add(&mut self, s: &Sample) {
        self.samples += 1;
        self.pseudo_ns.0 += s.preempted_ns;
        self.pseudo_ns.1 += s.irq_ns;
        if let Some((tid, comm)) = &s.preemptor {
            self.preemptors.add(*tid, comm, s.preempted_ns);
        }
        if let Some((irq, name)) = &s.irq {
            self.irqs.add(*irq, name, s.irq_ns);
        }
        let sum: u64 = s.callees_ns.iter().sum::<u64>() + s.preempted_ns + s.irq_ns;
        let own = s.function_ns.saturating_sub(sum);
        let pseudo = [s.preempted_ns, s.irq_ns];
        let max = s
            .callees_ns
            .iter()
            .copied()
            .chain([own])
            .chain(pseudo)
            .max()
            .unwrap_or(0);
        if max == 0 {
            return;
        }
        let top = bin(max);
        let hit = |ns: u64| ns > 0 && bin(ns) == top;
        if hit(own) {
            self.own += 1;
        }
        if hit(s.preempted_ns) {
            self.preempted += 1;
        }
        if hit(s.irq_ns) {
            self.interrupts += 1;
        }
        for (i, &ns) in s.callees_ns.iter().enumerate() {
            if ns > 0
                && bin(ns) == top
                && let Some(c) = self.callees.get_mut(i)
            {
                *c += 1;
            }
        }
    }

    /// Root causes: contributors within `maxcount_pct` (0 to 1) of the best count.
    /// The function's own time wins ties with its callees: DARC stops at a function
    /// that is its own cause rather than descend into a callee that is only as large.
    /// Preemption, then interrupts, win ties with real callees: their time is already
    /// out of the callees', so a tie means the thread lost as much time off the CPU as
    /// it spent in the callee, and no descent can explain time it did not run.
    pub fn decide(&self, maxcount_pct: f64) -> Decision {
        let best = self
            .callees
            .iter()
            .copied()
            .chain([self.own, self.preempted, self.interrupts])
            .max()
            .unwrap_or(0);
        if best == 0 {
            return Decision::Undecided;
        }
        if self.own == best {
            return Decision::Own;
        }
        if self.preempted == best {
            return Decision::Preempted;
        }
        if self.interrupts == best {
            return Decision::Interrupts;
        }
        let floor = (best as f64 * maxcount_pct.clamp(0.0, 1.0)).ceil().max(1.0) as u64;
        let mut causes: Vec<usize> = (0..self.callees.len())
            .filter(|&i| self.callees[i] >= floor)
            .collect();
        causes.sort_by_key(|&i| std::cmp::Reverse(self.callees[i]));
        Decision::Callees { causes }
    }

    /// The preemption pseudo-callee as a level reports it.
    pub fn preemption(&self) -> Pseudo {
        Pseudo {
            maxcount: self.preempted,
            total_ns: self.pseudo_ns.0,
            top: self.preemptors.top(),
            ranked: self.preemptors.ranked(RANKED),
        }
    }

    /// The interrupts pseudo-callee as a level reports it.
    pub fn interrupt_time(&self) -> Pseudo {
        Pseudo {
            maxcount: self.interrupts,
            total_ns: self.pseudo_ns.1,
            top: self.irqs.top(),
            ranked: self.irqs.ranked(RANKED),
        }
    }
}

/// A callee measured at one level, with its `maxcount`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Its symbol.
    pub function: String,
    /// The file it is in.
    pub binary: String,
    /// Times it was a largest contributor.
    pub maxcount: u64,
    /// Found only as the target of an indirect call of the function under study, read
    /// at run time (live mode).
    #[serde(default, skip_serializing_if = "is_false")]
    pub indirect: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One level of the descent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    /// The function under study.
    pub function: String,
    /// In-peak calls of F0 measured.
    pub samples: u64,
    /// Times its own time was a largest contributor.
    pub own_maxcount: u64,
    /// Its callees that could be probed.
    pub callees: Vec<Candidate>,
    /// Call sites that could not be probed (unnamed, not found in any mapped file,
    /// indirect ones whose target is not the start of a named function or whose
    /// operand cannot be read, or past the bounds on probes).
    pub unresolved_calls: u32,
    /// Indirect call sites whose targets were read at run time (live mode).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub indirect_sites: u32,
    /// Time it was preempted (DARC §3.6; absent in results saved before it was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption: Option<Pseudo>,
    /// Time in hard interrupts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<Pseudo>,
    /// What was decided.
    pub decision: Decision,
}

/// Why the descent ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The last function is its own cause.
    OwnCause,
    /// The last function calls nothing that can be probed.
    Leaf,
    /// `--max-depth` was reached.
    MaxDepth,
    /// No call of F0 fell in the peak while measuring a level.
    NoSamples,
    /// Ctrl-C, or the process ended.
    Interrupted,
    /// The last function's calls in the peak were preempted: `culprit` is the thread
    /// that took the CPU.
    Preempted,
    /// Hard interrupts on its CPU make the peak: `culprit` is the IRQ.
    Irq,
}

/// The root-cause path of one peak of F0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RootPath {
    /// F0's symbol.
    pub f0: String,
    /// F0's profile when the peak was chosen.
    pub f0_hist: crate::Histogram,
    /// Its peaks.
    pub peaks: Vec<crate::Peak>,
    /// The peak studied.
    pub peak: crate::Peak,
    /// Each level, from F0 down.
    pub levels: Vec<Level>,
    /// F0 and the chosen root cause at each level.
    pub path: Vec<String>,
    /// Why it ended.
    pub stop: Stop,
    /// With [`Stop::Preempted`] or [`Stop::Irq`]: the thread or IRQ that took the most
    /// of that time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub culprit: Option<Culprit>,
    /// Computed from a trace of every call (`causeway rootpath TRACE`), not live.
    #[serde(default)]
    pub from_trace: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(function_ns: u64, callees_ns: &[u64]) -> Sample {
        Sample {
            function_ns,
            callees_ns: callees_ns.to_vec(),
            ..Sample::default()
        }
    }

    fn preempted(function_ns: u64, callees_ns: &[u64], off_ns: u64, tid: u32) -> Sample {
        Sample {
            preempted_ns: off_ns,
            preemptor: Some((tid, format!("t{tid}"))),
            ..s(function_ns, callees_ns)
        }
    }

    #[test]
    fn preemption_longer_than_the_work_is_the_cause() {
        // Pure CPU work of 100 us, preempted for 1.5 ms by the competitor (tid 7);
        // sometimes another thread (tid 9) takes the CPU for less.
        let mut t = Tally::new(1);
        for i in 0..30 {
            let tid = if i % 5 == 0 { 9 } else { 7 };
            t.add(&preempted(1_600_000, &[90_000], 1_500_000, tid));
        }
        assert_eq!((t.preempted, t.own, t.callees[0]), (30, 0, 0));
        assert_eq!(t.decide(0.9), Decision::Preempted);
        let p = t.preemption();
        assert_eq!(p.top.unwrap().id, 7);
        assert_eq!(p.total_ns, 30 * 1_500_000);
    }

    #[test]
    fn preempted_time_is_not_the_function_own_time() {
        // 1 ms of own work and 1 ms preempted, both in the same bin: a tie of the
        // maxcounts goes to the function, and nothing is left to descend into.
        let mut t = Tally::new(0);
        for _ in 0..10 {
            t.add(&preempted(2_000_000, &[], 1_000_000, 7));
        }
        assert_eq!((t.own, t.preempted), (10, 10));
        assert_eq!(t.decide(0.9), Decision::Own);
        // Short preemptions of a slow callee leave the callee the cause.
        let mut u = Tally::new(1);
        for _ in 0..10 {
            u.add(&preempted(2_000_000, &[1_900_000], 50_000, 7));
        }
        assert_eq!(u.decide(0.9), Decision::Callees { causes: vec![0] });
        assert_eq!(u.preempted, 0);
    }

    #[test]
    fn interrupts_compete_like_callees() {
        let mut t = Tally::new(1);
        for _ in 0..10 {
            t.add(&Sample {
                irq_ns: 800_000,
                irq: Some((11, "eth0".into())),
                ..s(1_000_000, &[100_000])
            });
        }
        assert_eq!(t.decide(0.9), Decision::Interrupts);
        let i = t.interrupt_time();
        assert_eq!((i.maxcount, i.top.unwrap().name.as_str()), (10, "eth0"));
    }

    #[test]
    fn the_slow_callee_is_the_cause() {
        let mut t = Tally::new(3);
        for _ in 0..50 {
            // 2 ms call: lock wait 1.7 ms, sleep 200 us, unlock 1 us.
            t.add(&s(2_000_000, &[1_700_000, 200_000, 1_000]));
        }
        assert_eq!(t.callees, vec![50, 0, 0]);
        assert_eq!(t.decide(0.9), Decision::Callees { causes: vec![0] });
    }

    #[test]
    fn a_function_busy_on_its_own_is_its_own_cause() {
        let mut t = Tally::new(2);
        for _ in 0..20 {
            t.add(&s(10_000, &[300, 200]));
        }
        assert_eq!(t.decide(0.9), Decision::Own);
    }

    #[test]
    fn contributors_in_the_same_bin_share_the_point_and_pct_keeps_both() {
        let mut t = Tally::new(2);
        for i in 0..40 {
            // Two callees of ~300 us each, one slightly ahead most of the time.
            let (a, b) = if i % 4 == 0 {
                (280_000, 300_000)
            } else {
                (300_000, 290_000)
            };
            t.add(&s(600_000, &[a, b]));
        }
        assert_eq!(t.callees, vec![40, 40]);
        assert_eq!(t.decide(1.0), Decision::Callees { causes: vec![0, 1] });
    }

    #[test]
    fn maxcount_pct_separates_a_rare_contributor() {
        let mut t = Tally::new(2);
        for i in 0..100 {
            if i % 10 == 0 {
                t.add(&s(1_000_000, &[10_000, 900_000]));
            } else {
                t.add(&s(1_000_000, &[900_000, 10_000]));
            }
        }
        assert_eq!(t.callees, vec![90, 10]);
        assert_eq!(t.decide(0.5), Decision::Callees { causes: vec![0] });
        assert_eq!(t.decide(0.1), Decision::Callees { causes: vec![0, 1] });
    }

    #[test]
    fn nothing_measured_is_undecided() {
        let t = Tally::new(2);
        assert_eq!(t.decide(0.9), Decision::Undecided);
        let mut z = Tally::new(1);
        z.add(&s(0, &[0]));
        assert_eq!(z.decide(0.9), Decision::Undecided);
    }
}
