//! `causeway info`: what a trace holds and where its threads spent their time.

use crate::flags::InfoArgs;
use crate::progress::Progress;
use crate::render::info_text;
use crate::{exit, open_trace};
use anyhow::{Context, Result};
use causeway_format::{EventKind, EventKindTag};
use causeway_model::ModelBuilder;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

/// One thread in a ranking.
#[derive(Debug, Serialize)]
pub struct ThreadRow {
    /// Thread id.
    pub tid: u32,
    /// Process id.
    pub pid: u32,
    /// Thread name (latest).
    pub comm: String,
    /// Time on CPU.
    pub cpu_ns: u64,
    /// Time blocked (any sleep state).
    pub blocked_ns: u64,
    /// Time runnable, waiting for a CPU.
    pub runnable_ns: u64,
}

/// Everything `info` reports; serialized as is for `--json`.
#[derive(Debug, Serialize)]
pub struct InfoReport {
    /// Trace file.
    pub file: String,
    /// File size.
    pub bytes: u64,
    /// Format version.
    pub format_version: String,
    /// Program that wrote the trace.
    pub writer: String,
    /// Command line that produced it.
    pub command_line: Vec<String>,
    /// Host name and kernel.
    pub host: String,
    /// CPUs of the host.
    pub cpu_count: u32,
    /// First event time (trace clock, ns).
    pub start_ns: u64,
    /// Last minus first event time.
    pub duration_ns: u64,
    /// All events.
    pub events: u64,
    /// Events by kind name.
    pub events_by_kind: BTreeMap<&'static str, u64>,
    /// Threads seen (idle tasks excluded), or the selected ones with `--pid`/`--comm`.
    pub threads: usize,
    /// Processes seen.
    pub processes: usize,
    /// Events lost in recording, by CPU.
    pub lost_events_by_cpu: BTreeMap<u32, u64>,
    /// Events lost in recording, total.
    pub lost_events: u64,
    /// Events of unknown kinds skipped (newer format minor version).
    pub skipped_unknown_events: u64,
    /// Blocks of unknown kinds skipped (newer format minor version).
    pub skipped_unknown_blocks: u64,
    /// Events that arrived out of time order.
    pub clock_inversions: u64,
    /// Recorder counters stored in the trace.
    pub counters: BTreeMap<String, u64>,
    /// Model inconsistencies (events that contradict the thread states seen so far).
    pub model_anomalies: u64,
    /// All model counters, anomalies and informational ones.
    pub model_stats: causeway_model::ModelStats,
    /// Threads with the most CPU time.
    pub top_cpu: Vec<ThreadRow>,
    /// Threads with the most blocked time.
    pub top_blocked: Vec<ThreadRow>,
}

/// Run the command; returns the exit code.
pub fn run(args: &InfoArgs) -> Result<u8> {
    let report = build(args)?;
    print(&report, args.json)?;
    Ok(exit_code(&report))
}

/// Print a report as text or JSON.
pub fn print(report: &InfoReport, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{}", info_text::render(report));
    }
    Ok(())
}

/// 1 if the trace holds no events, else 0.
pub fn exit_code(report: &InfoReport) -> u8 {
    if report.events == 0 {
        exit::NOTHING_OR_USER_ERROR
    } else {
        exit::OK
    }
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
    let (start, end) = rd.time_range().unwrap_or_default();
    let stats = rd.stats();
    // The trace's own statistics and the records in the stream should agree; report
    // the larger so a loss is never understated.
    for (cpu, c) in &stats.lost_per_cpu {
        let e = lost_by_cpu.entry(*cpu).or_default();
        *e = (*e).max(*c);
    }
    let mut pids: HashSet<u32> = args.pid.iter().copied().collect();
    if let Some(name) = &args.comm {
        for p in model.processes() {
            let exe = p.exe();
            let exe_name = exe.rsplit('/').next().unwrap_or(exe);
            if p.comm == *name || exe_name == name {
                pids.insert(p.tgid.0);
            }
        }
    }
    let selected = |t: &causeway_model::Thread| {
        let by_pid = t.tgid.is_some_and(|g| pids.contains(&g.0));
        let by_comm = args.comm.as_ref().is_some_and(|c| *c == t.comm);
        (args.pid.is_empty() && args.comm.is_none()) || by_pid || by_comm
    };
    let rows: Vec<ThreadRow> = model
        .threads()
        .filter(|t| !t.tid.is_idle() && selected(t))
        .map(|t| ThreadRow {
            tid: t.tid.0,
            pid: t.tgid.map_or(0, |g| g.0),
            comm: t.comm.clone(),
            cpu_ns: t.totals.running.0,
            blocked_ns: t.totals.blocked().0,
            runnable_ns: t.totals.runnable.0,
        })
        .collect();
    let top = |key: fn(&ThreadRow) -> u64| -> Vec<ThreadRow> {
        let mut idx: Vec<usize> = (0..rows.len()).filter(|&i| key(&rows[i]) > 0).collect();
        idx.sort_by_key(|&i| (std::cmp::Reverse(key(&rows[i])), rows[i].tid));
        idx.into_iter()
            .take(args.top)
            .map(|i| ThreadRow {
                comm: rows[i].comm.clone(),
                ..rows[i]
            })
            .collect()
    };
    let report = InfoReport {
        file: args.trace.display().to_string(),
        bytes: rd.file_len(),
        format_version: format!("{}.{}", causeway_format::VERSION_MAJOR, rd.minor_version()),
        writer: header.writer.clone(),
        command_line: header.command_line.clone(),
        host: format!(
            "{} ({} {})",
            header.host.hostname, header.host.kernel_release, header.host.arch
        ),
        cpu_count: header.cpu_count,
        start_ns: start.0,
        duration_ns: end.0.saturating_sub(start.0),
        events: n,
        events_by_kind: EventKindTag::ALL
            .iter()
            .filter_map(|k| by_kind.get(k.name()).map(|c| (k.name(), *c)))
            .collect(),
        threads: rows.len(),
        processes: model.processes().count(),
        lost_events: lost_by_cpu.values().fold(0u64, |a, b| a.saturating_add(*b)),
        lost_events_by_cpu: lost_by_cpu,
        skipped_unknown_events: rd.skipped_unknown_events(),
        skipped_unknown_blocks: rd.skipped_unknown_blocks(),
        clock_inversions: stats.clock_inversions,
        counters: stats.counters.clone(),
        model_anomalies: model.stats().anomalies(),
        model_stats: model.stats().clone(),
        top_cpu: top(|r| r.cpu_ns),
        top_blocked: top(|r| r.blocked_ns),
    };
    Ok(report)
}
