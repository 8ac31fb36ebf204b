//! Track ids and descriptors: processes, threads and their lanes, CPUs.

use super::types::{Lane, Timeline, Track, TrackKind};
use causeway_model::{SegmentState, Trace};
use std::collections::{BTreeMap, BTreeSet};

const PROCESS: u64 = 1 << 56;
const THREAD: u64 = 2 << 56;
const LANE: u64 = 3 << 56;
const CPU: u64 = 4 << 56;
/// First id of the analysis tracks.
pub(super) const ANALYSIS: u64 = 5 << 56;

/// The process id and tid each thread of the model is shown under, by thread index.
pub(super) struct ThreadIds {
    pub(super) pid_tid: Vec<(u32, u32)>,
}

pub(super) fn thread_uuid(index: u32) -> u64 {
    THREAD | u64::from(index)
}

pub(super) fn lane_uuid(index: u32, lane: Lane) -> u64 {
    let n = match lane {
        Lane::State => 0,
        Lane::Syscalls => 1,
        Lane::Calls => 2,
    };
    LANE | (u64::from(index) << 2) | n
}

pub(super) fn cpu_uuid(cpu: u32) -> u64 {
    CPU | u64::from(cpu)
}

/// Add every process, thread, lane and CPU track; returns the pid/tid of each thread.
pub(super) fn add(trace: &Trace, tl: &mut Timeline) -> ThreadIds {
    let model = trace.model();
    let pid_tid: Vec<(u32, u32)> = model
        .threads()
        .map(|t| (t.tgid.map_or(t.tid.0, |g| g.0), t.tid.0))
        .collect();
    // Processes: the model's, plus any pid a thread is shown under.
    let mut procs: BTreeMap<u32, (String, Vec<String>)> = BTreeMap::new();
    for p in model.processes() {
        let title = trace.facts().title(p.tgid).map(str::to_string);
        let cmdline = title
            .or_else(|| p.images.last().map(|i| i.cmdline.clone()))
            .map(|c| c.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default();
        procs.insert(p.tgid.0, (p.comm.clone(), cmdline));
    }
    for (t, &(pid, _)) in model.threads().zip(&pid_tid) {
        procs
            .entry(pid)
            .or_insert_with(|| (t.comm.clone(), Vec::new()));
    }
    // The container, pod or unit a process's cgroup names, beside its name
    // (`redis-server [container 3f2a9c1b0d4e]`): Perfetto's process list is where a
    // user looks for which service a process belongs to.
    let tables = trace.tables();
    let owner_of: BTreeMap<u32, String> = tables
        .process_cgroups()
        .into_iter()
        .filter_map(|(g, p)| Some((g.0, causeway_format::cgroups::owner(p)?.short())))
        .collect();
    for (pid, (comm, cmdline)) in procs {
        let name = match owner_of.get(&pid) {
            Some(o) => format!("{comm} [{o}]"),
            None => comm,
        };
        tl.tracks.push(Track {
            uuid: PROCESS | u64::from(pid),
            parent: None,
            kind: TrackKind::Process { pid, cmdline },
            name,
        });
    }
    for (i, (t, &(pid, tid))) in model.threads().zip(&pid_tid).enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let uuid = thread_uuid(index);
        tl.tracks.push(Track {
            uuid,
            parent: Some(PROCESS | u64::from(pid)),
            kind: TrackKind::Thread { pid, tid },
            name: t.comm.clone(),
        });
        for lane in [Lane::State, Lane::Syscalls, Lane::Calls] {
            tl.tracks.push(Track {
                uuid: lane_uuid(index, lane),
                parent: Some(uuid),
                kind: TrackKind::Lane { pid, tid, lane },
                name: lane.name().to_string(),
            });
        }
    }
    // CPUs the model accounts for, and any a thread ran on.
    let mut cpus: BTreeSet<u32> = model.cpus().iter().map(|c| c.cpu.0).collect();
    for t in model.threads() {
        for s in &t.segments {
            if let SegmentState::Running { cpu } = s.state {
                cpus.insert(cpu.0);
            }
        }
    }
    for cpu in cpus {
        tl.tracks.push(Track {
            uuid: cpu_uuid(cpu),
            parent: None,
            kind: TrackKind::Cpu { cpu },
            name: format!("CPU {cpu}"),
        });
    }
    ThreadIds { pid_tid }
}
