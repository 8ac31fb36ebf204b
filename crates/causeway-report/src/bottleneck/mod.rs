//! The report of the bottleneck analysis ([`causeway_bottleneck::Findings`]): vertex
//! labels, seconds and shares, one sentence of advice per knot and sink and a summary,
//! in text, JSON and DOT, and SVG through graphviz.
//!
//! The JSON document keeps the field names and figures `causeway bottleneck --json` has
//! always printed: every `_s` field is nanoseconds / 1e9, `share` and `cpu_fraction`
//! are over the recording's duration.

mod advice;
mod build;
mod doc;
mod dot;
mod labels;
mod svg;
mod text;

use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_bottleneck::Findings;
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

    /// One sentence: what to look at first.
    pub fn summary(&self) -> &str {
        &self.doc.summary
    }

    /// Draw the graph as SVG into `path` with graphviz's `dot` program.
    pub fn write_svg(&self, path: &Path) -> Result<(), ReportError> {
        svg::write_svg(&dot::render(&self.doc), path)
    }
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
