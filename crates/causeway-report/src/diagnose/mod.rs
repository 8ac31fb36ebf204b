//! The report of the diagnosis ([`causeway_diagnose::Diagnosis`], Argus): the
//! problem vertex, the culprit chain (each step: thread, process title, time span,
//! block type, system calls, top frames, the edge that led there and whether it was
//! strong, weak or chosen), circular waits and every decision, in text, JSON and DOT.
//! Also the words of the questions the command line asks at a prompt.
//!
//! Every time is integer nanoseconds named `_ns`, a point in time counted from the start
//! of the trace; the text shows seconds and milliseconds.

mod doc;
mod dot;
mod names;
mod rows;
mod text;

pub use doc::DiagnosisDoc;
pub use names::VertexDoc;
pub use rows::ChainRow;

use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_diagnose::{Diagnosis, EventGraph, Question, QuestionKind};
use causeway_model::Trace;
use std::io::Write;

/// The diagnosis made readable.
#[derive(Clone, Debug, PartialEq)]
pub struct DiagnosisView {
    doc: DiagnosisDoc,
    verbose: bool,
}

impl DiagnosisView {
    /// Name and word the diagnosis of `graph` (built from `trace`); `None` if it names
    /// vertices the graph does not have.
    pub fn new(d: &Diagnosis, trace: &Trace, graph: &EventGraph) -> Option<DiagnosisView> {
        Some(DiagnosisView {
            doc: doc::build(d, trace, graph)?,
            verbose: false,
        })
    }

    /// The culprit chain as rows (what `causeway tables` writes).
    pub fn chain_rows(&self) -> Vec<ChainRow> {
        rows::chain_rows(&self.doc)
    }

    /// Show every step of every slice and every thread compared in the text (JSON
    /// always has them).
    pub fn verbose(mut self, on: bool) -> DiagnosisView {
        self.verbose = on;
        self
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
        text::write(&self.doc, self.verbose, out)?;
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

/// A vertex in one line: thread, title, times, what it did (the text form's words).
pub(crate) fn vertex_line(v: &VertexDoc) -> String {
    names::line(v)
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::format::Format;
    use crate::view::render;
    use causeway_diagnose::{AutoOracle, Candidate, Options, build, diagnose};
    use causeway_format::{Header, TaskState};
    use causeway_testkit::synth::{Synth, named_tables};

    /// `waiter` (1) waits 20 ms for `worker` (2), which runs all that time (the wait
    /// and the run that ended it overlap).
    pub(crate) fn trace() -> Trace {
        let mut s = Synth::new();
        s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
            .switch(0, 1, 0, TaskState::RUNNABLE, 2)
            .switch(10, 0, 1, TaskState::INTERRUPTIBLE, 0)
            .wake_by(20_000_010, 1, 2, 1)
            .switch(20_000_011, 0, 0, TaskState::RUNNABLE, 1)
            .switch(20_000_100, 0, 1, TaskState::INTERRUPTIBLE, 0)
            .switch(20_000_200, 1, 2, TaskState::INTERRUPTIBLE, 0);
        let tables = named_tables(&[(1, 1, "waiter"), (2, 1, "worker")]);
        Trace::from_events(tables, Header::synthetic(2), &s.events())
    }

    fn rendered(v: &DiagnosisView, f: Format) -> String {
        let mut out = Vec::new();
        render(v, f, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_json_and_dot_say_the_same_diagnosis() {
        let t = trace();
        let g = build(&t, &[], &Options::default());
        let w = *g
            .thread_vertices(0)
            .iter()
            .find(|&&v| g.vertex(v).unwrap().kind == causeway_diagnose::VertexKind::Wait)
            .unwrap();
        let d = diagnose(&g, w, &Options::default(), &mut AutoOracle);
        let view = DiagnosisView::new(&d, &t, &g).unwrap();
        assert!(view.found());
        let json: serde_json::Value = serde_json::from_str(&rendered(&view, Format::Json)).unwrap();
        assert_eq!(json["problem"]["thread"], "waiter");
        assert_eq!(json["findings"][0]["case"], "LongWait");
        let text = rendered(&view, Format::Text);
        // The verdict first: the chain, one line per hop, as JSON's `chain` has it.
        assert!(text.starts_with("verdict: waiter (1)"), "{text}");
        let chain = json["chain"].as_array().unwrap();
        assert_eq!(chain.len(), 2, "{json}");
        assert_eq!(chain[1]["vertex"]["thread"], "worker");
        assert_eq!(chain[1]["kind"], "CPU");
        assert!(text.contains("<- worker (2)"), "{text}");
        assert!(text.contains("\nwhy is it stuck: waiter (1)"), "{text}");
        assert!(text.contains("LongWait (problem"), "{text}");
        assert!(
            text.contains(&format!("{} queries", json["queries"])),
            "{text}"
        );
        let dot = rendered(&view, Format::Dot);
        assert!(dot.starts_with("digraph diagnosis {"), "{dot}");
        assert!(
            dot.contains(&format!("v{} [", json["problem"]["id"])),
            "{dot}"
        );
    }

    #[test]
    fn a_question_lists_numbered_candidates_and_stop() {
        let t = trace();
        let g = build(&t, &[], &Options::default());
        let vs = g.thread_vertices(1);
        let q = Question {
            kind: QuestionKind::MultipleIncoming,
            at: g.thread_vertices(0)[0],
            candidates: vs
                .iter()
                .map(|&v| Candidate {
                    vertex: v,
                    edge: None,
                })
                .collect::<Vec<_>>(),
            suggested: 0,
        };
        let s = question_text(&q, &t, &g);
        assert!(s.starts_with("several edges lead to vertex"), "{s}");
        assert!(s.contains("  1. worker (2)"), "{s}");
        assert!(s.contains("(suggested)"), "{s}");
        assert!(s.ends_with("  s. stop here\n"), "{s}");
    }
}
