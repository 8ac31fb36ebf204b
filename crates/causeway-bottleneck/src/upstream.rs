//! What leads into a sink: the heaviest chain of waits ending there, and the cycles
//! upstream of it.
//!
//! wPerf stops at the knot or sink. A sink such as the timer is correct but not
//! actionable on its own: "threads sleep" does not say that a server thread sleeps while
//! every client waits for it. The chain says who waits for whom on the way there, and
//! the upstream cycles show the request/response loops that feed it (a client waiting
//! for the loopback device that waits for the client's requests).

use crate::graph::{Arc, scc};
use std::collections::BTreeSet;

/// The heaviest chain of arcs ending at `sink`: starting from the sink, repeatedly take
/// the heaviest arc into the current vertex from a vertex not yet on the chain.
/// Returned from the first waiter to the sink; just `[sink]` if nothing waits for it.
pub(crate) fn chain(sink: u32, arcs: &[Arc], weight: &dyn Fn(usize) -> u64) -> Vec<u32> {
    let mut path = vec![sink];
    let mut on: BTreeSet<u32> = BTreeSet::from([sink]);
    let mut cur = sink;
    loop {
        let next = arcs
            .iter()
            .filter(|a| a.to == cur && !on.contains(&a.from))
            .max_by(|a, b| weight(a.id).cmp(&weight(b.id)).then(b.from.cmp(&a.from)));
        let Some(a) = next else { break };
        cur = a.from;
        on.insert(cur);
        path.push(cur);
    }
    path.reverse();
    path
}

/// Strongly connected components with a cycle (two or more vertices, or one with a
/// self-loop) from which `target` is reachable, not counting the target's own
/// component. Each is sorted; the list is ordered by the weight of its inner arcs,
/// heaviest first.
pub(crate) fn cycles_into(
    target: u32,
    vertices: &[u32],
    arcs: &[Arc],
    weight: &dyn Fn(usize) -> u64,
) -> Vec<Vec<u32>> {
    let comp = scc(vertices, arcs);
    let comp_of = |v: u32| vertices.iter().position(|&x| x == v).map(|i| comp[i]);
    let Some(target_comp) = comp_of(target) else {
        return Vec::new();
    };
    // Vertices that reach the target: walk arcs backwards.
    let mut reach: BTreeSet<u32> = BTreeSet::from([target]);
    let mut todo = vec![target];
    while let Some(v) = todo.pop() {
        for a in arcs.iter().filter(|a| a.to == v) {
            if reach.insert(a.from) {
                todo.push(a.from);
            }
        }
    }
    let ncomp = comp.iter().copied().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); ncomp];
    for (i, &c) in comp.iter().enumerate() {
        if reach.contains(&vertices[i]) {
            members[c].push(vertices[i]);
        }
    }
    let mut out: Vec<(u64, Vec<u32>)> = Vec::new();
    for (c, mut vs) in members.into_iter().enumerate() {
        if c == target_comp || vs.is_empty() {
            continue;
        }
        vs.sort_unstable();
        let inner: Vec<&Arc> = arcs
            .iter()
            .filter(|a| vs.binary_search(&a.from).is_ok() && vs.binary_search(&a.to).is_ok())
            .collect();
        if inner.is_empty() {
            continue;
        }
        out.push((inner.iter().map(|a| weight(a.id)).sum(), vs));
    }
    out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    out.into_iter().map(|(_, vs)| vs).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arc(id: usize, from: u32, to: u32) -> Arc {
        Arc { id, from, to }
    }

    /// Clients (0) ⇄ loopback (1) → server (2) → timer (3), plus a light 0 → 2 arc.
    fn client_server() -> (Vec<u32>, Vec<Arc>, Vec<u64>) {
        let arcs = vec![
            arc(0, 0, 1),
            arc(1, 1, 0),
            arc(2, 1, 2),
            arc(3, 2, 3),
            arc(4, 0, 2),
        ];
        (vec![0, 1, 2, 3], arcs, vec![90, 6, 15, 16, 1])
    }

    #[test]
    fn chain_follows_the_heaviest_arc_backwards() {
        let (_, arcs, w) = client_server();
        let weight = |id: usize| w[id];
        // Into 3 only from 2; into 2 the loopback (15) beats the clients (1); into 1
        // the clients.
        assert_eq!(chain(3, &arcs, &weight), vec![0, 1, 2, 3]);
        assert_eq!(chain(0, &[], &weight), vec![0]);
    }

    #[test]
    fn chain_never_revisits_a_vertex() {
        let arcs = vec![arc(0, 0, 1), arc(1, 1, 0), arc(2, 1, 2)];
        let weight = |_: usize| 1;
        assert_eq!(chain(2, &arcs, &weight), vec![0, 1, 2]);
    }

    #[test]
    fn cycles_upstream_of_the_target_only() {
        let (vs, mut arcs, mut w) = client_server();
        // A cycle 5 ⇄ 6 that does not reach the timer, and a self-loop on 4 that does.
        arcs.extend([arc(5, 5, 6), arc(6, 6, 5), arc(7, 4, 4), arc(8, 4, 2)]);
        w.extend([50, 50, 2, 1]);
        let mut vs = vs;
        vs.extend([4, 5, 6]);
        let weight = |id: usize| w[id];
        assert_eq!(
            cycles_into(3, &vs, &arcs, &weight),
            vec![vec![0, 1], vec![4]]
        );
        // The target's own cycle is not "upstream".
        assert_eq!(cycles_into(0, &vs, &arcs, &weight), Vec::<Vec<u32>>::new());
    }
}
