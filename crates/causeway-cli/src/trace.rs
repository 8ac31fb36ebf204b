//! Opening and ingesting a trace file, with the path in every error: what every
//! command that reads a trace shares.

use crate::progress::Progress;
use anyhow::{Context, Result};
use causeway_format::TraceReader;
use causeway_model::{ModelError, Trace};
use std::io::BufReader;
use std::path::Path;

/// Open a trace for reading, with the path in any error.
pub fn open_trace(path: &Path) -> Result<TraceReader<BufReader<std::fs::File>>> {
    TraceReader::open(path).with_context(|| format!("reading trace {}", path.display()))
}

/// Read every event of an open trace into the model and facts (the one ingestion
/// path), showing progress on a terminal.
pub fn ingest_trace(rd: &mut TraceReader<BufReader<std::fs::File>>, path: &Path) -> Result<Trace> {
    let mut progress = Progress::new(rd.event_count(), "reading events");
    // The format error itself is the cause shown (and decides the exit code).
    let trace = Trace::read(rd, |n| progress.set(n))
        .map_err(|e| match e {
            ModelError::Format(fe) => anyhow::Error::new(fe),
            other => anyhow::Error::new(other),
        })
        .with_context(|| format!("reading events of {}", path.display()))?;
    progress.finish();
    Ok(trace)
}

/// [`ingest_trace`], also handing every event to `tee` during the same single pass
/// (for analyses that need events the model does not keep, such as syscall pairs).
pub fn ingest_trace_with(
    rd: &mut TraceReader<BufReader<std::fs::File>>,
    path: &Path,
    mut tee: impl FnMut(&causeway_format::Event),
) -> Result<Trace> {
    let mut progress = Progress::new(rd.event_count(), "reading events");
    let tables = rd.tables().clone();
    let header = rd.header().clone();
    let produced = causeway_model::ingest::ingest(&tables, &header, |sink| {
        let mut n = 0u64;
        for ev in rd.events() {
            let ev = ev?;
            tee(&ev);
            sink.push(ev);
            n += 1;
            if n.is_multiple_of(65536) {
                progress.set(n);
            }
        }
        Ok::<(), causeway_format::FormatError>(())
    });
    let (model, mut facts) = produced
        .map_err(anyhow::Error::new)
        .with_context(|| format!("reading events of {}", path.display()))?;
    let stats = rd.stats().clone();
    facts.set_link_speeds(&stats.counters);
    progress.finish();
    Ok(Trace::from_parts(header, tables, stats, model, facts))
}
