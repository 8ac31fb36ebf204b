//! A self-contained HTML page: one SVG plot per profile on OSprof's axes (log2 bins
//! across, operation counts on a log scale up), each peak shaded and numbered.

use super::doc::{LatencyDoc, ProfileDoc};
use super::fmt_ns;
use crate::error::ReportError;
use std::fmt::Write as _;
use std::io::Write;

const W: f64 = 720.0;
const H: f64 = 260.0;
const LEFT: f64 = 50.0;
const BOTTOM: f64 = 40.0;
const TOP: f64 = 20.0;
const SHADES: &[&str] = &["#dbe9f6", "#fde2c8", "#d9f0d3", "#eadcf3"];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(crate) fn write_page(doc: &LatencyDoc, out: &mut dyn Write) -> Result<(), ReportError> {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>causeway latency</title>\n\
         <style>body{font-family:sans-serif;margin:2em} svg{display:block;margin-bottom:2em}\
         text{font-size:11px}</style></head><body>\n<h1>Latency profiles</h1>\n",
    );
    s.push_str(&sections(doc, "h2", usize::MAX));
    s.push_str("</body></html>\n");
    out.write_all(s.as_bytes())?;
    Ok(())
}

/// One heading, a line of figures and a plot per profile, the `limit` with the most
/// operations first when there are more; a fragment for a page of its own or for the
/// HTML report.
pub(crate) fn sections(doc: &LatencyDoc, heading: &str, limit: usize) -> String {
    let mut shown: Vec<&ProfileDoc> = doc.profiles.iter().collect();
    if shown.len() > limit {
        shown.sort_by(|a, b| b.ops.cmp(&a.ops).then_with(|| a.label.cmp(&b.label)));
        shown.truncate(limit);
    }
    let mut s = String::new();
    for p in shown {
        let _ = writeln!(
            s,
            "<{heading}>{}</{heading}>\n<p>{} operations, mean {}; {} peak(s)</p>",
            escape(&p.label),
            p.ops,
            fmt_ns(p.mean_ns),
            p.peaks.len()
        );
        svg(&mut s, p);
    }
    s
}

fn svg(s: &mut String, p: &ProfileDoc) {
    let n = p.bins.len().max(1) as f64;
    let bw = (W - LEFT) / n;
    let max = p.bins.iter().map(|b| b.count).max().unwrap_or(0);
    let ylog = |c: u64| (c as f64 + 1.0).log10() / (max as f64 + 1.0).log10().max(1e-9);
    let plot_h = H - BOTTOM - TOP;
    let _ = writeln!(
        s,
        "<svg class=\"latency-plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\">"
    );
    // Peak bands first, so the bars are drawn over them.
    for (i, b) in p.bins.iter().enumerate() {
        if let Some(k) = b.peak {
            let colour = SHADES[(k as usize - 1) % SHADES.len()];
            let x = LEFT + i as f64 * bw;
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{TOP}\" width=\"{bw:.1}\" height=\"{plot_h}\" fill=\"{colour}\"/>"
            );
        }
    }
    for (i, b) in p.bins.iter().enumerate() {
        let h = ylog(b.count) * plot_h;
        let x = LEFT + i as f64 * bw;
        let y = TOP + plot_h - h;
        let _ = writeln!(
            s,
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#3b6ea8\"><title>[{}, {}): {}</title></rect>",
            x + 1.0,
            (bw - 2.0).max(1.0),
            fmt_ns(b.from_ns),
            fmt_ns(b.to_ns),
            b.count
        );
        if i % 2 == 0 {
            let _ = writeln!(
                s,
                "<text x=\"{x:.1}\" y=\"{:.1}\">{}</text>",
                H - BOTTOM + 14.0,
                fmt_ns(b.from_ns)
            );
        }
    }
    for k in &p.peaks {
        if let Some(i) = p.bins.iter().position(|b| b.from_ns == k.mode_from_ns) {
            let x = LEFT + (i as f64 + 0.2) * bw;
            let _ = writeln!(
                s,
                "<text x=\"{x:.1}\" y=\"{}\">peak {}</text>",
                TOP - 5.0,
                k.number
            );
        }
    }
    let _ = writeln!(
        s,
        "<text x=\"0\" y=\"{TOP}\">{max}</text><text x=\"0\" y=\"{:.1}\">0</text>\
         <text x=\"{LEFT}\" y=\"{:.1}\">latency (log2 bins); count on a log scale</text></svg>",
        TOP + plot_h,
        H - 8.0
    );
}
