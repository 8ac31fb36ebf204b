//! The wait-for graph's structure: strongly connected components (iterative Tarjan),
//! and the terminal components that are knots or sinks (wPerf Definition 3.4).
//!
//! Functions here work on a subset of vertices and edges so knot refinement can reuse
//! them on what is left after removing edges. Weights play no part here.

/// A directed edge: index into the caller's edge list, source, target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arc {
    pub(crate) id: usize,
    pub(crate) from: u32,
    pub(crate) to: u32,
}

/// A component with no edge leaving it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Terminal {
    /// Vertices whose reachable set is exactly the set: several vertices, or one with
    /// a self-loop. Sorted vertex ids and the arcs inside.
    Knot { vertices: Vec<u32>, arcs: Vec<Arc> },
    /// A vertex with no outgoing edge that something waits for.
    Sink(u32),
}

/// Strongly connected components of the graph on `vertices` (any ids) with `arcs`
/// (arcs touching other vertices are ignored). Returns each vertex's component number,
/// aligned with `vertices`; components are numbered in reverse topological order.
pub(crate) fn scc(vertices: &[u32], arcs: &[Arc]) -> Vec<usize> {
    let n = vertices.len();
    let local = index_of(vertices);
    let mut adj_start = vec![0usize; n + 1];
    let mut pairs: Vec<(usize, usize)> = arcs
        .iter()
        .filter_map(|a| Some((*local.get(&a.from)?, *local.get(&a.to)?)))
        .collect();
    pairs.sort_unstable();
    for &(u, _) in &pairs {
        adj_start[u + 1] += 1;
    }
    for i in 0..n {
        adj_start[i + 1] += adj_start[i];
    }
    let adj: Vec<usize> = pairs.iter().map(|&(_, v)| v).collect();

    const UNSEEN: usize = usize::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![UNSEEN; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut next_index = 0usize;
    let mut next_comp = 0usize;
    // Call stack of (vertex, next adjacency position).
    let mut calls: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        calls.push((root, adj_start[root]));
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(top) = calls.last_mut() {
            let v = top.0;
            if top.1 < adj_start[v + 1] {
                let w = adj[top.1];
                top.1 += 1;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, adj_start[w]));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = next_comp;
                    if w == v {
                        break;
                    }
                }
                next_comp += 1;
            }
        }
    }
    comp
}

fn index_of(vertices: &[u32]) -> std::collections::HashMap<u32, usize> {
    vertices.iter().enumerate().map(|(i, &v)| (v, i)).collect()
}

/// Knots and sinks of the graph on `vertices` with `arcs`. Vertices with no edge at
/// all within the subgraph are neither. Output is sorted by smallest vertex id.
pub(crate) fn terminals(vertices: &[u32], arcs: &[Arc]) -> Vec<Terminal> {
    let comp = scc(vertices, arcs);
    let local = index_of(vertices);
    let ncomp = comp.iter().copied().max().map_or(0, |m| m + 1);
    let mut leaves = vec![false; ncomp];
    let mut has_internal = vec![false; ncomp];
    let mut touched = vec![false; vertices.len()];
    for a in arcs {
        let (Some(&u), Some(&v)) = (local.get(&a.from), local.get(&a.to)) else {
            continue;
        };
        touched[u] = true;
        touched[v] = true;
        if comp[u] == comp[v] {
            has_internal[comp[u]] = true;
        } else {
            leaves[comp[u]] = true;
        }
    }
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); ncomp];
    for (i, &c) in comp.iter().enumerate() {
        if touched[i] {
            members[c].push(vertices[i]);
        }
    }
    let mut out = Vec::new();
    for c in 0..ncomp {
        if leaves[c] || members[c].is_empty() {
            continue;
        }
        let mut vs = std::mem::take(&mut members[c]);
        vs.sort_unstable();
        if has_internal[c] {
            let inside: Vec<Arc> = arcs
                .iter()
                .filter(|a| vs.binary_search(&a.from).is_ok() && vs.binary_search(&a.to).is_ok())
                .copied()
                .collect();
            out.push(Terminal::Knot {
                vertices: vs,
                arcs: inside,
            });
        } else if let [v] = vs[..] {
            out.push(Terminal::Sink(v));
        }
    }
    out.sort_by_key(|t| match t {
        Terminal::Knot { vertices, .. } => vertices.first().copied().unwrap_or(0),
        Terminal::Sink(v) => *v,
    });
    out
}

/// True if every vertex reaches every other using `arcs`.
pub(crate) fn strongly_connected(vertices: &[u32], arcs: &[Arc]) -> bool {
    let comp = scc(vertices, arcs);
    comp.windows(2).all(|w| w[0] == w[1])
}

/// True if the vertices form one piece when edge directions are ignored.
pub(crate) fn weakly_connected(vertices: &[u32], arcs: &[Arc]) -> bool {
    let local = index_of(vertices);
    let mut parent: Vec<usize> = (0..vertices.len()).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for a in arcs {
        if let (Some(&u), Some(&v)) = (local.get(&a.from), local.get(&a.to)) {
            let (ru, rv) = (find(&mut parent, u), find(&mut parent, v));
            parent[ru] = rv;
        }
    }
    let roots: std::collections::HashSet<usize> =
        (0..vertices.len()).map(|i| find(&mut parent, i)).collect();
    roots.len() <= 1
}
