//! `causeway check`: verify every block and salvage the intact ones.
//!
//! The verdict is [`salvage::check`]'s: the block-by-block scan and the reader every
//! other command uses, so a file `info` refuses is never called intact here, and the
//! salvage it writes is what the reader then accepts. A file holding several traces
//! (concatenated files) is salvaged into one file per trace.

use crate::exit;
use crate::flags::CheckArgs;
use anyhow::{Context, Result};
use causeway_format::block::BlockKind;
use causeway_format::salvage::{self, SalvageSummary, ScanReport};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One salvaged trace: where it went and what it kept.
struct Salvaged {
    trace: usize,
    path: PathBuf,
    sum: SalvageSummary,
}

/// Run the command; returns the exit code.
pub fn run(args: &CheckArgs) -> Result<u8> {
    let data = std::fs::read(&args.trace).with_context(|| {
        let temps = causeway_record::outfile::leftover_temps(&args.trace);
        match temps.first() {
            Some(t) => format!(
                "reading trace {} (a recording to it was interrupted and left {}: check that file)",
                args.trace.display(),
                t.display()
            ),
            None => format!("reading trace {}", args.trace.display()),
        }
    })?;
    let rep = salvage::check(&data);
    let mut salvaged = Vec::new();
    if !rep.is_clean() && !args.no_salvage && !rep.blocks.is_empty() {
        for t in 0..rep.traces.len() {
            if !rep.blocks.iter().any(|b| b.trace == t) {
                continue;
            }
            let path = output_path(args, t);
            let sum = write_one(&data, &rep, t, &path)?;
            salvaged.push(Salvaged {
                trace: t,
                path,
                sum,
            });
        }
    }
    let leftovers = causeway_record::outfile::leftover_temps(&args.trace);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        writeln!(out, "{}", to_json(args, &rep, &salvaged, &leftovers))?;
    } else {
        print_text(&mut out, args, &rep, &salvaged)?;
        for t in &leftovers {
            writeln!(
                out,
                "  note: {} is left from an interrupted recording to this path; `causeway check {}` salvages it",
                t.display(),
                t.display()
            )?;
        }
    }
    Ok(if rep.is_clean() {
        exit::OK
    } else {
        exit::BAD_INPUT
    })
}

/// Where salvaged trace `t` goes: `TRACE.salvaged.cwt` (or `-o`), and for the second
/// and later traces of a concatenated file `….2.cwt`, `….3.cwt`.
fn output_path(args: &CheckArgs, t: usize) -> PathBuf {
    let base = args.output.clone().unwrap_or_else(|| {
        let mut p = args.trace.clone().into_os_string();
        p.push(".salvaged.cwt");
        PathBuf::from(p)
    });
    if t == 0 {
        return base;
    }
    let s = base.to_string_lossy();
    let stem = s.strip_suffix(".cwt").unwrap_or(&s);
    PathBuf::from(format!("{stem}.{}.cwt", t + 1))
}

/// Write salvaged trace `t` to `path`; on failure (a full disk) remove what was
/// written, so no empty or partial `.salvaged.cwt` is left to be mistaken for one.
fn write_one(data: &[u8], rep: &ScanReport, t: usize, path: &Path) -> Result<SalvageSummary> {
    let f = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let r = salvage::write_salvaged_trace(data, rep, t, std::io::BufWriter::new(f))
        .map_err(anyhow::Error::from)
        .and_then(|(w, sum)| {
            let f = w
                .into_inner()
                .map_err(|e| anyhow::Error::from(e.into_error()))?;
            f.sync_all()?;
            Ok(sum)
        });
    r.or_else(|e| {
        // Only a regular file is removed: `-o /dev/full` stays.
        if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(path);
        }
        Err(e).with_context(|| format!("writing salvaged trace {} (removed)", path.display()))
    })
}

