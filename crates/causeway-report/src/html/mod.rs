//! The self-contained HTML report: one file, every script and style inline, nothing
//! fetched, so it opens from `file://` on a machine without network.
//!
//! Sections: a header with the recording's wall-clock time and host, the trace
//! summary as tables (`info`'s report: facts, busiest threads, events by kind), the
//! bottleneck verdict and an interactive
//! wait-for graph (drawn by the inline script from embedded JSON), the diagnosis's
//! culprit chain when one was computed, the flame graphs (inferno's SVG, inline,
//! without its script), the latency histograms with their peaks, the per-thread
//! timeline overview (SVG drawn here), and the Perfetto export embedded gzip-compressed
//! (the browser inflates it into a download link: the export is most of the page's
//! bytes, and compresses 5-10 times).

mod base64;
mod diagnosis;
mod overview;
mod summary;

use crate::bottleneck::BottleneckView;
use crate::caveats::Caveats;
use crate::diagnose::DiagnosisView;
use crate::error::ReportError;
use crate::flame::FlameView;
use crate::latency::LatencyView;
use crate::timeline::Timeline;
use overview::esc;
use std::io::Write;

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");
/// Edges drawn in the wait-for graph at most (knot edges first).
const GRAPH_EDGES: usize = 40;
/// Latency plots shown at most (the profiles with the most operations).
const LATENCY_PLOTS: usize = 8;

