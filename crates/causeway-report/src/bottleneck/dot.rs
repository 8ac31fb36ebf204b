//! The wait-for graph in graphviz DOT.
//!
//! Shown: every vertex in a knot or sink, and every edge weighing at least 1% of the
//! recording or inside a knot (the full graph of a busy system is unreadable). Knot
//! members are filled, devices are boxes, edge labels give seconds and share.

use super::doc::{Doc, KindDoc};
use causeway_bottleneck::EdgeKind;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Lightest edge shown outside knots, as a share of the recording.
const MIN_SHARE: f64 = 0.01;

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The graph as DOT.
pub(crate) fn render(r: &Doc) -> String {
    let in_knot: BTreeSet<usize> = r
        .knots
        .iter()
        .flat_map(|k| k.edges.iter().copied())
        .collect();
    let knot_v: BTreeSet<usize> = r
        .knots
        .iter()
        .flat_map(|k| k.vertices.iter().copied())
        .collect();
    let edges: Vec<_> = r
        .edges
        .iter()
        .filter(|e| in_knot.contains(&e.id) || e.share >= MIN_SHARE)
        .collect();
    let mut shown: BTreeSet<usize> = edges.iter().flat_map(|e| [e.from, e.to]).collect();
    shown.extend(knot_v.iter().copied());
    shown.extend(r.sinks.iter().map(|s| s.vertex));
    let mut out = String::from("digraph waitfor {\n  rankdir=LR;\n  node [fontname=\"sans\"];\n");
    for &v in &shown {
        let vx = &r.vertices[v];
        let shape = match vx.kind {
            KindDoc::Disk { .. } | KindDoc::Nic { .. } => "box",
            KindDoc::Timer | KindDoc::Interrupt { .. } => "diamond",
            KindDoc::OtherProcesses => "octagon",
            KindDoc::RuntimePauses { .. }
            | KindDoc::CpuQuota { .. }
            | KindDoc::CpuAffinity { .. } => "hexagon",
            _ => "ellipse",
        };
        let fill = if knot_v.contains(&v) {
            ", style=filled, fillcolor=\"#f4a582\""
        } else {
            ""
        };
        let label = format!("{}\\n{:.0}% CPU", vx.label, vx.cpu_fraction * 100.0);
        let _ = writeln!(
            out,
            "  v{v} [label={}, shape={shape}{fill}];",
            quote(&label).replace("\\\\n", "\\n")
        );
    }
    for e in edges {
        let style = match e.kind {
            EdgeKind::Wait => "solid",
            EdgeKind::DeviceIdle => "dashed",
        };
        let color = if in_knot.contains(&e.id) {
            "#b2182b"
        } else {
            "#555555"
        };
        let _ = writeln!(
            out,
            "  v{} -> v{} [label=\"{:.3}s ({:.0}%)\", style={style}, color=\"{color}\"];",
            e.from,
            e.to,
            e.weight_s,
            e.share * 100.0
        );
    }
    out.push_str("}\n");
    out
}
