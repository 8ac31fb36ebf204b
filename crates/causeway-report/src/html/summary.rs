//! The report's summary as tables: the recording's facts, the busiest threads by CPU
//! and by blocked time, and the events by kind, from `info`'s report (not its text).

use super::overview::esc;
use crate::info::{InfoReport, ThreadRow};

/// Threads listed per ranking.
const TOP: usize = 8;

fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// A `<tr>` of two cells.
fn row(h: &mut String, k: &str, v: &str) {
    h.push_str(&format!(
        "<tr><th>{}</th><td>{}</td></tr>\n",
        esc(k),
        esc(v)
    ));
}

fn facts(h: &mut String, r: &InfoReport) {
    h.push_str("<table class=\"facts\">\n");
    row(h, "duration", &secs(r.duration_ns));
    row(h, "events", &r.events.to_string());
    row(
        h,
        "lost events",
        &if r.lost_events == 0 {
            "none".to_string()
        } else {
            r.lost_events.to_string()
        },
    );
    for n in &r.recording_notes {
        row(h, "recorded with", n);
    }
    row(
        h,
        "threads / processes",
        &format!("{} / {}", r.threads, r.processes),
    );
    row(h, "CPUs", &r.cpu_count.to_string());
    row(h, "on-CPU samples", &r.cpu_samples.to_string());
    let n = &r.frame_names;
    if n.user > 0 {
        row(
            h,
            "user frames unnamed",
            &format!(
                "{} of {} ({} in anonymous memory)",
                n.unnamed(),
                n.user,
                n.unnamed_anonymous
            ),
        );
    }
    row(h, "host", &r.host);
    row(h, "trace", &format!("{} ({} bytes)", r.file, r.bytes));
    h.push_str("</table>\n");
}

fn threads(h: &mut String, title: &str, rows: &[ThreadRow], duration_ns: u64) {
    if rows.is_empty() {
        return;
    }
    h.push_str(&format!(
        "<table class=\"threads\"><caption>{}</caption>\n<tr><th>thread</th><th>tid</th><th>pid</th><th>on CPU</th><th>blocked</th><th>runnable</th></tr>\n",
        esc(title)
    ));
    let pct = |ns: u64| {
        if duration_ns == 0 {
            String::new()
        } else {
            format!(" ({:.0}%)", ns as f64 * 100.0 / duration_ns as f64)
        }
    };
    for t in rows.iter().take(TOP) {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}{}</td><td>{}</td></tr>\n",
            esc(&t.comm),
            t.tid,
            t.pid,
            secs(t.cpu_ns),
            pct(t.cpu_ns),
            secs(t.blocked_ns),
            pct(t.blocked_ns),
            secs(t.runnable_ns)
        ));
    }
    h.push_str("</table>\n");
}

fn kinds(h: &mut String, r: &InfoReport) {
    let mut k: Vec<(&str, u64)> = r.events_by_kind.iter().map(|(k, n)| (*k, *n)).collect();
    k.sort_by_key(|&(name, n)| (std::cmp::Reverse(n), name));
    h.push_str("<table class=\"kinds\"><caption>Events by kind</caption>\n");
    for (name, n) in k {
        h.push_str(&format!("<tr><td>{}</td><td>{n}</td></tr>\n", esc(name)));
    }
    h.push_str("</table>\n");
}

/// The summary section.
pub(super) fn section(r: &InfoReport) -> String {
    let mut h = String::from("<h2>Summary</h2>\n<div class=\"summary\">\n");
    facts(&mut h, r);
    threads(&mut h, "Top threads by CPU time", &r.top_cpu, r.duration_ns);
    threads(
        &mut h,
        "Top threads by blocked time",
        &r.top_blocked,
        r.duration_ns,
    );
    kinds(&mut h, r);
    h.push_str("</div>\n");
    h
}
