//! Unit tests on hand-built traces, one module per rule.

mod cascade;
mod devices;
mod hand;
mod idle;
mod jvm;
mod knots;
mod leaks;
mod markers;
mod merging;
mod pauses;
mod pipeline;
mod reverse;
mod saturated;

use crate::{Findings, Options, VertexId, analyze};
use causeway_format::{Header, Tables, Tid};
use causeway_model::Trace;
use causeway_testkit::synth::Synth;

/// Tables naming threads: `(tid, tgid, comm)`.
pub(super) fn tables(names: &[(u32, u32, &str)]) -> Tables {
    causeway_testkit::synth::named_tables(names)
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
