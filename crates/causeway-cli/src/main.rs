//! The `causeway` command-line tool: a thin layer over the format, import, model,
//! analysis and report crates. Parsing is in `cli`, each subcommand in `cmd/`, where a
//! result goes in `output`, event formatting for `dump` in `render/`.

mod cli;
mod cmd;
mod exit;
mod output;
mod progress;
mod render;
mod timefmt;

use anyhow::{Context, Result};
use causeway_format::TraceReader;
use causeway_model::{ModelError, Trace};
use clap::Parser;
use std::io::BufReader;
use std::path::Path;
use std::process::ExitCode;

/// Open a trace for reading, with the path in any error.
pub(crate) fn open_trace(path: &Path) -> Result<TraceReader<BufReader<std::fs::File>>> {
    TraceReader::open(path).with_context(|| format!("reading trace {}", path.display()))
}

/// Read every event of an open trace into the model and facts (the one ingestion
/// path), showing progress on a terminal.
pub(crate) fn ingest_trace(
    rd: &mut TraceReader<BufReader<std::fs::File>>,
    path: &Path,
) -> Result<Trace> {
    let mut progress = progress::Progress::new(rd.event_count(), "reading events");
    // The format error itself is the cause shown (and decides the exit code).
    let trace = Trace::read(rd, |n| progress.set(n))
        .map_err(|e| match e {
            ModelError::Format(fe) => anyhow::Error::new(fe),
            other => anyhow::Error::new(other),
        })
        .with_context(|| format!("reading events of {}", path.display()))?;
    progress.finish();
    Ok(trace)
}

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            // Help and version requests are not errors; bad usage is a user error.
            return ExitCode::from(if e.use_stderr() {
                exit::NOTHING_OR_USER_ERROR
            } else {
                exit::OK
            });
        }
    };
    // Output commands end quietly when their reader goes away (`causeway dump | head`),
    // as Unix filters do; the recorder keeps SIGPIPE ignored so a closed terminal never
    // kills it before the trace is finished.
    if !matches!(cli.command, cli::Command::Record(_)) {
        // SAFETY: restoring the default disposition of one signal at start-up.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let result = match &cli.command {
        cli::Command::Info(a) => cmd::info::run(a),
        cli::Command::Check(a) => cmd::check::run(a),
        cli::Command::Dump(a) => cmd::dump::run(a),
        cli::Command::Import(a) => cmd::import::run(a),
        cli::Command::Demo(a) => cmd::demo::run(a),
        cli::Command::Record(a) => cmd::record::run(a),
        cli::Command::Trigger(a) => cmd::trigger::run(a),
        cli::Command::Bottleneck(a) => cmd::bottleneck::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) if exit::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("causeway: error: {e:#}");
            ExitCode::from(exit::code_for(&e))
        }
    }
}
