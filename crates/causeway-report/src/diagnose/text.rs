//! The text form of the diagnosis: the verdict first (the culprit chain, one line per
//! hop with what each waited on), then the evidence: each finding with its slice and
//! comparisons, circular waits, and every decision. Without `verbose`, only the
//! findings on the verdict's chain are shown, slices show their first steps,
//! comparisons their first threads and the decisions their first few, each with a
//! count of the rest, so a diagnosis of a real system-wide recording stays readable
//! and the same length from run to run; JSON keeps everything.

use super::doc::{DiagnosisDoc, FindingDoc, HopDoc, SliceDoc};
use super::names::{VertexDoc, line};
use crate::format::millis;
use std::io::{self, Write};

/// Slice steps shown per slice without `verbose`.
const STEPS: usize = 3;

/// Threads compared shown per finding without `verbose`.
const COMPARED: usize = 3;

/// Decisions listed without `verbose`.
const DECISIONS: usize = 6;

/// One line per hop: who, how long, what it waited on for the next.
fn verdict(out: &mut dyn Write, chain: &[HopDoc]) -> io::Result<()> {
    let Some(first) = chain.first() else {
        return Ok(());
    };
    writeln!(
        out,
        "verdict: {} {} {:.3} ms; culprit chain, each waiting on the next:",
        first.vertex.who(),
        first.vertex.block,
        millis(first.vertex.duration_ns)
    )?;
    let width = chain
        .iter()
        .map(|h| h.vertex.who().len())
        .max()
        .unwrap_or(0);
    for (i, h) in chain.iter().enumerate() {
        let who = h.vertex.who();
        let how = match (i + 1 == chain.len(), h.kind) {
            (last, "CPU") if let Some(q) = &h.vertex.throttled => format!(
                "held back {:.1} ms of it by {}: {}{}",
                millis(q.held_ns),
                q.text(),
                q.why(),
                if last { ", the end of the chain" } else { "" }
            ),
            (last, k) if let Some(m) = &h.vertex.memory_limit => format!(
                "{k} under {}{}",
                m.text(),
                match (last, h.vertex.device_ended) {
                    (true, true) => ": ended by the device's completion, the end of the chain",
                    (true, false) => ": the end of what the trace shows",
                    _ => "",
                }
            ),
            (true, k) if h.vertex.device_ended => {
                format!("{k}: ended by the device's completion, the end of the chain")
            }
            (true, "sleep") => "sleep: it chose to wait, the end of the chain".to_string(),
            (true, "CPU") => "CPU: busy the whole time, the end of the chain".to_string(),
            (true, k) => format!("{k}: the end of what the trace shows"),
            (false, k) => k.to_string(),
        };
        // The program's own frames, where it waited or ran; for a run whose samples
        // name none, where it began and ended.
        let at = match (&h.vertex.site, &h.vertex.run_bounds) {
            (Some(s), _) => format!("; in {}", s.text()),
            (None, Some(b)) => format!(
                "; {} samples in it, too few to say what it ran: {}",
                h.vertex.samples,
                b.text()
            ),
            (None, None) => String::new(),
        };
        let found = h.found_as.map(|r| format!(" ({r})")).unwrap_or_default();
        writeln!(
            out,
            "  {}{who:<width$}  {:>12}  {how}{at}{found}",
            if i == 0 { "   " } else { "<- " },
            format!(
                "{} {:.1} ms",
                h.vertex.block.split(' ').next().unwrap_or(""),
                millis(h.vertex.duration_ns)
            ),
        )?;
    }
    Ok(())
}

