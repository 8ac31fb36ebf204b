//! `causeway info`: what a trace holds and where its threads spent their time.

use crate::cli::InfoArgs;
use crate::progress::Progress;
use crate::{open_trace, output};
use anyhow::{Context, Result};
use causeway_format::EventKind;
use causeway_model::ModelBuilder;
use causeway_report::{InfoReport, Selection, TraceFacts};
use std::collections::BTreeMap;

/// Run the command; returns the exit code (1 if the trace holds no events).
pub fn run(args: &InfoArgs) -> Result<u8> {
    let report = build(args)?;
    output::emit(&report, output::format(args.json, false))
}

/// Read the trace and compute the report.
pub fn build(args: &InfoArgs) -> Result<InfoReport> {
    let mut rd = open_trace(&args.trace)?;
    let tables = rd.tables().clone();
    let header = rd.header().clone();
    let total = rd.event_count();
    let mut progress = Progress::new(total, "reading events");
    let mut by_kind: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut lost_by_cpu: BTreeMap<u32, u64> = BTreeMap::new();
    let mut builder = ModelBuilder::new(&tables, &header);
    let mut n = 0u64;
    for ev in rd.events() {
        let ev = ev.with_context(|| format!("reading events of {}", args.trace.display()))?;
        *by_kind.entry(ev.kind.tag().name()).or_default() += 1;
        if let EventKind::Lost { count } = ev.kind {
            let e = lost_by_cpu.entry(ev.cpu.0).or_default();
            *e = e.saturating_add(count);
        }
        builder.push(&ev);
        n += 1;
        if n.is_multiple_of(65536) {
            progress.set(n);
        }
    }
    progress.finish();
    let model = builder.finish();
    let facts = TraceFacts {
        file: args.trace.display().to_string(),
        bytes: rd.file_len(),
        format_version: format!("{}.{}", causeway_format::VERSION_MAJOR, rd.minor_version()),
        header: &header,
        time_range: rd.time_range(),
        events: n,
        events_by_kind: by_kind,
        lost_by_cpu,
        skipped_unknown_events: rd.skipped_unknown_events(),
        skipped_unknown_blocks: rd.skipped_unknown_blocks(),
        stats: rd.stats(),
    };
    let selection = Selection {
        pids: args.pid.clone(),
        comm: args.comm.clone(),
        top: args.top,
    };
    Ok(InfoReport::new(facts, &model, &selection))
}
