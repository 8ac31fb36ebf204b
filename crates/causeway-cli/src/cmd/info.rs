//! `causeway info`: what a trace holds and where its threads spent their time.

use crate::flags::InfoArgs;
use crate::output;
use crate::trace::{ingest_trace, open_trace};
use anyhow::Result;
use causeway_report::{InfoReport, Selection, TraceFacts};

/// Run the command; returns the exit code (1 if the trace holds no events).
pub fn run(args: &InfoArgs) -> Result<u8> {
    let report = build(args)?;
    output::emit(&report, output::format(args.json, false))
}

/// What the reader and the trace's facts say about a trace file, for [`InfoReport`].
pub fn trace_facts<'a, R: std::io::Read + std::io::Seek>(
    path: &std::path::Path,
    rd: &'a causeway_format::TraceReader<R>,
    trace: &'a causeway_model::Trace,
) -> TraceFacts<'a> {
    let counts = trace.facts().event_counts();
    TraceFacts {
        file: path.display().to_string(),
        bytes: rd.file_len(),
        format_version: format!("{}.{}", causeway_format::VERSION_MAJOR, rd.minor_version()),
        header: trace.header(),
        time_range: rd.time_range(),
        events: counts.values().sum(),
        events_by_kind: counts.iter().map(|(k, c)| (k.name(), *c)).collect(),
        lost_by_cpu: trace.facts().lost_by_cpu().clone(),
        skipped_unknown_events: rd.skipped_unknown_events(),
        skipped_unknown_blocks: rd.skipped_unknown_blocks(),
        stats: rd.stats(),
        samples_by_thread: trace
            .facts()
            .sampled_threads()
            .map(|t| (t.0, trace.facts().samples(t).len() as u64))
            .collect(),
        recorded: trace.facts().recorded(),
        frame_names: causeway_report::FrameNames::count(trace.tables()),
        tables: trace.tables(),
    }
}

/// Read the trace and compute the report.
pub fn build(args: &InfoArgs) -> Result<InfoReport> {
    let mut rd = open_trace(&args.trace)?;
    let trace = ingest_trace(&mut rd, &args.trace)?;
    let facts = trace_facts(&args.trace, &rd, &trace);
    let selection = Selection {
        pids: args.pid.clone(),
        comm: args.comm.clone(),
        top: args.top,
    };
    Ok(InfoReport::new(facts, trace.model(), &selection))
}
