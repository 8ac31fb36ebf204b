//! `causeway bottleneck`: which waiting events limit throughput (wPerf).
//!
//! Reads the trace once into the model and the analysis's extras, runs
//! `causeway_bottleneck::analyze`, and renders text, JSON, DOT or SVG. With `-- CMD`
//! it first records CMD with causeway's recorder, as `causeway demo` does.

use crate::cmd::record;
use crate::exit::{self, BadInput};
use crate::flags::BottleneckArgs;
use crate::open_trace;
use crate::progress::Progress;
use crate::render::{bottleneck_dot, bottleneck_text};
use anyhow::{Context, Result, bail};
use causeway_bottleneck::{BottleneckError, Collector, Input, Report, analyze};
use std::path::PathBuf;

/// The trace to analyze: the given file, or a fresh recording of the command.
fn trace_path(args: &BottleneckArgs) -> Result<PathBuf> {
    if let Some(t) = &args.trace {
        if !args.command.is_empty() {
            bail!("give either a trace file or `-- CMD`, not both");
        }
        return Ok(t.clone());
    }
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
    let trace = args.out_dir.join("bottleneck.cwt");
    eprintln!("recording {} ...", args.command.join(" "));
    record::record_command(&args.command, &trace)?;
    Ok(trace)
}

/// Read the trace and run the analysis.
pub fn build(args: &BottleneckArgs) -> Result<Report> {
    let mut opts = args.options();
    let path = trace_path(args)?;
    let mut rd = open_trace(&path)?;
    let tables = rd.tables().clone();
    let header = rd.header().clone();
    let mut progress = Progress::new(rd.event_count(), "reading events");
    // Decoding and the model build overlap: the model is built on a second thread.
    let (model, mut extras) = Collector::collect_threaded(&tables, &header, |sink| {
        let mut n = 0u64;
        for ev in rd.events() {
            let ev = ev.with_context(|| format!("reading events of {}", path.display()))?;
            sink.push(ev);
            n += 1;
            if n.is_multiple_of(65536) {
                progress.set(n);
            }
        }
        anyhow::Ok(())
    })?;
    progress.finish();
    extras.set_link_speeds(&rd.stats().counters);
    opts.threshold_fraction = args
        .threshold
        .fraction_of(model.span().map_or(0, |s| s.duration().0));
    let input = Input {
        model: &model,
        tables: &tables,
        extras: &extras,
    };
    analyze(&input, &opts).map_err(|e| match e {
        BottleneckError::Empty => anyhow::Error::new(BadInput(format!("{}: {e}", path.display()))),
        other => anyhow::Error::new(other),
    })
}

/// Run the command; returns the exit code (1 if no knot or sink was found).
pub fn run(args: &BottleneckArgs) -> Result<u8> {
    let report = build(args)?;
    if let Some(svg) = &args.svg {
        bottleneck_dot::write_svg(&report, svg)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if args.dot {
        print!("{}", bottleneck_dot::render(&report));
    } else {
        print!("{}", bottleneck_text::render(&report));
    }
    Ok(if report.knots.is_empty() && report.sinks.is_empty() {
        exit::NOTHING_OR_USER_ERROR
    } else {
        exit::OK
    })
}
