//! Unit tests on hand-built traces, one module per rule.

mod cascade;
mod devices;
mod knots;
mod markers;
mod merging;
mod pipeline;

use crate::{Findings, Options, VertexId, analyze};
use causeway_format::{Header, Tables, Tid};
use causeway_model::Trace;
use causeway_model::synth::Synth;

/// Tables naming threads: `(tid, tgid, comm)`.
pub(super) fn tables(names: &[(u32, u32, &str)]) -> Tables {
    causeway_model::synth::named_tables(names)
}

/// Add a string to the tables, returning its id.
pub(super) fn string(t: &mut Tables, s: &str) -> u32 {
    t.strings.push(s.to_string());
    t.strings.len() as u32 - 1
}

pub(super) fn run(s: &Synth, tables: &Tables, ncpu: u32, opts: &Options) -> Findings {
    let trace = Trace::from_events(tables.clone(), Header::synthetic(ncpu), &s.events());
    analyze(&trace, opts).expect("analysis runs")
}

pub(super) fn no_merge() -> Options {
    Options {
        merge: false,
        ..Options::default()
    }
}

/// Vertex id of the vertex holding thread `tid`.
pub(super) fn v(r: &Findings, tid: u32) -> VertexId {
    r.vertices
        .iter()
        .find(|v| v.threads.iter().any(|t| t.tid == Tid(tid)))
        .unwrap_or_else(|| panic!("no vertex for tid {tid}"))
        .id
}

/// Weight in ns of edge `from -> to` (vertex ids), 0 if absent.
pub(super) fn w(r: &Findings, from: VertexId, to: VertexId) -> u64 {
    r.edges
        .iter()
        .find(|e| e.from == from && e.to == to)
        .map_or(0, |e| e.weight.0)
}

/// Thread `tid`, pinned to `cpu`, blocks at `from` until `waker` (on `waker_cpu`) wakes
/// it at `to`; it is back on its CPU one nanosecond later.
pub(super) fn block(
    s: &mut Synth,
    (tid, cpu): (u32, u32),
    from: u64,
    (waker, waker_cpu): (u32, u32),
    to: u64,
) {
    s.switch(from, cpu, tid, causeway_format::TaskState::INTERRUPTIBLE, 0)
        .wake_by(to, waker_cpu, waker, tid)
        .switch(to + 1, cpu, 0, causeway_format::TaskState::RUNNABLE, tid);
}
