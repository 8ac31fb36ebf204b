//! Text report of `causeway bottleneck`: knots ranked, each edge with its weight and
//! stacks, the advice sentence, then background knots, sinks, devices and the plain
//! off-CPU ranking for comparison.

use super::doc::{
    CpuProfileDoc, Doc, EdgeDoc, KindDoc, KnotDoc, PauseDoc, QualityDoc, SinkDoc, StackDoc,
};
use causeway_bottleneck::EdgeKind;
use std::fmt::Write;

/// Frames shown per stack line.
const FRAMES: usize = 6;

fn frames(f: &[String]) -> String {
    let mut s = f
        .iter()
        .take(FRAMES)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ← ");
    if f.len() > FRAMES {
        s.push_str(" ← …");
    }
    s
}

fn stacks(out: &mut String, title: &str, list: &[StackDoc]) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(out, "      {title}:");
    for s in list {
        let _ = write!(out, "        [{:.3}s]", s.weight_s);
        let mut first = true;
        for (side, f) in [("user", &s.user), ("kernel", &s.kernel)] {
            if f.is_empty() {
                continue;
            }
            if !first {
                out.push_str("\n                ");
            }
            let _ = write!(out, " {side}: {}", frames(f));
            first = false;
        }
        if first {
            out.push_str(" (no frames)");
        }
        out.push('\n');
    }
}

/// Where a thread vertex ran: its most sampled stacks with their share of its samples.
fn on_cpu(out: &mut String, label: &str, p: &CpuProfileDoc) {
    let _ = writeln!(
        out,
        "  on CPU, {label}: {} samples, {:.0}% in the kernel",
        p.samples,
        p.kernel_share * 100.0
    );
    for s in &p.stacks {
        let _ = write!(out, "        [{:>3.0}%]", s.share * 100.0);
        if !s.kernel.is_empty() {
            let _ = write!(out, " kernel: {} |", frames(&s.kernel));
        }
        if s.user.is_empty() {
            out.push_str(" (no user frames)\n");
        } else {
            let _ = writeln!(out, " {}", frames(&s.user));
        }
    }
}

fn edge(out: &mut String, r: &Doc, e: &EdgeDoc) {
    let name = format!("{} -> {}", r.vertices[e.from].label, r.vertices[e.to].label);
    let _ = write!(
        out,
        "  {name:<44} {:>9.3}s {:>5.1}%",
        e.weight_s,
        e.share_of_waits * 100.0
    );
    match e.kind {
        EdgeKind::Wait => {
            let _ = writeln!(
                out,
                "   {} waits, {:.3}s direct",
                e.direct_waits, e.direct_s
            );
        }
        EdgeKind::DeviceIdle => {
            let _ = writeln!(out, "   device idle, waiting for requests");
        }
    }
    stacks(out, "waiting at", &e.wait_stacks);
    match &r.waker_stack_sampling {
        Some(w) => {
            let title = format!(
                "woken by (waits under {}: 1 in {} sampled, weighted)",
                crate::notes::short_duration(w.min_wait_ns),
                w.one_in
            );
            stacks(out, &title, &e.waker_stacks);
        }
        None => stacks(out, "woken by", &e.waker_stacks),
    }
}

fn knot(out: &mut String, r: &Doc, k: &KnotDoc, title: &str) {
    let names: Vec<&str> = k
        .vertices
        .iter()
        .map(|&v| r.vertices[v].label.as_str())
        .collect();
    let _ = writeln!(
        out,
        "{title}: {}  [{:?}, {:.3}s of waits, {:.0}% CPU{}]",
        names.join(", "),
        k.shape,
        k.weight_s,
        k.cpu_fraction * 100.0,
        if k.has_io { ", has I/O" } else { "" }
    );
    for &e in &k.edges {
        edge(out, r, &r.edges[e]);
    }
    if k.needs_cpu_s > 0.0 {
        let _ = writeln!(
            out,
            "  needs CPU: its threads were runnable for {:.3}s",
            k.needs_cpu_s
        );
    }
    for &v in &k.vertices {
        if let Some(p) = &r.vertices[v].on_cpu {
            on_cpu(out, &r.vertices[v].label, p);
        }
    }
    edge_list(out, r, &k.leaks, "small leaks out of it, trimmed");
    edge_list(out, r, &k.paused, "waits on brief stops, set aside");
    edge_list(out, r, &k.removed_edges, "removed as low impact");
    if let Some(c) = &k.closed_loop {
        edge_list(
            out,
            r,
            &c.edges,
            "the rest of its closed loop, waiting on it",
        );
    }
    let _ = writeln!(out, "  => {}\n", k.advice);
}

