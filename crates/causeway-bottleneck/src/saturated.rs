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
//! **A program as the stage.** A server's stage is often more than one vertex: its
//! connection threads, split by what they do, wait on each other where they meet (a
//! log that one of them flushes for all, a lock), and a load generator's threads wait
//! on each other too (a worker on the goroutine that reads its replies). No single
//! vertex is then busy enough, and the load generator stayed in the knot (Apache Derby
//! under 16 client threads: its connection threads busy 22 % of their time on CPU and
//! 70 % waiting on each other; Caddy under `hey`). So, when no vertex stands out, the
//! knot's thread vertices are grouped by program (vertices whose threads share a
//! process are one group, so a pre-forking server's processes merged into one vertex
//! stay one group), and a group's busy share counts its waits on its own members as
//! neither busy nor slack: busy = (running + runnable + waits on the knot's devices)
//! / (its threads' time − waits inside the group). In a closed loop the requests sit
//! at the program that limits it, so the others mostly wait on it: a group busy at
//! least [`GROUP_SATURATED`] and at least [`MARGIN`] times as busy as every other
//! group is the stage (Derby 0.76 against the client's 0.10, and 0.59 against 0.18 in
//! a recording where both were runnable a sixth of the time; Caddy 0.73 against hey's
//! 0.08). The bound is lower than a vertex's because a program's share is diluted by
//! threads that wait for work by design (an accept loop, a reader per connection);
//! the margin is the same, so that two evenly loaded programs stay one knot. Within
//! the group, a single vertex may then stand out in turn.
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

/// Share of its threads' time (its waits on itself left out) a saturated program is
/// busy.
pub(crate) const GROUP_SATURATED: f64 = 0.5;

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

/// The busy share of the group of thread vertices `g` (see the module doc).
fn group_busy_share(g: &[u32], vertices: &[Vertex], edges: &[Edge], arcs: &[Arc]) -> f64 {
    let direct = |pick: &dyn Fn(&Arc) -> bool| -> u64 {
        arcs.iter()
            .filter(|a| g.contains(&a.from) && pick(a))
            .filter_map(|a| edges.get(a.id).map(|e| e.direct.0))
            .sum()
    };
    let inside = direct(&|a| g.contains(&a.to));
    let service = direct(&|a| matches!(vertices[a.to as usize].kind, VertexKind::Disk { .. }));
    let (mut work, mut life) = (service, 0u64);
    for &v in g {
        let x = &vertices[v as usize];
        work += x.running.0 + x.runnable.0;
        life += x.running.0 + x.runnable.0 + x.waiting.0;
    }
    let life = life.saturating_sub(inside);
    if life == 0 {
        return 0.0;
    }
    (work as f64 / life as f64).min(1.0)
}

/// The knot's thread vertices grouped by program: two vertices whose threads share a
/// process are one group. Vertices with no process known are groups of their own.
fn programs(r: &Refined, vertices: &[Vertex]) -> Vec<Vec<u32>> {
    let mut groups: Vec<(BTreeSet<u32>, Vec<u32>)> = Vec::new();
    for &v in &r.vertices {
        let x = &vertices[v as usize];
        if !x.kind.is_thread() {
            continue;
        }
        let pids: BTreeSet<u32> = x
            .threads
            .iter()
            .filter_map(|t| t.tgid.map(|p| p.0))
            .collect();
        let mut merged = (pids.clone(), vec![v]);
        groups.retain(|(gp, gv)| {
            let joins = !pids.is_empty() && !gp.is_disjoint(&pids);
            if joins {
                merged.0.extend(gp.iter().copied());
                merged.1.extend(gv.iter().copied());
            }
            !joins
        });
        groups.push(merged);
    }
    groups
        .into_iter()
        .map(|(_, mut g)| {
            g.sort_unstable();
            g
        })
        .collect()
}

/// The busiest of `shares` if it stands out: at least `bound`, and `margin` times as
/// busy as the next.
fn stands_out<T: Clone>(
    mut shares: Vec<(T, f64)>,
    bound: f64,
    margin: f64,
) -> Option<(T, f64, f64)> {
    if shares.len() < 2 {
        return None;
    }
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (stage, busy) = shares[0].clone();
    let others_busy = shares[1].1;
    (busy >= bound && busy >= margin * others_busy).then_some((stage, busy, others_busy))
}

/// Split a complex knot at its saturated stage, if it has one (see the module doc): a
/// vertex, else a program, and within a program a vertex again.
pub(crate) fn split(r: &Refined, vertices: &[Vertex], edges: &[Edge]) -> Option<Refined> {
    if let Some(one) = split_at_vertex(r, vertices, edges) {
        return Some(one);
    }
    let program = split_at_program(r, vertices, edges)?;
    match split_at_vertex(&program, vertices, edges) {
        // The loop's rest is what the program cut off, and what the vertex did.
        Some(mut one) => {
            let (cut, inner) = (program.closed_loop.as_ref(), one.closed_loop.as_mut());
            if let (Some(cut), Some(inner)) = (cut, inner) {
                inner.others.extend(cut.others.iter().copied());
                inner.others.sort_unstable();
                inner.edges.extend(cut.edges.iter().copied());
                inner.edges.sort_unstable();
            }
            Some(one)
        }
        None => Some(program),
    }
}

fn split_at_vertex(r: &Refined, vertices: &[Vertex], edges: &[Edge]) -> Option<Refined> {
    if r.shape != Shape::Complex {
        return None;
    }
    // Ties by vertex id (the sort is stable over the knot's ordered vertices).
    let shares: Vec<(u32, f64)> = r
        .vertices
        .iter()
        .filter(|&&v| vertices[v as usize].kind.is_thread())
        .map(|&v| (v, busy_share(v, vertices, edges, &r.arcs)))
        .collect();
    let (stage, busy, others_busy) = stands_out(shares, SATURATED, MARGIN)?;
    Some(keep_stage(r, vertices, &[stage], busy, others_busy))
}

fn split_at_program(r: &Refined, vertices: &[Vertex], edges: &[Edge]) -> Option<Refined> {
    if r.shape != Shape::Complex {
        return None;
    }
    let shares: Vec<(Vec<u32>, f64)> = programs(r, vertices)
        .into_iter()
        .map(|g| {
            let b = group_busy_share(&g, vertices, edges, &r.arcs);
            (g, b)
        })
        .collect();
    let (stage, busy, others_busy) = stands_out(shares, GROUP_SATURATED, MARGIN)?;
    Some(keep_stage(r, vertices, &stage, busy, others_busy))
}

/// The knot cut down to `stage` and the devices it waits on; the rest of the loop
/// listed as waiting on it.
fn keep_stage(
    r: &Refined,
    vertices: &[Vertex],
    stage: &[u32],
    busy: f64,
    others_busy: f64,
) -> Refined {
    let mut keep: BTreeSet<u32> = r
        .arcs
        .iter()
        .filter(|a| stage.contains(&a.from) && vertices[a.to as usize].kind.is_io())
        .map(|a| a.to)
        .collect();
    keep.extend(stage.iter().copied());
    let (arcs, cut): (Vec<Arc>, Vec<Arc>) = r
        .arcs
        .iter()
        .partition(|a| keep.contains(&a.from) && keep.contains(&a.to));
    let kept: Vec<u32> = keep.into_iter().collect();
    let shape = crate::refine::shape(&kept, &arcs);
    let mut cut_ids: Vec<usize> = cut.iter().map(|a| a.id).collect();
    cut_ids.sort_unstable();
    Refined {
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
    }
}
