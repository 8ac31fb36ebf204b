//! `causeway rootpath`: DARC's root-cause path of a latency peak, live. The descent is
//! `causeway-live`'s (`rootpath::root_path`); this module resolves the flags into its
//! request, prints its notices and the status asked for with SIGUSR1 on stderr, and
//! renders the result. `rootpath TRACE` is [`crate::cmd::rootpath_offline`].

use crate::cmd::latency_live::{Signals, target};
use crate::flags::rootpath::{PeakChoice, RootpathArgs};
use crate::output;
use anyhow::Result;
use causeway_live::rootpath::indirect::Notice;
use causeway_live::rootpath::{PathNotice, PathRequest, Phase, resume, root_path};
use causeway_probe::callees::Site;
use causeway_record::signals;
use causeway_report::{RootPathStatus, RootPathView, rootpath_status_text};
use std::time::Duration;

/// Run the command.
pub fn run(args: &RootpathArgs) -> Result<u8> {
    if let Some(trace) = &args.trace {
        return crate::cmd::rootpath_offline::run(args, trace);
    }
    let pids: Vec<u32> = args.pid.into_iter().collect();
    let (t, launched) = target(
        &pids,
        &args.command,
        args.binary.as_ref(),
        &args.func,
        args.json,
    )?;
    let req = PathRequest {
        f0: Site {
            binary: t.binary.clone(),
            symbol: args.func.clone(),
        },
        tgid: t.tgid.unwrap_or(0),
        launched,
        peak: args.peak.unwrap_or(PeakChoice::Number(1)),
        resume: args.resume.as_deref().map(resume::load).transpose()?,
        max_emd: args.max_emd,
        start_ops: args.start_ops,
        decision_ops: args.decision_ops,
        maxcount_pct: args.maxcount_pct,
        max_depth: args.max_depth,
        phase_timeout: Duration::from_nanos(args.phase_timeout.0),
    };
    signals::install();
    let result = root_path(req, &Signals, &mut |n| notice(args, n))?;
    let view = RootPathView::new(&result);
    output::emit(&view, output::format(args.json, false))
}

/// Print one notice of the run on stderr (stdout is the result's).
fn notice(args: &RootpathArgs, n: PathNotice<'_>) {
    match n {
        PathNotice::HitCost(ns) => eprintln!(
            "causeway: one probe hit costs about {ns} ns here; F0's latency is corrected for the hits inside it"
        ),
        PathNotice::ProfileMoved(emd) => {
            eprintln!("causeway: F0's profile moved {emd:.2} octaves (EMD) since the saved run")
        }
        PathNotice::PeakChosen { calls, peak } => eprintln!(
            "causeway: {calls} calls of {}; peak {} is {} to {} ns ({} calls)",
            args.func, peak.number, peak.from_ns, peak.to_ns, peak.ops
        ),
        PathNotice::Level {
            depth,
            callees,
            function,
        } => eprintln!(
            "causeway: level {depth}: timing {callees} callees of {function}, its preemption and interrupts"
        ),
        PathNotice::Status {
            hist,
            peak,
            path,
            levels,
            phase,
        } => {
            let state = match phase {
                Phase::Profiling {
                    calls,
                    want,
                    elapsed,
                } => format!(
                    "profiling {}: {calls} of {want} calls (--start-ops), {elapsed:.0?}",
                    args.func
                ),
                Phase::Measuring {
                    depth,
                    samples,
                    want,
                } => format!(
                    "measuring level {depth} ({}): {samples} of {want} in-peak calls (--decision-ops); the last level's counts are so far",
                    path.last().map(String::as_str).unwrap_or(&args.func)
                ),
            };
            eprint!(
                "{}",
                rootpath_status_text(&RootPathStatus {
                    f0: &args.func,
                    hist,
                    peak,
                    path,
                    levels,
                    state: &state,
                })
            );
        }
        PathNotice::Indirect(n) => indirect_notice(n),
    }
}

/// Print one notice of an indirect call sites' pass.
fn indirect_notice(n: Notice<'_>) {
    match n {
        Notice::Reading {
            sites,
            function,
            calls,
            f0,
        } => eprintln!(
            "causeway: reading the targets of {sites} indirect call sites of {function} ({calls} calls of {f0})"
        ),
        Notice::Unprobed { function, error } => eprintln!(
            "causeway: the indirect call sites of {function} cannot be probed ({error}); they count as not probed"
        ),
        Notice::Status {
            sites,
            function,
            made,
            calls,
            f0,
            elapsed,
        } => eprintln!(
            "causeway rootpath status: reading the targets of {sites} indirect call sites of {function}: {made} of {calls} calls of {f0}, {elapsed:.0?}"
        ),
        Notice::Lost(lost) => {
            eprintln!("causeway: {lost} indirect calls had a target that could not be read or kept")
        }
        Notice::Seen { targets, added } => eprintln!(
            "causeway: {targets} targets seen; through a pointer: {}",
            if added.is_empty() {
                "nothing new".to_string()
            } else {
                added.join(", ")
            }
        ),
    }
}
