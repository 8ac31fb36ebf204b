//! `causeway import`: perf recording to causeway trace.

use crate::exit::{self, BadInput};
use crate::flags::ImportArgs;
use anyhow::{Context, Result};
use causeway_import::{ImportError, ImportOptions, ImportSummary};
use std::io::BufReader;
use std::path::Path;

/// How the input is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// perf.data, read directly.
    Native,
    /// perf.data, through `perf script`.
    ViaPerf,
    /// `perf script` text.
    Script,
}

/// Convert `input` into a trace at `output`; errors about the recording's content are
/// marked as bad input.
pub fn convert(input: &Path, output: &Path, how: Reader) -> Result<ImportSummary> {
    let opts = ImportOptions::default();
    let out = std::fs::File::create(output)
        .with_context(|| format!("creating trace {}", output.display()))?;
    let out = std::io::BufWriter::new(out);
    let result = if how == Reader::Script {
        let header = causeway_format::Header {
            writer: causeway_import::WRITER.to_string(),
            clock: causeway_format::ClockSource::Perf,
            ..causeway_format::Header::synthetic(0)
        };
        if input == Path::new("-") {
            causeway_import::import_perf_script(std::io::stdin().lock(), header, out, &opts)
        } else {
            let f = std::fs::File::open(input)
                .with_context(|| format!("opening {}", input.display()))?;
            causeway_import::import_perf_script(BufReader::new(f), header, out, &opts)
        }
    } else if how == Reader::ViaPerf {
        causeway_import::import_perf_data(input, out, &opts)
    } else {
        causeway_import::import_perf_data_native(input, out, &opts)
    };
    match result {
        Ok((mut out, summary)) => {
            std::io::Write::flush(&mut out)
                .with_context(|| format!("writing trace {}", output.display()))?;
            Ok(summary)
        }
        Err(e) => {
            // Do not leave a half-written trace behind.
            let _ = std::fs::remove_file(output);
            let what = format!("importing {}", input.display());
            match e {
                ImportError::NoEvents { .. } | ImportError::PerfFailed { .. } => {
                    Err(anyhow::Error::new(BadInput(e.to_string())).context(what))
                }
                other => Err(anyhow::Error::new(other).context(what)),
            }
        }
    }
}

/// Print the summary of an import on stderr (stdout with `--json`).
pub fn print_summary(s: &ImportSummary, output: &Path, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(s)?);
        return Ok(());
    }
    eprintln!(
        "imported {} events ({} stacks, {} threads, {} processes) from {} lines into {}",
        s.events,
        s.stacks,
        s.threads,
        s.processes,
        s.lines,
        output.display()
    );
    if s.lost_events > 0 {
        eprintln!(
            "warning: perf lost {} events during recording",
            s.lost_events
        );
    }
    if s.malformed_lines > 0 {
        eprintln!("warning: {} lines could not be parsed", s.malformed_lines);
        for m in &s.malformed_examples {
            eprintln!("  line {}: {}", m.line, m.text);
        }
    }
    let ignored: u64 = s.ignored_events.values().sum();
    if ignored > 0 {
        let names: Vec<String> = s
            .ignored_events
            .iter()
            .map(|(k, v)| format!("{k} ({v})"))
            .collect();
        eprintln!(
            "ignored {ignored} events of kinds causeway does not use: {}",
            names.join(", ")
        );
    }
    for w in &s.perf_warnings {
        eprintln!("perf: {w}");
    }
    Ok(())
}

/// Run the command; returns the exit code.
pub fn run(args: &ImportArgs) -> Result<u8> {
    let how = if args.script {
        Reader::Script
    } else if args.via_perf {
        Reader::ViaPerf
    } else {
        Reader::Native
    };
    let summary = convert(&args.input, &args.output, how)?;
    print_summary(&summary, &args.output, args.json)?;
    Ok(exit::OK)
}
