//! Computing the `info` report from the trace reader's counts and the model.

use super::report::{InfoReport, ThreadRow};
use causeway_format::{EventKindTag, Header, Tgid, Timestamp, TraceStats};
use causeway_model::{Model, Thread};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// What reading the trace established, apart from the model.
#[derive(Clone, Debug)]
pub struct TraceFacts<'a> {
    /// The trace file as the user named it.
    pub file: String,
    /// File size in bytes.
    pub bytes: u64,
    /// Format version, `major.minor`.
    pub format_version: String,
    /// The trace's header.
    pub header: &'a Header,
    /// First and last event times.
    pub time_range: Option<(Timestamp, Timestamp)>,
    /// Events read.
    pub events: u64,
    /// Events read by kind name.
    pub events_by_kind: BTreeMap<&'static str, u64>,
    /// Events lost, by CPU, from the `lost` records read.
    pub lost_by_cpu: BTreeMap<u32, u64>,
    /// Events of unknown kinds skipped.
    pub skipped_unknown_events: u64,
    /// Blocks of unknown kinds skipped.
    pub skipped_unknown_blocks: u64,
    /// The statistics stored at the end of the trace.
    pub stats: &'a TraceStats,
    /// On-CPU samples by thread id.
    pub samples_by_thread: BTreeMap<u32, u64>,
    /// The processes a per-process recording followed (`None`: every process counts),
    /// as the model's facts say.
    pub recorded: Option<&'a BTreeSet<Tgid>>,
    /// How many user frames have names ([`super::FrameNames::count`]).
    pub frame_names: super::FrameNames,
    /// The trace's tables (cgroups).
    pub tables: &'a causeway_format::Tables,
}

/// Which threads the rankings cover, and how many rows each shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Threads of these processes; with `comm` also empty, every thread.
    pub pids: Vec<u32>,
    /// Threads with this name, and threads of processes with this name or executable.
    pub comm: Option<String>,
    /// Rows per ranking.
    pub top: usize,
}

impl Selection {
    /// The process ids selected: the given ones and those of processes named `comm`.
    fn pids(&self, model: &Model) -> HashSet<u32> {
        let mut pids: HashSet<u32> = self.pids.iter().copied().collect();
        if let Some(name) = &self.comm {
            for p in model.processes() {
                let exe = p.exe();
                let exe_name = exe.rsplit('/').next().unwrap_or(exe);
                if p.comm == *name || exe_name == name {
                    pids.insert(p.tgid.0);
                }
            }
        }
        pids
    }
}

impl InfoReport {
    /// The report on a trace from what its reader counted and its model.
    pub fn new(facts: TraceFacts<'_>, model: &Model, sel: &Selection) -> InfoReport {
        let mut lost_by_cpu = facts.lost_by_cpu;
        // The trace's own statistics and the records in the stream should agree; report
        // the larger so a loss is never understated.
        for (cpu, c) in &facts.stats.lost_per_cpu {
            let e = lost_by_cpu.entry(*cpu).or_default();
            *e = (*e).max(*c);
        }
        let pids = sel.pids(model);
        let selected = |t: &Thread| {
            let by_pid = t.tgid.is_some_and(|g| pids.contains(&g.0));
            let by_comm = sel.comm.as_ref().is_some_and(|c| *c == t.comm);
            (sel.pids.is_empty() && sel.comm.is_none()) || by_pid || by_comm
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
                samples: facts.samples_by_thread.get(&t.tid.0).copied().unwrap_or(0),
                recorded: facts
                    .recorded
                    .is_none_or(|r| t.tgid.is_some_and(|g| r.contains(&g))),
            })
            .collect();
        // Threads of processes not recorded are seen only in part: ranking them with
        // the recorded ones by time built from partial data misleads, so apart.
        let (rows, others): (Vec<ThreadRow>, Vec<ThreadRow>) =
            rows.into_iter().partition(|r| r.recorded);
        let (start, end) = facts.time_range.unwrap_or_default();
        let header = facts.header;
        // One reading of the quotas and affinities for both lists.
        let quota = causeway_model::quota::Throttling::of(model, facts.tables);
        InfoReport {
            file: facts.file,
            bytes: facts.bytes,
            format_version: facts.format_version,
            writer: header.writer.clone(),
            command_line: header.command_line.clone(),
            host: format!(
                "{} ({} {})",
                header.host.hostname, header.host.kernel_release, header.host.arch
            ),
            cpu_count: header.cpu_count,
            recorded_at: crate::wallclock::recorded_at(header, facts.time_range.map(|r| r.0)),
            start_ns: start.0,
            duration_ns: end.0.saturating_sub(start.0),
            events: facts.events,
            events_by_kind: EventKindTag::ALL
                .iter()
                .filter_map(|k| facts.events_by_kind.get(k.name()).map(|c| (k.name(), *c)))
                .collect(),
            threads: rows.len(),
            processes: model.processes().count(),
            lost_events: lost_by_cpu.values().fold(0u64, |a, b| a.saturating_add(*b)),
            lost_events_by_cpu: lost_by_cpu,
            skipped_unknown_events: facts.skipped_unknown_events,
            skipped_unknown_blocks: facts.skipped_unknown_blocks,
            clock_inversions: facts.stats.clock_inversions,
            cpu_samples: facts.samples_by_thread.values().sum(),
            counters: facts.stats.counters.clone(),
            frame_names: facts.frame_names,
            trigger: facts.stats.trigger,
            model_anomalies: model.stats().anomalies(),
            model_stats: model.stats().clone(),
            top_cpu: top(&rows, sel.top, |r| r.cpu_ns),
            top_blocked: top(&rows, sel.top, |r| r.blocked_ns),
            others_partial: top(&others, sel.top, |r| r.cpu_ns),
            salvaged: header.salvaged,
            notes: crate::trace_notes(header),
            recording_notes: crate::recording_notes(header),
            cgroups: super::cgroups::summarize(&quota, facts.tables),
            affinity: super::cgroups::affinity(&quota),
            pressure: super::cgroups::pressure(facts.tables),
        }
    }
}

/// The `n` rows with the largest non-zero `key`, largest first, ties by tid.
fn top(rows: &[ThreadRow], n: usize, key: fn(&ThreadRow) -> u64) -> Vec<ThreadRow> {
    let mut idx: Vec<usize> = (0..rows.len()).filter(|&i| key(&rows[i]) > 0).collect();
    idx.sort_by_key(|&i| (std::cmp::Reverse(key(&rows[i])), rows[i].tid));
    idx.into_iter().take(n).map(|i| rows[i].clone()).collect()
}
