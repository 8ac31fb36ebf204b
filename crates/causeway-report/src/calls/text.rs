//! The text form of the calls report.

use super::doc::{CallDoc, CallsDoc};
use crate::format::{millis, secs};
use std::io::{self, Write};

fn open_mark(c: &CallDoc) -> &'static str {
    if c.open { " (still running)" } else { "" }
}

/// Write the whole report.
pub fn write(d: &CallsDoc, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "in-process calls: {} calls in {} threads",
        d.calls, d.threads
    )?;
    if let Some(t) = &d.trigger {
        writeln!(out, "{}", t.sentence)?;
    }
    if d.unbalanced_exits > 0 {
        writeln!(
            out,
            "warning: {} exits did not match an open call",
            d.unbalanced_exits
        )?;
    }
    if let Some(chains) = &d.chains {
        writeln!(
            out,
            "\nlongest call chains between {:.3} s and {:.3} s (self time of the last call):",
            secs(d.window_ns[0]),
            secs(d.window_ns[1])
        )?;
        if chains.is_empty() {
            writeln!(out, "  none")?;
        }
        for (i, c) in chains.iter().enumerate() {
            let last = c.calls.last();
            writeln!(
                out,
                "{:3}. {:10.3} ms  thread {} ({}){}",
                i + 1,
                millis(c.self_in_window_ns),
                c.tid,
                c.thread,
                last.map_or("", open_mark)
            )?;
            let path: Vec<&str> = c.calls.iter().map(|c| c.function.as_str()).collect();
            writeln!(out, "       {}", path.join(" > "))?;
        }
    }
    if let Some(top) = &d.top {
        writeln!(out, "\nfunctions by self time:")?;
        writeln!(
            out,
            "  {:>12} {:>12} {:>10} {:>12}  function",
            "self ms", "total ms", "calls", "max ms"
        )?;
        for f in top {
            let (own, total, max) = (millis(f.self_ns), millis(f.total_ns), millis(f.max_ns));
            let (n, name) = (f.calls, &f.function);
            writeln!(out, "  {own:12.3} {total:12.3} {n:10} {max:12.3}  {name}")?;
        }
    }
    if let Some(m) = &d.matches {
        writeln!(
            out,
            "\nsignature {}: {} instances",
            m.signature,
            m.instances.len()
        )?;
        for i in m.instances.iter().take(50) {
            let parts: Vec<String> = i
                .calls
                .iter()
                .map(|c| {
                    format!(
                        "{} {:.3} ms{}",
                        c.function,
                        millis(c.duration_ns),
                        open_mark(c)
                    )
                })
                .collect();
            let at = i.calls.first().map_or(0.0, |c| secs(c.start_ns));
            writeln!(
                out,
                "  thread {} at {:.6} s: {}",
                i.tid,
                at,
                parts.join(" > ")
            )?;
        }
        if m.instances.len() > 50 {
            writeln!(
                out,
                "  ... {} more (--json lists all)",
                m.instances.len() - 50
            )?;
        }
    }
    if let Some(trees) = &d.trees {
        for t in trees {
            writeln!(
                out,
                "\nthread {} ({}): {} calls shown, {} shorter ones hidden",
                t.tid,
                t.thread,
                t.calls.len(),
                t.hidden
            )?;
            for c in &t.calls {
                writeln!(
                    out,
                    "  {:12.6} s {:10.3} ms  {}{}{}",
                    secs(c.call.start_ns),
                    millis(c.call.duration_ns),
                    "  ".repeat(c.depth as usize),
                    c.call.function,
                    open_mark(&c.call)
                )?;
            }
        }
    }
    Ok(())
}
