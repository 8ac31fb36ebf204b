//! Knots and sinks of the final graph: background knots set apart until none is left,
//! the remaining knots refined and ranked, each sink with its chain and upstream cycles,
//! and the plain off-CPU ranking to compare them with.
//!
//! Rankings compare weights summed in floating-point seconds, edge by edge (or vertex
//! by vertex), as the analysis always has, so the order of near-ties does not change.

use crate::findings::{
    ClosedLoop, Edge, EdgeId, Knot, OffCpu, Pause, Sink, Vertex, VertexId, VertexKind, cpu_fraction,
};
use crate::graph::{Arc, Terminal, terminals};
use crate::leaks;
use crate::pauses;
use crate::refine::{Refined, Shape, refine};
use crate::upstream;
use causeway_format::DurationNs;
use std::collections::BTreeSet;

/// What the graph's terminal components are.
pub(crate) struct Terminals {
    /// Knots after refinement, most important first.
    pub(crate) knots: Vec<Knot>,
    /// Background knots, set apart.
    pub(crate) background: Vec<Knot>,
    /// Sinks, most waited for first.
    pub(crate) sinks: Vec<Sink>,
    /// Timer sinks only background threads wait on, most waited for first.
    pub(crate) background_sinks: Vec<Sink>,
    /// Brief stoppers, whose incoming edges were set aside.
    pub(crate) pauses: Vec<Pause>,
}

fn secs(d: DurationNs) -> f64 {
    d.0 as f64 / 1e9
}

/// Where knots and sinks are looked for: the noise floor, the refinement threshold and
/// the leak fraction (`Options`), in nanoseconds and as a share.
pub(crate) struct Limits {
    pub(crate) min_edge_ns: u64,
    pub(crate) threshold_ns: u64,
    pub(crate) leak_fraction: f64,
}

/// Arcs A -> B, inside a component that has exits, that are rare wake-ups the other
/// way of a heavy B -> A: lighter than `fraction` of it. A server's network thread
/// waits a little for its clients' next requests (68 ms in 4 s of Kafka's pipeline)
/// while the clients wait on it most of the time; that little closes a cycle with the
/// clients and with everything the clients' runtime waits on, and the component has
/// exits (the runtime's timers), so the pipeline's own cycle is never a knot. Only
/// components with exits are opened this way: a knot keeps its asymmetric cycles (a
/// collector its workers wait on, which waits on them a little) for refinement.
fn rare_reverse(vertices: &[u32], arcs: &[Arc], edges: &[Edge], fraction: f64) -> BTreeSet<usize> {
    let comp = crate::graph::scc(vertices, arcs);
    let of: std::collections::HashMap<u32, usize> =
        vertices.iter().copied().zip(comp.iter().copied()).collect();
    let exits: BTreeSet<usize> = arcs
        .iter()
        .filter_map(|a| {
            let (cu, cv) = (of.get(&a.from)?, of.get(&a.to)?);
            (cu != cv).then_some(*cu)
        })
        .collect();
    let weight: std::collections::HashMap<(u32, u32), u64> = arcs
        .iter()
        .filter_map(|a| Some(((a.from, a.to), edges.get(a.id)?.weight.0)))
        .collect();
    arcs.iter()
        .filter(|a| a.from != a.to)
        .filter(|a| {
            of.get(&a.from)
                .is_some_and(|c| exits.contains(c) && of.get(&a.to) == Some(c))
        })
        .filter(|a| {
            let w = weight.get(&(a.from, a.to)).copied().unwrap_or(0);
            weight
                .get(&(a.to, a.from))
                .is_some_and(|&back| (w as f64) < fraction * back as f64)
        })
        .map(|a| a.id)
        .collect()
}