/// `  TITLE: a -> b (0.012s), ...` for a non-empty list of edges.
fn edge_list(out: &mut String, r: &Doc, list: &[usize], title: &str) {
    if list.is_empty() {
        return;
    }
    let items: Vec<String> = list
        .iter()
        .map(|&e| {
            let e = &r.edges[e];
            format!(
                "{} -> {} ({:.3}s)",
                r.vertices[e.from].label, r.vertices[e.to].label, e.weight_s
            )
        })
        .collect();
    let _ = writeln!(out, "  {title}: {}", items.join(", "));
}

fn labels(r: &Doc, vs: &[usize], sep: &str) -> String {
    vs.iter()
        .map(|&v| r.vertices[v].label.as_str())
        .collect::<Vec<_>>()
        .join(sep)
}

fn sink(out: &mut String, r: &Doc, s: &SinkDoc) {
    let _ = writeln!(
        out,
        "  {:<44} {:>9.3}s waited for",
        r.vertices[s.vertex].label, s.incoming_s
    );
    if s.chain.len() >= 3 {
        let _ = writeln!(out, "  chain of waits: {}", labels(r, &s.chain, " -> "));
    }
    for c in &s.upstream_cycles {
        let _ = writeln!(out, "  cycle upstream: {{{}}}", labels(r, c, ", "));
    }
    for &e in &s.edges {
        edge(out, r, &r.edges[e]);
    }
    if let Some(p) = &r.vertices[s.vertex].on_cpu {
        on_cpu(out, &r.vertices[s.vertex].label, p);
    }
    let _ = writeln!(out, "  => {}", s.advice);
}

/// The brief stops section, if there are any.
fn pauses(out: &mut String, r: &Doc) {
    if r.pauses.is_empty() {
        return;
    }
    out.push_str(
        "Brief stops (threads many wait for, briefly and for a small share of their waiting, like a runtime's safepoint; set aside, never the answer):\n",
    );
    for p in &r.pauses {
        pause(out, r, p);
    }
    out.push('\n');
}

