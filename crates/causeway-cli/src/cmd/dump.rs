//! `causeway dump`: print events, filtered.

use crate::exit;
use crate::flags::DumpArgs;
use crate::trace::open_trace;
use anyhow::{Context, Result};
use causeway_format::{EventKind, EventKindTag, TimeRange, Timestamp};
use causeway_report::events::json::event_json;
use causeway_report::events::names::Names;
use causeway_report::events::text::{details, stack_lines};
use std::collections::HashSet;
use std::io::{BufWriter, Write};

/// Run the command; returns the exit code.
pub fn run(args: &DumpArgs) -> Result<u8> {
    let kinds: Option<HashSet<EventKindTag>> =
        (!args.kind.is_empty()).then(|| args.kind.iter().map(|k| k.0).collect());
    let mut rd = open_trace(&args.trace)?;
    let Some((first, _)) = rd.time_range() else {
        eprintln!("{}: the trace holds no events", args.trace.display());
        return Ok(exit::NOTHING_OR_USER_ERROR);
    };
    let range = TimeRange {
        start: first.saturating_add(args.from.unwrap_or_default()),
        end: args
            .to
            .map_or(Timestamp(u64::MAX), |t| first.saturating_add(t)),
    };
    let tables = rd.tables().clone();
    let names = Names::new(&tables);
    let tids: HashSet<u32> = args.tid.iter().copied().collect();
    let pids: HashSet<u32> = args.pid.iter().copied().collect();
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut printed = 0u64;
    let mut text = String::new();
    for ev in rd.events_in(range) {
        let ev = ev.with_context(|| format!("reading events of {}", args.trace.display()))?;
        if let Some(k) = &kinds
            && !k.contains(&ev.kind.tag())
        {
            continue;
        }
        if !tids.is_empty() && !ev.kind.tids().any(|t| tids.contains(&t.0)) {
            continue;
        }
        if !pids.is_empty()
            && !ev
                .kind
                .tids()
                .any(|t| names.tgid(t).is_some_and(|p| pids.contains(&p.0)))
        {
            continue;
        }
        if let Some(limit) = args.limit
            && printed >= limit
        {
            break;
        }
        printed += 1;
        if args.json {
            serde_json::to_writer(&mut out, &event_json(&names, &ev))?;
            out.write_all(b"\n")?;
            continue;
        }
        let ts = if args.abs {
            ev.ts.0.to_string()
        } else {
            let rel = ev.ts.0.saturating_sub(first.0);
            format!("{:>4}.{:09}", rel / 1_000_000_000, rel % 1_000_000_000)
        };
        writeln!(
            out,
            "{ts} [{:03}] {:<14} {}",
            ev.cpu.0,
            ev.kind.tag().name(),
            details(&names, &ev)
        )?;
        if args.stacks
            && let EventKind::Stack { user, kernel, .. } = ev.kind
        {
            text.clear();
            for s in [kernel, user].into_iter().flatten() {
                stack_lines(&names, s, &mut text);
            }
            out.write_all(text.as_bytes())?;
        }
    }
    out.flush()?;
    Ok(if printed == 0 {
        exit::NOTHING_OR_USER_ERROR
    } else {
        exit::OK
    })
}
