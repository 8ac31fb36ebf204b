//! Flags of `causeway compare`.

use clap::Args;
use std::path::PathBuf;

/// `causeway compare`.
#[derive(Debug, Args)]
#[command(after_help = "\
Record both runs with syscalls (`causeway record --events all`) so that each call's
user call site is known. Exit status 0 if a syscall or call site appears in only one
run, 1 if both runs issue the same calls from the same places.")]
pub struct CompareArgs {
    /// Trace of a normal run.
    pub normal: PathBuf,
    /// Trace of a slow run of the same program.
    pub slow: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Draw the differential off-CPU flame graph (slow against normal) as SVG here.
    #[arg(long, value_name = "OUT")]
    pub diff_svg: Option<PathBuf>,
}
