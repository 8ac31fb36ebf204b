//! An index from each vertex to its edges, packed in two arrays (compressed sparse
//! rows): the graph of a busy trace has millions of vertices, and a list per vertex
//! cost an allocation each and most of the graph's build time.

/// The edges (by their index) of each of `n` vertices, kept in the order they were given.
#[derive(Clone, Debug, Default)]
pub(crate) struct Adjacency {
    /// Where each vertex's edges start in `edges`; one more entry than vertices.
    start: Vec<u32>,
    edges: Vec<u32>,
}

impl Adjacency {
    /// The index of `n` vertices from each edge's vertex (`at(i)` for edge `i`, which
    /// must be below `n`), by a counting sort, which keeps the edges' order.
    pub(crate) fn new(n: usize, count: usize, at: impl Fn(usize) -> usize) -> Adjacency {
        let mut start = vec![0u32; n + 1];
        for i in 0..count {
            start[at(i) + 1] += 1;
        }
        for v in 0..n {
            start[v + 1] += start[v];
        }
        let mut next = start.clone();
        let mut edges = vec![0u32; count];
        for i in 0..count {
            let slot = &mut next[at(i)];
            edges[*slot as usize] = i as u32;
            *slot += 1;
        }
        Adjacency { start, edges }
    }

    /// The edges of vertex `v` (none for a vertex out of range).
    pub(crate) fn of(&self, v: usize) -> &[u32] {
        match (self.start.get(v), self.start.get(v + 1)) {
            (Some(&a), Some(&b)) => &self.edges[a as usize..b as usize],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_vertex_gets_its_edges_in_order() {
        // Edges 0..5 into vertices 2, 0, 2, 3, 0 of 4.
        let to = [2, 0, 2, 3, 0];
        let a = Adjacency::new(4, to.len(), |i| to[i]);
        assert_eq!(a.of(0), &[1, 4]);
        assert_eq!(a.of(1), &[] as &[u32]);
        assert_eq!(a.of(2), &[0, 2]);
        assert_eq!(a.of(3), &[3]);
        assert_eq!(a.of(4), &[] as &[u32]);
        let empty = Adjacency::default();
        assert_eq!(empty.of(0), &[] as &[u32]);
    }
}
