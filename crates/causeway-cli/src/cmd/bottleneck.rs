//! `causeway bottleneck`: which waiting events limit throughput (wPerf).
//!
//! Reads the trace once into the model and its facts, runs
//! `causeway_bottleneck::analyze`, and has `causeway-report` render the findings as
//! text, JSON, DOT or SVG. With `-- CMD`
//! it first records CMD with causeway's recorder, as `causeway demo` does.

use crate::cli::BottleneckArgs;
use crate::cmd::record;
use crate::exit::BadInput;
use crate::{ingest_trace, open_trace, output, timefmt};
use anyhow::{Context, Result, anyhow, bail};
use causeway_bottleneck::{BottleneckError, Findings, Options, analyze};
use causeway_report::{BottleneckView, ReportError};
use std::path::PathBuf;

/// How the user gave the threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Threshold {
    Fraction(f64),
    Nanos(u64),
}

fn parse_threshold(s: &str) -> Result<Threshold> {
    let t = s.trim();
    if let Some(p) = t.strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .with_context(|| format!("invalid threshold `{s}`: expected e.g. 20%"))?;
        if !v.is_finite() || v < 0.0 {
            bail!("invalid threshold `{s}`: must be a non-negative percentage");
        }
        return Ok(Threshold::Fraction(v / 100.0));
    }
    if let Ok(v) = t.parse::<f64>() {
        if !v.is_finite() || !(0.0..=1.0).contains(&v) {
            bail!(
                "invalid threshold `{s}`: a bare number is a share between 0 and 1; add `s` or `ms` for a time"
            );
        }
        return Ok(Threshold::Fraction(v));
    }
    Ok(Threshold::Nanos(
        timefmt::parse_duration_ns(t).with_context(|| {
            format!("invalid threshold `{s}`: expected a share (20%, 0.2) or a time (1.5s)")
        })?,
    ))
}

/// Parse a rate per second into bytes per second: `10Gbit`, `100Mbit`, `125MB`, `4KB`,
/// or a bare number of bytes.
fn parse_rate(s: &str) -> Result<f64> {
    let t = s.trim();
    let units: [(&str, f64); 8] = [
        ("Gbit", 1e9 / 8.0),
        ("Mbit", 1e6 / 8.0),
        ("Kbit", 1e3 / 8.0),
        ("GB", 1e9),
        ("MB", 1e6),
        ("KB", 1e3),
        ("B", 1.0),
        ("", 1.0),
    ];
    for (u, scale) in units {
        if let Some(n) = t.strip_suffix(u)
            && let Ok(v) = n.trim().parse::<f64>()
        {
            if !v.is_finite() || v <= 0.0 {
                bail!("invalid rate `{s}`: must be positive");
            }
            return Ok(v * scale);
        }
    }
    bail!(
        "invalid rate `{s}`: expected a number with an optional unit Gbit, Mbit, Kbit, GB, MB, KB"
    )
}

/// The trace to analyze: the given file, or a fresh recording of the command.
fn trace_path(args: &BottleneckArgs) -> Result<PathBuf> {
    if let Some(t) = &args.trace {
        if !args.command.is_empty() {
            bail!("give either a trace file or `-- CMD`, not both");
        }
        return Ok(t.clone());
    }
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
    let trace = args.out_dir.join("bottleneck.cwt");
    eprintln!("recording {} ...", args.command.join(" "));
    record::record_command(&args.command, &trace)?;
    Ok(trace)
}

/// Read the trace and run the analysis.
pub fn build(args: &BottleneckArgs) -> Result<Findings> {
    let threshold = parse_threshold(&args.threshold)?;
    let mut opts = Options {
        merge: !args.no_merge,
        top_stacks: args.stacks,
        nic_capacity: args.nic_capacity.as_deref().map(parse_rate).transpose()?,
        disk_bandwidth: args.disk_bandwidth.as_deref().map(parse_rate).transpose()?,
        disk_iops: args.disk_iops,
        ..Options::default()
    };
    let path = trace_path(args)?;
    let mut rd = open_trace(&path)?;
    let trace = ingest_trace(&mut rd, &path)?;
    opts.threshold_fraction = match threshold {
        Threshold::Fraction(f) => f,
        Threshold::Nanos(ns) => {
            let d = trace.model().span().map_or(0, |s| s.duration().0).max(1);
            ns as f64 / d as f64
        }
    };
    analyze(&trace, &opts).map_err(|e| match e {
        BottleneckError::Empty => anyhow::Error::new(BadInput(format!("{}: {e}", path.display()))),
        other => anyhow::Error::new(other),
    })
}

/// Run the command; returns the exit code (1 if no knot or sink was found).
pub fn run(args: &BottleneckArgs) -> Result<u8> {
    let findings = build(args)?;
    let view = BottleneckView::new(&findings);
    if let Some(svg) = &args.svg {
        view.write_svg(svg).map_err(|e| match e {
            ReportError::GraphvizMissing => anyhow!(
                "--svg needs graphviz's `dot`, which is not installed (apt install graphviz); --dot prints the graph without it"
            ),
            other => anyhow::Error::new(other),
        })?;
    }
    output::emit(&view, output::format(args.json, args.dot))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds() {
        assert_eq!(parse_threshold("20%").unwrap(), Threshold::Fraction(0.2));
        assert_eq!(parse_threshold("0.5").unwrap(), Threshold::Fraction(0.5));
        assert_eq!(
            parse_threshold("1.5s").unwrap(),
            Threshold::Nanos(1_500_000_000)
        );
        assert!(parse_threshold("2").is_err());
        assert!(parse_threshold("-5%").is_err());
        assert!(parse_threshold("abc").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10Gbit").unwrap(), 1.25e9);
        assert_eq!(parse_rate("125MB").unwrap(), 1.25e8);
        assert_eq!(parse_rate("4096").unwrap(), 4096.0);
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("fast").is_err());
    }
}