/// Find knots and sinks among edges of at least `min_edge_ns`: a few milliseconds of
/// waiting on something outside a cycle must not hide the cycle. Small leaks out of a
/// component are trimmed first (`leaks`).
pub(crate) fn find(
    vertices: &[Vertex],
    edges: &[Edge],
    limits: &Limits,
    duration: DurationNs,
) -> Terminals {
    let Limits {
        min_edge_ns,
        threshold_ns,
        leak_fraction,
    } = *limits;
    let weight = |id: usize| edges.get(id).map_or(0, |e| e.weight.0);
    // Direct waiting per thread of the waiting vertex: the threshold it is held against
    // is a share of one timeline (the recording's length), while a merged vertex's
    // direct waiting is summed over its threads' timelines (16 goroutines that each
    // wait 74 ms on `nic lo` sum to 1.2 s, over a 0.9 s threshold).
    let direct = |id: usize| {
        edges.get(id).map_or(0, |e| {
            let n = vertices.get(e.from.0).map_or(1, |v| v.threads.len().max(1));
            e.direct.0 / n as u64
        })
    };
    let stoppers = pauses::find(vertices, edges);
    let paused: BTreeSet<usize> = stoppers.iter().flat_map(|s| s.edges.clone()).collect();
    let floor: Vec<Arc> = edges
        .iter()
        .filter(|e| e.weight.0 >= min_edge_ns.max(1) && !paused.contains(&e.id.0))
        .map(|e| Arc {
            id: e.id.0,
            from: e.from.0 as u32,
            to: e.to.0 as u32,
        })
        .collect();
    let all_vs: BTreeSet<u32> = floor.iter().flat_map(|a| [a.from, a.to]).collect();
    let all_vs: Vec<u32> = all_vs.into_iter().collect();
    let (arcs, trimmed) = leaks::trim(
        &all_vs,
        &floor,
        &weight,
        &direct,
        threshold_ns,
        leak_fraction,
    );
    let mut trimmed: Vec<usize> = trimmed.into_iter().flat_map(|l| l.edges).collect();
    // Components that still have exits: without their rare reverse arcs, a cycle inside
    // may be one without exits (then its own small leaks are trimmed as above).
    let reverse = rare_reverse(&all_vs, &arcs, edges, leak_fraction);
    let arcs = if reverse.is_empty() {
        arcs
    } else {
        let rest: Vec<Arc> = arcs
            .into_iter()
            .filter(|a| !reverse.contains(&a.id))
            .collect();
        let (rest, leaked) = leaks::trim(
            &all_vs,
            &rest,
            &weight,
            &direct,
            threshold_ns,
            leak_fraction,
        );
        trimmed.extend(reverse.iter().copied());
        trimmed.extend(leaked.into_iter().flat_map(|l| l.edges));
        rest
    };
    let (alive, background, final_terms) = set_background_apart(&arcs, vertices, duration);
    // The graph left after background knots are removed: sinks' chains stay in it.
    let live_vs: Vec<u32> = alive.iter().copied().collect();
    let live = live_arcs(&arcs, &alive);
    let (refined, mut sinks) = refine_terminals(
        final_terms,
        vertices,
        edges,
        threshold_ns,
        (&live_vs, &live),
    );
    sinks.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.vertex.cmp(&b.1.vertex)));
    let in_knot: BTreeSet<u32> = refined.iter().flat_map(|r| r.vertices.clone()).collect();
    let (mut background_sinks, mut sinks): (Vec<Sink>, Vec<Sink>) = sinks
        .into_iter()
        .map(|(_, s)| s)
        .partition(|s| background_sink(s, vertices, &live, &in_knot, duration));
    // With no knot and no other sink there is no worker to prefer: the sleeps are the
    // program's own deliberate delays (a loop that sleeps), and they are the answer;
    // but never a brief stopper's sleeps (`pauses`), which hold up nothing for long.
    if refined.is_empty() && sinks.is_empty() {
        let stopper_vs: BTreeSet<u32> = stoppers.iter().map(|s| s.vertex).collect();
        let (stopped, own): (Vec<Sink>, Vec<Sink>) = std::mem::take(&mut background_sinks)
            .into_iter()
            .partition(|s| {
                live.iter()
                    .any(|a| a.to == s.vertex.0 as u32 && stopper_vs.contains(&a.from))
            });
        sinks = own;
        background_sinks = stopped;
    }
    let cut = Cut {
        trimmed: &trimmed,
        paused: &paused,
    };
    Terminals {
        knots: to_knots(refined, vertices, edges, &cut),
        background: to_knots(background, vertices, edges, &cut),
        sinks,
        background_sinks,
        pauses: stoppers
            .into_iter()
            .map(|s| Pause {
                vertex: VertexId(s.vertex as usize),
                edges: s.edges.into_iter().map(EdgeId).collect(),
                waiter_threads: s.waiter_threads,
            })
            .collect(),
    }
}

/// Refine each terminal knot; sinks get their chains. Refinement may leave one vertex
/// with no edge of its own (no self-loop): nothing inside it waits, so it is no knot
/// but a sink its former members wait for (a disk whose idle edges were the light
/// ones: "the device may be saturated", with who waits).
fn refine_terminals(
    terms: Vec<Terminal>,
    vertices: &[Vertex],
    edges: &[Edge],
    threshold_ns: u64,
    (live_vs, live): (&[u32], &[Arc]),
) -> (Vec<Refined>, Vec<(f64, Sink)>) {
    let weight = |id: usize| edges.get(id).map_or(0, |e| e.weight.0);
    let mut refined: Vec<Refined> = Vec::new();
    let mut sinks: Vec<(f64, Sink)> = Vec::new();
    for t in terms {
        match t {
            Terminal::Knot {
                vertices: kv,
                arcs: ka,
            } => {
                for r in refine_knot(kv, ka, vertices, edges, threshold_ns) {
                    match r.vertices[..] {
                        [v] if r.arcs.iter().all(|a| a.from != a.to) && r.closed_loop.is_none() => {
                            sinks.push(sink(v, edges, live_vs, live, &weight));
                        }
                        _ => refined.push(r),
                    }
                }
            }
            Terminal::Sink(v) => sinks.push(sink(v, edges, live_vs, live, &weight)),
        }
    }
    (refined, sinks)
}

