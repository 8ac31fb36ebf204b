//! Edges of the wait-for graph: the cascade's entity → waker weights and the devices'
//! idle edges keyed by raw vertex, then summed between final (merged) vertices and
//! sorted heaviest first, with their stacks symbolized.

use crate::cascade::{EdgeAcc, EdgeMap};
use crate::devices::IdleEdge;
use crate::findings::{Edge, EdgeId, EdgeKind, VertexId};
use crate::options::Options;
use crate::stacks;
use crate::waker::{Pseudo, WakerKey};
use causeway_format::{DurationNs, Tables};
use std::collections::BTreeMap;

/// Edges between raw vertex numbers.
pub(crate) type RawEdges = BTreeMap<(u32, u32), (EdgeKind, EdgeAcc)>;

/// Wait edges from the cascade (waits with no known waker dropped) and device idle
/// edges, between raw vertex numbers.
pub(crate) fn raw(
    edge_map: EdgeMap,
    pseudo_vid: &BTreeMap<Pseudo, u32>,
    idle: &[IdleEdge],
) -> RawEdges {
    let mut raw_edges: RawEdges = BTreeMap::new();
    let mut sorted_edges: Vec<_> = edge_map.into_iter().collect();
    sorted_edges.sort_by_key(|a| a.0);
    for ((from, to), acc) in sorted_edges {
        let to = match to {
            WakerKey::Entity(e) => e,
            WakerKey::Pseudo(p) => pseudo_vid[&p],
            WakerKey::None => continue,
        };
        raw_edges
            .entry((from, to))
            .or_insert_with(|| (EdgeKind::Wait, EdgeAcc::default()))
            .1
            .merge(acc);
    }
    for e in idle {
        let slot = raw_edges
            .entry((pseudo_vid[&e.device], e.entity))
            .or_insert_with(|| (EdgeKind::DeviceIdle, EdgeAcc::default()));
        slot.1.ns += e.ns;
    }
    raw_edges
}

/// Edges between final vertices (`groups` maps raw to final), heaviest first; edges
/// that weigh nothing are dropped.
pub(crate) fn merged(
    raw_edges: RawEdges,
    groups: &[u32],
    tables: &Tables,
    opts: &Options,
) -> Vec<Edge> {
    let mut fin: BTreeMap<(u32, u32), (EdgeKind, EdgeAcc)> = BTreeMap::new();
    for ((f, t), (kind, acc)) in raw_edges {
        let key = (groups[f as usize], groups[t as usize]);
        let slot = fin.entry(key).or_insert_with(|| (kind, EdgeAcc::default()));
        slot.1.merge(acc);
    }
    let mut fin: Vec<((u32, u32), (EdgeKind, EdgeAcc))> =
        fin.into_iter().filter(|(_, (_, a))| a.ns > 0).collect();
    fin.sort_by(|a, b| b.1.1.ns.cmp(&a.1.1.ns).then(a.0.cmp(&b.0)));
    fin.iter()
        .enumerate()
        .map(|(id, ((f, t), (kind, acc)))| Edge {
            id: EdgeId(id),
            from: VertexId(*f as usize),
            to: VertexId(*t as usize),
            kind: *kind,
            weight: DurationNs(acc.ns),
            direct_waits: acc.direct_waits,
            direct: DurationNs(acc.direct_ns),
            wait_stacks: stacks::top(tables, &acc.wait_stacks, opts.top_stacks, opts.stack_depth),
            waker_stacks: stacks::top(tables, &acc.waker_stacks, opts.top_stacks, opts.stack_depth),
        })
        .collect()
}
