//! Flags of `causeway report`.

use clap::Args;
use std::path::PathBuf;

/// `causeway report`.
#[derive(Debug, Args)]
#[command(after_help = "\
The page needs no network and no server: open it straight from disk (file://). It
embeds the Perfetto export as a download link unless --no-perfetto is given.

The diagnosis section is the culprit chain of the trace's longest stall (or of the
longest stall of --thread), with the heuristic answering every question, as
`causeway diagnose --auto` does: a page cannot ask. Run `causeway diagnose` to answer
them yourself.")]
pub struct ReportArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Where to write the HTML page.
    #[arg(short, long, value_name = "OUT", default_value = "report.html")]
    pub output: PathBuf,
    /// Do not embed the Perfetto export (a smaller page).
    #[arg(long)]
    pub no_perfetto: bool,
    /// Leave out the diagnosis (faster on large traces).
    #[arg(long)]
    pub no_diagnose: bool,
    /// Diagnose the longest stall of this thread (name or tid) instead of the trace's.
    #[arg(long, value_name = "THREAD", conflicts_with = "no_diagnose")]
    pub thread: Option<String>,
    /// Wake-up chains: at most this many wakers stacked on a blocked stack.
    #[arg(long, default_value_t = 3)]
    pub hops: usize,
}
