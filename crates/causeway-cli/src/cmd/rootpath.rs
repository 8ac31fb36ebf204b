//! `causeway rootpath`: DARC's root-cause path of a latency peak, live.
//!
//! The probing is `causeway-probe`'s (one `PathProbe` per level), the decision
//! `causeway-latency`'s (`Tally`), the rendering `causeway-report`'s; this module runs
//! the phases: profile F0, choose the peak, then per level find the callees (direct
//! ones by disassembly, indirect ones by a short pass that reads their targets:
//! `rootpath_indirect`), measure, decide and descend.
//!
//! Decisions where DARC is silent or this port differs: the descent follows the best
//! root cause of each level (the others within `--maxcount-pct` are reported as also
//! causes, not explored); callees are functions, not call sites (a function called from
//! two sites of the same caller is one candidate); the probes of a level are replaced
//! as a whole when descending (DARC patches them one by one). A uprobe hit costs
//! microseconds where DARC's kprobes cost tens of cycles, so F0's latency is corrected
//! by the calibrated cost of the probe hits inside each call; otherwise timing the
//! callees would push F0's calls out of the very peak being studied. Preemption and
//! interrupts (DARC §3.6) are measured at every level, a leaf included (a function
//! with no callee to probe may still spend the peak's time switched out); the path
//! ends at them when they win.

use crate::cmd::latency_live::{Probed, target};
use crate::cmd::rootpath_indirect::{self as indirect, LevelCallees};
use crate::cmd::rootpath_resume::{self as resume, Saved};
use crate::flags::rootpath::{PeakChoice, RootpathArgs};
use crate::output;
use anyhow::{Result, bail};
use causeway_latency::{
    Candidate, Culprit, Decision, Histogram, Level, Peak, PeakOptions, RootPath, Sample, Stop,
    Tally, find_peaks,
};
use causeway_probe::calibrate;
use causeway_probe::callees::{Site, SymbolFinder};
use causeway_probe::launch::KILL_GRACE;
use causeway_probe::rootpath::{PathProbe, RawSample, Step};
use causeway_record::signals;
use causeway_report::{RootPathStatus, RootPathView, rootpath_status_text};
use std::time::{Duration, Instant};

const TICK: Duration = Duration::from_millis(100);

/// Profile F0 until `--start-ops` calls (or the timeout) and choose the peak: the
/// `--peak` one, or with `--resume` the one holding the saved peak's mode.
fn choose_peak(
    args: &RootpathArgs,
    probe: &PathProbe,
    probed: &mut Probed,
    saved: Option<&Saved>,
) -> Result<(Histogram, Vec<Peak>, Peak)> {
    let start = Instant::now();
    let limit = Duration::from_nanos(args.phase_timeout.0);
    let hist = loop {
        std::thread::sleep(TICK);
        let h = Histogram::from_log2_slots(&probe.f0_slots()?);
        if signals::take_dump_requests() > 0 {
            let state = format!(
                "profiling {}: {} of {} calls (--start-ops), {:.0?}",
                args.func,
                h.total(),
                args.start_ops,
                start.elapsed()
            );
            show_status(&RootPathStatus {
                f0: &args.func,
                hist: &h,
                peak: None,
                path: std::slice::from_ref(&args.func),
                levels: &saved.map(|s| s.levels.clone()).unwrap_or_default(),
                state: &state,
            });
        }
        if h.total() >= args.start_ops
            || start.elapsed() >= limit
            || signals::stop_requested()
            || !probed.alive()
        {
            break h;
        }
    };
    let peaks = find_peaks(&hist, &PeakOptions::default());
    let peak = match saved {
        Some(sv) => resume::matching_peak(args, sv, &hist, &peaks)?,
        None => {
            let n = match args.peak.unwrap_or(PeakChoice::Number(1)) {
                PeakChoice::Number(n) => n,
                PeakChoice::Last => peaks.len() as u32,
            };
            let Some(p) = peaks.iter().find(|p| p.number == n).copied() else {
                bail!(
                    "{} has {} peak(s) after {} calls; --peak {n} does not exist",
                    args.func,
                    peaks.len(),
                    hist.total()
                );
            };
            p
        }
    };
    eprintln!(
        "causeway: {} calls of {}; peak {} is {} to {} ns ({} calls)",
        hist.total(),
        args.func,
        peak.number,
        peak.from_ns,
        peak.to_ns,
        peak.ops
    );
    Ok((hist, peaks, peak))
}

