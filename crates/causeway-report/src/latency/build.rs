//! From profiles to the latency view: names resolved, bins and peaks laid out.

use super::doc::{LatencyDoc, ProfileInput, profile_doc};
use super::{html, text};
use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_format::Tables;
use causeway_latency::{Profiles, Subject};
use std::io::Write;

/// The name of a profile's subject. `syscall_name` turns an x86-64 number into its
/// name when known.
pub fn subject_label(
    subject: &Subject,
    tables: &Tables,
    syscall_name: &dyn Fn(u32) -> Option<String>,
) -> String {
    match subject {
        Subject::Syscall { nr } => match syscall_name(*nr) {
            Some(n) => format!("syscall {n}"),
            None => format!("syscall {nr}"),
        },
        Subject::Blocked => "blocked waits".to_string(),
        Subject::Runnable => "runnable waits".to_string(),
        Subject::Method { name } => format!("method {}", tables.string(*name)),
        Subject::Span { name } => format!("span {}", tables.string(*name)),
    }
}

fn kind_name(subject: &Subject) -> &'static str {
    match subject {
        Subject::Syscall { .. } => "syscall",
        Subject::Blocked => "blocked",
        Subject::Runnable => "runnable",
        Subject::Method { .. } | Subject::Span { .. } => "function",
    }
}

/// Latency profiles, ready to render.
#[derive(Clone, Debug)]
pub struct LatencyView {
    pub(crate) doc: LatencyDoc,
}

impl LatencyView {
    /// The view of a trace's profiles.
    pub fn new(
        profiles: &Profiles,
        tables: &Tables,
        syscall_name: &dyn Fn(u32) -> Option<String>,
    ) -> LatencyView {
        let labels: Vec<String> = profiles
            .profiles
            .iter()
            .map(|p| subject_label(&p.subject, tables, syscall_name))
            .collect();
        let inputs: Vec<ProfileInput<'_>> = profiles
            .profiles
            .iter()
            .zip(&labels)
            .map(|(p, label)| ProfileInput {
                label,
                kind: kind_name(&p.subject),
                hist: &p.hist,
                peaks: &p.peaks,
                slices: &p.slices,
            })
            .collect();
        let mut v = LatencyView::from_inputs(&inputs, profiles.interval_ns);
        v.doc.bins_per_octave = profiles.resolution.bins_per_octave();
        v.doc.unmeasured = Some(profiles.unmeasured);
        v
    }

    /// The view of profiles measured some other way (live).
    pub fn from_inputs(inputs: &[ProfileInput<'_>], interval_ns: Option<u64>) -> LatencyView {
        let bins_per_octave = inputs
            .first()
            .map_or(1, |p| p.hist.resolution().bins_per_octave());
        LatencyView {
            doc: LatencyDoc {
                bins_per_octave,
                interval_ns,
                profiles: inputs.iter().map(profile_doc).collect(),
                unmeasured: None,
            },
        }
    }

    /// The plots as an HTML fragment (a heading, its figures and an SVG per profile),
    /// at most `limit` of them, the most operations first, for a page that holds other
    /// views too.
    pub fn html_sections(&self, limit: usize) -> String {
        html::sections(&self.doc, "h3", limit)
    }

    /// Profiles in the view.
    pub fn profile_count(&self) -> usize {
        self.doc.profiles.len()
    }

    /// Write a self-contained HTML page with one SVG plot per profile.
    pub fn write_html(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        html::write_page(&self.doc, out)
    }
}

impl View for LatencyView {
    fn name(&self) -> &'static str {
        "latency"
    }

    fn found(&self) -> bool {
        self.doc.profiles.iter().any(|p| p.ops > 0)
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        out.write_all(text::render(&self.doc).as_bytes())?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        write_json(self.name(), &self.doc, out)
    }
}
