//! The diagnosis section of the HTML report: the problem, the culprit chain as a
//! numbered list (each finding with its case, the slice back to its cause and its
//! stack), circular waits, and the whole text form folded under it.

use super::overview::esc;
use crate::diagnose::{DiagnosisView, VertexDoc, vertex_line};
use crate::format::Format;
use crate::view::render;
use std::fmt::Write as _;

fn frames(v: &VertexDoc) -> String {
    if v.frames.is_empty() {
        return String::new();
    }
    format!(
        "<div class=\"frames\">{}</div>",
        esc(&v.frames.join(" \u{2039} "))
    )
}

/// The section; `how` says which stall was diagnosed and how the questions were
/// answered.
pub(super) fn section(d: &DiagnosisView, how: &str) -> String {
    let doc = d.doc();
    let mut h = String::from("<h2>Diagnosis: the culprit chain</h2>\n");
    let _ = writeln!(h, "<p class=\"meta\">{}</p>", esc(how));
    let _ = writeln!(
        h,
        "<p class=\"verdict\">Problem: {}</p>",
        esc(&vertex_line(&doc.problem))
    );
    h.push_str("<ol id=\"diagnosis-chain\">\n");
    for f in &doc.findings {
        let of = f
            .culprit_of
            .map_or_else(String::new, |v| format!(" (delayed vertex {v})"));
        let _ = write!(
            h,
            "<li class=\"finding\" data-vertex=\"{}\"><b>{}</b> {}{}{}",
            f.vertex.id,
            esc(f.case),
            esc(&vertex_line(&f.vertex)),
            esc(&of),
            frames(&f.vertex)
        );
        if let Some(n) = &f.note {
            let _ = write!(h, "<div class=\"note\">{}</div>", esc(n));
        }
        if let Some(s) = &f.slice {
            h.push_str("<ul class=\"slice\">");
            for st in s.steps.iter().skip(1) {
                let _ = write!(
                    h,
                    "<li class=\"step\">\u{2190} {} <span class=\"meta\">[{}, {}, by {}]</span>{}</li>",
                    esc(&vertex_line(&st.vertex)),
                    esc(st.edge.unwrap_or("?")),
                    esc(st.strength.unwrap_or("?")),
                    esc(st.decided.unwrap_or("?")),
                    frames(&st.vertex)
                );
            }
            let _ = write!(h, "<li class=\"meta\">slice ends: {}</li></ul>", esc(s.end));
        }
        h.push_str("</li>\n");
    }
    h.push_str("</ol>\n");
    for c in &doc.circles {
        let who: Vec<String> = c.vertices.iter().map(vertex_line).collect();
        let _ = writeln!(
            h,
            "<p class=\"circle\">Circular wait: {}{}</p>",
            esc(&who.join(" \u{2192} ")),
            c.broken_by
                .map_or_else(String::new, |b| format!(" (broken by {})", esc(b)))
        );
    }
    let mut text = Vec::new();
    if render(d, Format::Text, &mut text).is_ok() {
        let _ = writeln!(
            h,
            "<details><summary>The diagnosis in full (text form)</summary><pre class=\"summary\">{}</pre></details>",
            esc(&String::from_utf8_lossy(&text))
        );
    }
    h
}
