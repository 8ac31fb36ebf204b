//! Small leaks out of a knot, trimmed before knots are identified.
//!
//! A knot is a strongly connected component with no edge leaving it. On real servers
//! the component that holds the work often has a few light edges leaving it: a worker
//! that now and then sleeps on a timer, a thread that waits a moment for a runtime's
//! safepoint thread. With one such edge the component is no knot at all, and the graph's
//! only terminal is whatever the leak points at (a timer sink); wPerf trims low-impact
//! edges until knots appear (§3.2.2, §4.3), but only inside a knot.
//!
//! Rule: in a component with edges inside it, the edges leaving it are removed (and
//! listed) when the component's own threads waited on each of them directly for no
//! longer than the refinement threshold and all of them together weigh (cascaded) at
//! most `leak_fraction` of the weight inside the component. The threshold is compared
//! with the direct waiting, not the cascaded weight: a cascaded weight counts a nested
//! wait once per thread held up behind it, so a 30 ms wait of a sync thread for a
//! runtime's safepoint, with 16 network threads queued behind the sync thread, weighs
//! 0.46 s and would pass a 0.42 s threshold although the loop spent 30 ms outside.
//! The direct waiting is taken per thread of the waiting vertex (the caller's `direct`):
//! the threshold is a share of one timeline, a merged vertex's waiting a sum over its
//! threads' timelines.
//! Reason: an edge's weight is the waiting (cascaded) of the component's threads that
//! the outside vertex ended, so even if the outside vertex never made them wait, their
//! waiting would shrink by at most the leaving weight; when that is a few percent of
//! the waiting they do on each other, the component behaves as a closed loop, and its
//! members are what limits it. Limits: the fraction compares cascaded sums, which count
//! a nested wait once per thread held up, on both sides alike; an exit waited on
//! directly for longer than the threshold is never trimmed, however heavy the inside, so a component that really
//! waits on something outside still leads there; a component whose only exits are
//! trimmed becomes a knot even if the work it waits on outside is, in total, large in
//! seconds (it is listed, with its weight, beside the knot).

use crate::graph::{Arc, scc};

/// Edges trimmed from one component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Leak {
    /// The component's vertices, sorted.
    pub(crate) vertices: Vec<u32>,
    /// Ids of the trimmed edges, heaviest first.
    pub(crate) edges: Vec<usize>,
}

/// The arcs left after trimming small leaks, and the leaks trimmed.
pub(crate) fn trim(
    vertices: &[u32],
    arcs: &[Arc],
    weight: &dyn Fn(usize) -> u64,
    direct: &dyn Fn(usize) -> u64,
    threshold_ns: u64,
    leak_fraction: f64,
) -> (Vec<Arc>, Vec<Leak>) {
    let comp = scc(vertices, arcs);
    let of: std::collections::HashMap<u32, usize> =
        vertices.iter().copied().zip(comp.iter().copied()).collect();
    let ncomp = comp.iter().copied().max().map_or(0, |m| m + 1);
    let mut inside = vec![0u128; ncomp];
    let mut leaving: Vec<Vec<Arc>> = vec![Vec::new(); ncomp];
    for a in arcs {
        let (Some(&cu), Some(&cv)) = (of.get(&a.from), of.get(&a.to)) else {
            continue;
        };
        if cu == cv {
            inside[cu] += u128::from(weight(a.id));
        } else {
            leaving[cu].push(*a);
        }
    }
    let mut cut: std::collections::HashSet<usize> = std::collections::HashSet::new();
    let mut leaks = Vec::new();
    for c in 0..ncomp {
        let out = &leaving[c];
        if inside[c] == 0 || out.is_empty() {
            continue;
        }
        let total: u128 = out.iter().map(|a| u128::from(weight(a.id))).sum();
        let small = out.iter().all(|a| direct(a.id) <= threshold_ns)
            && (total as f64) <= leak_fraction * inside[c] as f64;
        if !small {
            continue;
        }
        let mut edges: Vec<usize> = out.iter().map(|a| a.id).collect();
        edges.sort_by_key(|&id| (std::cmp::Reverse(weight(id)), id));
        cut.extend(edges.iter().copied());
        let mut vs: Vec<u32> = vertices
            .iter()
            .zip(&comp)
            .filter(|&(_, &x)| x == c)
            .map(|(&v, _)| v)
            .collect();
        vs.sort_unstable();
        leaks.push(Leak {
            vertices: vs,
            edges,
        });
    }
    let kept = arcs
        .iter()
        .filter(|a| !cut.contains(&a.id))
        .copied()
        .collect();
    leaks.sort_by(|a, b| a.vertices.cmp(&b.vertices));
    (kept, leaks)
}