/// What goes into the report; the caller computes each part.
pub struct HtmlReport<'a> {
    /// Heading: what was recorded.
    pub title: String,
    /// Wall-clock start of the recording, if known.
    pub recorded_at: Option<String>,
    /// Host it was recorded on.
    pub host: String,
    /// The trace summary (`causeway info`'s report).
    pub info: &'a crate::InfoReport,
    /// What the trace lacks (lost events and the time they cover).
    pub caveats: Caveats,
    /// The bottleneck verdict, if the analysis ran.
    pub bottleneck: Option<&'a BottleneckView>,
    /// The diagnosis of a stall, if one was computed.
    pub diagnosis: Option<&'a DiagnosisView>,
    /// Which stall was diagnosed and how, or why there is no diagnosis.
    pub diagnosis_note: String,
    /// Flame graphs, each with a heading.
    pub flames: Vec<(String, &'a FlameView)>,
    /// Latency profiles of the trace (histograms and peaks), if it has operations.
    pub latency: Option<&'a LatencyView>,
    /// The timeline (for the overview).
    pub timeline: &'a Timeline,
    /// Threads of these processes only in the overview; `None`: all.
    pub processes: Option<Vec<u32>>,
    /// The Perfetto export to embed, and the file name to offer.
    pub perfetto: Option<(&'a [u8], String)>,
}

/// inferno's SVG made fit to sit inside the page: without the XML prolog and doctype
/// (they belong to standalone files) and without its script and `onload` hook, which
/// even with `no_javascript` it keeps and which would call a function the page does
/// not have. Frame tooltips (`<title>`) need no script.
fn inline_svg(svg: &str) -> String {
    let mut s = svg
        .find("<svg")
        .map_or(svg, |i| &svg[i..])
        .replace(" onload=\"init(evt)\"", "");
    while let Some(a) = s.find("<script") {
        let Some(b) = s[a..].find("</script>") else {
            break;
        };
        s.replace_range(a..a + b + "</script>".len(), "");
    }
    s
}

impl HtmlReport<'_> {
    /// Write the page.
    pub fn write(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        let mut h = String::with_capacity(1 << 16);
        self.head(&mut h);
        self.graph(&mut h);
        match self.diagnosis {
            Some(d) => h.push_str(&diagnosis::section(d, &self.diagnosis_note)),
            None => h.push_str(&format!(
                "<h2>Diagnosis: the culprit chain</h2>\n<p>{}</p>\n",
                esc(&self.diagnosis_note)
            )),
        }
        for (i, (heading, f)) in self.flames.iter().enumerate() {
            h.push_str(&format!(
                "<h2>{}</h2>\n<div class=\"flame\" id=\"flame-{i}\">",
                esc(heading)
            ));
            if f.folded().is_empty() {
                h.push_str("<p>No stacks to draw.</p>");
            } else {
                let mut svg = Vec::new();
                f.write_svg(&mut svg, false)?;
                h.push_str(&inline_svg(&String::from_utf8_lossy(&svg)));
            }
            h.push_str("</div>\n");
        }
        self.latency_section(&mut h);
        h.push_str("<h2>Threads over time</h2>\n<p>The busiest threads, one row each; hover a bar for its time.</p>\n");
        h.push_str(&overview::svg(self.timeline, self.processes.as_deref()));
        h.push('\n');
        if let Some((bytes, name)) = &self.perfetto {
            self.perfetto_section(&mut h, bytes, name)?;
        }
        h.push_str(&format!(
            "<div id=\"tip\"></div>\n<script>\n{JS}</script>\n</body>\n</html>\n"
        ));
        out.write_all(h.as_bytes())?;
        Ok(())
    }

    fn head(&self, h: &mut String) {
        let when = self
            .recorded_at
            .as_deref()
            .map_or_else(|| "unknown time".to_string(), str::to_string);
        h.push_str(&format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n<p class=\"meta\">Recorded {} on {}.</p>\n",
            esc(&self.title),
            esc(&self.title),
            esc(&when),
            esc(&self.host)
        ));
        if self.caveats.is_empty() {
            h.push_str("<p class=\"meta\">No events were lost.</p>\n");
        }
        for l in &self.caveats.lines {
            h.push_str(&format!("<p class=\"warn\">{}.</p>\n", esc(l)));
        }
        h.push_str(&summary::section(self.info));
    }

    /// The Perfetto export, gzip-compressed and base64-encoded in a data block; the
    /// page's script inflates it (DecompressionStream) into the download link's blob.
    /// Where the browser cannot inflate, the link offers the `.gz` file, which
    /// Perfetto's UI and trace_processor also open.
    fn perfetto_section(
        &self,
        h: &mut String,
        bytes: &[u8],
        name: &str,
    ) -> Result<(), ReportError> {
        use flate2::{Compression, write::GzEncoder};
        let mut gz = GzEncoder::new(Vec::with_capacity(bytes.len() / 4), Compression::default());
        gz.write_all(bytes)?;
        let gz = gz.finish()?;
        h.push_str(&format!(
            "<h2>Perfetto</h2>\n<p><a id=\"perfetto-link\" download=\"{}\">Download the Perfetto trace</a> ({} bytes; {} compressed in this page) and open it at ui.perfetto.dev (Open trace file) or with trace_processor.</p>\n<script type=\"application/octet-stream\" id=\"perfetto-data\" data-bytes=\"{}\">{}</script>\n",
            esc(name),
            bytes.len(),
            gz.len(),
            bytes.len(),
            base64::encode(&gz)
        ));
        Ok(())
    }

    fn latency_section(&self, h: &mut String) {
        h.push_str("<h2>Latency histograms</h2>\n");
        match self.latency.filter(|l| l.profile_count() > 0) {
            Some(l) => {
                let shown = l.profile_count().min(LATENCY_PLOTS);
                h.push_str(&format!(
                    "<p>Operations by latency on log2 bins, counts on a log scale, each peak shaded and numbered ({shown} of {} profiles, the most operations first; <code>causeway latency</code> shows them all).</p>\n<div id=\"latency\">\n{}</div>\n",
                    l.profile_count(),
                    l.html_sections(LATENCY_PLOTS)
                ));
            }
            None => h.push_str("<p>No operations to profile in this trace.</p>\n"),
        }
    }

    fn graph(&self, h: &mut String) {
        h.push_str("<h2>Bottleneck: the wait-for graph</h2>\n");
        let Some(b) = self.bottleneck else {
            h.push_str("<p>The bottleneck analysis found nothing to analyze in this trace.</p>\n");
            return;
        };
        let g = b.wait_graph(GRAPH_EDGES);
        h.push_str(&format!(
            "<p class=\"verdict\">{}</p>\n<p>Red edges are in the knot. Hover an edge for its weight and stacks; click a thread to highlight its waits.</p>\n<svg id=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"560\"></svg>\n",
            esc(&g.summary)
        ));
        // `</` cannot appear inside a script element.
        let json = serde_json::to_string(&g)
            .unwrap_or_else(|_| "{\"vertices\":[],\"edges\":[]}".into())
            .replace("</", "<\\/");
        h.push_str(&format!(
            "<script type=\"application/json\" id=\"graph-data\">{json}</script>\n"
        ));
    }
}
