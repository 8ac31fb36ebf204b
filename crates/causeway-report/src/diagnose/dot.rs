//! The DOT form: the vertices the diagnosis visited, the slice edges (solid strong,
//! dashed weak), culprit links and circles.

use super::doc::DiagnosisDoc;
use super::names::VertexDoc;
use crate::format::{millis, secs};
use std::collections::BTreeMap;
use std::io::{self, Write};

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn label(v: &VertexDoc) -> String {
    format!(
        "{}\\n{} {:.3} ms\\n@ {:.6} s",
        esc(&v.who()),
        esc(v.block),
        millis(v.duration_ns),
        secs(v.start_ns)
    )
}

/// Write the graph.
pub fn write(d: &DiagnosisDoc, out: &mut dyn Write) -> io::Result<()> {
    let mut nodes: BTreeMap<u32, &VertexDoc> = BTreeMap::new();
    let mut edges: Vec<String> = Vec::new();
    nodes.insert(d.problem.id, &d.problem);
    for f in &d.findings {
        nodes.insert(f.vertex.id, &f.vertex);
        if let Some(c) = f.culprit_of {
            edges.push(format!(
                "  v{} -> v{c} [label=\"culprit ({})\", color=red, penwidth=2];",
                f.vertex.id, f.case
            ));
        }
        if let Some(s) = &f.slice {
            for w in s.steps.windows(2) {
                let (Some(to), Some(from)) = (w.first(), w.get(1)) else {
                    continue;
                };
                nodes.insert(to.vertex.id, &to.vertex);
                nodes.insert(from.vertex.id, &from.vertex);
                let style = if from.strength == Some("weak") {
                    "dashed"
                } else {
                    "solid"
                };
                edges.push(format!(
                    "  v{} -> v{} [label=\"{} ({})\", style={style}];",
                    from.vertex.id,
                    to.vertex.id,
                    esc(from.edge.unwrap_or("")),
                    from.decided.unwrap_or("")
                ));
            }
        }
    }
    for c in &d.circles {
        for w in c.vertices.windows(2) {
            if let (Some(a), Some(b)) = (w.first(), w.get(1)) {
                edges.push(format!(
                    "  v{} -> v{} [label=\"waits for\", color=orange];",
                    a.id, b.id
                ));
            }
        }
        if let (Some(a), Some(b)) = (c.vertices.last(), c.vertices.first()) {
            edges.push(format!(
                "  v{} -> v{} [label=\"waits for\", color=orange];",
                a.id, b.id
            ));
        }
    }
    writeln!(out, "digraph diagnosis {{")?;
    writeln!(out, "  rankdir=RL;\n  node [shape=box, fontsize=10];")?;
    for (id, v) in &nodes {
        let extra = if *id == d.problem.id {
            ", style=bold, color=red"
        } else {
            ""
        };
        writeln!(out, "  v{id} [label=\"{}\"{extra}];", label(v))?;
    }
    for e in edges {
        writeln!(out, "{e}")?;
    }
    writeln!(out, "}}")
}