/// Refine a knot, then let a closed loop's saturated stage stand out (`saturated`).
fn refine_knot(
    kv: Vec<u32>,
    ka: Vec<Arc>,
    vertices: &[Vertex],
    edges: &[Edge],
    threshold_ns: u64,
) -> Vec<Refined> {
    let weight = |id: usize| edges.get(id).map_or(0, |e| e.weight.0);
    refine(kv, ka, &weight, threshold_ns)
        .into_iter()
        .map(|r| crate::saturated::split(&r, vertices, edges).unwrap_or(r))
        .collect()
}

/// A thread vertex running at least this share of the recording is busy: its own work
/// carries throughput, so its sleeps are not background.
const BUSY_FRACTION: f64 = 0.2;

/// A worker: a thread vertex whose progress carries the recorded work. It is in a knot,
/// or another vertex waits for it (a client, a device idling for its requests, a thread
/// it wakes), or it is busy on CPU. Anything else that waits only for timers is a
/// background sleeper: a flusher, a checkpointer, a housekeeping loop.
fn is_worker(
    v: u32,
    vertices: &[Vertex],
    live: &[Arc],
    in_knot: &BTreeSet<u32>,
    duration: DurationNs,
) -> bool {
    let vx = &vertices[v as usize];
    in_knot.contains(&v)
        || live.iter().any(|a| a.to == v && a.from != v)
        || secs(vx.running) >= BUSY_FRACTION * secs(duration)
}

/// wPerf's background rule (§3.3) applied to sinks: a timer sink is background when no
/// worker waits on it. A timer is never a thread's own execution limit, so a sleep only
/// matters when it holds up work.
fn background_sink(
    s: &Sink,
    vertices: &[Vertex],
    live: &[Arc],
    in_knot: &BTreeSet<u32>,
    duration: DurationNs,
) -> bool {
    if !matches!(vertices[s.vertex.0].kind, VertexKind::Timer) {
        return false;
    }
    let sink = s.vertex.0 as u32;
    let mut waiters = live
        .iter()
        .filter(|a| a.to == sink && a.from != sink)
        .map(|a| a.from);
    waiters.all(|w| {
        vertices[w as usize].kind.is_thread() && !is_worker(w, vertices, live, in_knot, duration)
    })
}

fn live_arcs(arcs: &[Arc], alive: &BTreeSet<u32>) -> Vec<Arc> {
    arcs.iter()
        .filter(|a| alive.contains(&a.from) && alive.contains(&a.to))
        .copied()
        .collect()
}

/// Remove background knots until none is left. Returns the vertices left, the
/// background knots and the terminal components of what is left.
fn set_background_apart(
    arcs: &[Arc],
    vertices: &[Vertex],
    duration: DurationNs,
) -> (BTreeSet<u32>, Vec<Refined>, Vec<Terminal>) {
    let mut alive: BTreeSet<u32> = arcs.iter().flat_map(|a| [a.from, a.to]).collect();
    let mut background: Vec<Refined> = Vec::new();
    loop {
        let vs: Vec<u32> = alive.iter().copied().collect();
        let terms = terminals(&vs, &live_arcs(arcs, &alive));
        let mut found = false;
        for t in &terms {
            if let Terminal::Knot {
                vertices: kv,
                arcs: ka,
            } = t
                && is_background(kv, vertices, duration)
            {
                found = true;
                for v in kv {
                    alive.remove(v);
                }
                background.push(Refined {
                    vertices: kv.clone(),
                    arcs: ka.clone(),
                    shape: Shape::Complex,
                    removed: Vec::new(),
                    closed_loop: None,
                });
            }
        }
        if !found {
            return (alive, background, terms);
        }
    }
}

