//! `causeway bottleneck`: which waiting events limit throughput (wPerf).
//!
//! Reads the trace once into the model and its facts, runs
//! `causeway_bottleneck::analyze`, and has `causeway-report` render the findings as
//! text, JSON, DOT or SVG. With `-- CMD`
//! it first records CMD with causeway's recorder, as `causeway demo` does.

use crate::cmd::record;
use crate::flags::BottleneckArgs;
use crate::output;
use crate::trace::read_traces;
use anyhow::{Context, Result, anyhow, bail};
use causeway_bottleneck::{BottleneckError, Findings, analyze};
use causeway_report::{BottleneckView, Caveats, ReportError};
use std::path::PathBuf;

/// The traces to analyze: the given files, or a fresh recording of the command.
fn trace_paths(args: &BottleneckArgs) -> Result<Vec<PathBuf>> {
    if !args.traces.is_empty() {
        if !args.command.is_empty() {
            bail!("give either trace files or `-- CMD`, not both");
        }
        return Ok(args.traces.clone());
    }
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
    let trace = args.out_dir.join("bottleneck.cwt");
    eprintln!("recording {} ...", args.command.join(" "));
    record::record_command(&args.command, &trace, args.json)?;
    Ok(vec![trace])
}

/// Read the trace and run the analysis; also what the trace lacks (lost events).
pub fn build(args: &BottleneckArgs) -> Result<(Findings, Caveats)> {
    let mut opts = args.options();
    let paths = trace_paths(args)?;
    let (mut trace, hosts) = read_traces(&paths, |_| {})?;
    if !args.os_threads {
        trace = trace.into_goroutine_view();
    }
    opts.threshold_fraction = args
        .threshold
        .fraction_of(trace.model().span().map_or(0, |s| s.duration().0));
    let findings = analyze(&trace, &opts).map_err(|e| match e {
        // A trace of nothing (a `--comm` that never ran) is not damaged: it is an
        // empty result, exit 1, as an analysis that finds nothing.
        BottleneckError::Empty => anyhow!("{}: {e}", paths[0].display()),
        other => anyhow::Error::new(other),
    })?;
    Ok((findings, Caveats::of(&trace).with_hosts(&hosts)))
}

/// Run the command; returns the exit code (1 if no knot or sink was found).
pub fn run(args: &BottleneckArgs) -> Result<u8> {
    let (findings, caveats) = build(args)?;
    let view = BottleneckView::new(&findings);
    if let Some(svg) = &args.svg {
        view.write_svg(svg).map_err(|e| match e {
            ReportError::GraphvizMissing => anyhow!(
                "--svg needs graphviz's `dot`, which is not installed (apt install graphviz); --dot prints the graph without it"
            ),
            other => anyhow::Error::new(other),
        })?;
    }
    output::emit_with(
        &view,
        output::format(args.json, args.dot),
        &[("", &caveats)],
    )
}
