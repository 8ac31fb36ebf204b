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

/// Several hosts' traces read as one (see `causeway_join`): the joined trace and how
/// each host entered it. One path is read as [`ingest_trace`] reads it, with no hosts.
/// Every event the model gets is also handed to `tee`.
pub fn read_traces(
    paths: &[std::path::PathBuf],
    mut tee: impl FnMut(&causeway_format::Event),
) -> Result<(Trace, Vec<causeway_join::HostJoin>)> {
    if let [one] = paths {
        let mut rd = open_trace(one)?;
        return Ok((ingest_trace_with(&mut rd, one, tee)?, Vec::new()));
    }
    let mut readers = Vec::with_capacity(paths.len());
    for p in paths {
        readers.push(open_trace(p)?);
    }
    let names = host_names(paths, &readers);
    let total = readers.iter().map(|r| r.event_count()).sum::<u64>() * 2;
    let mut hosts: Vec<_> = readers
        .into_iter()
        .zip(names)
        .map(|(reader, name)| causeway_join::HostTrace { name, reader })
        .collect();
    let mut progress = Progress::new(total, "joining traces");
    let joined = causeway_join::join_with(&mut hosts, |n| progress.set(n), &mut tee)
        .map_err(|e| match e {
            causeway_join::JoinError::Format(fe) => anyhow::Error::new(fe),
            other => anyhow::Error::new(other),
        })
        .context("joining the traces")?;
    progress.finish();
    Ok((joined.trace, joined.hosts))
}

/// Each trace's host name, or its file's name where two traces have the same host
/// name (two network namespaces of one machine), so that names tell the hosts apart.
fn host_names(
    paths: &[std::path::PathBuf],
    readers: &[TraceReader<BufReader<std::fs::File>>],
) -> Vec<String> {
    let hostnames: Vec<&str> = readers
        .iter()
        .map(|r| r.header().host.hostname.as_str())
        .collect();
    let stem = |p: &std::path::PathBuf| {
        p.file_stem().map_or_else(
            || p.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
    };
    let mut names: Vec<String> = paths
        .iter()
        .zip(&hostnames)
        .map(|(p, h)| {
            let repeated = hostnames.iter().filter(|x| *x == h).count() > 1;
            if h.is_empty() || repeated {
                stem(p)
            } else {
                h.to_string()
            }
        })
        .collect();
    for i in 0..names.len() {
        if names[..i].contains(&names[i]) {
            names[i] = format!("{}#{}", names[i], i + 1);
        }
    }
    names
}