fn to_json(
    args: &CheckArgs,
    rep: &ScanReport,
    salvaged: &[Salvaged],
    leftovers: &[PathBuf],
) -> serde_json::Value {
    let first = salvaged.iter().find(|s| s.trace == 0);
    json!({
        "file": args.trace.display().to_string(),
        "bytes": rep.file_len,
        "clean": rep.is_clean(),
        "header_ok": rep.header.is_ok(),
        "header_error": rep.header.as_ref().err(),
        "has_footer": rep.has_trailer,
        "reader_error": rep.reader_error,
        "intact_blocks": rep.blocks.len(),
        "intact_chunks": rep.blocks_of(BlockKind::Events).count(),
        "intact_events": rep.intact_events(),
        "damage": rep.damage.iter().map(|d| json!({
            "offset": d.offset, "len": d.len, "detail": d.detail,
        })).collect::<Vec<_>>(),
        "traces": rep.traces.len(),
        "salvaged_to": first.map(|s| s.path.display().to_string()),
        "salvaged_events": first.map(|s| s.sum.events),
        "salvage_dropped_blocks": first.map(|s| s.sum.dropped_blocks),
        "salvaged": salvaged.iter().map(|s| json!({
            "trace": s.trace,
            "offset": rep.traces.get(s.trace).map(|t| t.offset),
            "path": s.path.display().to_string(),
            "chunks": s.sum.chunks,
            "events": s.sum.events,
            "dropped_blocks": s.sum.dropped_blocks,
            "duplicate_blocks": s.sum.duplicate_blocks,
            "covered_ns": s.sum.mark.covered_ns,
            "original_ns": s.sum.mark.original_ns,
            "stats_lost": s.sum.mark.stats_lost,
        })).collect::<Vec<_>>(),
        "interrupted_recordings": leftovers.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
}

fn print_text(
    out: &mut impl Write,
    args: &CheckArgs,
    rep: &ScanReport,
    salvaged: &[Salvaged],
) -> Result<()> {
    writeln!(out, "{}: {} bytes", args.trace.display(), rep.file_len)?;
    match &rep.header {
        Ok(h) => writeln!(out, "  header: ok (written by {})", h.writer)?,
        Err(e) => writeln!(out, "  header: DAMAGED: {e}")?,
    }
    if rep.traces.len() > 1 {
        let at: Vec<String> = rep.traces.iter().map(|t| t.offset.to_string()).collect();
        writeln!(
            out,
            "  the file holds {} traces (concatenated files?), starting at bytes {}; each is salvaged on its own",
            rep.traces.len(),
            at.join(", ")
        )?;
    }
    let chunks = rep.blocks_of(BlockKind::Events).count();
    writeln!(
        out,
        "  intact: {} blocks, {} event chunks, {} events",
        rep.blocks.len(),
        chunks,
        rep.intact_events()
    )?;
    let footer = if rep.has_trailer {
        "ok"
    } else {
        "MISSING (recording interrupted or file truncated)"
    };
    writeln!(out, "  footer: {footer}")?;
    for d in &rep.damage {
        writeln!(
            out,
            "  damaged: bytes {}..{} ({} bytes): {}",
            d.offset,
            d.offset + d.len,
            d.len,
            d.detail
        )?;
    }
    if let Some(e) = &rep.reader_error {
        writeln!(out, "  the reader refuses it: {e}")?;
    }
    if rep.is_clean() {
        writeln!(out, "  trace is intact")?;
    } else if salvaged.is_empty() && rep.blocks.is_empty() {
        writeln!(out, "  nothing intact to salvage")?;
    }
    for s in salvaged {
        writeln!(
            out,
            "  salvaged {} chunks ({} events) into {}: {}",
            s.sum.chunks,
            s.sum.events,
            s.path.display(),
            s.sum.mark.summary()
        )?;
        if s.sum.dropped_blocks > 0 {
            writeln!(
                out,
                "  left out {} intact table blocks whose ids clash with rows already kept",
                s.sum.dropped_blocks
            )?;
        }
        if s.sum.duplicate_blocks > 0 {
            writeln!(
                out,
                "  left out {} blocks that repeat blocks already kept (a file concatenated with itself?)",
                s.sum.duplicate_blocks
            )?;
        }
    }
    Ok(())
}
