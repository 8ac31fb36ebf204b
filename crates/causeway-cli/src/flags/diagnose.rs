//! Flags of `causeway diagnose` and their resolution into the analysis's options.

use causeway_diagnose::{Options, Problem, StallKind, ThreadSelector};
use causeway_format::units::parse_duration_ns;
use causeway_format::{DurationNs, Tid, Timestamp};
use clap::Args;
use clap::ValueEnum;
use std::path::PathBuf;

/// `causeway diagnose`.
#[derive(Debug, Args)]
#[command(after_help = "\
The problem vertex is the longest stall (blocked, stopped, runnable or busy) of the
recorded processes, or of --thread, or what --thread did at --at (seconds from the
start of the trace, as `causeway info` shows times).

Where the event graph is ambiguous (several edges lead to a vertex, only weak edges
do, or a culprit could be followed further) the diagnosis asks. On a terminal it asks
you; --auto takes Argus's heuristic (the most recent edge; always go on); --answers
FILE replays answers, one per line: a candidate number, `stop` or `auto` (`#`
comments); when they run out the heuristic answers. Without a terminal and without
either flag, the heuristic answers. The report lists every decision and how it was
made.

Record with system calls for signatures and syscall lists:
  causeway record --events default,syscall -o t.cwt -- PROGRAM")]
pub struct DiagnoseArgs {
    /// Trace file; several hosts' traces of the same time are joined into one model
    /// (wake-ups by data from another host tied to its sender, clocks aligned from
    /// that traffic).
    #[arg(required = true, num_args = 1.., value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Analyse the OS threads of Go programs instead of their goroutines (by default,
    /// when the trace has goroutine events, goroutines stand in for the runtime's
    /// threads that carry them).
    #[arg(long)]
    pub os_threads: bool,
    /// The stalled thread: a tid or a thread name (`comm`).
    #[arg(long, value_name = "TID|NAME")]
    pub thread: Option<String>,
    /// The moment of the stall, from the start of the trace (`1.25s`); needs --thread.
    #[arg(long, value_name = "TIME", requires = "thread", value_parser = parse_duration_ns)]
    pub at: Option<DurationNs>,
    /// Which stalls the longest-stall choice considers: waits (blocked or stopped),
    /// runs (busy, yielding or waiting for a CPU), or any. On a busy machine a thread's
    /// longest stall may be a wait for a CPU; `wait` looks past it.
    #[arg(long, value_enum, default_value_t = Stall::Any)]
    pub stall: Stall,
    /// Answer every question with Argus's heuristic (Table 4), without asking.
    #[arg(long, conflicts_with = "answers")]
    pub auto: bool,
    /// Replay answers from this file (one per line: a number, `stop` or `auto`).
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// Ask at the prompt even when standard input is not a terminal (answers then come
    /// from a pipe, one line each, as typed; for scripts and tests of the prompt).
    #[arg(long, conflicts_with_all = ["auto", "answers"])]
    pub prompt: bool,
    /// Print the whole result as JSON.
    #[arg(long, conflicts_with = "dot")]
    pub json: bool,
    /// Print the diagnosis graph in graphviz DOT.
    #[arg(long)]
    pub dot: bool,
    /// A wait or a run at least this long is a stall (LongWait, LongRunning).
    #[arg(long, default_value = "5ms", value_parser = parse_duration_ns)]
    pub long: DurationNs,
    /// `sched_yield` calls in one run that make it a yield loop (RepeatedYield). Few:
    /// each yield to a busy CPU can cost a whole time slice, and programs that do not
    /// spin hardly ever yield.
    #[arg(long, default_value_t = 3)]
    pub yields: u32,
    /// Do not split runs where the threads they wake change (Argus §4.2.1).
    #[arg(long)]
    pub no_split: bool,
    /// Do not split the runs of batching loops (an event loop serving several peers
    /// after one epoll_wait, poll or select; a loop draining a socket) per item.
    #[arg(long)]
    pub no_batch_split: bool,
    /// Longest slice, in vertices.
    #[arg(long, default_value_t = 64)]
    pub max_slice: usize,
    /// Print the graph's size and how long reading, building the graph and diagnosing
    /// took, on standard error.
    #[arg(long)]
    pub timing: bool,
    /// Text: every step of each slice and every thread compared (by default the first
    /// few, with a count of the rest). JSON always has everything.
    #[arg(short, long)]
    pub verbose: bool,
}

impl DiagnoseArgs {
    /// The analysis options; `origin` is the trace's first timestamp (for --at).
    pub fn options(&self, origin: Timestamp) -> Options {
        let sel = self.thread.as_deref().map(|t| match t.parse::<u32>() {
            Ok(n) => ThreadSelector::Tid(Tid(n)),
            Err(_) => ThreadSelector::Name(t.to_string()),
        });
        let problem = match (sel, self.at) {
            (Some(s), Some(at)) => Problem::ThreadAt(s, Timestamp(origin.0.saturating_add(at.0))),
            (Some(s), None) => Problem::Thread(s),
            (None, _) => Problem::Longest,
        };
        Options {
            problem,
            stall: match self.stall {
                Stall::Any => StallKind::Any,
                Stall::Wait => StallKind::Wait,
                Stall::Run => StallKind::Run,
            },
            long: self.long,
            yield_min: self.yields.max(1),
            split_peers: !self.no_split,
            split_batches: !self.no_batch_split,
            max_slice: self.max_slice.max(1),
            ..Options::default()
        }
    }
}

/// `--stall`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Stall {
    /// Blocked, stopped, runnable or busy.
    Any,
    /// Blocked or stopped.
    Wait,
    /// Busy, yielding or waiting for a CPU.
    Run,
}
