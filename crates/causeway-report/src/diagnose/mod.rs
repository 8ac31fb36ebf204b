//! The report of the diagnosis ([`causeway_diagnose::Diagnosis`], Argus): the
//! problem vertex, the culprit chain (each step: thread, process title, time span,
//! block type, system calls, top frames, the edge that led there and whether it was
//! strong, weak or chosen), circular waits and every decision, in text, JSON and DOT.
//! Also the words of the questions the command line asks at a prompt.
//!
//! Every `_s` time is seconds from the start of the trace; `_ms` is milliseconds.

mod doc;
mod dot;
mod names;
mod text;

pub use doc::DiagnosisDoc;
pub use names::VertexDoc;

use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_diagnose::{Diagnosis, EventGraph, Question, QuestionKind};
use causeway_model::Trace;
use std::io::Write;

/// The diagnosis made readable.
#[derive(Clone, Debug, PartialEq)]
pub struct DiagnosisView {
    doc: DiagnosisDoc,
}

impl DiagnosisView {
    /// Name and word the diagnosis of `graph` (built from `trace`); `None` if it names
    /// vertices the graph does not have.
    pub fn new(d: &Diagnosis, trace: &Trace, graph: &EventGraph) -> Option<DiagnosisView> {
        Some(DiagnosisView {
            doc: doc::build(d, trace, graph)?,
        })
    }

    /// The document (for tests and other renderers).
    pub fn doc(&self) -> &DiagnosisDoc {
        &self.doc
    }
}

impl View for DiagnosisView {
    fn name(&self) -> &'static str {
        "diagnose"
    }

    fn found(&self) -> bool {
        self.doc.findings.iter().any(|f| f.case != "Normal") || !self.doc.circles.is_empty()
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        text::write(&self.doc, out)?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        write_json(self.name(), &self.doc, out)
    }

    fn write_dot(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        dot::write(&self.doc, out)?;
        Ok(())
    }
}

/// A question in words, for a prompt: where the diagnosis is, and each candidate's
/// thread, process title, time, system calls and stack, numbered from 1.
pub fn question_text(q: &Question, trace: &Trace, graph: &EventGraph) -> String {
    let mut n = names::Namer::new(trace, graph);
    let mut s = String::new();
    let at = n.vertex(q.at).map(|v| names::line(&v)).unwrap_or_default();
    let ask = match q.kind {
        QuestionKind::MultipleIncoming => "several edges lead to",
        QuestionKind::WeakEdge => "only weak edges lead to",
        QuestionKind::Proceed => "a thread was stalled too while this waited:",
    };
    s.push_str(&format!("{ask} vertex {}: {at}\n", q.at.0));
    for (i, c) in q.candidates.iter().enumerate() {
        let Some(v) = n.vertex(c.vertex) else {
            continue;
        };
        let edge = c
            .edge
            .and_then(|e| graph.edge(e))
            .map(|e| format!(" [{}, {:?}]", doc::edge_word(e.kind), e.strength).to_lowercase())
            .unwrap_or_default();
        let mark = if i == q.suggested { " (suggested)" } else { "" };
        s.push_str(&format!("  {}. {}{edge}{mark}\n", i + 1, names::line(&v)));
        if !v.syscalls.is_empty() {
            s.push_str(&format!("       syscalls: {}\n", v.syscalls.join(", ")));
        }
        if !v.frames.is_empty() {
            s.push_str(&format!("       stack: {}\n", v.frames.join(" < ")));
        }
    }
    s.push_str("  s. stop here\n");
    s
}
