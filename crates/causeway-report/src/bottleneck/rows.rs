//! The bottleneck findings as plain rows, for tables: the same ids, labels and
//! figures as the JSON document, so a query over the tables finds what `bottleneck
//! --json` says.

use super::doc::{Doc, KnotDoc, SinkDoc, StackDoc, edge_kind_name, shape_name};
use serde::Serialize;

/// The findings as rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BottleneckRows {
    /// The one-sentence verdict.
    pub summary: String,
    /// Vertices, by id.
    pub vertices: Vec<VertexRow>,
    /// Edges, heaviest first (by id).
    pub edges: Vec<EdgeRow>,
    /// Knots (ranked first, then the background ones).
    pub knots: Vec<KnotRow>,
    /// Sinks (then the background ones).
    pub sinks: Vec<SinkRow>,
}

/// One vertex.
#[derive(Clone, Debug, PartialEq)]
pub struct VertexRow {
    /// Id.
    pub id: u64,
    /// Label.
    pub label: String,
    /// Kind (`thread`, `disk`, ...), as the JSON's `kind.type`.
    pub kind: String,
    /// Its threads' ids.
    pub tids: Vec<u64>,
    /// Time on CPU.
    pub running_ns: u64,
    /// Time runnable.
    pub runnable_ns: u64,
    /// Time waiting.
    pub waiting_ns: u64,
}

/// One edge.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeRow {
    /// Id.
    pub id: u64,
    /// Waiting vertex.
    pub from: u64,
    /// Vertex waited for.
    pub to: u64,
    /// Kind, as the JSON's `kind`.
    pub kind: String,
    /// Weight.
    pub weight_ns: u64,
    /// Waits seen directly.
    pub direct_waits: u64,
    /// Their time.
    pub direct_ns: u64,
    /// Rank of the knot it is in.
    pub knot: Option<u64>,
    /// Heaviest wait stack, outermost frame first.
    pub wait_stack: Option<Vec<String>>,
    /// Heaviest waker stack, outermost frame first.
    pub waker_stack: Option<Vec<String>>,
}

/// One knot.
#[derive(Clone, Debug, PartialEq)]
pub struct KnotRow {
    /// Rank (`None` for a background knot).
    pub rank: Option<u64>,
    /// Shape, as the JSON's `shape`.
    pub shape: String,
    /// Vertices.
    pub vertices: Vec<u64>,
    /// Edges.
    pub edges: Vec<u64>,
    /// Waiting inside it.
    pub weight_ns: u64,
    /// Its threads' runnable time.
    pub needs_cpu_ns: u64,
    /// Holds a device.
    pub has_io: bool,
    /// Advice.
    pub advice: String,
}

/// One sink.
#[derive(Clone, Debug, PartialEq)]
pub struct SinkRow {
    /// The vertex.
    pub vertex: u64,
    /// Only background threads wait on it.
    pub background: bool,
    /// Waiting that ends there.
    pub incoming_ns: u64,
    /// The chain of waits leading to it.
    pub chain: Vec<u64>,
    /// Advice.
    pub advice: String,
}

fn ns(s: f64) -> u64 {
    // The document's seconds came from integer nanoseconds.
    (s * 1e9).round() as u64
}

/// The JSON's `type` of a vertex kind (an internally tagged enum).
fn kind_name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|j| j.get("type").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
}

/// A stack root first, as flame graphs fold it: the user frames from the outermost,
/// then the kernel's from the system call's entry down to where it slept.
fn frames(s: Option<&StackDoc>) -> Option<Vec<String>> {
    let s = s?;
    Some(
        s.user
            .iter()
            .rev()
            .chain(s.kernel.iter().rev())
            .cloned()
            .collect(),
    )
}

fn knot(k: &KnotDoc, rank: Option<u64>) -> KnotRow {
    KnotRow {
        rank,
        shape: shape_name(&k.shape).to_string(),
        vertices: k.vertices.iter().map(|&v| v as u64).collect(),
        edges: k.edges.iter().map(|&e| e as u64).collect(),
        weight_ns: ns(k.weight_s),
        needs_cpu_ns: ns(k.needs_cpu_s),
        has_io: k.has_io,
        advice: k.advice.clone(),
    }
}

fn sink(s: &SinkDoc, background: bool) -> SinkRow {
    SinkRow {
        vertex: s.vertex as u64,
        background,
        incoming_ns: ns(s.incoming_s),
        chain: s.chain.iter().map(|&v| v as u64).collect(),
        advice: s.advice.clone(),
    }
}

pub(crate) fn rows(d: &Doc) -> BottleneckRows {
    let mut knot_of = std::collections::BTreeMap::new();
    for k in &d.knots {
        for &e in &k.edges {
            knot_of.entry(e).or_insert(k.rank as u64);
        }
    }
    BottleneckRows {
        summary: d.summary.clone(),
        vertices: d
            .vertices
            .iter()
            .map(|v| VertexRow {
                id: v.id as u64,
                label: v.label.clone(),
                kind: kind_name(&v.kind),
                tids: v.threads.iter().map(|t| t.tid as u64).collect(),
                running_ns: ns(v.running_s),
                runnable_ns: ns(v.runnable_s),
                waiting_ns: ns(v.waiting_s),
            })
            .collect(),
        edges: d
            .edges
            .iter()
            .map(|e| EdgeRow {
                id: e.id as u64,
                from: e.from as u64,
                to: e.to as u64,
                kind: edge_kind_name(&e.kind).to_string(),
                weight_ns: ns(e.weight_s),
                direct_waits: e.direct_waits,
                direct_ns: ns(e.direct_s),
                knot: knot_of.get(&e.id).copied(),
                wait_stack: frames(e.wait_stacks.first()),
                waker_stack: frames(e.waker_stacks.first()),
            })
            .collect(),
        knots: d
            .knots
            .iter()
            .map(|k| knot(k, Some(k.rank as u64)))
            .chain(d.background_knots.iter().map(|k| knot(k, None)))
            .collect(),
        sinks: d
            .sinks
            .iter()
            .map(|s| sink(s, false))
            .chain(d.background_sinks.iter().map(|s| sink(s, true)))
            .collect(),
    }
}