fn details(out: &mut dyn Write, v: &VertexDoc, pad: &str) -> io::Result<()> {
    if let Some(w) = &v.woken_by {
        writeln!(out, "{pad}ended: {w}")?;
    }
    if !v.syscalls.is_empty() {
        writeln!(out, "{pad}syscalls: {}", v.syscalls.join(", "))?;
    }
    if let Some(s) = &v.site {
        let samples = match (v.kind, s.samples) {
            ("exec", n) if n > 0 => format!(" ({n} of {} samples)", v.samples),
            _ => String::new(),
        };
        writeln!(out, "{pad}in: {}{samples}", s.text())?;
    }
    if !v.frames.is_empty() {
        writeln!(out, "{pad}stack: {}", v.frames.join(" < "))?;
    }
    if !v.hot.is_empty() {
        writeln!(
            out,
            "{pad}hot ({} samples): {}",
            v.samples,
            v.hot.join(" < ")
        )?;
    }
    Ok(())
}

fn slice(out: &mut dyn Write, s: &SliceDoc, pad: &str, verbose: bool) -> io::Result<()> {
    let n = s.steps.len().saturating_sub(1);
    let shown = if verbose { n } else { n.min(STEPS) };
    for st in s.steps.iter().skip(1).take(shown) {
        writeln!(
            out,
            "{pad}<- {}  [{}, {}, by {}]",
            line(&st.vertex),
            st.edge.unwrap_or("?"),
            st.strength.unwrap_or("?"),
            st.decided.unwrap_or("?")
        )?;
        details(out, &st.vertex, &format!("{pad}     "))?;
    }
    if shown < n {
        writeln!(
            out,
            "{pad}... {} more steps (--verbose shows them)",
            n - shown
        )?;
    }
    writeln!(out, "{pad}(slice ended: {})", s.end)
}

fn finding(out: &mut dyn Write, i: usize, f: &FindingDoc, verbose: bool) -> io::Result<()> {
    let pad = "   ".repeat(f.depth as usize);
    let role = match f.culprit_of {
        None => "problem".to_string(),
        Some(v) => format!("culprit of vertex {v}"),
    };
    writeln!(
        out,
        "\n{pad}{}. {} ({role}, vertex {}): {}",
        i + 1,
        f.case,
        f.vertex.id,
        line(&f.vertex)
    )?;
    let inner = format!("{pad}     ");
    details(out, &f.vertex, &inner)?;
    if let Some(n) = &f.note {
        writeln!(out, "{inner}{n}")?;
    }
    if let Some(w) = &f.flag_writer {
        writeln!(
            out,
            "{inner}the data flag it polls was last written by {}, the late writer: {}",
            w.who(),
            line(w)
        )?;
        writeln!(
            out,
            "{inner}compared the writer's thread (strong: the data flag), then the threads \
             the loop exchanged wake-ups with (weak)"
        )?;
    }
    match (&f.similar, &f.slice) {
        (Some(s), Some(sl)) => {
            writeln!(out, "{inner}similar earlier vertex {}: {}", s.id, line(s))?;
            writeln!(out, "{inner}its normal wake-up path:")?;
            slice(out, sl, &inner, verbose)?;
        }
        (None, Some(sl)) => {
            writeln!(out, "{inner}slice back to its cause:")?;
            slice(out, sl, &inner, verbose)?;
        }
        (_, None) if !f.compared.is_empty() && f.flag_writer.is_none() => {
            // The thread that ended the wait, when known, is compared first (strong).
            let first = if f.compared[0].from_normal_path {
                "the thread that ended it (strong), then "
            } else {
                ""
            };
            writeln!(
                out,
                "{inner}no similar earlier wait got its wake-up: compared {first}the \
                 threads it exchanged wake-ups with just before (weak)"
            )?
        }
        _ => {}
    }
    let shown = if verbose {
        f.compared.len()
    } else {
        f.compared.len().min(COMPARED)
    };
    for c in f.compared.iter().take(shown) {
        writeln!(
            out,
            "{inner}meanwhile {} [{}, covers {}% of the wait{}]",
            line(&c.vertex),
            c.case,
            c.overlap_percent,
            if c.from_normal_path { "" } else { ", peer" }
        )?;
    }
    if shown < f.compared.len() {
        writeln!(
            out,
            "{inner}... {} more threads compared (--verbose shows them)",
            f.compared.len() - shown
        )?;
    }
    Ok(())
}

