//! The saturated stage of a closed loop.
//!
//! When a load generator is recorded with the server it drives, the wait-for graph is
//! one cycle through both: the clients wait for the replies, the server's connection
//! handlers wait for the clients' next requests. Every edge of that cycle is heavy
//! (each of 16 clients waits the whole recording), so refinement, which trims light
//! edges, leaves the whole loop as one complex knot, the load generator included.
//!
//! Operational analysis of closed queueing networks says which member limits such a
//! loop: the stage whose servers are busy nearly all the time (the throughput can never
//! exceed that stage's rate), while the other stages, mostly waiting on the loop, have
//! slack. A thread vertex is *busy* while its threads run, are runnable, or wait for a
//! device of the knot (the device's service is part of the stage's own work, as an
//! `fsync` is of a log writer's); it has slack while it waits for other threads. In a
//! complex knot left by refinement, a thread vertex busy at least [`SATURATED`] of its
//! threads' time, and at least [`MARGIN`] times as busy as every other thread vertex
//! of the knot, is the saturated stage: the knot becomes that vertex with the devices
//! it waits on, and the rest of the loop is listed as waiting on it.
//!
//! Why not by edge weight: the stage's waits for input are short (0.34 s of 4.3 s for
//! NATS's stream loop), but while it waits, every member of the loop waits on it, and
//! cascading counts each of them once (17.9 s), far above the refinement threshold.
//! Limits: a loop whose stages are evenly loaded has no saturated stage and stays one
//! knot; a thread that spins (busy without doing the loop's work) would look saturated
//! unless the busy-wait annotation removed its spinning.

use crate::findings::{Edge, Vertex, VertexKind};
use crate::graph::Arc;
use crate::refine::{LoopCut, Refined, Shape};
use std::collections::BTreeSet;

/// Share of its threads' time a saturated stage is busy.
pub(crate) const SATURATED: f64 = 0.75;
/// How many times busier than every other thread vertex of the knot it is.
pub(crate) const MARGIN: f64 = 2.0;

/// The busy share of thread vertex `v` in a knot with `arcs`.
fn busy_share(v: u32, vertices: &[Vertex], edges: &[Edge], arcs: &[Arc]) -> f64 {
    let x = &vertices[v as usize];
    let life = (x.running.0 + x.runnable.0 + x.waiting.0) as f64;
    if life <= 0.0 {
        return 0.0;
    }
    let service: u64 = arcs
        .iter()
        .filter(|a| a.from == v && matches!(vertices[a.to as usize].kind, VertexKind::Disk { .. }))
        .filter_map(|a| edges.get(a.id).map(|e| e.direct.0))
        .sum();
    ((x.running.0 + x.runnable.0 + service) as f64 / life).min(1.0)
}

/// Split a complex knot at its saturated stage, if it has one (see the module doc).
pub(crate) fn split(r: &Refined, vertices: &[Vertex], edges: &[Edge]) -> Option<Refined> {
    if r.shape != Shape::Complex {
        return None;
    }
    let mut shares: Vec<(u32, f64)> = r
        .vertices
        .iter()
        .filter(|&&v| vertices[v as usize].kind.is_thread())
        .map(|&v| (v, busy_share(v, vertices, edges, &r.arcs)))
        .collect();
    if shares.len() < 2 {
        return None;
    }
    shares.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let (stage, busy) = shares[0];
    let others_busy = shares[1].1;
    if busy < SATURATED || busy < MARGIN * others_busy {
        return None;
    }
    let mut keep: BTreeSet<u32> = r
        .arcs
        .iter()
        .filter(|a| a.from == stage && vertices[a.to as usize].kind.is_io())
        .map(|a| a.to)
        .collect();
    keep.insert(stage);
    let (arcs, cut): (Vec<Arc>, Vec<Arc>) = r
        .arcs
        .iter()
        .partition(|a| keep.contains(&a.from) && keep.contains(&a.to));
    let kept: Vec<u32> = keep.into_iter().collect();
    let shape = crate::refine::shape(&kept, &arcs);
    let mut cut_ids: Vec<usize> = cut.iter().map(|a| a.id).collect();
    cut_ids.sort_unstable();
    Some(Refined {
        shape,
        removed: r.removed.clone(),
        closed_loop: Some(LoopCut {
            others: r
                .vertices
                .iter()
                .copied()
                .filter(|v| !kept.contains(v))
                .collect(),
            edges: cut_ids,
            busy,
            others_busy,
        }),
        vertices: kept,
        arcs,
    })
}
