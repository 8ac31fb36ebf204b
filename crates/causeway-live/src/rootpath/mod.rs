//! DARC's root-cause path of a latency peak, live: profile F0, choose the peak, then
//! per level find the callees of the function under study (direct ones by
//! disassembly, indirect ones by a short pass that reads their targets: [`indirect`]),
//! measure, decide and descend; [`resume`] continues a saved run (§3.4).
//!
//! Decisions where DARC is silent or this port differs: the descent follows the best
//! root cause of each level (the others within the maxcount share are reported as also
//! causes, not explored); callees are functions, not call sites (a function called from
//! two sites of the same caller is one candidate); the probes of a level are replaced
//! as a whole when descending (DARC patches them one by one). A uprobe hit costs
//! microseconds where DARC's kprobes cost tens of cycles, so F0's latency is corrected
//! by the calibrated cost of the probe hits inside each call; otherwise timing the
//! callees would push F0's calls out of the very peak being studied. Preemption and
//! interrupts (DARC §3.6) are measured at every level, a leaf included (a function
//! with no callee to probe may still spend the peak's time switched out); the path
//! ends at them when they win.

pub mod indirect;
mod measure;
pub mod resume;

use crate::control::{Control, Probed};
use crate::error::LiveError;
use causeway_latency::offline::PeakChoice;
use causeway_latency::{Histogram, Level, Peak, PeakOptions, RootPath, Stop, find_peaks};
use causeway_probe::calibrate;
use causeway_probe::callees::{Site, SymbolFinder};
use causeway_probe::launch::Launched;
use causeway_probe::rootpath::{PathProbe, Step};
use measure::{Chosen, Descent};
use resume::Saved;
use std::time::{Duration, Instant};

const TICK: Duration = Duration::from_millis(100);

/// What to explain, resolved.
pub struct PathRequest {
    /// F0: the function and the binary holding it.
    pub f0: Site,
    /// The process.
    pub tgid: u32,
    /// The command started for it, still stopped before its `exec`.
    pub launched: Option<Launched>,
    /// The peak to explain (ignored with `resume`: the saved peak is found again).
    pub peak: PeakChoice,
    /// A saved run to continue.
    pub resume: Option<Saved>,
    /// With `resume`: the most F0's profile may have moved (EMD, octaves).
    pub max_emd: f64,
    /// Calls of F0 profiled before the peak is chosen.
    pub start_ops: u64,
    /// In-peak calls of F0 per decision.
    pub decision_ops: u64,
    /// Root causes: callees whose maxcount is at least this share of the largest.
    pub maxcount_pct: f64,
    /// Longest path below F0.
    pub max_depth: usize,
    /// The longest a phase (profiling, one level) may take.
    pub phase_timeout: Duration,
}

/// Where a run is, for a status.
#[derive(Clone, Copy, Debug)]
pub enum Phase {
    /// Profiling F0 before the peak is chosen.
    Profiling {
        /// Calls profiled.
        calls: u64,
        /// Calls wanted.
        want: u64,
        /// Since the phase began.
        elapsed: Duration,
    },
    /// Measuring one level.
    Measuring {
        /// Its depth below F0.
        depth: usize,
        /// Samples so far.
        samples: u64,
        /// Samples wanted.
        want: u64,
    },
}

/// What a run reports while it runs.
#[derive(Debug)]
pub enum PathNotice<'a> {
    /// The calibrated cost of one probe hit.
    HitCost(u64),
    /// F0's profile moved this far (EMD, octaves) since the saved run.
    ProfileMoved(f64),
    /// The peak was chosen after this many calls.
    PeakChosen {
        /// Calls profiled.
        calls: u64,
        /// The peak.
        peak: &'a Peak,
    },
    /// A level's measurement begins.
    Level {
        /// Its depth below F0.
        depth: usize,
        /// Callees timed.
        callees: usize,
        /// The function under study.
        function: &'a str,
    },
    /// A status was asked for.
    Status {
        /// F0's profile.
        hist: &'a Histogram,
        /// The peak, once chosen.
        peak: Option<&'a Peak>,
        /// F0 and the path below it.
        path: &'a [String],
        /// The levels decided so far, and the one being measured.
        levels: &'a [Level],
        /// What the run is doing.
        phase: Phase,
    },
    /// The indirect call sites' pass.
    Indirect(indirect::Notice<'a>),
}

