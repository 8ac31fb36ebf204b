//! Text form of the `info` report.

use super::report::{InfoReport, ThreadRow};
use std::fmt::Write;

/// Seconds with millisecond precision, for tables.
fn secs(ns: u64) -> String {
    format!("{:.3}s", ns as f64 / 1e9)
}

/// The flight-recorder trigger of a dump, if it is one.
fn trigger_line(out: &mut String, r: &InfoReport) {
    if let Some(t) = &r.trigger {
        // Times on the trace's own clock, from its first event like every other time.
        let at = t.ts_ns.saturating_sub(r.start_ns) as f64 / 1e9;
        let who = t
            .tid
            .map(|tid| format!(", thread {tid}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\ndumped by trigger: {}{who} at {at:.3} s",
            t.reason.name()
        );
    }
}

/// One line on user frames without names, and how to name them.
fn frame_names(out: &mut String, r: &InfoReport) {
    let n = &r.frame_names;
    if n.user == 0 {
        return;
    }
    let _ = write!(
        out,
        "\nuser frames: {} distinct, {} unnamed ({} in files without symbols, {} in anonymous memory)",
        n.user,
        n.unnamed(),
        n.unnamed_in_files,
        n.unnamed_anonymous
    );
    if n.jit_named > 0 {
        let _ = write!(
            out,
            "; {} JIT frames named (the JVM's own structures, perf maps, jitdump files)",
            n.jit_named
        );
    }
    if n.unnamed_anonymous > 0 {
        let _ = write!(
            out,
            "; JIT code is named from the runtime's perf map (java -XX:+DumpPerfMapAtExit, node --perf-basic-prof, python3.12 -X perf)"
        );
    }
    let _ = writeln!(out);
}

/// One line on the Go programs recorded: with or without their goroutines.
fn go_programs(out: &mut String, r: &InfoReport) {
    let n = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let (followed, not) = (n("go_processes_followed"), n("go_processes_unfollowed"));
    if followed + not == 0 {
        return;
    }
    let _ = write!(out, "\nGo programs: {followed} with goroutine events");
    if not > 0 {
        let _ = write!(
            out,
            ", {not} without (their threads' waits mix the goroutines they carry; `causeway record` says why)"
        );
    }
    let _ = writeln!(out);
}

/// The recorder counters stored in the trace.
fn counters(out: &mut String, r: &InfoReport) {
    if !r.counters.is_empty() {
        let _ = writeln!(out, "\nrecorder counters:");
        for (k, n) in &r.counters {
            let _ = writeln!(out, "  {k:<40} {n:>12}");
        }
    }
}

fn table(out: &mut String, title: &str, rows: &[ThreadRow], duration_ns: u64) {
    let _ = writeln!(out, "\n{title}:");
    if rows.is_empty() {
        let _ = writeln!(out, "  (none)");
        return;
    }
    let _ = writeln!(
        out,
        "  {:>8} {:>8}  {:<16} {:>10} {:>10} {:>10} {:>8}",
        "tid", "pid", "comm", "cpu", "blocked", "runnable", "samples"
    );
    for r in rows {
        let pct = |ns: u64| {
            if duration_ns == 0 {
                0.0
            } else {
                100.0 * ns as f64 / duration_ns as f64
            }
        };
        let _ = writeln!(
            out,
            "  {:>8} {:>8}  {:<16} {:>10} {:>10} {:>10} {:>8}   ({:.0}% cpu, {:.0}% blocked)",
            r.tid,
            r.pid,
            r.comm,
            secs(r.cpu_ns),
            secs(r.blocked_ns),
            secs(r.runnable_ns),
            r.samples,
            pct(r.cpu_ns),
            pct(r.blocked_ns)
        );
    }
}

/// The report as text.
pub(crate) fn render(r: &InfoReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trace:      {} ({} bytes, format {})",
        r.file, r.bytes, r.format_version
    );
    let _ = writeln!(out, "written by: {}", r.writer);
    if !r.command_line.is_empty() {
        let _ = writeln!(out, "command:    {}", r.command_line.join(" "));
    }
    let _ = writeln!(out, "host:       {}, {} CPUs", r.host, r.cpu_count);
    if let Some(at) = &r.recorded_at {
        let _ = writeln!(out, "recorded:   {at}");
    }
    let _ = writeln!(out, "duration:   {}", secs(r.duration_ns));
    let _ = writeln!(
        out,
        "events:     {}   threads: {}   processes: {}",
        r.events, r.threads, r.processes
    );
    for note in &r.notes {
        let _ = writeln!(out, "NOTE:       {note}");
    }
    for (tag, line) in super::cgroups::lines(&r.cgroups, &r.affinity, &r.pressure) {
        let _ = writeln!(out, "{tag:<12}{line}");
    }
    for note in &r.recording_notes {
        let _ = writeln!(out, "recorded:   {note}");
    }
    if r.lost_events > 0 {
        let per: Vec<String> = r
            .lost_events_by_cpu
            .iter()
            .map(|(c, n)| format!("cpu{c}: {n}"))
            .collect();
        let _ = writeln!(
            out,
            "LOST:       {} events ({})",
            r.lost_events,
            per.join(", ")
        );
    } else {
        let _ = writeln!(out, "lost:       0 events");
    }
    let _ = writeln!(out, "samples:    {} on-CPU samples", r.cpu_samples);
    if r.skipped_unknown_events > 0 {
        let _ = writeln!(
            out,
            "skipped:    {} events of kinds this version does not know",
            r.skipped_unknown_events
        );
    }
    if r.skipped_unknown_blocks > 0 {
        let _ = writeln!(
            out,
            "skipped:    {} blocks of kinds this version does not know",
            r.skipped_unknown_blocks
        );
    }
    if r.clock_inversions > 0 {
        let _ = writeln!(out, "out of order: {} events", r.clock_inversions);
    }
    if r.model_stats.outside_scope > 0 {
        let _ = writeln!(
            out,
            "scope:      recorded processes only; {} switches involve threads of other processes (expected)",
            r.model_stats.outside_scope
        );
    }
    if r.model_anomalies > 0 {
        let _ = writeln!(
            out,
            "anomalies:  {} events contradict the thread states seen before them",
            r.model_anomalies
        );
        if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&r.model_stats) {
            let parts: Vec<String> = m
                .iter()
                .filter(|(k, v)| {
                    !matches!(
                        k.as_str(),
                        "events" | "outside_scope" | "dataless_flush_completions"
                    ) && v.as_u64().unwrap_or(0) > 0
                })
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let _ = writeln!(out, "            ({})", parts.join(", "));
        }
    }
    let _ = writeln!(out, "\nevents by kind:");
    for (k, n) in &r.events_by_kind {
        let _ = writeln!(out, "  {k:<16} {n:>12}");
    }
    trigger_line(&mut out, r);
    frame_names(&mut out, r);
    go_programs(&mut out, r);
    counters(&mut out, r);
    table(
        &mut out,
        "top threads by CPU time",
        &r.top_cpu,
        r.duration_ns,
    );
    table(
        &mut out,
        "top threads by blocked time",
        &r.top_blocked,
        r.duration_ns,
    );
    if !r.others_partial.is_empty() {
        table(
            &mut out,
            "threads of processes not recorded (seen only with recorded threads: partial times)",
            &r.others_partial,
            r.duration_ns,
        );
    }
    out
}
