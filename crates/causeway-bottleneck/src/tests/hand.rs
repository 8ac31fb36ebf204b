//! Hand-built graphs (vertices with their times, edges with their weights) for the
//! rules that work on the graph alone.

use crate::findings::{Edge, EdgeId, EdgeKind, Vertex, VertexId, VertexKind};
use crate::knots::Limits;
use causeway_format::DurationNs;

const S: u64 = 1_000_000_000;

pub(crate) fn vertex(
    id: usize,
    kind: VertexKind,
    running: f64,
    runnable: f64,
    waiting: f64,
) -> Vertex {
    let ns = |s: f64| DurationNs((s * S as f64) as u64);
    Vertex {
        id: VertexId(id),
        kind,
        threads: Vec::new(),
        running: ns(running),
        runnable: ns(runnable),
        waiting: ns(waiting),
        on_cpu: None,
    }
}

/// Edges `(from, to, kind, weight s, direct s)`, heaviest first as the analysis
/// numbers them.
pub(crate) fn edges(list: &[(usize, usize, EdgeKind, f64, f64)]) -> Vec<Edge> {
    let mut list = list.to_vec();
    list.sort_by(|a, b| b.3.total_cmp(&a.3));
    list.iter()
        .enumerate()
        .map(|(i, &(from, to, kind, weight, direct))| Edge {
            id: EdgeId(i),
            from: VertexId(from),
            to: VertexId(to),
            kind,
            weight: DurationNs((weight * S as f64) as u64),
            direct_waits: 100,
            direct: DurationNs((direct * S as f64) as u64),
            wait_stacks: Vec::new(),
            waker_stacks: Vec::new(),
        })
        .collect()
}

pub(crate) fn limits() -> Limits {
    Limits {
        min_edge_ns: 1_000_000,
        threshold_ns: 860_000_000,
        leak_fraction: 0.05,
    }
}

/// `v` standing for `n` threads (tids 1..=n).
pub(crate) fn with_threads(mut v: Vertex, n: u32) -> Vertex {
    v.threads = (1..=n)
        .map(|t| crate::findings::ThreadRef {
            tid: causeway_format::Tid(t),
            tgid: None,
            comm: "w".into(),
            title: None,
            goroutine: None,
        })
        .collect();
    v
}

/// A store loop (vertex 0) that appends and fsyncs every message, 16 connection
/// handlers (1) waiting for it, 16 clients (2) waiting for their handlers, the disk (3);
/// the store loop runs `stage_running` seconds. With [`STORE_LOOP_EDGES`] the store loop
/// waits a little for its input (0 -> 2, heavy only by cascading), every edge of the
/// loop is over the threshold, so refinement keeps the whole loop, and the store loop
/// is busy 92% of its time (running 1 s), the others at most 5%.
pub(crate) fn store_loop_vertices(stage_running: f64) -> Vec<Vertex> {
    vec![
        vertex(0, VertexKind::Thread, stage_running, 1.0, 2.2),
        vertex(1, VertexKind::SimilarThreads, 0.2, 3.0, 60.8),
        vertex(2, VertexKind::SimilarThreads, 0.1, 0.1, 63.8),
        vertex(3, VertexKind::Disk { device: None }, 0.0, 0.0, 0.0),
    ]
}

/// The store loop's edges (see [`store_loop_vertices`]).
pub(crate) const STORE_LOOP_EDGES: &[(usize, usize, EdgeKind, f64, f64)] = &[
    (1, 0, EdgeKind::Wait, 360.0, 60.0),
    (2, 1, EdgeKind::Wait, 300.0, 63.0),
    (0, 3, EdgeKind::Wait, 165.0, 1.8),
    (0, 2, EdgeKind::Wait, 18.0, 0.4),
    (3, 0, EdgeKind::DeviceIdle, 2.8, 0.0),
];
