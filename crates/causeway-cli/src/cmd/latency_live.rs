//! `causeway latency --func SYMBOL (-p PID | -- CMD)`: a function's latency profile,
//! live, through a uprobe/uretprobe pair whose BPF programs count each call into log2
//! slots in the kernel (`causeway-probe`). The slots become a histogram here; peaks
//! and rendering are the analysis's and the report's, as for a trace.
//!
//! Decisions: live profiles are log2 only (the kernel keeps 64 slots; finer bins would
//! cost more per call), so `--bins` other than 1 is refused. With `-- CMD` the command
//! starts stopped before `exec`, so every call is seen; when `--duration` ends first,
//! the command is sent SIGTERM. With `--json` the command's standard output goes to
//! standard error, so the JSON document stays alone on standard output.

use crate::flags::LatencyArgs;
use crate::output;
use anyhow::{Context, Result, bail};
use causeway_latency::{Histogram, PeakOptions, Slice, find_peaks};
use causeway_probe::launch::{KILL_GRACE, Launched, executable_of, start_stopped};
use causeway_probe::{Attachment, FuncProbe, ProbeTarget, Slots};
use causeway_record::signals;
use causeway_report::{LatencyView, ProfileInput};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often the loop looks at the clock, the signals and the target.
const TICK: Duration = Duration::from_millis(50);

/// The process being probed: one given by pid, or the command started here.
pub(crate) enum Probed {
    Running(u32),
    Started(Launched),
}

impl Probed {
    /// True while the process runs.
    pub(crate) fn alive(&mut self) -> bool {
        match self {
            Probed::Running(pid) => std::path::Path::new(&format!("/proc/{pid}")).exists(),
            Probed::Started(s) => s.poll_exit().is_none(),
        }
    }
}

/// What to probe: `symbol` in the process given by pid, or in a command started here
/// (stopped before `exec`; its standard output goes to standard error with `json`).
pub(crate) fn target(
    pids: &[u32],
    command: &[String],
    binary: Option<&PathBuf>,
    symbol: &str,
    json: bool,
) -> Result<(ProbeTarget, Option<Launched>)> {
    match (pids, command.is_empty()) {
        ([pid], true) => {
            let binary = match binary {
                Some(b) => b.clone(),
                None => executable_of(*pid)?,
            };
            let t = ProbeTarget {
                binary,
                symbol: symbol.to_string(),
                tgid: Some(*pid),
            };
            Ok((t, None))
        }
        ([], false) => {
            let (stopped, exe) = start_stopped(command, json)?;
            let t = ProbeTarget {
                binary: binary.cloned().unwrap_or(exe),
                symbol: symbol.to_string(),
                tgid: Some(stopped.pid),
            };
            Ok((t, Some(stopped)))
        }
        ([], true) => bail!("--func needs the process to probe: -p PID, or `-- CMD` to start one"),
        _ => bail!("--func probes one process: give one -p PID or `-- CMD`, not both or several"),
    }
}

/// Probe until Ctrl-C, `--duration`, or the process's end; the time-lapse slices are
/// read every `--interval`.
fn probe_loop(
    args: &LatencyArgs,
    probe: &FuncProbe,
    mut probed: Probed,
) -> Result<(Slots, Vec<Slice>)> {
    let start = Instant::now();
    let limit = args.duration.map(|d| Duration::from_nanos(d.0));
    let interval = args.interval.map(|d| Duration::from_nanos(d.0.max(1)));
    let mut slices = Vec::new();
    let mut last = probe.read()?;
    let mut next_slice = interval.map(|i| start + i);
    loop {
        std::thread::sleep(TICK);
        let now = Instant::now();
        let done =
            signals::stop_requested() || limit.is_some_and(|l| now - start >= l) || !probed.alive();
        if let (Some(at), Some(iv)) = (next_slice, interval)
            && (now >= at || done)
        {
            let cur = probe.read()?;
            let h = Histogram::from_log2_slots(&cur.since(&last).slots);
            let offset = at.saturating_duration_since(start + iv);
            slices.push(Slice {
                offset_ns: offset.as_nanos() as u64,
                peaks: find_peaks(&h, &PeakOptions::default()),
                hist: h,
            });
            last = cur;
            next_slice = Some(at + iv);
        }
        if done {
            break;
        }
    }
    if let Probed::Started(s) = &mut probed {
        s.terminate(KILL_GRACE);
    }
    Ok((probe.read()?, slices))
}

/// Run live profiling.
pub fn run(args: &LatencyArgs) -> Result<u8> {
    let Some(symbol) = &args.func else {
        bail!("--func is required for live profiling");
    };
    if args.trace.is_some() {
        bail!("--func profiles a live process: give -p PID or `-- CMD`, not a trace file");
    }
    if args.profile.bins != 1 {
        bail!(
            "live profiles are log2 (the kernel keeps one counter per power of two); --bins applies to traces"
        );
    }
    let (t, stopped) = target(
        &args.profile.pid,
        &args.command,
        args.binary.as_ref(),
        symbol,
        args.json,
    )?;
    signals::install();
    // CAUSEWAY_UPROBE=pair keeps the uprobe/uretprobe pair where sessions exist (to
    // compare the two in bench/funclat.sh).
    let probe = match std::env::var("CAUSEWAY_UPROBE").as_deref() {
        Ok("pair") => FuncProbe::attach_as(&t, Attachment::Pair),
        _ => FuncProbe::attach(&t),
    }
    .with_context(|| format!("probing {symbol}"))?;
    let probed = match stopped {
        Some(mut s) => {
            s.release();
            Probed::Started(s)
        }
        None => Probed::Running(t.tgid.unwrap_or(0)),
    };
    eprintln!(
        "causeway: timing {symbol} in {} (process {}, {}); Ctrl-C to stop",
        t.binary.display(),
        t.tgid.unwrap_or(0),
        match probe.attachment() {
            Attachment::Session => "uprobe session",
            Attachment::Pair => "uprobe and uretprobe",
        }
    );
    let (slots, slices) = probe_loop(args, &probe, probed)?;
    drop(probe);
    if slots.no_entry + slots.table_full > 0 {
        eprintln!(
            "causeway: not timed: {} returns without their entry (probe attached mid-call), {} entries with the thread table full",
            slots.no_entry, slots.table_full
        );
    }
    let hist = Histogram::from_log2_slots(&slots.slots);
    let peaks = find_peaks(&hist, &PeakOptions::default());
    let label = format!("function {symbol}");
    let input = ProfileInput {
        label: &label,
        kind: "function",
        hist: &hist,
        peaks: &peaks,
        slices: &slices,
    };
    let view = LatencyView::from_inputs(&[input], args.interval.map(|d| d.0));
    if let Some(html) = &args.html {
        write_html(&view, html)?;
    }
    output::emit(&view, output::format(args.json, false))
}

/// Write the HTML page of a view.
pub fn write_html(view: &LatencyView, path: &Path) -> Result<()> {
    let mut f =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    view.write_html(&mut f)
        .with_context(|| format!("writing {}", path.display()))
}
