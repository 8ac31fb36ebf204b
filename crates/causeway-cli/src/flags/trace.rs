//! Flags of the commands that read one file: `info`, `check`, `dump`, `import`.
//!
//! Their values need no resolution beyond parsing: each command uses them as they are.

use super::choices::EventKindArg;
use causeway_format::DurationNs;
use causeway_format::units::parse_duration_ns;
use clap::Args;
use std::path::PathBuf;

/// `causeway info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many threads to list in each ranking.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Rank only threads of these processes (comma-separated pids).
    #[arg(long, value_delimiter = ',')]
    pub pid: Vec<u32>,
    /// Rank only threads of processes with this name (or executable file name), and
    /// threads with this name.
    #[arg(long)]
    pub comm: Option<String>,
}

/// `causeway check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Where to write the salvaged copy if the trace is damaged
    /// [default: TRACE with `.salvaged.cwt` appended].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Only report; never write a salvaged copy.
    #[arg(long)]
    pub no_salvage: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `causeway dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Print JSON lines (one event per line) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Only events about these threads (comma-separated tids).
    #[arg(long, value_delimiter = ',')]
    pub tid: Vec<u32>,
    /// Only events about threads of these processes (comma-separated pids).
    #[arg(long, value_delimiter = ',')]
    pub pid: Vec<u32>,
    /// Only these event kinds (comma-separated), e.g. `sched_switch,wakeup`.
    /// Run with `--kind help` to list them.
    #[arg(long, value_delimiter = ',', hide_possible_values = true)]
    pub kind: Vec<EventKindArg>,
    /// Start of the time window, relative to the first event: a duration, `1.5`
    /// (seconds), `1.5s`, `200ms`, `30us` or `100ns`.
    #[arg(long, value_name = "TIME", value_parser = parse_duration_ns)]
    pub from: Option<DurationNs>,
    /// End of the time window, relative to the first event (same units as --from).
    #[arg(long, value_name = "TIME", value_parser = parse_duration_ns)]
    pub to: Option<DurationNs>,
    /// Print absolute trace-clock nanoseconds instead of seconds since the first event.
    #[arg(long)]
    pub abs: bool,
    /// Show the frames of stack events.
    #[arg(long)]
    pub stacks: bool,
    /// Stop after this many events.
    #[arg(long)]
    pub limit: Option<u64>,
}

/// `causeway import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// perf.data file recorded with e.g. `perf record -e 'sched:*' -e 'irq:*'
    /// -e 'block:*' -g -a`, or (with --script) a `perf script` text file, `-` for stdin.
    pub input: PathBuf,
    /// Output trace file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// The input is `perf script` text, not perf.data.
    #[arg(long)]
    pub script: bool,
    /// Read perf.data by running `perf script` (needs perf) instead of reading the file
    /// directly: for recordings whose programs are no longer on this machine but in
    /// perf's build-id cache, or to compare the two readers.
    #[arg(long, conflicts_with = "script")]
    pub via_perf: bool,
    /// Print the import summary as JSON.
    #[arg(long)]
    pub json: bool,
}