/// A sink with its ranking key: the weight of every edge into it, in seconds.
fn sink(
    v: u32,
    edges: &[Edge],
    live_vs: &[u32],
    live: &[Arc],
    weight: &dyn Fn(usize) -> u64,
) -> (f64, Sink) {
    let into_v = || edges.iter().filter(|e| e.to.0 == v as usize);
    let key: f64 = into_v().map(|e| secs(e.weight)).sum();
    let incoming = DurationNs(into_v().map(|e| e.weight.0).sum());
    let mut into: Vec<EdgeId> = live
        .iter()
        .filter(|a| a.to == v)
        .map(|a| EdgeId(a.id))
        .collect();
    into.sort_unstable();
    let sink = Sink {
        vertex: VertexId(v as usize),
        incoming,
        edges: into,
        chain: upstream::chain(v, live, weight)
            .into_iter()
            .map(|x| VertexId(x as usize))
            .collect(),
        upstream_cycles: upstream::cycles_into(v, live_vs, live, weight)
            .into_iter()
            .map(|c| c.into_iter().map(|x| VertexId(x as usize)).collect())
            .collect(),
    };
    (key, sink)
}

/// wPerf's background heuristic: no I/O pseudo thread and under one CPU in total, with
/// one guard: the knot's threads were runnable (queued for a CPU) under a quarter of the
/// recording. In a closed knot some member is always running or runnable (every wait
/// is ended by a member), so running under one CPU there means either threads that
/// mostly idle between short hand-offs (background work) or threads starved of CPU;
/// workers serialized by one lock on a machine with few cores run under one CPU
/// together and are runnable much of the rest, and are not background.
fn is_background(kv: &[u32], vertices: &[Vertex], duration: DurationNs) -> bool {
    let ids: Vec<VertexId> = kv.iter().map(|&v| VertexId(v as usize)).collect();
    let io = ids.iter().any(|&v| vertices[v.0].kind.is_io());
    let cpu = cpu_fraction(vertices, &ids, duration);
    let runnable: f64 = ids.iter().map(|&v| secs(vertices[v.0].runnable)).sum();
    !io && cpu < 1.0
        && runnable < 0.25 * secs(duration)
        && ids.iter().all(|&v| vertices[v.0].kind.is_thread())
}

/// Edges taken out before knots were identified: small leaks and waits on brief
/// stoppers.
struct Cut<'a> {
    trimmed: &'a [usize],
    paused: &'a BTreeSet<usize>,
}

/// Knots from refined components, heaviest first, each with the trimmed leaks and the
/// set-aside waits on brief stoppers that left its vertices.
fn to_knots(refined: Vec<Refined>, vertices: &[Vertex], edges: &[Edge], cut: &Cut) -> Vec<Knot> {
    let mut knots: Vec<(f64, Knot)> = refined
        .into_iter()
        .map(|r| {
            let mut es: Vec<EdgeId> = r.arcs.iter().map(|a| EdgeId(a.id)).collect();
            es.sort_unstable();
            let vs: Vec<VertexId> = r.vertices.iter().map(|&v| VertexId(v as usize)).collect();
            let key: f64 = es.iter().map(|&e| secs(edges[e.0].weight)).sum();
            let knot = Knot {
                weight: DurationNs(es.iter().map(|&e| edges[e.0].weight.0).sum()),
                has_io: vs.iter().any(|&v| vertices[v.0].kind.is_io()),
                needs_cpu: DurationNs(vs.iter().map(|&v| vertices[v.0].runnable.0).sum()),
                edges: es,
                shape: r.shape,
                leaks: cut
                    .trimmed
                    .iter()
                    .filter(|&&e| vs.contains(&edges[e].from))
                    .map(|&e| EdgeId(e))
                    .collect(),
                paused: cut
                    .paused
                    .iter()
                    .filter(|&&e| vs.contains(&edges[e].from))
                    .map(|&e| EdgeId(e))
                    .collect(),
                removed_edges: r.removed.into_iter().map(EdgeId).collect(),
                closed_loop: r.closed_loop.map(|c| ClosedLoop {
                    vertices: c.others.iter().map(|&v| VertexId(v as usize)).collect(),
                    edges: c.edges.into_iter().map(EdgeId).collect(),
                    busy: c.busy,
                    others_busy: c.others_busy,
                }),
                vertices: vs,
            };
            (key, knot)
        })
        .collect();
    knots.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.vertices.cmp(&b.1.vertices)));
    knots.into_iter().map(|(_, k)| k).collect()
}

/// Up to five thread vertices by waiting plus runnable time, longest first.
pub(crate) fn longest_off_cpu(vertices: &[Vertex]) -> Vec<OffCpu> {
    let mut off: Vec<(f64, OffCpu)> = vertices
        .iter()
        .filter(|v| v.kind.is_thread())
        .map(|v| {
            let off = OffCpu {
                vertex: v.id,
                off_cpu: DurationNs(v.waiting.0 + v.runnable.0),
            };
            (secs(v.waiting) + secs(v.runnable), off)
        })
        .filter(|(s, _)| *s > 0.0)
        .collect();
    off.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.vertex.cmp(&b.1.vertex)));
    off.truncate(5);
    off.into_iter().map(|(_, o)| o).collect()
}