/// The share of F0's calls below the peak and up to its end, in the profile the peak
/// was chosen on: which calls belong to the peak, by rank.
fn peak_quantiles(hist: &Histogram, peak: &Peak) -> (f64, f64) {
    let total = hist.total().max(1) as f64;
    let below: u64 = (0..peak.first_bin).map(|b| hist.count(b)).sum();
    let upto: u64 = (0..=peak.last_bin).map(|b| hist.count(b)).sum();
    (below as f64 / total, upto as f64 / total)
}

/// F0 calls gathered before they are ranked.
const BATCH: usize = 400;

/// Rank a batch of samples by F0's latency and count those whose rank is in the peak's
/// share of calls.
fn rank_batch(batch: &mut Vec<RawSample>, (q_lo, q_hi): (f64, f64), tally: &mut Tally) {
    batch.sort_by_key(|s| s.f0_ns);
    let n = batch.len() as f64;
    let (lo, hi) = ((q_lo * n).round() as usize, (q_hi * n).round() as usize);
    for s in batch.drain(..).skip(lo).take(hi.saturating_sub(lo)) {
        tally.add(&Sample {
            function_ns: s.function_ns,
            callees_ns: s.callees_ns,
            preempted_ns: s.preempted_ns,
            irq_ns: s.irq_ns,
            preemptor: s.preemptor,
            irq: s.irq,
        });
    }
}

/// Measure one level until `--decision-ops` in-peak calls; `None` if interrupted.
///
/// Which calls are "in the peak" is decided by rank, not by latency: every call of F0
/// is sampled, and in each batch the calls whose rank falls in the peak's share of
/// calls (from the profile the peak was chosen on) are counted. A uprobe hit costs
/// microseconds here, more than a fast path takes, so the probes of a level shift F0's
/// latencies by more than a peak is wide; they keep the calls' order.
fn measure(
    args: &RootpathArgs,
    step: &Step,
    quantiles: (f64, f64),
    probed: &mut Probed,
    status: &dyn Fn(&Tally),
) -> Result<Option<Tally>> {
    let probe = PathProbe::attach(step)?;
    let mut tally = Tally::new(step.callees.len());
    let mut batch = Vec::with_capacity(BATCH);
    let start = Instant::now();
    let limit = Duration::from_nanos(args.phase_timeout.0);
    while tally.samples < args.decision_ops {
        probe.poll(TICK, |s| batch.push(s))?;
        if batch.len() >= BATCH {
            rank_batch(&mut batch, quantiles, &mut tally);
        }
        if signals::take_dump_requests() > 0 {
            status(&tally);
        }
        if signals::stop_requested() || !probed.alive() {
            return Ok(None);
        }
        if start.elapsed() >= limit {
            if batch.len() * 4 >= BATCH {
                rank_batch(&mut batch, quantiles, &mut tally);
            }
            break;
        }
    }
    Ok(Some(tally))
}

