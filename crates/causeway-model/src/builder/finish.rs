//! Closing the timelines and assembling the [`Model`].

use super::{MAX_HEADER_CPUS, ModelBuilder};
use crate::irq::InterruptSource;
use crate::model::Model;
use crate::process::build_processes;
use crate::segment::TimeSpan;
use crate::thread::{Thread, ThreadIdentity};
use crate::totals::ThreadTotals;
use crate::tracker::ThreadBuild;
use causeway_format::{Cpu, Tables};
use std::collections::HashMap;

impl ModelBuilder<'_> {
    /// Close all timelines at the last event time and assemble the model.
    pub fn finish(mut self) -> Model {
        let start = self.trace_start();
        let end = self.now.max(start);
        let mut builds: Vec<ThreadBuild> = self.threads.into_values();
        builds.append(&mut self.retired);
        let tables = self.tables;
        let sends = std::mem::take(&mut self.sends).by_sender_flow(&tables.flows);
        super::socket::resolve(&tables.flows, &sends, &mut builds, &mut self.stats);
        super::socket::resolve_go(&tables.flows, &sends, &mut self.go_events);
        let mut threads: Vec<Thread> = builds
            .into_iter()
            .map(|mut b| {
                b.close(end, false);
                finish_thread(tables, b)
            })
            .collect();
        threads.sort_by_key(|t| (t.tid, t.span().map(|s| s.start), t.created));
        let mut interrupts = self.irqs.finish(end);
        interrupts.sort_by_key(|i| (i.start, i.cpu, i.end));
        let block_requests = self.block.finish(&mut self.stats);
        if self.cpu_count <= MAX_HEADER_CPUS {
            for n in 0..self.cpu_count {
                self.cpus.get_or_insert(Cpu(n), start);
            }
        }
        let mut cpus: Vec<_> = self.cpus.into_sorted().map(|c| c.finish(end)).collect();
        let mut by_cpu: HashMap<Cpu, usize> = HashMap::new();
        for (i, c) in cpus.iter().enumerate() {
            by_cpu.insert(c.cpu, i);
        }
        for i in &interrupts {
            if let Some(c) = by_cpu.get(&i.cpu).and_then(|&n| cpus.get_mut(n)) {
                match i.source {
                    InterruptSource::Irq { .. } => c.irq += i.duration(),
                    InterruptSource::Softirq { .. } => c.softirq += i.duration(),
                }
            }
        }
        let processes = build_processes(tables, &self.table_threads, &self.proc_events, &threads);
        Model {
            span: self.start.map(|s| TimeSpan { start: s, end }),
            threads,
            processes,
            cpus,
            interrupts,
            block_requests,
            losses: self.losses,
            stats: self.stats,
            wake_links: Default::default(),
            go_events: self.go_events,
            goroutines: Vec::new(),
        }
    }
}

/// The program a loader-started process ran, for a thread named after the loader
/// (see [`crate::loader`]), from the process's last command line.
fn loader_program(tables: &Tables, tgid: causeway_format::Tgid, comm: &str) -> Option<String> {
    if !crate::loader::is_loader(comm) {
        return None;
    }
    let p = tables.processes.iter().rev().find(|p| p.tgid == tgid)?;
    crate::loader::program_name(comm, tables.string(p.cmdline))
}

/// Resolve names and compute totals.
fn finish_thread(tables: &Tables, b: ThreadBuild) -> Thread {
    let mut rows = b.identity;
    rows.sort_by_key(|r| r.since);
    let mut identity: Vec<ThreadIdentity> = Vec::with_capacity(rows.len());
    let mut comm_id = None;
    let mut tgid = None;
    for r in rows {
        // A row without a name or process keeps the previous one.
        comm_id = r.comm.or(comm_id);
        tgid = r.tgid.or(tgid);
        let mut comm = comm_id
            .map(|id| tables.string(id).to_string())
            .unwrap_or_default();
        if let Some(name) = tgid.and_then(|g| loader_program(tables, g, &comm)) {
            comm = name;
        }
        let same = identity
            .last()
            .is_some_and(|l| l.tgid == tgid && l.comm == comm);
        if !same {
            identity.push(ThreadIdentity {
                since: r.since,
                tgid,
                comm,
            });
        }
    }
    let totals = ThreadTotals {
        wakeups: b.wakeups,
        wakeups_not_blocked: b.wakeups_not_blocked,
        first_seen: b.first_seen,
        last_seen: b.last_seen,
        ..b.segment_totals
    };
    Thread {
        tid: b.tid,
        tgid: identity.last().and_then(|i| i.tgid),
        comm: identity.last().map(|i| i.comm.clone()).unwrap_or_default(),
        identity,
        created: b.created,
        parent_tid: b.parent_tid,
        exited: b.exited,
        segments: b.segments,
        annotations: b.annotations,
        totals,
        data_wakes: b.data_wakes,
    }
}
