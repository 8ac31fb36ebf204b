//! The text form of the comparison.

use super::doc::{BucketDoc, Doc, RunDoc, SiteDoc};
use std::fmt::Write as _;

/// Syscalls listed in the text form (the JSON has them all).
const TOP_SYSCALLS: usize = 10;

pub(super) fn render(d: &Doc) -> String {
    let mut o = String::new();
    run_line(&mut o, "normal", &d.normal);
    run_line(&mut o, "slow", &d.slow);
    only(&mut o, "Only in the slow run", &d.only_in_slow);
    only(&mut o, "Only in the normal run", &d.only_in_normal);
    let _ = writeln!(
        o,
        "\nSyscalls, most time added in the slow run first (calls, time in calls):"
    );
    for s in d.syscalls.iter().take(TOP_SYSCALLS) {
        let _ = writeln!(
            o,
            "  {:<18} normal {:>7} {:>10}   slow {:>7} {:>10}   durations EMD {}",
            s.syscall,
            s.normal_calls,
            secs(s.normal_ns),
            s.slow_calls,
            secs(s.slow_ns),
            s.durations_emd_buckets
                .map_or_else(|| "n/a".to_string(), |e| format!("{e:.2}"))
        );
        for c in s.call_sites.iter().take(3) {
            let _ = writeln!(
                o,
                "    from {:<30} normal {:>7} {:>10}   slow {:>7} {:>10}",
                c.call_site,
                c.normal_calls,
                secs(c.normal_ns),
                c.slow_calls,
                secs(c.slow_ns)
            );
        }
    }
    let _ = writeln!(
        o,
        "\nWait times (blocked until woken), number of waits per duration; earth mover's distance {:.2} log2 buckets:",
        d.wait_emd_buckets
    );
    histogram(&mut o, &d.wait_histogram);
    let _ = writeln!(o, "\nBottleneck verdicts:");
    for (name, r) in [("normal", &d.normal), ("slow", &d.slow)] {
        let v = r
            .label
            .bottleneck
            .as_deref()
            .unwrap_or("no knot or sink found");
        let _ = writeln!(o, "  {name:<6} {v}");
    }
    o
}

fn run_line(o: &mut String, name: &str, r: &RunDoc) {
    let at = r
        .label
        .recorded_at
        .as_deref()
        .map_or(String::new(), |a| format!(", recorded {a}"));
    let _ = writeln!(
        o,
        "{name:<6} {}{at}: {}, {} syscalls, {} waits ({} blocked)",
        r.label.path,
        secs(r.duration_ns),
        r.syscalls,
        r.waits,
        secs(r.waited_ns)
    );
}

fn only(o: &mut String, title: &str, sites: &[SiteDoc]) {
    let _ = writeln!(o, "\n{title} (syscall from call site):");
    if sites.is_empty() {
        let _ = writeln!(o, "  nothing");
    }
    for s in sites {
        let _ = writeln!(
            o,
            "  {} from {}: {} calls, {}",
            s.syscall,
            s.call_site,
            s.calls,
            secs(s.time_ns)
        );
    }
}

fn histogram(o: &mut String, b: &[BucketDoc]) {
    let max = b
        .iter()
        .map(|x| x.normal.max(x.slow))
        .max()
        .unwrap_or(1)
        .max(1);
    let bar = |n: u64| "#".repeat(((n * 24).div_ceil(max)) as usize);
    let _ = writeln!(
        o,
        "  {:>10} {:>8} {:<24} {:>8} {:<24}",
        "from", "normal", "", "slow", ""
    );
    for x in b {
        let _ = writeln!(
            o,
            "  {:>10} {:>8} {:<24} {:>8} {:<24}",
            short(x.from_ns),
            x.normal,
            bar(x.normal),
            x.slow,
            bar(x.slow)
        );
    }
}

/// Nanoseconds in the unit that reads best.
fn secs(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{:.3} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.3} ms", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1} us", n as f64 / 1e3),
        n => format!("{n} ns"),
    }
}

/// A bucket bound: `512ns`, `4us`, `1ms`, `2s`.
fn short(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{}s", n / 1_000_000_000),
        n if n >= 1_000_000 => format!("{}ms", n / 1_000_000),
        n if n >= 1_000 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}