/// Where a yield loop runs, for the data-flag request: its innermost frames, else the
/// functions its on-CPU samples fell in.
fn loop_place(v: &VertexDoc) -> String {
    let names = if v.frames.is_empty() {
        &v.hot
    } else {
        &v.frames
    };
    if names.is_empty() {
        return "its thread's code".to_string();
    }
    names
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(" < ")
}

/// Write the whole report.
pub fn write(d: &DiagnosisDoc, verbose: bool, out: &mut dyn Write) -> io::Result<()> {
    verdict(out, &d.chain)?;
    writeln!(out, "\nevidence\nwhy is it stuck: {}", line(&d.problem))?;
    let g = &d.graph;
    writeln!(
        out,
        "event graph: {} vertices, {} edges ({} strong, {} weak); {} peer-set splits, {} \
         batch item splits; {} data edges; {} socket wake-ups linked to their sender; {} \
         interrupt wake-ups left out",
        g.vertices,
        g.edges,
        g.strong,
        g.weak,
        g.peer_splits,
        g.batch_splits,
        g.data_edges,
        g.socket_wakeups,
        g.interrupt_wakeups
    )?;
    // Without `verbose` the evidence backs the verdict: the findings on its chain.
    // Side branches (another culprit of a hop, found by a later comparison) change
    // from run to run with the machine's background and would make the same stall's
    // report differ in length; they are counted and `--verbose` shows them.
    let on_chain = |f: &FindingDoc| d.chain.iter().any(|h| h.vertex.id == f.vertex.id);
    let mut aside = 0;
    for (i, f) in d.findings.iter().enumerate() {
        if verbose || f.depth == 0 || on_chain(f) {
            finding(out, i, f, verbose)?;
        } else {
            aside += 1;
        }
    }
    if aside > 0 {
        writeln!(
            out,
            "\n{aside} more findings off the verdict's chain (--verbose shows them)"
        )?;
    }
    for c in &d.circles {
        let names: Vec<String> = c
            .vertices
            .iter()
            .map(|v| match &v.wait_call {
                Some(w) => format!("{} in {w}", v.who()),
                None => v.who(),
            })
            .collect();
        writeln!(
            out,
            "\ncircular wait: {} -> back to the first",
            names.join(" -> ")
        )?;
        match (c.broken_at, c.broken_by) {
            (Some(v), Some(by)) => writeln!(out, "   broken by {by} ending vertex {v}")?,
            _ => writeln!(out, "   nothing in the trace broke it")?,
        }
    }
    if let Some(v) = &d.needs_data_flag {
        writeln!(
            out,
            "\nvertex {} is a sched_yield loop of {} and the trace has no data flag it \
             waits for: find the variable it polls (the loop is in {}) and record again \
             with its accesses, `causeway watch --symbol NAME -p PID` or `causeway record \
             --watch NAME -- CMD`, then diagnose the new trace",
            v.id,
            v.who(),
            loop_place(v)
        )?;
    }
    writeln!(out, "\ndecisions ({} queries):", d.queries)?;
    if d.decisions.is_empty() {
        writeln!(out, "   none: every step followed the one strong edge")?;
    }
    let shown = if verbose {
        d.decisions.len()
    } else {
        d.decisions.len().min(DECISIONS)
    };
    for x in d.decisions.iter().take(shown) {
        writeln!(
            out,
            "   at vertex {}: {} {:?}, suggested {}, answer {} (by {})",
            x.at, x.question, x.candidates, x.suggested, x.answer, x.by
        )?;
    }
    if shown < d.decisions.len() {
        writeln!(
            out,
            "   ... {} more decisions (--verbose shows them)",
            d.decisions.len() - shown
        )?;
    }
    Ok(())
}
