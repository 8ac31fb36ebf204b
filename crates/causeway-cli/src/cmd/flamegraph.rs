//! `causeway flamegraph`: on-CPU, off-CPU and wake-up chain flame graphs, folded for
//! other tools or drawn as SVG.

use crate::cmd::export::write_file;
use crate::cmd::loaded::load_view;
use crate::exit::BadInput;
use crate::flags::FlamegraphArgs;
use crate::output;
use anyhow::Result;
use causeway_report::wallclock::recorded_at;
use causeway_report::{FlameView, Format, View};
use causeway_stacks::{FlameKind, StacksError, fold};

/// Run the command; exit 1 if no stack was folded.
pub fn run(args: &FlamegraphArgs) -> Result<u8> {
    let loaded = load_view(&args.trace, args.os_threads)?;
    let kind = args.kind.kind();
    if kind == FlameKind::OnCpu && loaded.extras.samples.is_empty() {
        return Err(anyhow::Error::new(BadInput(format!(
            "{}: the trace holds no on-CPU sample stacks (record with sampling on)",
            args.trace.display()
        ))));
    }
    let folded = fold(
        &loaded.trace,
        Some(&loaded.extras),
        kind,
        &args.options(recorded(&loaded.trace)),
    )
    .map_err(|e: StacksError| anyhow::Error::new(e))?;
    let view = FlameView::new(kind, folded, title(&loaded.trace, kind));
    // On stderr: the folded text is read by other tools, line by line.
    for l in &causeway_report::Caveats::of(&loaded.trace).lines {
        eprintln!("causeway: warning: {l}");
    }
    if let Some(svg) = &args.svg {
        if view.found() {
            write_file(svg, |out| view.write_svg(out, true))?;
            eprintln!("wrote {}", svg.display());
        } else {
            eprintln!("no stacks to draw; {} not written", svg.display());
        }
        if !args.folded && !args.json {
            return Ok(if view.found() {
                crate::exit::OK
            } else {
                crate::exit::NOTHING_OR_USER_ERROR
            });
        }
    }
    if !view.found() && !args.json {
        // An empty folded output alone would look like a crash of the pipe behind it.
        eprintln!(
            "causeway: no stacks of the recorded threads in {} for this flame graph",
            args.trace.display()
        );
    }
    output::emit(
        &view,
        if args.json {
            Format::Json
        } else {
            Format::Text
        },
    )
}

/// The recorded processes of a per-process trace, `None` for a system-wide one: the
/// threads the views show by default (others appear only where they meet a target).
pub fn recorded(trace: &causeway_model::Trace) -> Option<Vec<causeway_format::Tgid>> {
    trace
        .facts()
        .recorded()
        .map(|r| r.iter().copied().collect())
}

/// `Off-CPU time (ns), recorded 2026-11-24 00:04:12 UTC on host`.
pub fn title(trace: &causeway_model::Trace, kind: FlameKind) -> String {
    let what = match kind {
        FlameKind::OnCpu => "On-CPU samples",
        FlameKind::OffCpu => "Off-CPU time (ns)",
        FlameKind::WakeChain => "Wake-up chains: blocked time (ns) by blocked and waker stacks",
    };
    let first = trace.model().span().map(|s| s.start);
    match recorded_at(trace.header(), first) {
        Some(at) => format!("{what}, recorded {at} on {}", trace.header().host.hostname),
        None => what.to_string(),
    }
}
