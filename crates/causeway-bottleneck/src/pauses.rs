//! Brief stops: a thread that many threads wait for, each time briefly, for a small
//! part of their waiting. A managed runtime's safepoint thread (a JVM's VM Thread, a
//! stop-the-world GC, Go's sysmon preempting goroutines) stops every other thread for a
//! moment and then sleeps on a timer; the `group-commit` zoo workload has one.
//!
//! Such a thread is waited on, so by the worker rule it carries work, and the timer it
//! sleeps on became the answer when no knot was found ("runtime waits for timers while
//! others wait for it"), or its edges kept the loop that does the work from being a
//! knot. But the waits on it are not what limits the program: take it away and its
//! waiters' waiting shrinks by a few percent at most, while their waits on each other
//! and on devices stay.
//!
//! Rule, by the shape of the waits on a thread vertex, not by its name: it is a brief
//! stopper when at least `MIN_WAITER_THREADS` threads of other vertices wait on it
//! directly, its direct waits last `MAX_MEAN_WAIT` or less on average, and they are at
//! most `MAX_SHARE` of all the waiting its waiters do. The edges into it are set aside
//! before knots and sinks are found (listed on the knots they leave, and the stopper in
//! the report's "brief stops"), so it is neither a knot member nor a worker through
//! them, and a timer only it sleeps on is background. Limits: a runtime thread whose
//! stops are long (a GC pause of tens of milliseconds) or a large share of its waiters'
//! waiting is not a brief stopper, so it stays in the graph and is the knot or sink when
//! the program spends its time waiting for it; a server thread that answers many
//! clients quickly is no brief stopper either, as the clients' waiting is mostly on it.
//!
//! A managed runtime's pauses (`jvm`: a JVM's own threads, as one vertex per process)
//! are held to the same measure of length and share, but need no three waiters and
//! are never "fed": their threads are known by what they run, and the program's
//! threads asking the VM Thread for a collection do not make it a stage of the work.
//! Long or frequent pauses fail the measure and stay a sink: then they are the answer.
//!
//! A stage of the program's work is never a brief stopper, however short each wait on
//! it: a thread whose own waiting is mostly ended by other threads of the program is
//! fed work by them (a sync thread woken by the threads that queue requests for it,
//! which every request passes through). A stopper is not fed: between its stops it
//! sleeps on a timer (a safepoint interval, a monitor's tick) or waits for something
//! outside the program. Why: the JVM pipeline of the socket-causality issue (a sync
//! thread that batches, appends and fdatasyncs, waited on 0.48 ms at a time by nine
//! threads, 2.7 % of their waiting) was set aside as a brief stop, and the knot {sync,
//! disk} that its fix (no fsync, 1.30× throughput) confirmed was never found.

use crate::findings::{Edge, EdgeKind, Vertex, VertexKind};
use std::collections::BTreeSet;

/// Fewest threads (summed over the waiting vertices) that make "many waiters".
pub(crate) const MIN_WAITER_THREADS: usize = 3;
/// Longest mean direct wait of a brief stop, in nanoseconds: a safepoint is well under a
/// millisecond to a few milliseconds; 10 ms is a scheduler's time slice or more.
pub(crate) const MAX_MEAN_WAIT: u64 = 10_000_000;
/// Largest share of the waiters' waiting that the waits on a brief stopper may be.
pub(crate) const MAX_SHARE: f64 = 0.05;

/// A brief stopper and the waits on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stopper {
    /// Its vertex.
    pub(crate) vertex: u32,
    /// Wait edges into it from other vertices, by id, sorted.
    pub(crate) edges: Vec<usize>,
    /// Threads of the vertices that wait on it.
    pub(crate) waiter_threads: usize,
}

/// The brief stoppers among `vertices` (module doc), by vertex. One pass over the
/// edges: a system-wide graph has thousands of vertices.
pub(crate) fn find(vertices: &[Vertex], edges: &[Edge]) -> Vec<Stopper> {
    let mut into: Vec<Vec<&Edge>> = vec![Vec::new(); vertices.len()];
    let mut from: Vec<Vec<&Edge>> = vec![Vec::new(); vertices.len()];
    for e in edges {
        if e.kind == EdgeKind::Wait && e.from != e.to && e.to.0 < vertices.len() {
            into[e.to.0].push(e);
        }
        if e.kind == EdgeKind::Wait && e.from.0 < vertices.len() {
            from[e.from.0].push(e);
        }
    }
    vertices
        .iter()
        .zip(into.iter().zip(&from))
        .filter(|(v, (into, _))| (v.kind.is_thread() || is_runtime(v)) && !into.is_empty())
        .filter_map(|(v, (into, from))| stopper(v.id.0 as u32, vertices, into, from))
        .collect()
}

/// True when most of `v`'s own direct waiting was ended by other thread vertices: work
/// flows into it from the program (module doc).
fn fed_by_threads(v: u32, vertices: &[Vertex], from: &[&Edge]) -> bool {
    let total: u64 = from.iter().map(|e| e.direct.0).sum();
    let by_threads: u64 = from
        .iter()
        .filter(|e| {
            e.to.0 != v as usize && vertices.get(e.to.0).is_some_and(|t| t.kind.is_thread())
        })
        .map(|e| e.direct.0)
        .sum();
    total > 0 && by_threads * 2 > total
}

/// A managed runtime's pauses (`jvm`): known to be stops by what their threads run.
fn is_runtime(v: &Vertex) -> bool {
    matches!(v.kind, VertexKind::RuntimePauses { .. })
}

fn stopper(v: u32, vertices: &[Vertex], into: &[&Edge], from: &[&Edge]) -> Option<Stopper> {
    let runtime = is_runtime(&vertices[v as usize]);
    if !runtime && fed_by_threads(v, vertices, from) {
        return None;
    }
    let waiters: BTreeSet<usize> = into.iter().map(|e| e.from.0).collect();
    let waiter_threads: usize = waiters.iter().map(|&w| vertices[w].threads.len()).sum();
    let waits: u64 = into.iter().map(|e| e.direct_waits).sum();
    let direct: u64 = into.iter().map(|e| e.direct.0).sum();
    let waiting: u64 = waiters.iter().map(|&w| vertices[w].waiting.0).sum();
    // A runtime's pauses need no crowd of waiters to be told from a server thread:
    // what their threads run says so.
    let brief = (runtime || waiter_threads >= MIN_WAITER_THREADS)
        && waits > 0
        && direct / waits <= MAX_MEAN_WAIT
        && (direct as f64) <= MAX_SHARE * waiting as f64;
    brief.then(|| {
        let mut ids: Vec<usize> = into.iter().map(|e| e.id.0).collect();
        ids.sort_unstable();
        Stopper {
            vertex: v,
            edges: ids,
            waiter_threads,
        }
    })
}