/// A brief stopper: who waits on it, how often, how long.
fn pause(out: &mut String, r: &Doc, p: &PauseDoc) {
    let mean_ms = if p.waits > 0 {
        p.direct_s * 1e3 / p.waits as f64
    } else {
        0.0
    };
    let v = &r.vertices[p.vertex];
    let pauses = match &v.kind {
        KindDoc::RuntimePauses {
            pauses, longest_ns, ..
        } => format!(
            " ({pauses} pauses, longest {:.1} ms)",
            *longest_ns as f64 / 1e6
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "  {}{pauses}: {} waits by {} threads, {:.3}s in all ({:.2} ms each on average), {:.1}% of their waiting",
        v.label,
        p.waits,
        p.waiter_threads,
        p.direct_s,
        mean_ms,
        p.share_of_waiting * 100.0
    );
}

/// What the words of the report mean, for a reader who has not read wPerf.
const LEGEND: &str = "\
knot: threads (and devices) that wait only for each other; speeding up anything outside cannot help them.
sink: something others wait for that waits for nobody: its own work (or a timer, or a busy device) is the limit.
cascade: a wait's time also counts for whoever held up its waker, so edge seconds add up across the threads held up.
%: an edge's share of all waiting in the graph (the seconds beside it are summed over the threads it holds up).

";

/// The `data:` line: what the analysis could not attribute or left out, and why.
fn data_line(out: &mut String, q: &QualityDoc) {
    let _ = writeln!(
        out,
        "data: {} events lost, {} model anomalies, {} waits ({:.3}s) with no known waker, {} unended at the end of the recording ({:.3}s), {} before exec ({:.3}s), {} before exit ({:.3}s), {} woken by socket data from a recorded sender ({} from outside), {} false wake-ups removed ({} unmatched), {} busy-waits ({} without a releaser), {} cascade cycles cut, {} cascades cut at the step budget",
        q.lost_events,
        q.model_anomalies,
        q.unattributed_waits,
        q.unattributed_s,
        q.unended_waits,
        q.unended_s,
        q.before_exec_waits,
        q.before_exec_s,
        q.exit_waits,
        q.exit_s,
        q.data_wakes,
        q.data_wakes_from_outside,
        q.false_wakeups_removed,
        q.false_wakeups_unmatched,
        q.spins,
        q.spins_unreleased,
        q.cascade_cycles_cut,
        q.cascade_budget_cut
    );
    // Said only when there are some: most programs have none, and the line is long.
    if q.idle_polls > 0 {
        let _ = writeln!(
            out,
            "idle: {} waits for work (epoll_wait, poll, select, a timed poll of a queue) ended by their own timeout with nothing done after ({:.3}s): left out of the edges",
            q.idle_polls, q.idle_poll_s
        );
    }
}

/// The report as text.
pub(crate) fn render(r: &Doc) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "causeway bottleneck: {:.3}s recorded{}; refinement threshold {:.3}s ({:.0}%); {}",
        r.duration_s,
        r.recorded_at
            .as_ref()
            .map_or_else(String::new, |t| format!(" from {t}")),
        r.threshold_s,
        if r.duration_s > 0.0 {
            r.threshold_s / r.duration_s * 100.0
        } else {
            0.0
        },
        if r.merged {
            "similar and short-term threads merged"
        } else {
            "raw threads (--no-merge)"
        }
    );
    data_line(&mut out, &r.quality);
    match &r.processes {
        Some(p) => {
            let pids: Vec<String> = p.iter().map(u32::to_string).collect();
            let _ = writeln!(
                out,
                "scope: the recorded processes {} (threads of other processes that woke them are one vertex, `other processes`)\n",
                pids.join(", ")
            );
        }
        None => out.push('\n'),
    }
    out.push_str(LEGEND);
    let _ = writeln!(out, "What to look at: {}\n", r.summary);
    if r.knots.is_empty() {
        out.push_str("No knots.\n\n");
    }
    for k in &r.knots {
        knot(&mut out, r, k, &format!("Knot {}", k.rank));
    }
    for (i, k) in r.background_knots.iter().enumerate() {
        knot(&mut out, r, k, &format!("Background knot {}", i + 1));
    }
    if !r.sinks.is_empty() {
        out.push_str("Sinks:\n");
        for s in &r.sinks {
            sink(&mut out, r, s);
        }
        out.push('\n');
    }
    if !r.background_sinks.is_empty() {
        out.push_str("Background (timer sleepers no worker waits for):\n");
        for s in &r.background_sinks {
            sink(&mut out, r, s);
        }
        out.push('\n');
    }
    pauses(&mut out, r);
    if let Some(g) = &r.what_if {
        crate::whatif::gains_text(&mut out, g);
    }
    // A device with no traffic (an unused NIC) says nothing: it is left out of the text.
    let busy: Vec<_> = r
        .devices
        .iter()
        .filter(|d| d.bytes > 0 || d.requests > 0)
        .collect();
    if !busy.is_empty() {
        out.push_str("Devices:\n");
        for d in busy {
            let own = if (d.recorded_utilization - d.utilization).abs() >= 0.005 {
                format!(
                    " (the recorded processes' requests in flight {:.0}% of the time)",
                    d.recorded_utilization * 100.0
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:<10} {} requests, {:.1} MB, utilization {:.0}%{own}, idle {:.3}s; capacity {}",
                r.vertices[d.vertex].label,
                d.requests,
                d.bytes as f64 / 1e6,
                d.utilization * 100.0,
                d.idle_s,
                d.capacity
            );
        }
        out.push('\n');
    }
    if !r.longest_off_cpu.is_empty() {
        out.push_str("Longest off-CPU (what a plain off-CPU ranking would name first):\n");
        for o in &r.longest_off_cpu {
            let _ = writeln!(
                out,
                "  {:<44} {:>9.3}s",
                r.vertices[o.vertex].label, o.off_cpu_s
            );
        }
    }
    out
}