/// Explain the chosen peak of F0's latency: the root-cause path, as far as it goes.
pub fn root_path(
    mut req: PathRequest,
    ctl: &dyn Control,
    notify: &mut dyn FnMut(PathNotice<'_>),
) -> Result<RootPath, LiveError> {
    let launched = req.launched.take();
    let hit_cost_ns = calibrate::hit_cost_ns(20_000)?;
    notify(PathNotice::HitCost(hit_cost_ns));
    let profile = PathProbe::attach(&Step {
        tgid: req.tgid,
        f0: req.f0.clone(),
        path: Vec::new(),
        callees: Vec::new(),
        sites: Vec::new(),
        peak_ns: (0, 0),
        hit_cost_ns: 0,
    })?;
    let mut run = Run {
        probed: Probed::go(req.tgid, launched),
        req,
        ctl,
        hit_cost_ns,
    };
    let (hist, peaks, peak) = run.choose_peak(&profile, notify)?;
    drop(profile);
    let chosen = Chosen {
        hist: hist.clone(),
        peak,
    };
    let (levels, path, stop, culprit) = run.descend(&chosen, notify)?;
    run.probed.finish();
    let f0 = run.req.f0.symbol.clone();
    Ok(RootPath {
        f0: f0.clone(),
        f0_hist: hist,
        peaks,
        peak,
        levels,
        path: std::iter::once(f0)
            .chain(path.iter().map(|s| s.symbol.clone()))
            .collect(),
        stop,
        culprit,
        from_trace: false,
    })
}

/// One run's state across its phases.
struct Run<'c> {
    req: PathRequest,
    ctl: &'c dyn Control,
    probed: Probed,
    hit_cost_ns: u64,
}

