//! The report of the bottleneck analysis ([`causeway_bottleneck::Findings`]): vertex
//! labels, seconds and shares, one sentence of advice per knot and sink and a summary,
//! in text, JSON and DOT, and SVG through graphviz.
//!
//! The view keeps seconds for its sentences; the JSON document writes every time as
//! integer nanoseconds named `_ns` (one convention for all of causeway's JSON).
//! `share` and `cpu_fraction` are over the recording's duration.

mod advice;
mod build;
mod doc;
mod dot;
mod labels;
mod rows;
mod svg;
mod text;

use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_bottleneck::Findings;
pub use rows::{BottleneckRows, EdgeRow, KnotRow, SinkRow, VertexRow};
use std::io::Write;
use std::path::Path;

/// The bottleneck findings made readable.
#[derive(Clone, Debug, PartialEq)]
pub struct BottleneckView {
    doc: doc::Doc,
    found: bool,
}

impl BottleneckView {
    /// Word and format the findings.
    pub fn new(findings: &Findings) -> BottleneckView {
        BottleneckView {
            doc: build::doc(findings),
            found: findings.found(),
        }
    }

    /// The same view with the predicted gains of the knots' and sinks' edges
    /// (`causeway bottleneck --what-if`), from a predictor over the same findings.
    pub fn with_gains(
        mut self,
        counted: &causeway_whatif::Counted,
        gains: &[causeway_whatif::EdgeGain],
    ) -> BottleneckView {
        let labels: Vec<String> = self.doc.vertices.iter().map(|v| v.label.clone()).collect();
        self.doc.what_if = Some(crate::whatif::gains(&labels, counted, gains));
        self
    }

    /// The findings as rows (the tables' bottleneck_* and knots, sinks).
    pub fn rows(&self) -> BottleneckRows {
        rows::rows(&self.doc)
    }

    /// One sentence: what to look at first.
    pub fn summary(&self) -> &str {
        &self.doc.summary
    }

    /// The edges of the ranked knots, worded, heaviest knot first: what the Perfetto
    /// export and the HTML report show of the verdict.
    pub fn knot_edges(&self) -> Vec<KnotEdge> {
        let d = &self.doc;
        let label = |v: usize| {
            d.vertices
                .get(v)
                .map_or_else(|| "?".into(), |x| x.label.clone())
        };
        let frames = |s: Option<&doc::StackDoc>| {
            s.map(|s| s.user.iter().chain(&s.kernel).cloned().collect())
                .unwrap_or_default()
        };
        let mut out = Vec::new();
        for k in &d.knots {
            for e in k.edges.iter().filter_map(|&e| d.edges.get(e)) {
                out.push(KnotEdge {
                    knot_rank: k.rank,
                    from: label(e.from),
                    to: label(e.to),
                    // `weight_s` came from integer nanoseconds, so this is exact.
                    weight_ns: (e.weight_s * 1e9).round() as u64,
                    share: e.share,
                    wait_stack: frames(e.wait_stacks.first()),
                    waker_stack: frames(e.waker_stacks.first()),
                    advice: k.advice.clone(),
                });
            }
        }
        out
    }

    /// The wait-for graph for drawing: vertex labels and the heaviest `max_edges` edges
    /// with their weights and heaviest stacks, and which are in a ranked knot.
    pub fn wait_graph(&self, max_edges: usize) -> WaitGraph {
        let d = &self.doc;
        let in_knot: std::collections::BTreeSet<usize> = d
            .knots
            .iter()
            .flat_map(|k| k.edges.iter().copied())
            .collect();
        let frames = |s: Option<&doc::StackDoc>| -> Vec<String> {
            s.map(|s| s.user.iter().chain(&s.kernel).cloned().collect())
                .unwrap_or_default()
        };
        let mut edges: Vec<&doc::EdgeDoc> = d.edges.iter().collect();
        // Knot edges first, then by weight, so a knot is never cut off.
        edges.sort_by(|a, b| {
            in_knot
                .contains(&b.id)
                .cmp(&in_knot.contains(&a.id))
                .then(b.weight_s.total_cmp(&a.weight_s))
        });
        WaitGraph {
            vertices: d.vertices.iter().map(|v| v.label.clone()).collect(),
            edges: edges
                .into_iter()
                .take(max_edges)
                .map(|e| GraphEdge {
                    from: e.from,
                    to: e.to,
                    weight_ns: (e.weight_s * 1e9).round() as u64,
                    share: e.share,
                    in_knot: in_knot.contains(&e.id),
                    wait_stack: frames(e.wait_stacks.first()),
                    waker_stack: frames(e.waker_stacks.first()),
                })
                .collect(),
            summary: d.summary.clone(),
        }
    }

    /// Draw the graph as SVG into `path` with graphviz's `dot` program.
    pub fn write_svg(&self, path: &Path) -> Result<(), ReportError> {
        svg::write_svg(&dot::render(&self.doc), path)
    }
}

/// The wait-for graph as data for an interactive drawing (the HTML report).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WaitGraph {
    /// Vertex labels, by vertex id.
    pub vertices: Vec<String>,
    /// The edges drawn.
    pub edges: Vec<GraphEdge>,
    /// The one-sentence verdict.
    pub summary: String,
}

/// One edge of [`WaitGraph`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GraphEdge {
    /// Waiting vertex.
    pub from: usize,
    /// Vertex waited for.
    pub to: usize,
    /// Waiting time carried.
    pub weight_ns: u64,
    /// Weight over the recording's duration.
    pub share: f64,
    /// In a ranked knot.
    pub in_knot: bool,
    /// Heaviest wait stack, innermost first.
    pub wait_stack: Vec<String>,
    /// Heaviest waker stack, innermost first.
    pub waker_stack: Vec<String>,
}

/// One edge of a ranked knot, worded (see [`BottleneckView::knot_edges`]).
#[derive(Clone, Debug, PartialEq)]
pub struct KnotEdge {
    /// Rank of its knot (1 = most important).
    pub knot_rank: usize,
    /// Label of the waiting vertex.
    pub from: String,
    /// Label of the vertex waited for.
    pub to: String,
    /// Waiting time carried by the edge.
    pub weight_ns: u64,
    /// Weight over the recording's duration.
    pub share: f64,
    /// Heaviest stack of the waits, innermost first (user frames then kernel).
    pub wait_stack: Vec<String>,
    /// Heaviest stack of the wakers, innermost first.
    pub waker_stack: Vec<String>,
    /// The knot's advice sentence.
    pub advice: String,
}

/// The labels the report gives the findings' vertices, by vertex id.
pub fn vertex_labels(f: &Findings) -> Vec<String> {
    build::doc(f)
        .vertices
        .into_iter()
        .map(|v| v.label)
        .collect()
}

impl View for BottleneckView {
    fn name(&self) -> &'static str {
        "bottleneck"
    }

    /// A knot or a sink was found.
    fn found(&self) -> bool {
        self.found
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        out.write_all(text::render(&self.doc).as_bytes())?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        write_json(self.name(), &self.doc, out)
    }

    fn write_dot(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        out.write_all(dot::render(&self.doc).as_bytes())?;
        Ok(())
    }
}
