//! Flags of `causeway report`.

use clap::Args;
use std::path::PathBuf;

/// `causeway report`.
#[derive(Debug, Args)]
#[command(after_help = "\
The page needs no network and no server: open it straight from disk (file://). It
embeds the Perfetto export as a download link unless --no-perfetto is given.")]
pub struct ReportArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Where to write the HTML page.
    #[arg(short, long, value_name = "OUT", default_value = "report.html")]
    pub output: PathBuf,
    /// Do not embed the Perfetto export (a smaller page).
    #[arg(long)]
    pub no_perfetto: bool,
    /// Wake-up chains: at most this many wakers stacked on a blocked stack.
    #[arg(long, default_value_t = 3)]
    pub hops: usize,
}