impl Run<'_> {
    /// Whether the run must end now: a stop asked for, or the process gone.
    fn interrupted(&mut self) -> bool {
        self.ctl.stop_requested() || !self.probed.alive()
    }

    /// Profile F0 until `start_ops` calls (or the phase timeout) and choose the peak:
    /// the asked one, or when resuming the one holding the saved peak's mode.
    fn choose_peak(
        &mut self,
        probe: &PathProbe,
        notify: &mut dyn FnMut(PathNotice<'_>),
    ) -> Result<(Histogram, Vec<Peak>, Peak), LiveError> {
        let start = Instant::now();
        let f0 = self.req.f0.symbol.clone();
        let hist = loop {
            std::thread::sleep(TICK);
            let h = Histogram::from_log2_slots(&probe.f0_slots()?);
            if self.ctl.take_status_request() {
                let levels = self.req.resume.as_ref().map(|s| s.levels.clone());
                notify(PathNotice::Status {
                    hist: &h,
                    peak: None,
                    path: std::slice::from_ref(&f0),
                    levels: &levels.unwrap_or_default(),
                    phase: Phase::Profiling {
                        calls: h.total(),
                        want: self.req.start_ops,
                        elapsed: start.elapsed(),
                    },
                });
            }
            if h.total() >= self.req.start_ops
                || start.elapsed() >= self.req.phase_timeout
                || self.interrupted()
            {
                break h;
            }
        };
        let peaks = find_peaks(&hist, &PeakOptions::default());
        let peak = match &self.req.resume {
            Some(sv) => {
                let emd = resume::distance(&f0, sv, &hist)?;
                notify(PathNotice::ProfileMoved(emd));
                resume::matching_peak(&f0, sv, &peaks, (emd, self.req.max_emd))?
            }
            None => {
                let n = match self.req.peak {
                    PeakChoice::Number(n) => n,
                    PeakChoice::Last => peaks.len() as u32,
                };
                let Some(p) = peaks.iter().find(|p| p.number == n).copied() else {
                    return Err(LiveError::NoSuchPeak {
                        f0,
                        peaks: peaks.len(),
                        calls: hist.total(),
                        asked: n,
                    });
                };
                p
            }
        };
        notify(PathNotice::PeakChosen {
            calls: hist.total(),
            peak: &peak,
        });
        Ok((hist, peaks, peak))
    }

    /// Descend from F0 until a stop; returns the levels, the path and why it stopped.
    fn descend(
        &mut self,
        chosen: &Chosen,
        notify: &mut dyn FnMut(PathNotice<'_>),
    ) -> Result<Descent, LiveError> {
        let (f0, tgid) = (self.req.f0.clone(), self.req.tgid);
        let finder = SymbolFinder::for_process(tgid)?;
        let (mut path, mut levels) = match &self.req.resume {
            Some(sv) => (resume::path_sites(sv, &f0, &finder)?, sv.levels.clone()),
            None => (Vec::new(), Vec::new()),
        };
        let quantiles = measure::peak_quantiles(&chosen.hist, &chosen.peak);
        loop {
            let f = path.last().unwrap_or(&f0).clone();
            let (mut lc, sites) = indirect::direct_callees(&f, &finder)?;
            if path.len() >= self.req.max_depth {
                let stop = if lc.sites.is_empty() && sites.is_empty() {
                    Stop::Leaf
                } else {
                    Stop::MaxDepth
                };
                return Ok((levels, path, stop, None));
            }
            // Every call of F0 is sampled; `measure` picks the peak's by rank.
            let mut step = Step {
                tgid,
                f0: f0.clone(),
                path: path.clone(),
                callees: Vec::new(),
                sites: Vec::new(),
                peak_ns: (0, u64::MAX),
                hit_cost_ns: self.hit_cost_ns,
            };
            if !sites.is_empty() {
                let share = quantiles.1 - quantiles.0;
                let calls = indirect::discovery_calls(share, self.req.start_ops);
                let limit = self.req.phase_timeout / 4;
                let mut notify_indirect = |n: indirect::Notice<'_>| notify(PathNotice::Indirect(n));
                let pass = indirect::Pass {
                    calls,
                    limit,
                    ctl: self.ctl,
                    probed: &mut self.probed,
                };
                if pass
                    .discover(&step, &sites, &mut lc, &mut notify_indirect)?
                    .is_none()
                {
                    return Ok((levels, path, Stop::Interrupted, None));
                }
            }
            step.callees = lc.sites.clone();
            // A leaf is measured too: its time may be time it was preempted (DARC §3.6).
            notify(PathNotice::Level {
                depth: path.len(),
                callees: lc.sites.len(),
                function: &f.symbol,
            });
            let names: Vec<String> = std::iter::once(f0.symbol.clone())
                .chain(path.iter().map(|s| s.symbol.clone()))
                .collect();
            let mut status = |t: &causeway_latency::Tally| {
                let mut all = levels.clone();
                all.push(measure::level_of(
                    &f,
                    &lc,
                    t,
                    t.decide(self.req.maxcount_pct),
                ));
                notify(PathNotice::Status {
                    hist: &chosen.hist,
                    peak: Some(&chosen.peak),
                    path: &names,
                    levels: &all,
                    phase: Phase::Measuring {
                        depth: path.len(),
                        samples: t.samples,
                        want: self.req.decision_ops,
                    },
                });
            };
            let m = measure::Measure {
                want: self.req.decision_ops,
                limit: self.req.phase_timeout,
                quantiles,
                ctl: self.ctl,
            };
            let Some(tally) = m.run(&step, &mut self.probed, &mut status)? else {
                return Ok((levels, path, Stop::Interrupted, None));
            };
            let d = tally.decide(self.req.maxcount_pct);
            levels.push(measure::level_of(&f, &lc, &tally, d.clone()));
            if let Some((stop, culprit)) = measure::stop_of(&d, lc.sites.is_empty(), &tally) {
                return Ok((levels, path, stop, culprit));
            }
            if let causeway_latency::Decision::Callees { causes } = &d
                && let Some(&i) = causes.first()
            {
                path.push(lc.sites[i].clone());
            }
        }
    }
}