fn level_of(f: &Site, lc: &LevelCallees, t: &Tally, d: Decision) -> Level {
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
fn stop_of(d: &Decision, leaf: bool, t: &Tally) -> Option<(Stop, Option<Culprit>)> {
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

/// Where the descent ended: the levels, the path below F0, why, and the thread or
/// IRQ to blame when it ended in preemption or an interrupt.
type Descent = (Vec<Level>, Vec<Site>, Stop, Option<Culprit>);

/// F0's profile when the peak was chosen, and the peak.
struct Chosen {
    hist: Histogram,
    peak: Peak,
}

/// Print the status (SIGUSR1) while level `path.len()` is measured with `callees`.
fn level_status(
    args: &RootpathArgs,
    chosen: &Chosen,
    (f, path, levels): (&Site, &[Site], &[Level]),
    lc: &LevelCallees,
    t: &Tally,
) {
    let mut all = levels.to_vec();
    all.push(level_of(f, lc, t, t.decide(args.maxcount_pct)));
    let names: Vec<String> = std::iter::once(args.func.clone())
        .chain(path.iter().map(|s| s.symbol.clone()))
        .collect();
    let state = format!(
        "measuring level {} ({}): {} of {} in-peak calls (--decision-ops); the last level's counts are so far",
        path.len(),
        f.symbol,
        t.samples,
        args.decision_ops
    );
    show_status(&RootPathStatus {
        f0: &args.func,
        hist: &chosen.hist,
        peak: Some(&chosen.peak),
        path: &names,
        levels: &all,
        state: &state,
    });
}

/// Write a status to stderr (stdout is the result's).
fn show_status(st: &RootPathStatus<'_>) {
    eprint!("{}", rootpath_status_text(st));
}

/// Descend from F0 until a stop; returns the levels, the path and why it stopped.
fn descend(
    args: &RootpathArgs,
    (f0, tgid): (&Site, u32),
    chosen: &Chosen,
    hit_cost_ns: u64,
    probed: &mut Probed,
    saved: Option<&Saved>,
) -> Result<Descent> {
    let finder = SymbolFinder::for_process(tgid)?;
    let (mut path, mut levels) = match saved {
        Some(sv) => (resume::path_sites(sv, f0, &finder)?, sv.levels.clone()),
        None => (Vec::new(), Vec::new()),
    };
    let quantiles = peak_quantiles(&chosen.hist, &chosen.peak);
    loop {
        let f = path.last().unwrap_or(f0).clone();
        let (mut lc, sites) = indirect::direct_callees(&f, &finder)?;
        if path.len() >= args.max_depth {
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
            hit_cost_ns,
        };
        if !sites.is_empty() {
            let calls = indirect::discovery_calls(quantiles.1 - quantiles.0, args.start_ops);
            let limit = Duration::from_nanos(args.phase_timeout.0 / 4);
            if indirect::discover(&step, &sites, (calls, limit), probed, &mut lc)?.is_none() {
                return Ok((levels, path, Stop::Interrupted, None));
            }
        }
        step.callees = lc.sites.clone();
        // A leaf is measured too: its time may be time it was preempted (DARC §3.6).
        eprintln!(
            "causeway: level {}: timing {} callees of {}, its preemption and interrupts",
            path.len(),
            lc.sites.len(),
            f.symbol
        );
        let status = |t: &Tally| level_status(args, chosen, (&f, &path, &levels), &lc, t);
        let Some(tally) = measure(args, &step, quantiles, probed, &status)? else {
            return Ok((levels, path, Stop::Interrupted, None));
        };
        let d = tally.decide(args.maxcount_pct);
        levels.push(level_of(&f, &lc, &tally, d.clone()));
        if let Some((stop, culprit)) = stop_of(&d, lc.sites.is_empty(), &tally) {
            return Ok((levels, path, stop, culprit));
        }
        if let Decision::Callees { causes } = &d
            && let Some(&i) = causes.first()
        {
            path.push(lc.sites[i].clone());
        }
    }
}

/// Run the command.
pub fn run(args: &RootpathArgs) -> Result<u8> {
    if let Some(trace) = &args.trace {
        return crate::cmd::rootpath_offline::run(args, trace);
    }
    let pids: Vec<u32> = args.pid.into_iter().collect();
    let (t, stopped) = target(
        &pids,
        &args.command,
        args.binary.as_ref(),
        &args.func,
        args.json,
    )?;
    let tgid = t.tgid.unwrap_or(0);
    let f0 = Site {
        binary: t.binary.clone(),
        symbol: args.func.clone(),
    };
    let saved = args.resume.as_deref().map(resume::load).transpose()?;
    signals::install();
    let hit_cost_ns = calibrate::hit_cost_ns(20_000)?;
    eprintln!(
        "causeway: one probe hit costs about {hit_cost_ns} ns here; F0's latency is corrected for the hits inside it"
    );
    let profile = PathProbe::attach(&Step {
        tgid,
        f0: f0.clone(),
        path: Vec::new(),
        callees: Vec::new(),
        sites: Vec::new(),
        peak_ns: (0, 0),
        hit_cost_ns: 0,
    })?;
    let mut probed = match stopped {
        Some(mut s) => {
            s.release();
            Probed::Started(s)
        }
        None => Probed::Running(tgid),
    };
    let (hist, peaks, peak) = choose_peak(args, &profile, &mut probed, saved.as_ref())?;
    drop(profile);
    let chosen = Chosen {
        hist: hist.clone(),
        peak,
    };
    let (levels, path, stop, culprit) = descend(
        args,
        (&f0, tgid),
        &chosen,
        hit_cost_ns,
        &mut probed,
        saved.as_ref(),
    )?;
    if let Probed::Started(s) = &mut probed {
        s.terminate(KILL_GRACE);
    }
    let result = RootPath {
        f0: args.func.clone(),
        f0_hist: hist,
        peaks,
        peak,
        levels,
        path: std::iter::once(args.func.clone())
            .chain(path.iter().map(|s| s.symbol.clone()))
            .collect(),
        stop,
        culprit,
        from_trace: false,
    };
    let view = RootPathView::new(&result);
    output::emit(&view, output::format(args.json, false))
}
