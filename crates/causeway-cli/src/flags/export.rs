//! Flags of `causeway export`.

use clap::Args;
use std::path::PathBuf;

/// `causeway export`.
#[derive(Debug, Args)]
#[command(after_help = "\
Open a Perfetto file at https://ui.perfetto.dev (Open trace file) or load it with
Perfetto's trace_processor. Each thread shows three lanes: state (running, runnable,
blocked with its stack and syscall, stopped, unknown after lost events), syscalls (with
the call site) and calls (spans and in-process method calls). CPU tracks show who ran;
wake-ups are arrows from the waker to the woken thread; the bottleneck's knots are
tracks of their own, and so is the diagnosis of the longest stall (its culprit chain,
an arrow from each cause to what it delayed; the heuristic answers the diagnosis's
questions, as `causeway diagnose --auto` does).")]
pub struct ExportArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Write Perfetto's protobuf trace format here.
    #[arg(long, value_name = "OUT")]
    pub perfetto: Option<PathBuf>,
    /// Write the Chrome trace event format (JSON) here.
    #[arg(long, value_name = "OUT")]
    pub chrome_json: Option<PathBuf>,
    /// Leave out the bottleneck analysis's knot tracks (faster on large traces).
    #[arg(long)]
    pub no_bottleneck: bool,
    /// Leave out the diagnosis's culprit chain (faster on large traces).
    #[arg(long)]
    pub no_diagnose: bool,
    /// Diagnose the longest stall of this thread (name or tid) instead of the trace's.
    #[arg(long, value_name = "THREAD", conflicts_with = "no_diagnose")]
    pub thread: Option<String>,
    /// Print what was written as one JSON object.
    #[arg(long)]
    pub json: bool,
}
