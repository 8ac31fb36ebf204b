//! `causeway tables`: traces as Parquet tables, one partition per trace.
//!
//! One pass over the events feeds the model, the latency collector and the event
//! tables at once; the model's tables and the analyses' results follow.

use crate::cmd::loaded;
use crate::flags::TablesArgs;
use crate::trace::{ingest_trace_with, open_trace};
use anyhow::{Context, Result};
use causeway_latency::SyscallCollector;
use causeway_stacks::EventExtras;
use causeway_tables::{Analyses, TraceTables, Written};
use std::path::Path;
use std::time::Instant;

/// Write the tables of the trace at `path` under `root`; with `analyses`, the
/// bottleneck, latency and diagnosis results too.
pub fn write(path: &Path, root: &Path, host: Option<&str>, analyses: bool) -> Result<Written> {
    let mut rd = open_trace(path)?;
    let mut out = TraceTables::create(root, rd.header(), rd.tables(), host)
        .with_context(|| format!("writing tables under {}", root.display()))?;
    let mut calls = SyscallCollector::new();
    let mut extras = EventExtras::new();
    let trace = ingest_trace_with(&mut rd, path, |ev| {
        out.push(ev);
        if analyses {
            calls.push(ev);
            extras.push(ev);
        }
    })?;
    // The analyses read the finished model only, so they run beside the writing of
    // the model's tables (the two largest costs of a conversion, on separate cores).
    let (written, (bottleneck, sites, latency, chain)) = std::thread::scope(|s| {
        let analysing = analyses.then(|| {
            s.spawn(|| {
                // One view for both graph analyses: goroutines stand in for their threads.
                let view = loaded::goroutine_view(&trace);
                let analysed = view.as_ref().unwrap_or(&trace);
                let opts = causeway_bottleneck::Options::default();
                let found = causeway_bottleneck::analyze_with_waits(analysed, &opts).ok();
                let (rows, sites) = found.map_or((None, None), |(f, waits)| {
                    let rows = causeway_report::BottleneckView::new(&f).rows();
                    let sites = causeway_tables::sites::wait_sites(analysed, &f, &waits);
                    (Some(rows), Some(sites))
                });
                let opts = causeway_latency::Options::default();
                let profiles = causeway_latency::analyze(&trace, &calls.finish(), &opts).ok();
                let syscalls = extras.finish().syscalls;
                let (diagnosis, _) = loaded::auto_diagnosis_of(analysed, &syscalls, None);
                (rows, sites, profiles, diagnosis.map(|d| d.chain_rows()))
            })
        });
        let written = out.write_model(&trace);
        let results = match analysing {
            Some(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => (None, None, None, None),
        };
        (written, results)
    });
    let context = || format!("writing the tables of {}", path.display());
    written.with_context(context)?;
    let done = Analyses {
        bottleneck: bottleneck.as_ref(),
        latency: latency.as_ref(),
        diagnosis: chain.as_deref(),
        wait_sites: sites.as_deref(),
    };
    out.finish(&trace, path, done).with_context(context)
}

/// Run the command.
pub fn run(args: &TablesArgs) -> Result<u8> {
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("creating {}", args.output.display()))?;
    let mut all = Vec::new();
    for path in &args.traces {
        let t0 = Instant::now();
        let w = write(path, &args.output, args.host.as_deref(), !args.no_analyses)?;
        let secs = t0.elapsed().as_secs_f64();
        let rows: u64 = w.tables.values().map(|c| c.rows).sum();
        let bytes: u64 = w.tables.values().map(|c| c.bytes).sum();
        if !args.json {
            eprintln!(
                "causeway: {} -> {} ({} tables, {rows} rows, {:.1} MiB, {} events in {secs:.2} s, {:.1} M events/s)",
                path.display(),
                w.dir.display(),
                w.tables.len(),
                bytes as f64 / (1024.0 * 1024.0),
                w.events,
                w.events as f64 / secs.max(1e-9) / 1e6,
            );
        }
        all.push(serde_json::json!({
            "trace": path.display().to_string(),
            "dir": w.dir.display().to_string(),
            "trace_id": w.trace_id,
            "host": w.host,
            "events": w.events,
            "seconds": secs,
            "tables": w.tables.iter().map(|(k, c)| {
                (k.to_string(), serde_json::json!({"rows": c.rows, "bytes": c.bytes}))
            }).collect::<serde_json::Map<_, _>>(),
        }));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&all)?);
    }
    Ok(0)
}
