//! The per-thread timeline overview: one row per thread, coloured by state, as SVG
//! drawn here (deterministic, no script needed).

use crate::timeline::{Category, Lane, Timeline, TrackKind};
use std::fmt::Write as _;

/// Rows drawn at most; the busiest threads (most time running or blocked) first.
pub(crate) const MAX_ROWS: usize = 40;
const WIDTH: f64 = 900.0;
const LABEL: f64 = 200.0;
const ROW: f64 = 16.0;
/// Columns a row is divided into; each shows the state that took most of it.
const COLUMNS: usize = 450;

/// State classes, in the order of the legend.
const STATES: [(&str, &str); 5] = [
    ("running", "#2e9e44"),
    ("runnable", "#f0a030"),
    ("blocked", "#6f8fbf"),
    ("blocked-d", "#c0504d"),
    ("unknown", "#d0d0d0"),
];

fn class_of(name: &str) -> usize {
    match name {
        "running" => 0,
        n if n.starts_with("runnable") => 1,
        n if n.starts_with("blocked (D") => 3,
        n if n.starts_with("blocked") || n.starts_with("stopped") => 2,
        _ => 4,
    }
}

/// One thread: its label, time per state class, and its state slices (start, end,
/// class).
type Row = (String, [u64; 5], Vec<(u64, u64, usize)>);

/// The overview SVG of the timeline's state lanes.
pub(crate) fn svg(tl: &Timeline, processes: Option<&[u32]>) -> String {
    let (t0, t1) = span(tl);
    let len = (t1 - t0).max(1) as f64;
    let mut rows: Vec<Row> = Vec::new();
    for t in &tl.tracks {
        let TrackKind::Lane {
            pid,
            tid,
            lane: Lane::State,
        } = t.kind
        else {
            continue;
        };
        if processes.is_some_and(|ps| !ps.contains(&pid)) {
            continue;
        }
        let parent = tl.tracks.iter().find(|p| Some(p.uuid) == t.parent);
        let name = format!("{} {tid}", parent.map_or("", |p| p.name.as_str()));
        let mut totals = [0u64; 5];
        let segs: Vec<(u64, u64, usize)> = tl
            .slices_on(t.uuid)
            .filter(|s| s.category == Category::State)
            .map(|s| {
                let c = class_of(&s.name);
                totals[c] += s.end_ns - s.start_ns;
                (s.start_ns, s.end_ns, c)
            })
            .collect();
        rows.push((name, totals, segs));
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.1[0] + r.1[2] + r.1[3]));
    rows.truncate(MAX_ROWS);
    let height = ROW * rows.len() as f64 + 40.0;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg id="overview" xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="sans-serif" font-size="11">"#,
        LABEL + WIDTH
    );
    for (i, (name, _, segs)) in rows.iter().enumerate() {
        let y = ROW * i as f64;
        let _ = write!(
            o,
            r#"<text x="0" y="{}" class="tl-label">{}</text>"#,
            y + 11.0,
            esc(name)
        );
        for (a, b, c) in runs(segs, t0, len) {
            let x = LABEL + WIDTH * a as f64 / COLUMNS as f64;
            let w = WIDTH * (b - a) as f64 / COLUMNS as f64;
            let _ = write!(
                o,
                r#"<rect class="tl-seg" x="{x:.1}" y="{y}" width="{w:.1}" height="{}" fill="{}"><title>{} {}: {}</title></rect>"#,
                ROW - 2.0,
                STATES[c].1,
                esc(name),
                STATES[c].0,
                esc(&cols_time(a, b, len))
            );
        }
    }
    let y = ROW * rows.len() as f64 + 14.0;
    for (i, (s, color)) in STATES.iter().enumerate() {
        let x = LABEL + 110.0 * i as f64;
        let _ = write!(
            o,
            r#"<rect x="{x}" y="{}" width="10" height="10" fill="{color}"/><text x="{}" y="{}">{s}</text>"#,
            y,
            x + 14.0,
            y + 9.0
        );
    }
    let _ = write!(
        o,
        r#"<text x="0" y="{}">{}</text></svg>"#,
        y + 9.0,
        esc(&format!("{:.3} s shown", len / 1e9))
    );
    o
}

/// Runs of columns `[a, b)` with the state that dominates each column.
fn runs(segs: &[(u64, u64, usize)], t0: u64, len: f64) -> Vec<(usize, usize, usize)> {
    let mut cols = vec![[0u64; 5]; COLUMNS];
    let col_ns = len / COLUMNS as f64;
    for &(a, b, c) in segs {
        let (fa, fb) = ((a - t0) as f64 / col_ns, (b - t0) as f64 / col_ns);
        let (first, last) = (fa.floor() as usize, (fb.ceil() as usize).min(COLUMNS));
        for (k, col) in cols.iter_mut().enumerate().take(last).skip(first) {
            let lo = fa.max(k as f64);
            let hi = fb.min(k as f64 + 1.0);
            if hi > lo {
                col[c] += ((hi - lo) * col_ns).max(1.0) as u64;
            }
        }
    }
    let mut out: Vec<(usize, usize, usize)> = Vec::new();
    for (k, col) in cols.iter().enumerate() {
        if col.iter().all(|&v| v == 0) {
            continue;
        }
        let c = (0..5).max_by_key(|&i| (col[i], 5 - i)).unwrap_or(4);
        match out.last_mut() {
            Some(r) if r.1 == k && r.2 == c => r.1 = k + 1,
            _ => out.push((k, k + 1, c)),
        }
    }
    out
}

fn cols_time(a: usize, b: usize, len: f64) -> String {
    let s = |c: usize| len * c as f64 / COLUMNS as f64 / 1e9;
    format!("{:.3} s to {:.3} s", s(a), s(b))
}

fn span(tl: &Timeline) -> (u64, u64) {
    let states = tl.slices.iter().filter(|s| s.category == Category::State);
    let t0 = states.clone().map(|s| s.start_ns).min().unwrap_or(0);
    let t1 = states.map(|s| s.end_ns).max().unwrap_or(t0);
    (t0, t1)
}

/// Escape text for HTML and SVG.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
