//! Flags of `causeway flamegraph`.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Which flame graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FlameKindArg {
    /// Where threads ran (needs sample stacks in the trace); weight = samples.
    OnCpu,
    /// Where threads blocked; weight = blocked time.
    OffCpu,
    /// Why they stayed blocked: each blocked stack with its wakers' stacks on top.
    WakeChain,
}

impl FlameKindArg {
    /// The library's kind.
    pub fn kind(self) -> causeway_stacks::FlameKind {
        match self {
            FlameKindArg::OnCpu => causeway_stacks::FlameKind::OnCpu,
            FlameKindArg::OffCpu => causeway_stacks::FlameKind::OffCpu,
            FlameKindArg::WakeChain => causeway_stacks::FlameKind::WakeChain,
        }
    }
}

/// `causeway flamegraph`.
#[derive(Debug, Args)]
#[command(after_help = "\
Folded output (the default on standard output) is what FlameGraph's flamegraph.pl,
inferno-flamegraph and speedscope read. In a wake-up chain, `--` separates a blocked
stack from the stack of the thread that woke it (leaf first, then that thread's name),
and again for whoever woke that thread.")]
pub struct FlamegraphArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Analyse the OS threads of Go programs instead of their goroutines (by default,
    /// when the trace has goroutine events, goroutines stand in for the runtime's
    /// threads that carry them).
    #[arg(long)]
    pub os_threads: bool,
    /// Which flame graph.
    #[arg(long, value_enum, default_value = "off-cpu")]
    pub kind: FlameKindArg,
    /// Draw the flame graph as SVG into this file.
    #[arg(long, value_name = "OUT")]
    pub svg: Option<PathBuf>,
    /// Print folded stacks on standard output (the default without --svg).
    #[arg(long)]
    pub folded: bool,
    /// Print the stacks as one JSON object instead.
    #[arg(long, conflicts_with = "folded")]
    pub json: bool,
    /// Wake-up chains: at most this many wakers stacked on a blocked stack.
    #[arg(long, default_value_t = 3)]
    pub hops: usize,
    /// Only threads of these processes (comma-separated pids) [default: the recorded
    /// processes of a per-process trace, every thread of a system-wide one].
    #[arg(long, value_delimiter = ',')]
    pub pid: Vec<u32>,
}

impl FlamegraphArgs {
    /// The folding options these flags ask for; `recorded` are the trace's recorded
    /// processes, the default selection.
    pub fn options(
        &self,
        recorded: Option<Vec<causeway_format::Tgid>>,
    ) -> causeway_stacks::Options {
        causeway_stacks::Options {
            processes: if self.pid.is_empty() {
                recorded
            } else {
                Some(self.pid.iter().map(|&p| causeway_format::Tgid(p)).collect())
            },
            hops: self.hops,
            ..causeway_stacks::Options::default()
        }
    }
}
