//! Terminal rendering: BCC-style bars (linear counts, as `funclatency` prints them, with
//! any nonempty bin at least one mark wide so a small peak stays visible), each peak's
//! mode marked, a line per peak, and the time-lapse as a strip of shades.

use super::doc::{BinDoc, LatencyDoc, PeakDoc, ProfileDoc};
use super::fmt_ns;
use std::fmt::Write as _;

/// Width of the bars, in characters.
const BAR: usize = 40;

/// Shades from empty to the fullest bin of a time-lapse, on a log scale.
const SHADES: &[u8] = b" .:-=+*#%@";

pub(crate) fn render(doc: &LatencyDoc) -> String {
    let mut s = String::new();
    if doc.profiles.is_empty() {
        s.push_str("no operation to profile: the trace holds none of the kinds asked for\n");
    }
    for (i, p) in doc.profiles.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        profile(&mut s, p);
        if let Some(iv) = doc.interval_ns {
            time_lapse(&mut s, p, iv);
        }
    }
    if let Some(u) = &doc.unmeasured {
        let parts = [
            (u.syscall_exits_without_entry, "syscall exits without entry"),
            (
                u.syscall_entries_without_exit,
                "syscall entries without exit",
            ),
            (
                u.partial_waits,
                "waits cut by the trace's edge or lost events",
            ),
            (u.unmatched_markers, "method or span ends without a start"),
        ];
        let said: Vec<String> = parts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        if !said.is_empty() {
            let _ = writeln!(s, "\nnot measured: {}", said.join(", "));
        }
    }
    s
}

fn noun(kind: &str) -> &'static str {
    match kind {
        "syscall" => "calls",
        "function" => "calls",
        _ => "waits",
    }
}

fn profile(s: &mut String, p: &ProfileDoc) {
    let _ = write!(s, "{}: {} {}", p.label, p.ops, noun(p.kind));
    if let (Some(lo), Some(hi)) = (p.min_ns, p.max_ns) {
        let _ = write!(
            s,
            ", mean {}, min {}, max {}",
            fmt_ns(p.mean_ns),
            fmt_ns(lo),
            fmt_ns(hi)
        );
    }
    let _ = writeln!(
        s,
        "; {} peak{}",
        p.peaks.len(),
        if p.peaks.len() == 1 { "" } else { "s" }
    );
    histogram(s, &p.bins, &p.peaks);
    for k in &p.peaks {
        peak_line(s, k, noun(p.kind));
    }
}

pub(crate) fn bar(count: u64, max: u64, width: usize) -> String {
    let mut n = (count as u128 * width as u128 / u128::from(max.max(1))) as usize;
    if count > 0 && n == 0 {
        n = 1;
    }
    format!("{}{}", "*".repeat(n), " ".repeat(width - n))
}

pub(crate) fn range(b: &BinDoc) -> String {
    format!("[{:>8}, {:>8})", fmt_ns(b.from_ns), fmt_ns(b.to_ns))
}

fn histogram(s: &mut String, bins: &[BinDoc], peaks: &[PeakDoc]) {
    let max = bins.iter().map(|b| b.count).max().unwrap_or(0);
    let _ = writeln!(s, "  {:<20} {:>10}  distribution", "latency", "count");
    for b in bins {
        let mode = peaks.iter().find(|k| k.mode_from_ns == b.from_ns);
        let mark = mode.map_or(String::new(), |k| format!(" <- peak {}", k.number));
        let _ = writeln!(
            s,
            "  {} {:>10} |{}|{}",
            range(b),
            b.count,
            bar(b.count, max, BAR),
            mark
        );
    }
}

fn peak_line(s: &mut String, k: &PeakDoc, noun: &str) {
    let _ = writeln!(
        s,
        "  peak {}: {} to {}, {} {} ({:.1} %), mode [{}, {})",
        k.number,
        fmt_ns(k.from_ns),
        fmt_ns(k.to_ns),
        k.ops,
        noun,
        k.share * 100.0,
        fmt_ns(k.mode_from_ns),
        fmt_ns(k.mode_to_ns)
    );
}

fn shade(count: u64, max: u64) -> char {
    if count == 0 {
        return ' ';
    }
    let f = (count as f64 + 1.0).log2() / (max as f64 + 1.0).log2();
    let i = ((f * (SHADES.len() - 1) as f64).ceil() as usize).clamp(1, SHADES.len() - 1);
    SHADES[i] as char
}

fn time_lapse(s: &mut String, p: &ProfileDoc, interval_ns: u64) {
    let (Some(first), Some(last)) = (p.bins.first(), p.bins.last()) else {
        return;
    };
    let _ = writeln!(
        s,
        "  time-lapse, {} per row; columns are the bins above, {} .. {}; darker = more (log scale)",
        fmt_ns(interval_ns),
        fmt_ns(first.from_ns),
        fmt_ns(last.to_ns)
    );
    let max = p
        .slices
        .iter()
        .flat_map(|sl| sl.bins.iter().map(|b| b.count))
        .max()
        .unwrap_or(0);
    for sl in &p.slices {
        let strip: String = sl.bins.iter().map(|b| shade(b.count, max)).collect();
        let _ = writeln!(
            s,
            "  {:>9} {:>8} |{}| {} peak{}",
            fmt_ns(sl.offset_ns),
            sl.ops,
            strip,
            sl.peaks.len(),
            if sl.peaks.len() == 1 { "" } else { "s" }
        );
    }
}
