//! Cascaded re-distribution of waiting time onto edges (wPerf §3.2.2, Figure 4).
//!
//! For every wait `w` of entity A ended by B: add `w.end - w.start` to edge A → B;
//! then every wait of B that overlaps `[w.start, w.end)`, clipped to that interval, is
//! cascaded the same way (recursively). Nested waits are thereby counted once per
//! thread they hold up, which is the point: optimizing them helps all of those threads.
//!
//! Two guards the paper's pseudocode leaves implicit: the walk is an explicit stack
//! (no recursion limit), and a wait already on the current cascade path is not entered
//! again. Without the latter a cycle of mutual waits overlapping in time would cascade
//! forever without the interval shrinking. A walk from one root that exceeds a step
//! budget is cut and counted, so a pathological trace cannot stall the analysis.
//!
//! Roots are processed per entity in parallel; each worker sums into its own edge map
//! and the maps are added together. Sums of integers do not depend on the order, so
//! the result is the same for any number of workers.

use crate::entities::Entity;
use crate::stacks::{self, StackWeights};
use crate::waker::WakerKey;
use rayon::prelude::*;
use std::collections::HashMap;

/// Steps one root wait may take before its cascade is cut.
const STEP_BUDGET: u64 = 1 << 20;

/// What one edge accumulated.
#[derive(Clone, Debug, Default)]
pub(crate) struct EdgeAcc {
    /// Total weight, cascaded contributions included (ns).
    pub(crate) ns: u64,
    /// Waits ended directly by the target (not cascaded).
    pub(crate) direct_waits: u64,
    /// Their total length (ns).
    pub(crate) direct_ns: u64,
    /// Weight by the stack where the waiting thread blocked.
    pub(crate) wait_stacks: StackWeights,
    /// Weight by the stack of the waking context.
    pub(crate) waker_stacks: StackWeights,
}

impl EdgeAcc {
    pub(crate) fn merge(&mut self, o: EdgeAcc) {
        self.ns += o.ns;
        self.direct_waits += o.direct_waits;
        self.direct_ns += o.direct_ns;
        stacks::merge(&mut self.wait_stacks, o.wait_stacks);
        stacks::merge(&mut self.waker_stacks, o.waker_stacks);
    }
}

/// Edges from an entity to a waker, before vertex numbering.
pub(crate) type EdgeMap = HashMap<(u32, WakerKey), EdgeAcc>;

/// Counters of the cascade.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CascadeStats {
    /// Weight additions made.
    pub(crate) steps: u64,
    /// Re-entries of a wait already on the path, skipped.
    pub(crate) cycles_cut: u64,
    /// Roots whose cascade hit the step budget.
    pub(crate) budget_cut: u64,
}

impl CascadeStats {
    fn add(&mut self, o: CascadeStats) {
        self.steps += o.steps;
        self.cycles_cut += o.cycles_cut;
        self.budget_cut += o.budget_cut;
    }
}

struct Frame {
    ent: u32,
    idx: u32,
    lo: u64,
    hi: u64,
    next: usize,
    stop: usize,
}

/// Run the cascade from every wait of every entity.
pub(crate) fn run(entities: &[Entity]) -> (EdgeMap, CascadeStats) {
    entities
        .par_iter()
        .enumerate()
        .fold(
            || (EdgeMap::new(), CascadeStats::default()),
            |(mut edges, mut stats), (e, ent)| {
                let mut path = Vec::new();
                for i in 0..ent.waits.len() {
                    cascade_root(
                        entities, e as u32, i as u32, &mut edges, &mut stats, &mut path,
                    );
                }
                (edges, stats)
            },
        )
        .reduce(
            || (EdgeMap::new(), CascadeStats::default()),
            |(mut a, mut sa), (b, sb)| {
                if a.len() < b.len() {
                    return merge_maps(b, a, sb, sa);
                }
                for (k, v) in b {
                    a.entry(k).or_default().merge(v);
                }
                sa.add(sb);
                (a, sa)
            },
        )
}

fn merge_maps(
    mut a: EdgeMap,
    b: EdgeMap,
    mut sa: CascadeStats,
    sb: CascadeStats,
) -> (EdgeMap, CascadeStats) {
    for (k, v) in b {
        a.entry(k).or_default().merge(v);
    }
    sa.add(sb);
    (a, sa)
}

/// Figure 4's `cascade(w)` for one root wait, iteratively.
fn cascade_root(
    entities: &[Entity],
    ent: u32,
    idx: u32,
    edges: &mut EdgeMap,
    stats: &mut CascadeStats,
    path: &mut Vec<Frame>,
) {
    path.clear();
    let Some(root) = entities[ent as usize].waits.get(idx as usize) else {
        return;
    };
    let acc = edges.entry((ent, root.waker)).or_default();
    acc.direct_waits += 1;
    acc.direct_ns += root.len();
    let mut steps = 0u64;
    visit(entities, ent, idx, root.start, root.end, edges, path);
    steps += 1;
    while let Some(top) = path.last_mut() {
        if top.next >= top.stop {
            path.pop();
            continue;
        }
        let j = top.next;
        top.next += 1;
        let (lo, hi) = (top.lo, top.hi);
        let WakerKey::Entity(b) = entities[top.ent as usize].waits[top.idx as usize].waker else {
            continue;
        };
        if path.iter().any(|f| f.ent == b && f.idx as usize == j) {
            stats.cycles_cut += 1;
            continue;
        }
        if steps >= STEP_BUDGET {
            stats.budget_cut += 1;
            break;
        }
        let w = &entities[b as usize].waits[j];
        visit(
            entities,
            b,
            j as u32,
            w.start.max(lo),
            w.end.min(hi),
            edges,
            path,
        );
        steps += 1;
    }
    stats.steps += steps;
}

/// Lines 8-9 of Figure 4: add the clipped length to the edge, then push the waker's
/// overlapping waits to be visited.
fn visit(
    entities: &[Entity],
    ent: u32,
    idx: u32,
    lo: u64,
    hi: u64,
    edges: &mut EdgeMap,
    path: &mut Vec<Frame>,
) {
    let w = &entities[ent as usize].waits[idx as usize];
    let ns = hi.saturating_sub(lo);
    let acc = edges.entry((ent, w.waker)).or_default();
    acc.ns += ns;
    stacks::add(&mut acc.wait_stacks, w.wait_stack, ns);
    // A sampled waker stack also carries the time of the short waits left without one.
    stacks::add(
        &mut acc.waker_stacks,
        w.waker_stack,
        ns.saturating_mul(u64::from(w.waker_weight)),
    );
    let (next, stop) = match w.waker {
        WakerKey::Entity(b) => {
            let ws = &entities[b as usize].waits;
            let first = ws.partition_point(|x| x.end <= lo);
            let stop = ws.partition_point(|x| x.start < hi).max(first);
            (first, stop)
        }
        _ => (0, 0),
    };
    path.push(Frame {
        ent,
        idx,
        lo,
        hi,
        next,
        stop,
    });
}
