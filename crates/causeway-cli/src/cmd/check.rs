//! `causeway check`: verify every block and salvage the intact ones.

use crate::exit;
use crate::flags::CheckArgs;
use anyhow::{Context, Result};
use causeway_format::block::BlockKind;
use causeway_format::salvage::{self, ScanReport};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// Run the command; returns the exit code.
pub fn run(args: &CheckArgs) -> Result<u8> {
    let data = std::fs::read(&args.trace)
        .with_context(|| format!("reading trace {}", args.trace.display()))?;
    let rep = salvage::scan(&data);
    let mut salvaged = None;
    if !rep.is_clean() && !args.no_salvage && !rep.blocks.is_empty() {
        let out_path = args.output.clone().unwrap_or_else(|| {
            let mut p = args.trace.clone().into_os_string();
            p.push(".salvaged.cwt");
            PathBuf::from(p)
        });
        let f = std::fs::File::create(&out_path)
            .with_context(|| format!("creating {}", out_path.display()))?;
        let (_, sum) = salvage::write_salvaged(&data, &rep, f)
            .with_context(|| format!("writing salvaged trace {}", out_path.display()))?;
        salvaged = Some((out_path, sum));
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let v = json!({
            "file": args.trace.display().to_string(),
            "bytes": rep.file_len,
            "clean": rep.is_clean(),
            "header_ok": rep.header.is_ok(),
            "header_error": rep.header.as_ref().err(),
            "has_footer": rep.has_trailer,
            "intact_blocks": rep.blocks.len(),
            "intact_chunks": rep.blocks_of(BlockKind::Events).count(),
            "intact_events": rep.intact_events(),
            "damage": rep.damage.iter().map(|d| json!({
                "offset": d.offset, "len": d.len, "detail": d.detail,
            })).collect::<Vec<_>>(),
            "salvaged_to": salvaged.as_ref().map(|(p, _)| p.display().to_string()),
            "salvaged_events": salvaged.as_ref().map(|(_, s)| s.events),
            "salvage_dropped_blocks": salvaged.as_ref().map(|(_, s)| s.dropped_blocks),
        });
        writeln!(out, "{v}")?;
    } else {
        print_text(&mut out, args, &rep, salvaged.as_ref())?;
    }
    Ok(if rep.is_clean() {
        exit::OK
    } else {
        exit::BAD_INPUT
    })
}

fn print_text(
    out: &mut impl Write,
    args: &CheckArgs,
    rep: &ScanReport,
    salvaged: Option<&(PathBuf, salvage::SalvageSummary)>,
) -> Result<()> {
    writeln!(out, "{}: {} bytes", args.trace.display(), rep.file_len)?;
    match &rep.header {
        Ok(h) => writeln!(out, "  header: ok (written by {})", h.writer)?,
        Err(e) => writeln!(out, "  header: DAMAGED: {e}")?,
    }
    let chunks = rep.blocks_of(BlockKind::Events).count();
    writeln!(
        out,
        "  intact: {} blocks, {} event chunks, {} events",
        rep.blocks.len(),
        chunks,
        rep.intact_events()
    )?;
    writeln!(
        out,
        "  footer: {}",
        if rep.has_trailer {
            "ok"
        } else {
            "MISSING (recording interrupted or file truncated)"
        }
    )?;
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
    if rep.is_clean() {
        writeln!(out, "  trace is intact")?;
    } else if let Some((p, s)) = salvaged {
        writeln!(
            out,
            "  salvaged {} chunks ({} events) into {}",
            s.chunks,
            s.events,
            p.display()
        )?;
        if s.dropped_blocks > 0 {
            writeln!(
                out,
                "  left out {} intact table blocks whose ids clash with rows already kept",
                s.dropped_blocks
            )?;
        }
    } else if rep.blocks.is_empty() {
        writeln!(out, "  nothing intact to salvage")?;
    }
    Ok(())
}
