//! `causeway latency --func SYMBOL (-p PID | -- CMD)`: a function's latency profile,
//! live. The measurement is `causeway-live`'s (`funclat::profile`); this module
//! resolves the flags into its request, prints its notices and renders the result.
//!
//! Decisions: live profiles are log2 only, so `--bins` other than 1 is refused. With
//! `-- CMD` the command
//! starts stopped before `exec`, so every call is seen; when `--duration` ends first,
//! the command is sent SIGTERM. With `--json` the command's standard output goes to
//! standard error, so the JSON document stays alone on standard output.

use crate::flags::LatencyArgs;
use crate::output;
use anyhow::{Context, Result, bail};
use causeway_live::Control;
use causeway_live::funclat::{FuncNotice, FuncRequest, profile};
use causeway_probe::launch::{Launched, executable_of, start_stopped};
use causeway_probe::{Attachment, ProbeTarget};
use causeway_record::signals;
use causeway_report::{LatencyView, ProfileInput};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Stop and status requests by signal: Ctrl-C or SIGTERM, and SIGUSR1.
pub(crate) struct Signals;

impl Control for Signals {
    fn stop_requested(&self) -> bool {
        signals::stop_requested()
    }

    fn take_status_request(&self) -> bool {
        signals::take_dump_requests() > 0
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
    let attachment = match std::env::var("CAUSEWAY_UPROBE").as_deref() {
        Ok("pair") => Some(Attachment::Pair),
        _ => None,
    };
    let req = FuncRequest {
        target: t,
        launched: stopped,
        attachment,
        duration: args.duration.map(|d| Duration::from_nanos(d.0)),
        interval: args.interval.map(|d| Duration::from_nanos(d.0)),
    };
    let p = profile(req, &Signals, &mut |n| match n {
        FuncNotice::Timing { target, attachment } => eprintln!(
            "causeway: timing {symbol} in {} (process {}, {}); Ctrl-C to stop",
            target.binary.display(),
            target.tgid.unwrap_or(0),
            match attachment {
                Attachment::Session => "uprobe session",
                Attachment::Pair => "uprobe and uretprobe",
            }
        ),
    })?;
    if p.slots.no_entry + p.slots.table_full > 0 {
        eprintln!(
            "causeway: not timed: {} returns without their entry (probe attached mid-call), {} entries with the thread table full",
            p.slots.no_entry, p.slots.table_full
        );
    }
    let label = format!("function {symbol}");
    let input = ProfileInput {
        label: &label,
        kind: "function",
        hist: &p.hist,
        peaks: &p.peaks,
        slices: &p.slices,
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
