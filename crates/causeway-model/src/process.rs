//! The process tree over time: which processes existed, their parents, executables,
//! threads, and when they started and ended.
//!
//! Built once at the end from the trace's process table, the fork and exec events seen,
//! and the finished threads. Per-process totals are left to analyses (sum the threads).

use crate::thread::Thread;
use causeway_format::{StringId, Tables, Tgid, ThreadIndex, Tid, Timestamp};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The program a process ran from `since` on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessImage {
    /// From when (the trace start or earlier if from the tables).
    pub since: Timestamp,
    /// Path of the executable, empty if unknown.
    pub exe: String,
    /// Command line, empty if unknown.
    pub cmdline: String,
}

/// One process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessNode {
    /// The process id.
    pub tgid: Tgid,
    /// Its parent, if known.
    pub parent: Option<Tgid>,
    /// Name of its main thread (latest known), empty if unknown.
    pub comm: String,
    /// Programs it ran, oldest first (a new entry per exec).
    pub images: Vec<ProcessImage>,
    /// When it was created, if its fork was seen.
    pub started: Option<Timestamp>,
    /// When its last known thread exited, if all its known threads exited.
    pub exited: Option<Timestamp>,
    /// Its threads seen in the trace, by tid.
    pub threads: Vec<Tid>,
    /// Processes it created (or that name it as parent), by tgid.
    pub children: Vec<Tgid>,
}

impl ProcessNode {
    /// Latest executable path, empty if unknown.
    pub fn exe(&self) -> &str {
        self.images.last().map_or("", |i| i.exe.as_str())
    }
}

/// Process facts collected while streaming events.
#[derive(Debug, Default)]
pub(crate) struct ProcessEvents {
    /// `(time, parent, child)` for forks that created a new process.
    pub(crate) forks: Vec<(Timestamp, Tgid, Tgid)>,
    /// `(time, process, filename)` for execs.
    pub(crate) execs: Vec<(Timestamp, Tgid, StringId)>,
}

#[derive(Default)]
struct Draft {
    parent: Option<Tgid>,
    images: Vec<ProcessImage>,
    started: Option<Timestamp>,
    threads: Vec<Tid>,
    exits: Vec<Option<Timestamp>>,
    leader_comm: Option<String>,
}

/// Assemble the process tree, sorted by tgid.
pub(crate) fn build_processes(
    tables: &Tables,
    index: &ThreadIndex<'_>,
    events: &ProcessEvents,
    threads: &[Thread],
) -> Vec<ProcessNode> {
    let mut drafts: BTreeMap<Tgid, Draft> = BTreeMap::new();
    let mut rows: Vec<_> = tables.processes.iter().collect();
    rows.sort_by_key(|p| p.since);
    for p in rows {
        if p.tgid.0 == 0 {
            continue;
        }
        let d = drafts.entry(p.tgid).or_default();
        if p.parent.is_some() {
            d.parent = p.parent;
        }
        d.images.push(ProcessImage {
            since: p.since,
            exe: tables.string(p.exe).to_string(),
            cmdline: tables.string(p.cmdline).to_string(),
        });
    }
    for &(ts, parent, child) in &events.forks {
        let d = drafts.entry(child).or_default();
        d.parent = Some(parent);
        d.started = Some(ts);
    }
    for &(ts, tgid, filename) in &events.execs {
        let d = drafts.entry(tgid).or_default();
        let exe = tables.string(filename).to_string();
        let dup = d.images.iter().any(|i| i.since == ts && i.exe == exe);
        if !dup {
            // An exec replaces the command line too; the table row for it (if any)
            // carries the new one.
            d.images.push(ProcessImage {
                since: ts,
                exe,
                cmdline: String::new(),
            });
        }
    }
    for t in threads {
        let Some(tgid) = t.tgid else { continue };
        if tgid.0 == 0 {
            continue;
        }
        let d = drafts.entry(tgid).or_default();
        if !d.threads.contains(&t.tid) {
            d.threads.push(t.tid);
        }
        d.exits.push(t.exited);
        if t.tid.0 == tgid.0 && !t.comm.is_empty() {
            d.leader_comm = Some(t.comm.clone());
        }
    }
    let mut children: BTreeMap<Tgid, Vec<Tgid>> = BTreeMap::new();
    for (&tgid, d) in &drafts {
        if let Some(p) = d.parent {
            children.entry(p).or_default().push(tgid);
        }
    }
    drafts
        .into_iter()
        .map(|(tgid, mut d)| {
            d.images.sort_by_key(|i| i.since);
            d.threads.sort();
            let exited = if !d.exits.is_empty() && d.exits.iter().all(Option::is_some) {
                d.exits.iter().flatten().max().copied()
            } else {
                None
            };
            let comm = d
                .leader_comm
                .or_else(|| {
                    index
                        .comm_at(Tid(tgid.0), Timestamp(u64::MAX))
                        .map(str::to_string)
                })
                .unwrap_or_default();
            ProcessNode {
                tgid,
                parent: d.parent,
                comm,
                images: d.images,
                started: d.started,
                exited,
                threads: d.threads,
                children: children.remove(&tgid).unwrap_or_default(),
            }
        })
        .collect()
}
