//! Flags of `causeway calls` and `causeway run`, and their resolution.

use causeway_calls::{Options, Pattern};
use causeway_format::units::{parse_duration_ns, parse_size_bytes};
use causeway_format::{DurationNs, Tid};
use clap::Args;
use std::path::PathBuf;

/// `causeway calls`.
#[derive(Debug, Args)]
#[command(after_help = "\
Without --top, --chains, --match or --tree, prints the chains and the top functions.
A signature is function names separated by `>`, each called directly by the one before
(`event_loop>handle_request>parse`); `*` matches any one function.")]
pub struct CallsArgs {
    /// Trace file (a libcauseway dump, or any trace with method markers).
    pub trace: PathBuf,
    /// Print the whole result as JSON.
    #[arg(long)]
    pub json: bool,
    /// List this many functions by self time.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "20")]
    pub top: Option<usize>,
    /// List this many call chains with the most self time before the trigger.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10")]
    pub chains: Option<usize>,
    /// Window before the trigger (or the trace end) that chains are ranked in.
    #[arg(long, default_value = "1s", value_parser = parse_duration_ns)]
    pub window: DurationNs,
    /// Find this call-chain signature (`a>b>c`) and list each instance's durations.
    #[arg(long = "match", value_name = "SIGNATURE")]
    pub signature: Option<String>,
    /// Print each thread's call tree, without calls shorter than --min.
    #[arg(long)]
    pub tree: bool,
    /// Shortest call shown by --tree.
    #[arg(long, default_value = "1ms", value_parser = parse_duration_ns)]
    pub min: DurationNs,
    /// Only these threads (comma-separated tids).
    #[arg(long, value_delimiter = ',')]
    pub tid: Vec<u32>,
}

impl CallsArgs {
    /// Whether a section flag was given (then only those sections are shown).
    pub fn any_section(&self) -> bool {
        self.top.is_some() || self.chains.is_some() || self.signature.is_some() || self.tree
    }

    /// The analysis options; a bad signature is a usage error.
    pub fn options(&self) -> Result<Options, causeway_calls::Error> {
        let d = Options::default();
        Ok(Options {
            top: self.top.unwrap_or(d.top),
            chains: self.chains.unwrap_or(d.chains),
            window: self.window,
            threads: self.tid.iter().map(|&t| Tid(t)).collect(),
            pattern: self.signature.as_deref().map(Pattern::parse).transpose()?,
        })
    }
}

/// `causeway run`.
#[derive(Debug, Args)]
#[command(after_help = "\
The program must be built with -finstrument-functions (or call the CW_SPAN / cw_enter
trace points of causeway.h). Traces go to --out-dir as causeway-PID-N.cwt; read them
with `causeway calls`. See docs/libcauseway.md for every environment variable.")]
pub struct RunArgs {
    /// Trace the program's calls in-process with libcauseway (LD_PRELOAD); the only mode.
    #[arg(long, required = true)]
    pub inproc: bool,
    /// Directory for the traces.
    #[arg(long, default_value = ".")]
    pub out_dir: PathBuf,
    /// Dump triggers (CAUSEWAY_TRIGGER): `signal=USR2`, `stall=200ms`, `exit`, `kernel`,
    /// `none`, comma-separated.
    #[arg(long, default_value = "signal=USR2,stall=200ms,exit")]
    pub trigger: String,
    /// Ring buffer per thread.
    #[arg(long, default_value = "32M", value_parser = parse_size_bytes)]
    pub buffer: u64,
    /// Threads with a buffer: `all`, or the N most recently started.
    #[arg(long, default_value = "16")]
    pub threads: String,
    /// Clock: `tsc`, or `coarse[:PERIOD]` (cheaper, resolution PERIOD, default 100us).
    #[arg(long, default_value = "tsc")]
    pub clock: String,
    /// libcauseway.so to preload [default: CAUSEWAY_LIB, else next to this program].
    #[arg(long)]
    pub lib: Option<PathBuf>,
    /// The program and its arguments (after `--`).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}
