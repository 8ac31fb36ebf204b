//! `causeway bottleneck`: which waiting events limit throughput (wPerf).
//!
//! Reads the trace once into the model and its facts, runs
//! `causeway_bottleneck::analyze`, and has `causeway-report` render the findings as
//! text, JSON, DOT or SVG. With `-- CMD`
//! it first records CMD with causeway's recorder, as `causeway demo` does.

use crate::cmd::record;
use crate::flags::BottleneckArgs;
use crate::flags::bottleneck::GraphArgs;
use crate::output;
use crate::trace::read_traces;
use anyhow::{Context, Result, anyhow, bail};
use causeway_bottleneck::{
    BottleneckError, Findings, Options, WaitMap, analyze, analyze_with_waits,
};
use causeway_model::Trace;
use causeway_report::{BottleneckView, Caveats, ReportError};
use causeway_whatif::Predictor;
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

/// A trace read and analysed: the findings, and the wait map when asked for.
pub(crate) struct Analysed {
    /// The trace (several hosts' joined into one).
    pub(crate) trace: Trace,
    /// The bottleneck findings.
    pub(crate) findings: Findings,
    /// Which vertex each wait points to (what-if predictions need it).
    pub(crate) waits: Option<WaitMap>,
    /// What the trace lacks (lost events) and how hosts were joined.
    pub(crate) caveats: Caveats,
}

/// How to read and analyse traces: the flags `bottleneck` and `whatif` share.
pub(crate) struct Analysis {
    /// The analysis's options (the threshold is set from `graph.threshold`).
    pub(crate) opts: Options,
    /// The threshold, goroutines or OS threads, merging.
    pub(crate) graph: GraphArgs,
    /// Also build the wait map.
    pub(crate) waits: bool,
}

/// Read the traces and run the analysis.
pub(crate) fn analyse(paths: &[PathBuf], a: Analysis) -> Result<Analysed> {
    let mut opts = a.opts;
    let (mut trace, hosts) = read_traces(paths, |_| {})?;
    if !a.graph.os_threads {
        trace = trace.into_goroutine_view();
    }
    opts.threshold_fraction = a
        .graph
        .threshold
        .fraction_of(trace.model().span().map_or(0, |s| s.duration().0));
    let named = |e: BottleneckError| match e {
        // A trace of nothing (a `--comm` that never ran) is not damaged: it is an
        // empty result, exit 1, as an analysis that finds nothing.
        BottleneckError::Empty => anyhow!("{}: {e}", paths[0].display()),
        other => anyhow::Error::new(other),
    };
    let (findings, waits) = if a.waits {
        let (f, w) = analyze_with_waits(&trace, &opts).map_err(named)?;
        (f, Some(w))
    } else {
        (analyze(&trace, &opts).map_err(named)?, None)
    };
    let caveats = Caveats::of(&trace).with_hosts(&hosts);
    Ok(Analysed {
        trace,
        findings,
        waits,
        caveats,
    })
}

fn analysis_of(args: &BottleneckArgs, waits: bool) -> Analysis {
    Analysis {
        opts: args.options(),
        graph: args.graph,
        waits,
    }
}

/// Run the command; returns the exit code (1 if no knot or sink was found).
pub fn run(args: &BottleneckArgs) -> Result<u8> {
    let paths = trace_paths(args)?;
    let a = analyse(&paths, analysis_of(args, args.what_if))?;
    let mut view = BottleneckView::new(&a.findings);
    if let Some(waits) = &a.waits {
        // Without repeated work to count there is nothing to predict: the report says
        // so rather than failing the analysis.
        match Predictor::new(&a.trace, &a.findings, waits) {
            Ok(p) => view = view.with_gains(p.counted(), &p.finding_gains()),
            Err(e) => eprintln!("causeway: --what-if: {e}"),
        }
    }
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
        &[("", &a.caveats)],
    )
}
