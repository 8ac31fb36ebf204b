//! One level's measurement: F0's calls sampled, the peak's picked by rank, the
//! maxcounts tallied; and how a level's decision becomes a level of the result or the
//! end of the descent.

use super::indirect::LevelCallees;
use crate::control::{Control, Probed};
use crate::error::LiveError;
use causeway_latency::{Candidate, Culprit, Decision, Histogram, Level, Peak, Sample, Stop, Tally};
use causeway_probe::callees::Site;
use causeway_probe::rootpath::{PathProbe, Step};
use std::time::{Duration, Instant};

const TICK: Duration = Duration::from_millis(100);

/// F0 calls gathered before they are ranked.
const BATCH: usize = 400;

/// Where the descent ended: the levels, the path below F0, why, and the thread or
/// IRQ to blame when it ended in preemption or an interrupt.
pub(super) type Descent = (Vec<Level>, Vec<Site>, Stop, Option<Culprit>);

/// F0's profile when the peak was chosen, and the peak.
pub(super) struct Chosen {
    pub hist: Histogram,
    pub peak: Peak,
}

/// The share of F0's calls below the peak and up to its end, in the profile the peak
/// was chosen on: which calls belong to the peak, by rank.
pub(super) fn peak_quantiles(hist: &Histogram, peak: &Peak) -> (f64, f64) {
    let total = hist.total().max(1) as f64;
    let below: u64 = (0..peak.first_bin).map(|b| hist.count(b)).sum();
    let upto: u64 = (0..=peak.last_bin).map(|b| hist.count(b)).sum();
    (below as f64 / total, upto as f64 / total)
}

/// Rank a batch of (F0 latency, sample) by F0's latency and count those whose rank is
/// in the peak's share of calls.
fn rank_batch(batch: &mut Vec<(u64, Sample)>, (q_lo, q_hi): (f64, f64), tally: &mut Tally) {
    batch.sort_by_key(|s| s.0);
    let n = batch.len() as f64;
    let (lo, hi) = ((q_lo * n).round() as usize, (q_hi * n).round() as usize);
    for (_, s) in batch.drain(..).skip(lo).take(hi.saturating_sub(lo)) {
        tally.add(&s);
    }
}

/// How one level is measured.
pub(super) struct Measure<'c> {
    /// In-peak calls wanted.
    pub want: u64,
    /// The longest the level may take.
    pub limit: Duration,
    /// The peak's share of calls, by rank.
    pub quantiles: (f64, f64),
    pub ctl: &'c dyn Control,
}

impl Measure<'_> {
    /// Measure one level until `want` in-peak calls; `None` if interrupted.
    ///
    /// Which calls are "in the peak" is decided by rank, not by latency: every call of
    /// F0 is sampled, and in each batch the calls whose rank falls in the peak's share
    /// of calls (from the profile the peak was chosen on) are counted. A uprobe hit
    /// costs microseconds here, more than a fast path takes, so the probes of a level
    /// shift F0's latencies by more than a peak is wide; they keep the calls' order.
    pub fn run(
        &self,
        step: &Step,
        probed: &mut Probed,
        status: &mut dyn FnMut(&Tally),
    ) -> Result<Option<Tally>, LiveError> {
        let probe = PathProbe::attach(step)?;
        let mut tally = Tally::new(step.callees.len());
        let mut batch = Vec::with_capacity(BATCH);
        let start = Instant::now();
        while tally.samples < self.want {
            probe.poll(TICK, |f0_ns, s| batch.push((f0_ns, s)))?;
            if batch.len() >= BATCH {
                rank_batch(&mut batch, self.quantiles, &mut tally);
            }
            if self.ctl.take_status_request() {
                status(&tally);
            }
            if self.ctl.stop_requested() || !probed.alive() {
                return Ok(None);
            }
            if start.elapsed() >= self.limit {
                if batch.len() * 4 >= BATCH {
                    rank_batch(&mut batch, self.quantiles, &mut tally);
                }
                break;
            }
        }
        Ok(Some(tally))
    }
}

/// A level of the result.
pub(super) fn level_of(f: &Site, lc: &LevelCallees, t: &Tally, d: Decision) -> Level {
    Level {
        function: f.symbol.clone(),
        samples: t.samples,
        own_maxcount: t.own,
        callees: lc
            .sites
            .iter()
            .zip(&lc.indirect)
            .zip(&t.callees)
            .map(|((s, &indirect), &maxcount)| Candidate {
                function: s.symbol.clone(),
                binary: s.binary.display().to_string(),
                maxcount,
                indirect,
            })
            .collect(),
        unresolved_calls: lc.unresolved,
        indirect_sites: lc.indirect_sites,
        preemption: Some(t.preemption()),
        interrupts: Some(t.interrupt_time()),
        decision: d,
    }
}

/// How a level's decision ends the descent, if it does; `None`: descend.
pub(super) fn stop_of(d: &Decision, leaf: bool, t: &Tally) -> Option<(Stop, Option<Culprit>)> {
    match d {
        // A leaf measured only for preemption and interrupts keeps its old ending.
        Decision::Own if leaf => Some((Stop::Leaf, None)),
        Decision::Own => Some((Stop::OwnCause, None)),
        Decision::Undecided => Some((Stop::NoSamples, None)),
        Decision::Preempted => Some((Stop::Preempted, t.preemptors.top())),
        Decision::Interrupts => Some((Stop::Irq, t.irqs.top())),
        Decision::Callees { causes } if causes.is_empty() => Some((Stop::NoSamples, None)),
        Decision::Callees { .. } => None,
    }
}
