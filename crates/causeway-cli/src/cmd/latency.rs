//! `causeway latency`: latency profiles with their peaks, from a trace (or a fresh
//! recording of `-- CMD`), live with `--func`, and `latency diff A B`.
//!
//! From a trace: one read builds the model and, through a tee, the syscall pairs;
//! `causeway_latency::analyze` makes the profiles and `causeway-report` renders them.
//! Live profiling is in [`crate::cmd::latency_live`].

use crate::cmd::{latency_live, record};
use crate::flags::LatencyArgs;
use crate::flags::latency::{LatencyDiffArgs, LatencySub, ProfileFlags, syscall_name};
use crate::output;
use crate::trace::{ingest_trace_with, open_trace};
use anyhow::{Context, Result, bail};
use causeway_latency::{
    Histogram, Options, PeakOptions, Profiles, SyscallCollector, analyze, diff,
};
use causeway_model::Trace;
use causeway_report::{Caveats, DiffInput, LatencyDiffView, LatencyView, subject_label};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Read a trace and build its profiles.
fn profiles_of(path: &Path, opts: &Options) -> Result<(Trace, Profiles)> {
    let mut rd = open_trace(path)?;
    let mut calls = SyscallCollector::new();
    let trace = ingest_trace_with(&mut rd, path, |ev| calls.push(ev))?;
    let calls = calls.finish();
    let profiles = analyze(&trace, &calls, opts)?;
    Ok((trace, profiles))
}

/// The trace to read: the given file, or a fresh recording (with syscalls) of CMD.
fn trace_path(args: &LatencyArgs) -> Result<PathBuf> {
    if let Some(t) = &args.trace {
        if !args.command.is_empty() {
            bail!("give either a trace file or `-- CMD`, not both");
        }
        return Ok(t.clone());
    }
    if args.command.is_empty() {
        bail!("give a trace file, `--func SYMBOL` with -p PID or `-- CMD`, or `-- CMD` to record");
    }
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
    let trace = args.out_dir.join("latency.cwt");
    eprintln!("recording {} ...", args.command.join(" "));
    record::record_command_with_syscalls(&args.command, &trace, args.json)?;
    Ok(trace)
}

/// Run the command; returns the exit code (1 if there was nothing to profile).
pub fn run(args: &LatencyArgs) -> Result<u8> {
    if let Some(LatencySub::Diff(d)) = &args.sub {
        return run_diff(d);
    }
    if args.func.is_some() {
        return latency_live::run(args);
    }
    let mut opts = args.profile.options()?;
    opts.interval = args.interval;
    let path = trace_path(args)?;
    let (trace, profiles) = profiles_of(&path, &opts)?;
    let view = LatencyView::new(&profiles, trace.tables(), &syscall_name);
    if let Some(html) = &args.html {
        latency_live::write_html(&view, html)?;
    }
    output::emit_with(
        &view,
        output::format(args.json, false),
        &[("", &Caveats::of(&trace))],
    )
}

/// Each profile of a trace by its label (labels, not ids, are comparable across
/// traces: string ids differ from one trace to another).
fn by_label(flags: &ProfileFlags, path: &Path) -> Result<BTreeMap<String, Histogram>> {
    let opts = flags.options()?;
    let (trace, profiles) = profiles_of(path, &opts)?;
    Ok(profiles
        .profiles
        .into_iter()
        .map(|p| {
            (
                subject_label(&p.subject, trace.tables(), &syscall_name),
                p.hist,
            )
        })
        .collect())
}

fn run_diff(args: &LatencyDiffArgs) -> Result<u8> {
    let before = by_label(&args.profile, &args.before)?;
    let after = by_label(&args.profile, &args.after)?;
    let empty = Histogram::new(args.profile.options()?.resolution);
    let mut labels: Vec<&String> = before.keys().chain(after.keys()).collect();
    labels.sort();
    labels.dedup();
    let diffs = labels
        .iter()
        .map(|l| {
            let a = before.get(*l).unwrap_or(&empty);
            let b = after.get(*l).unwrap_or(&empty);
            Ok(((*l).clone(), diff(a, b, &PeakOptions::default())?))
        })
        .collect::<Result<Vec<_>>>()?;
    let inputs: Vec<DiffInput<'_>> = diffs
        .iter()
        .map(|(label, diff)| DiffInput { label, diff })
        .collect();
    let view = LatencyDiffView::new(&inputs);
    output::emit(&view, output::format(args.json, false))
}
