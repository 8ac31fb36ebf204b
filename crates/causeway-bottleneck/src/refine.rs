//! Knot refinement (wPerf §3.2.2, §4.3): trim low-impact edges until a knot splits,
//! find the knots of what is left, and repeat.
//!
//! A knot is final when it is a single vertex, a simple cycle, or its lightest edge
//! weighs more than the threshold. Otherwise its lightest edges are removed one at a
//! time (ties broken by edge id, so results are deterministic) until it falls apart
//! into pieces with no edge between them (wPerf: "until the knot becomes
//! disconnected") or every remaining edge exceeds the threshold. If what is left is no
//! longer strongly connected, its knots (and sinks, which are single vertices) are
//! refined in turn; otherwise it is final. Splitting on weak rather than strong
//! connectivity lets two sub-knots joined by light edges in both directions both
//! survive: cutting only one direction would leave one of them waiting on the other
//! and hide it. Self-loops are never removed: removing one cannot
//! split a knot, and after merging they carry the contention the user must see.

use crate::graph::{Arc, Terminal, strongly_connected, terminals, weakly_connected};

/// The shape of a final knot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One vertex (with a self-loop, or left alone by refinement).
    Single,
    /// Vertices on one cycle, each waiting for exactly one other.
    Cycle,
    /// Anything else (refinement stopped because every edge exceeds the threshold).
    Complex,
}

/// A saturated stage standing out of a closed loop.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LoopCut {
    /// The loop's other vertices, which wait on it.
    pub(crate) others: Vec<u32>,
    /// The loop's edges not kept in the knot.
    pub(crate) edges: Vec<usize>,
    /// The stage's busy share.
    pub(crate) busy: f64,
    /// The highest busy share among the other thread vertices.
    pub(crate) others_busy: f64,
}

/// A knot after refinement.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Refined {
    pub(crate) vertices: Vec<u32>,
    pub(crate) arcs: Vec<Arc>,
    pub(crate) shape: Shape,
    /// Edges removed on the way here, in removal order.
    pub(crate) removed: Vec<usize>,
    /// The closed loop it stood out of as the saturated stage (`saturated`).
    pub(crate) closed_loop: Option<LoopCut>,
}

pub(crate) fn shape(vertices: &[u32], arcs: &[Arc]) -> Shape {
    if vertices.len() <= 1 {
        return Shape::Single;
    }
    let mut out_deg = std::collections::HashMap::new();
    let mut n = 0;
    for a in arcs.iter().filter(|a| a.from != a.to) {
        *out_deg.entry(a.from).or_insert(0usize) += 1;
        n += 1;
    }
    if n == vertices.len() && out_deg.len() == vertices.len() && out_deg.values().all(|&d| d == 1) {
        Shape::Cycle
    } else {
        Shape::Complex
    }
}

/// Refine one knot. `weight` gives an edge's weight by id.
pub(crate) fn refine(
    vertices: Vec<u32>,
    arcs: Vec<Arc>,
    weight: &dyn Fn(usize) -> u64,
    threshold_ns: u64,
) -> Vec<Refined> {
    let mut out = Vec::new();
    let mut work = vec![(vertices, arcs, Vec::<usize>::new())];
    while let Some((vs, mut arcs, mut removed)) = work.pop() {
        let s = shape(&vs, &arcs);
        let lightest = |arcs: &[Arc]| {
            arcs.iter()
                .filter(|a| a.from != a.to)
                .min_by_key(|a| (weight(a.id), a.id))
                .copied()
        };
        let done = |arcs: &[Arc]| lightest(arcs).is_none_or(|a| weight(a.id) > threshold_ns);
        if s != Shape::Complex || done(&arcs) {
            out.push(Refined {
                vertices: vs,
                arcs,
                shape: s,
                removed,
                closed_loop: None,
            });
            continue;
        }
        // Trim until the knot falls apart (ignoring edge directions) or every edge
        // left is heavier than the threshold.
        while let Some(a) = lightest(&arcs) {
            if weight(a.id) > threshold_ns {
                break;
            }
            arcs.retain(|x| x.id != a.id);
            removed.push(a.id);
            if !weakly_connected(&vs, &arcs) {
                break;
            }
        }
        if strongly_connected(&vs, &arcs) {
            let s = shape(&vs, &arcs);
            out.push(Refined {
                vertices: vs,
                arcs,
                shape: s,
                removed,
                closed_loop: None,
            });
            continue;
        }
        for t in terminals(&vs, &arcs).into_iter().rev() {
            match t {
                Terminal::Knot { vertices, arcs } => work.push((vertices, arcs, removed.clone())),
                Terminal::Sink(v) => work.push((vec![v], Vec::new(), removed.clone())),
            }
        }
    }
    out.sort_by(|a, b| a.vertices.cmp(&b.vertices));
    out
}
